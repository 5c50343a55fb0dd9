/**
 * Value types as the SQL layer reasons about them (engine-neutral). They come from the schema
 * catalogue for source columns and are propagated through CTEs and derived tables, so that
 * `unnest(metadata)` of a CTE over a source still knows `metadata` is a record.
 */
import type { FieldType } from '../storage/schema.ts';

export type ScalarName = 'string' | 'int' | 'float' | 'numeric' | 'bool' | 'timestamp' | 'datetime' | 'date' | 'interval' | 'bytes';

export type VType =
  | { k: 'scalar'; t: ScalarName }
  /** An event object: one per row, reached by field access or UNNEST. */
  | { k: 'record'; fields: Record<string, VType> }
  | { k: 'list'; element: VType }
  /** A column or field no event has carried yet: reads as NULL. */
  | { k: 'missing' }
  | { k: 'unknown' };

export const unknownType: VType = { k: 'unknown' };
export const missingType: VType = { k: 'missing' };

export function scalar(t: ScalarName): VType {
  return { k: 'scalar', t };
}

export function fromFieldType(f: FieldType): VType {
  switch (f.kind) {
    case 'scalar':
      return scalar(f.type === 'timestamp' ? 'timestamp' : f.type);
    case 'record': {
      // Field names are user input (`__proto__` too): fromEntries defines each as an own key.
      const fields: Record<string, VType> = Object.fromEntries(Object.entries(f.fields).map(([name, t]) => [name, fromFieldType(t)]));
      return { k: 'record', fields };
    }
    case 'list':
      return { k: 'list', element: fromFieldType(f.element) };
  }
}

export function isScalar(t: VType, name: ScalarName): boolean {
  return t.k === 'scalar' && t.t === name;
}

/** Finds a key exactly, else case-insensitively (BigQuery names are case-insensitive). */
export function findName<T>(entries: Iterable<[string, T]>, name: string): [string, T] | undefined {
  let loose: [string, T] | undefined;
  const lower = name.toLowerCase();
  for (const entry of entries) {
    if (entry[0] === name) return entry;
    if (!loose && entry[0].toLowerCase() === lower) loose = entry;
  }
  return loose;
}
