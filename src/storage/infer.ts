/**
 * Schema inference and the conflict rule. Pure: no I/O.
 *
 * Inference: a JSON string is `string`, a boolean `bool`, an integral number that fits BIGINT `int`,
 * any other number `float`, an object a `record`, an array a `list` of its elements' merged type.
 * `null`, `[]` and `{}` carry no type: they add nothing to the schema (they read back as NULL, or as an
 * empty list when the column is already a list).
 *
 * Merging two types never fails, so no event is ever refused for its shape:
 * - equal types stay; `int` and `float` widen to `float`;
 * - two records merge field by field (new fields are added); two lists merge their element types;
 * - anything else (int vs string, bool vs int, scalar vs record, record vs list, ...) becomes
 *   `string`, and values that are not strings are stored as their JSON text (`42`, `true`,
 *   `{"a":1}`).
 *
 * Field names are compared case-insensitively, as DuckDB does: the first spelling seen is kept.
 * Field names are user input (`__proto__`, `constructor`, ...): field objects are written with
 * `setOwn` and read with `own` (src/storage/fields.ts).
 */
import type { FieldType, TableSchema } from './schema.ts';
import { baseColumns } from './schema.ts';
import type { JsonObject, JsonValue } from './event.ts';
import { copyFields, emptyFields, findOwnName, own, setOwn } from './fields.ts';

export const STRING: FieldType = { kind: 'scalar', type: 'string' };
export const INT: FieldType = { kind: 'scalar', type: 'int' };
export const FLOAT: FieldType = { kind: 'scalar', type: 'float' };
export const BOOL: FieldType = { kind: 'scalar', type: 'bool' };
const INT64_LIMIT = 2 ** 63;

/** `int` for an integral number that fits BIGINT, else `float`. */
export function numberType(value: number): FieldType {
  return Number.isInteger(value) && Math.abs(value) < INT64_LIMIT ? INT : FLOAT;
}

/** One schema change, in the order it must be applied. */
export type SchemaChange =
  /** A new top-level column. */
  | { kind: 'add_column'; column: string; type: FieldType }
  /**
   * A new field inside a record column. `path` starts at the top-level column; the segment
   * `element` steps into a list's element type (DuckDB's own spelling).
   */
  | { kind: 'add_field'; path: string[]; type: FieldType }
  /** A column whose type changed in a way that needs its stored values converted. */
  | { kind: 'retype_column'; column: string; from: FieldType; to: FieldType }
  /** A new field kept in the table's catch-all column (src/storage/overflow.ts); no DDL but that column. */
  | { kind: 'overflow_field'; path: string[]; type: FieldType }
  /** A field of the catch-all column whose type changed: only the catalogue changes. */
  | { kind: 'overflow_retype'; path: string[]; from: FieldType; to: FieldType };

export interface SchemaMerge {
  schema: TableSchema;
  changes: SchemaChange[];
}

/** The type of one value, or undefined when it carries none (null, [], {}). */
export function inferValue(value: JsonValue | undefined): FieldType | undefined {
  if (value === null || value === undefined) return undefined;
  switch (typeof value) {
    case 'string':
      return STRING;
    case 'boolean':
      return BOOL;
    case 'number':
      return numberType(value);
    default:
      break;
  }
  if (Array.isArray(value)) {
    let element: FieldType | undefined;
    for (const item of value) element = mergeOptional(element, inferValue(item));
    return element === undefined ? undefined : { kind: 'list', element };
  }
  return inferObject(value);
}

function inferObject(value: JsonObject): FieldType | undefined {
  let fields: Record<string, FieldType> | undefined;
  for (const key in value) {
    const type = inferValue(value[key]);
    if (type === undefined) continue;
    fields ??= emptyFields();
    const name = findName(fields, key) ?? key;
    setOwn(fields, name, mergeOptional(own(fields, name), type) as FieldType);
  }
  return fields === undefined ? undefined : { kind: 'record', fields };
}

/**
 * Adds the types of an object's keys to `into` (created when undefined); returns undefined when
 * nothing had a type. Allocates only when a value does not fit what `into` already holds, so a
 * steady stream of same-shaped events costs no garbage.
 */
export function inferFields(value: JsonObject, into: Record<string, FieldType> | undefined): Record<string, FieldType> | undefined {
  let fields = into;
  for (const key in value) {
    const v = value[key] as JsonValue;
    if (v === null) continue;
    const name = fields === undefined ? key : (findName(fields, key) ?? key);
    const before = fields === undefined ? undefined : own(fields, name);
    const after = widen(before, v);
    if (after === before || after === undefined) continue;
    fields ??= emptyFields();
    setOwn(fields, name, after);
  }
  return fields;
}

