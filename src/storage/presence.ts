/**
 * The presence marker: a boolean leaf, true, that storage writes inside every record an event
 * carries (records inside records too; not objects inside lists), so a query can test that an event
 * carried a record (`CROSS JOIN UNNEST(record)` keeps only those rows, as in BigQuery) by reading one
 * narrow column instead of every field of the record (docs/PERFORMANCE.md, "Record presence").
 *
 * Its key cannot be a field's: ingest sanitises keys to `[A-Za-z0-9_]` (src/ingest/keys.ts). It is
 * storage's own: never in the catalogue, results, JSON text or schemas a user sees.
 */
import type { JsonObject, JsonValue } from './event.ts';
import { emptyFields, setOwn } from './fields.ts';

export const PRESENCE_KEY = '$present';

function isObject(v: JsonValue | undefined): v is JsonObject {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** An event's fields with the marker in every record reached through records (a copy where any). */
export function withPresence(fields: JsonObject): JsonObject {
  let out: JsonObject | undefined;
  for (const key in fields) {
    const v = fields[key];
    if (!isObject(v)) continue;
    out ??= copy(fields);
    setOwn(out, key, marked(v));
  }
  return out ?? fields;
}

function marked(record: JsonObject): JsonObject {
  const out = emptyFields<JsonValue>();
  setOwn(out, PRESENCE_KEY, true);
  for (const key in record) {
    const v = record[key] as JsonValue;
    setOwn(out, key, isObject(v) ? marked(v) : v);
  }
  return out;
}

function copy(fields: JsonObject): JsonObject {
  const out = emptyFields<JsonValue>();
  for (const key in fields) setOwn(out, key, fields[key] as JsonValue);
  return out;
}

/**
 * Removes the marker from JSON text (a record serialised by an engine, compact, keys as DuckDB or
 * ClickHouse write them). Only a key can match: inside a JSON string every `"` is escaped.
 * The same pattern is used in SQL (RE2 syntax) by the printers.
 */
export const PRESENCE_JSON_PATTERN = ',"\\$present":true|"\\$present":true,?';
