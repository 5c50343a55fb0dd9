/**
 * Field names as stored: BigQuery column rules, as Logflare applies them, so the names Supabase
 * Studio queries exist.
 *
 * - every character outside `[A-Za-z0-9_]` becomes `_` (`cf-ray` → `cf_ray`, `a.b` → `a_b`);
 * - a name starting with a digit gets a leading `_` (`2xx` → `_2xx`); an empty name becomes `_`;
 * - names are cut to 128 characters;
 * - names are unique per object ignoring case (DuckDB's rule): when two keys of one object end up
 *   equal, the later ones get `_2`, `_3`, ... so no value is lost.
 */
import type { JsonObject, JsonValue } from '../storage/event.ts';

const MAX_NAME = 128;
/** A name sanitising leaves as it is. */
export const SAFE_KEY = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

export function sanitiseKey(key: string): string {
  if (SAFE_KEY.test(key)) return key;
  let name = key.replace(/[^A-Za-z0-9_]/g, '_');
  if (name === '' || /^[0-9]/.test(name)) name = `_${name}`;
  return name.slice(0, MAX_NAME);
}

const LOWER_SAFE = /^[a-z_][a-z0-9_]{0,127}$/;

/**
 * Sanitises every key of `value` at every depth; drops null values (they carry nothing a column
 * could hold). `reserved` names (lower-case) count as taken at this level. Returns `value` itself
 * when nothing needs changing (the common case), so ingest does not copy every event.
 */
export function sanitiseObject(value: { [key: string]: unknown }, reserved?: ReadonlySet<string>): JsonObject {
  for (const key in value) {
    const v = value[key];
    // Lower-case safe keys cannot collide with each other, so they need no bookkeeping.
    if (v === null || v === undefined || !LOWER_SAFE.test(key) || reserved?.has(key) || sanitiseValue(v) !== v) {
      return rebuild(value, reserved);
    }
  }
  return value as JsonObject;
}

function rebuild(value: { [key: string]: unknown }, reserved?: ReadonlySet<string>): JsonObject {
  const out: JsonObject = {};
  const seen = new Set<string>(reserved);
  for (const key in value) {
    const v = value[key];
    if (v === null || v === undefined) continue;
    let name = sanitiseKey(key);
    let lower = name.toLowerCase();
    if (seen.has(lower)) {
      let n = 2;
      while (seen.has(`${lower}_${n}`)) n++;
      name = `${name}_${n}`;
      lower = name.toLowerCase();
    }
    seen.add(lower);
    out[name] = sanitiseValue(v);
  }
  return out;
}

function sanitiseValue(value: unknown): JsonValue {
  if (value === null || typeof value !== 'object') return value as JsonValue;
  if (Array.isArray(value)) {
    let out: JsonValue[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      const s = sanitiseValue(item);
      if (s !== item && out === undefined) out = value.slice(0, i) as JsonValue[];
      out?.push(s);
    }
    return out ?? (value as JsonValue[]);
  }
  return sanitiseObject(value as { [key: string]: unknown });
}
