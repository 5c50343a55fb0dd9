/**
 * How far a source's schema may grow (docs/INGEST.md, "Limits"). Pure: no I/O.
 *
 * - `maxFields`: leaf fields per source, at any depth (a scalar, or a list of scalars, counts one;
 *   `id`, `timestamp` and `event_message` do not count). An event that would add fields beyond it
 *   is refused with a 400 naming the first such field. Fields in the overflow count too.
 * - `maxTypedFields`: leaf fields kept as typed columns; fields arriving beyond it are kept in the
 *   table's catch-all column (src/storage/overflow.ts), when the engine has one.
 * - `maxDepth`: objects and arrays nest at most this many levels inside an event (`metadata` is
 *   level 1, `metadata.request` level 2); a deeper object or array is kept, whole, as its JSON text
 *   in a string field at its place.
 * - `maxKeyLength`: longer key names are cut to this length (then made unique, see keys.ts).
 */
import type { SchemaChange } from './infer.ts';
import type { FieldType, TableSchema } from './schema.ts';
import { baseColumns } from './schema.ts';

export interface SchemaLimits {
  maxFields: number;
  /** Leaf fields kept as typed columns; later ones go to the overflow (src/storage/overflow.ts). */
  maxTypedFields: number;
  maxDepth: number;
  maxKeyLength: number;
}

/** BigQuery allows 10,000 columns and 15 nested levels; key names here follow Logflare's 128. */
export const defaultSchemaLimits: SchemaLimits = Object.freeze({ maxFields: 10_000, maxTypedFields: 64, maxDepth: 20, maxKeyLength: 128 });

/** Leaf fields of one type. */
export function leafCount(type: FieldType): number {
  switch (type.kind) {
    case 'scalar':
      return 1;
    case 'list':
      return leafCount(type.element);
    case 'record': {
      let n = 0;
      for (const key of Object.keys(type.fields)) n += leafCount(type.fields[key] as FieldType);
      return n;
    }
  }
}

/** Leaf fields of a table, typed or kept in its overflow, base columns excluded. */
export function schemaLeafCount(schema: TableSchema): number {
  let n = 0;
  for (const name of Object.keys(schema.columns)) {
    if (!Object.hasOwn(baseColumns, name)) n += leafCount(schema.columns[name] as FieldType);
  }
  if (schema.overflow !== undefined) n += leafCount({ kind: 'record', fields: schema.overflow });
  return n;
}

export interface FieldLimitBreach {
  /** The first new field beyond the limit, as a dotted path (`[]` steps into a list). */
  path: string;
  limit: number;
  /** Fields the source would have had. */
  total: number;
}

/**
 * Whether applying `changes` (from mergeSchema) to `before` stays within `maxFields`; the first
 * change that goes past it otherwise.
 */
export function checkFieldLimit(before: TableSchema, changes: readonly SchemaChange[], maxFields: number): FieldLimitBreach | undefined {
  if (changes.length === 0 || !Number.isFinite(maxFields)) return undefined;
  let total = schemaLeafCount(before);
  let breach: string | undefined;
  for (const change of changes) {
    total += added(change);
    if (total > maxFields) breach ??= changedField(change);
  }
  return breach === undefined || total <= maxFields ? undefined : { path: breach, limit: maxFields, total };
}

/** Leaf fields a change adds (negative when a retype leaves fewer). */
function added(change: SchemaChange): number {
  switch (change.kind) {
    case 'add_column':
    case 'add_field':
    case 'overflow_field':
      return leafCount(change.type);
    case 'retype_column':
    case 'overflow_retype':
      return leafCount(change.to) - leafCount(change.from);
  }
}

/** The field a change is about, as a dotted path. */
function changedField(change: SchemaChange): string {
  return change.kind === 'add_column' || change.kind === 'retype_column' ? change.column : fieldPath(change.path);
}

function fieldPath(path: readonly string[]): string {
  let out = '';
  for (const segment of path) out += segment === 'element' ? '[]' : out === '' ? segment : `.${segment}`;
  return out;
}
