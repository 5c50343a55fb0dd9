/**
 * How far a source's schema may grow (docs/INGEST.md, "Limits"). Pure: no I/O.
 *
 * - `maxFields`: leaf fields per source, at any depth (a scalar, or a list of scalars, counts one;
 *   `id`, `timestamp` and `event_message` do not count). An event that would add fields beyond it
 *   is refused with a 400 naming the first such field.
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
  maxDepth: number;
  maxKeyLength: number;
}

/** BigQuery allows 10,000 columns and 15 nested levels; key names here follow Logflare's 128. */
export const defaultSchemaLimits: SchemaLimits = Object.freeze({ maxFields: 10_000, maxDepth: 20, maxKeyLength: 128 });

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

/** Leaf fields of a table, base columns excluded. */
export function schemaLeafCount(schema: TableSchema): number {
  let n = 0;
  for (const name of Object.keys(schema.columns)) {
    if (!Object.hasOwn(baseColumns, name)) n += leafCount(schema.columns[name] as FieldType);
  }
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
    switch (change.kind) {
      case 'add_column':
        total += leafCount(change.type);
        if (total > maxFields) breach ??= change.column;
        break;
      case 'add_field':
        total += leafCount(change.type);
        if (total > maxFields) breach ??= fieldPath(change.path);
        break;
      case 'retype_column':
        total += leafCount(change.to) - leafCount(change.from);
        if (total > maxFields) breach ??= change.column;
        break;
    }
  }
  return breach === undefined || total <= maxFields ? undefined : { path: breach, limit: maxFields, total };
}

function fieldPath(path: readonly string[]): string {
  let out = '';
  for (const segment of path) out += segment === 'element' ? '[]' : out === '' ? segment : `.${segment}`;
  return out;
}
