/** FieldType → DuckDB type text, and identifier quoting. */
import { emptyFields, own, setOwn } from '../../storage/fields.ts';
import { PRESENCE_JSON_PATTERN, PRESENCE_KEY } from '../../storage/presence.ts';
import type { FieldType, ScalarType } from '../../storage/schema.ts';

const scalarTypes: Record<ScalarType, string> = {
  string: 'VARCHAR',
  int: 'BIGINT',
  float: 'DOUBLE',
  bool: 'BOOLEAN',
  timestamp: 'TIMESTAMP',
};

/**
 * The catch-all column of fields beyond the typed budget (src/storage/overflow.ts): a JSON object
 * text per event holding only those fields. Its name cannot be a sanitised key (those are
 * `[A-Za-z0-9_]`), so it never meets a field, and queries reach it only through the catalogue.
 */
export const OVERFLOW_COLUMN = '$overflow';

export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

export function quoteString(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/** JSON text (VARCHAR) of stored records without their presence markers. */
export function withoutPresenceText(text: string): string {
  return `regexp_replace(${text}, ${quoteString(PRESENCE_JSON_PATTERN)}, '', 'g')`;
}

/** The presence marker's STRUCT member (src/storage/presence.ts), last, as a migration adds it. */
const MARKER_MEMBER = `${quoteIdent(PRESENCE_KEY)} BOOLEAN`;

/**
 * The stored type of a field: a record outside lists carries the presence marker as its last
 * member (records inside lists do not: their elements are read whole).
 */
export function duckDbType(type: FieldType, inList = false): string {
  switch (type.kind) {
    case 'scalar':
      return scalarTypes[type.type];
    case 'list':
      return `${duckDbType(type.element, true)}[]`;
    case 'record': {
      const members = Object.entries(type.fields).map(([name, t]) => `${quoteIdent(name)} ${duckDbType(t, inList)}`);
      return `STRUCT(${(inList ? members : [...members, MARKER_MEMBER]).join(', ')})`;
    }
  }
}

/**
 * `expr` (a value of `type` without markers, as `json_transform` reads it) with the presence
 * marker set in every record outside lists: an absent record stays NULL.
 */
export function markedExpression(expr: string, type: FieldType): string {
  if (type.kind !== 'record') return expr;
  const nested = Object.entries(type.fields).filter(([, t]) => t.kind === 'record');
  const marker = `${quoteIdent(PRESENCE_KEY)} := true`;
  if (nested.length === 0) return `CASE WHEN ${expr} IS NULL THEN NULL ELSE struct_insert(${expr}, ${marker}) END`;
  const members = Object.entries(type.fields).map(
    ([name, t]) => `${quoteIdent(name)} := ${markedExpression(`struct_extract(${expr}, ${quoteString(name)})`, t)}`,
  );
  return `CASE WHEN ${expr} IS NULL THEN NULL ELSE struct_pack(${[...members, marker].join(', ')}) END`;
}

/**
 * Where a converted value's overflowed fields are (src/storage/overflow.ts): the overflow's type at
 * this place, and its path there. A record that becomes text takes them into its text.
 */
export interface OverflowAt {
  type: FieldType | undefined;
  path: readonly string[];
}

/**
 * A SQL expression converting `expr` (of type `from`) to `to`, where `to` is `from` merged with
 * something else under the conflict rule (src/storage/infer.ts). Used to rewrite a column in place
 * when its type changes; values read back exactly as if they had been ingested with the new type.
 * With `kept`, a record that becomes text merges in its fields from the overflow column.
 */
export function convertExpression(expr: string, from: FieldType, to: FieldType, depth = 0, kept?: OverflowAt, inList = false): string {
  if (to.kind === 'scalar') {
    if (from.kind === 'scalar') return from.type === to.type ? expr : `CAST(${expr} AS ${scalarTypes[to.type]})`;
    // A record or list widened to string keeps its JSON text.
    const text = withoutPresenceText(`CAST(to_json(${expr}) AS VARCHAR)`);
    if (kept?.type?.kind !== 'record') return text;
    const path = `$${kept.path.map((p) => `.${JSON.stringify(p)}`).join('')}`;
    const extra = `json_extract(${quoteIdent(OVERFLOW_COLUMN)}, ${quoteString(path)})`;
    return `CASE WHEN ${extra} IS NULL THEN ${text} ELSE ${withoutPresenceText(`CAST(json_merge_patch(COALESCE(to_json(${expr}), '{}'), ${extra}) AS VARCHAR)`)} END`;
  }
  if (to.kind === 'list' && from.kind === 'list') {
    const v = `x${depth}`;
    return `list_transform(${expr}, lambda ${v}: ${convertExpression(v, from.element, to.element, depth + 1, undefined, true)})`;
  }
  if (to.kind === 'record' && from.kind === 'record') {
    const parts = Object.entries(to.fields).map(([name, t]) => {
      const old = own(from.fields, name);
      const inner = kept?.type?.kind === 'record' ? { type: own(kept.type.fields, name), path: [...kept.path, name] } : undefined;
      const value =
        old === undefined
          ? `CAST(NULL AS ${duckDbType(t, inList)})`
          : convertExpression(`struct_extract(${expr}, ${quoteString(name)})`, old, t, depth + 1, inner, inList);
      return `${quoteIdent(name)} := ${value}`;
    });
    const members = inList ? parts : [...parts, `${quoteIdent(PRESENCE_KEY)} := true`];
    return `CASE WHEN ${expr} IS NULL THEN NULL ELSE struct_pack(${members.join(', ')}) END`;
  }
  throw new Error(`cannot convert ${duckDbType(from)} to ${duckDbType(to)}`);
}

/** The structure argument of DuckDB's `json_transform` for `type` (lenient about absent keys). */
export function jsonStructure(type: FieldType): unknown {
  switch (type.kind) {
    case 'scalar':
      return scalarTypes[type.type];
    case 'list':
      return [jsonStructure(type.element)];
    case 'record': {
      const out = emptyFields<unknown>();
      for (const [name, t] of Object.entries(type.fields)) setOwn(out, name, jsonStructure(t));
      return out;
    }
  }
}
