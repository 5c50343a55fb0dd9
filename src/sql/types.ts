/**
 * Value types as the SQL layer reasons about them (engine-neutral). They come from the schema
 * catalogue for source columns, from the function registry for calls, and are propagated through
 * CTEs and derived tables by the semantic pass (resolve.ts), so that `unnest(metadata)` of a CTE
 * over a source still knows `metadata` is a record.
 */
import type { FieldType } from '../storage/schema.ts';

export type ScalarName = 'string' | 'int' | 'float' | 'numeric' | 'bool' | 'timestamp' | 'datetime' | 'date' | 'interval' | 'bytes';

export type VType =
  | { readonly k: 'scalar'; readonly t: ScalarName }
  /**
   * An event object (one per row, reached by field access or UNNEST; results show it as a
   * one-element array, BigQuery's REPEATED RECORD), or with `value` a STRUCT the query built
   * (results show it as an object).
   */
  | { readonly k: 'record'; readonly fields: Readonly<Record<string, VType>>; readonly value?: boolean }
  | { readonly k: 'list'; readonly element: VType }
  /** A column or field no event has carried yet: reads as NULL. */
  | { readonly k: 'missing' }
  | { readonly k: 'unknown' };

export const unknownType: VType = Object.freeze({ k: 'unknown' });
export const missingType: VType = Object.freeze({ k: 'missing' });

const scalars = new Map<ScalarName, VType>();

export function scalar(t: ScalarName): VType {
  let v = scalars.get(t);
  if (!v) {
    v = Object.freeze({ k: 'scalar', t });
    scalars.set(t, v);
  }
  return v;
}

export function listOf(element: VType): VType {
  return Object.freeze({ k: 'list', element });
}

export function recordOf(fields: Record<string, VType>, value = false): VType {
  return Object.freeze({ k: 'record', fields: Object.freeze({ ...fields }), ...(value ? { value } : {}) });
}

const fromField = new WeakMap<FieldType, VType>();

/** The catalogue's type as a VType (the same object for the same catalogue entry). */
export function fromFieldType(f: FieldType): VType {
  const known = fromField.get(f);
  if (known) return known;
  let t: VType;
  switch (f.kind) {
    case 'scalar':
      t = scalar(f.type);
      break;
    case 'record': {
      // Field names are user input (`__proto__` too): fromEntries defines each as an own key.
      const fields: Record<string, VType> = Object.fromEntries(Object.entries(f.fields).map(([name, ft]) => [name, fromFieldType(ft)]));
      t = recordOf(fields);
      break;
    }
    case 'list':
      t = listOf(fromFieldType(f.element));
      break;
    default:
      return assertNever(f);
  }
  fromField.set(f, t);
  return t;
}

/** Whether a value of type `t` holds a record: a record, or a list of them (at any depth). */
export function holdsRecord(t: VType): boolean {
  return t.k === 'record' || (t.k === 'list' && holdsRecord(t.element));
}

export function isScalar(t: VType, name: ScalarName): boolean {
  return t.k === 'scalar' && t.t === name;
}

/** BigQuery's name of a type, for messages. */
export function typeName(t: VType): string {
  switch (t.k) {
    case 'scalar':
      return t.t === 'int' ? 'INT64' : t.t === 'float' ? 'FLOAT64' : t.t.toUpperCase();
    case 'record':
      return 'STRUCT';
    case 'list':
      return `ARRAY<${typeName(t.element)}>`;
    case 'missing':
    case 'unknown':
      return 'unknown';
    default:
      return assertNever(t);
  }
}

/** Finds a key exactly, else case-insensitively (BigQuery names are case-insensitive). */
export function findName<T>(entries: Iterable<readonly [string, T]>, name: string): readonly [string, T] | undefined {
  let loose: readonly [string, T] | undefined;
  const lower = name.toLowerCase();
  for (const entry of entries) {
    if (entry[0] === name) return entry;
    if (!loose && entry[0].toLowerCase() === lower) loose = entry;
  }
  return loose;
}

/** The end of every exhaustive switch: adding a variant fails to compile where it is not handled. */
export function assertNever(x: never): never {
  throw new Error(`unhandled variant ${JSON.stringify(x)}`);
}