/** `mergeTypes(type, inferValue(value))`, returning `type` itself when the value fits it. */
export function widen(type: FieldType | undefined, value: JsonValue): FieldType | undefined {
  if (value === null) return type;
  if (type === undefined) return inferValue(value);
  switch (typeof value) {
    case 'string':
      return type.kind === 'scalar' && type.type === 'string' ? type : mergeTypes(type, STRING);
    case 'boolean':
      return type.kind === 'scalar' && type.type === 'bool' ? type : mergeTypes(type, BOOL);
    case 'number':
      if (type.kind === 'scalar' && (type.type === 'float' || type.type === 'string')) return type;
      return mergeTypes(type, numberType(value));
    default:
      break;
  }
  if (Array.isArray(value)) {
    if (type.kind !== 'list') {
      const t = inferValue(value);
      return t === undefined ? type : mergeTypes(type, t);
    }
    let element = type.element;
    for (const item of value) element = widen(element, item) as FieldType;
    return element === type.element ? type : { kind: 'list', element };
  }
  if (type.kind !== 'record') {
    const t = inferValue(value);
    return t === undefined ? type : mergeTypes(type, t);
  }
  let fields: Record<string, FieldType> | undefined;
  for (const key in value) {
    const v = value[key] as JsonValue;
    if (v === null) continue;
    const current = fields ?? type.fields;
    const name = findName(current, key) ?? key;
    const before = own(current, name);
    const after = widen(before, v);
    if (after === before || after === undefined) continue;
    fields ??= copyFields(type.fields);
    setOwn(fields, name, after);
  }
  return fields === undefined ? type : { kind: 'record', fields };
}

function mergeOptional(a: FieldType | undefined, b: FieldType | undefined): FieldType | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return mergeTypes(a, b);
}

/** The conflict rule (see the module comment). */
export function mergeTypes(a: FieldType, b: FieldType): FieldType {
  if (a.kind === 'scalar' && b.kind === 'scalar') {
    if (a.type === b.type) return a;
    if ((a.type === 'int' && b.type === 'float') || (a.type === 'float' && b.type === 'int')) return FLOAT;
    return STRING;
  }
  if (a.kind === 'record' && b.kind === 'record') {
    let fields: Record<string, FieldType> | undefined;
    for (const key of Object.keys(b.fields)) {
      const bt = b.fields[key] as FieldType;
      const name = findName(a.fields, key);
      const at = name === undefined ? undefined : own(a.fields, name);
      const merged = at === undefined ? bt : mergeTypes(at, bt);
      if (at !== undefined && merged === at) continue;
      fields ??= copyFields(a.fields);
      setOwn(fields, name ?? key, merged);
    }
    return fields === undefined ? a : { kind: 'record', fields };
  }
  if (a.kind === 'list' && b.kind === 'list') {
    const element = mergeTypes(a.element, b.element);
    return element === a.element ? a : { kind: 'list', element };
  }
  return STRING;
}

/** The existing spelling of `key` in `fields`, compared case-insensitively. */
export function findName(fields: Record<string, unknown>, key: string): string | undefined {
  return findOwnName(fields, key);
}

export function sameType(a: FieldType, b: FieldType): boolean {
  if (a === b) return true;
  if (a.kind === 'scalar') return b.kind === 'scalar' && a.type === b.type;
  if (a.kind === 'list') return b.kind === 'list' && sameType(a.element, b.element);
  if (b.kind !== 'record') return false;
  const ak = Object.keys(a.fields);
  if (ak.length !== Object.keys(b.fields).length) return false;
  return ak.every((k) => {
    const bt = own(b.fields, k);
    return bt !== undefined && sameType(a.fields[k] as FieldType, bt);
  });
}

/**
 * Merges the types observed in a batch into a source's schema. Only real changes are listed: a
 * batch whose fields all fit the stored schema yields no change (and no DDL).
 */
export function mergeSchema(schema: TableSchema, observed: Record<string, FieldType>): SchemaMerge {
  const changes: SchemaChange[] = [];
  let columns: Record<string, FieldType> | undefined;
  for (const key of Object.keys(observed)) {
    const type = observed[key] as FieldType;
    const current = columns ?? schema.columns;
    const name = findName(current, key);
    if (name === undefined) {
      columns ??= copyFields(schema.columns);
      setOwn(columns, key, type);
      changes.push({ kind: 'add_column', column: key, type });
      continue;
    }
    if (Object.hasOwn(baseColumns, name)) continue;
    const before = current[name] as FieldType;
    const after = mergeTypes(before, type);
    if (after === before || sameType(before, after)) continue;
    columns ??= copyFields(schema.columns);
    setOwn(columns, name, after);
    const additions: SchemaChange[] = [];
    if (onlyAdditions(before, after, [name], additions)) changes.push(...additions);
    else changes.push({ kind: 'retype_column', column: name, from: before, to: after });
  }
  return { schema: columns === undefined ? schema : { columns }, changes };
}

/**
 * True when `after` is `before` plus new record fields and nothing else; collects those fields as
 * `add_field` changes (they can be added in place, without rewriting stored values).
 */
function onlyAdditions(before: FieldType, after: FieldType, path: string[], out: SchemaChange[]): boolean {
  if (before.kind === 'scalar') return after.kind === 'scalar' && after.type === before.type;
  if (before.kind === 'list') {
    return after.kind === 'list' && onlyAdditions(before.element, after.element, [...path, 'element'], out);
  }
  if (after.kind !== 'record') return false;
  for (const key of Object.keys(after.fields)) {
    const a = after.fields[key] as FieldType;
    const b = own(before.fields, key);
    if (b === undefined) out.push({ kind: 'add_field', path: [...path, key], type: a });
    else if (!onlyAdditions(b, a, [...path, key], out)) return false;
  }
  return true;
}
