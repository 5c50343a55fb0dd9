/**
 * Field names as stored: BigQuery column rules, as Logflare applies them, so the names Supabase
 * Studio queries exist.
 *
 * - every character outside `[A-Za-z0-9_]` becomes `_` (`cf-ray` → `cf_ray`, `a.b` → `a_b`);
 * - a name starting with a digit gets a leading `_` (`2xx` → `_2xx`); an empty name becomes `_`;
 * - names are cut to `maxKeyLength` characters (default 128, INGEST_MAX_KEY_LENGTH);
 * - names are unique per object ignoring case (DuckDB's rule): when two keys of one object end up
 *   equal, the later ones get `_2`, `_3`, ... so no value is lost.
 *
 * Nesting is bounded too (src/storage/limits.ts): an object or array deeper than `maxDepth` levels
 * is kept whole as its JSON text (original keys), a string in its place.
 *
 * Keys are user input: `__proto__` is a key like others (src/storage/fields.ts).
 */
import type { JsonObject, JsonValue } from '../storage/event.ts';
import { emptyFields, setOwn } from '../storage/fields.ts';
import { jsonText, wellFormed } from '../storage/json-text.ts';
import { defaultSchemaLimits } from '../storage/limits.ts';

export interface KeyLimits {
  maxDepth: number;
  maxKeyLength: number;
}

const SAFE_CHARS = /^[A-Za-z_][A-Za-z0-9_]*$/;
const LOWER_SAFE = /^[a-z_][a-z0-9_]*$/;

/** True for a name sanitising leaves as it is. */
export function safeKey(key: string, maxKeyLength: number = defaultSchemaLimits.maxKeyLength): boolean {
  return key.length <= maxKeyLength && SAFE_CHARS.test(key);
}

export function sanitiseKey(key: string, maxKeyLength: number = defaultSchemaLimits.maxKeyLength): string {
  if (safeKey(key, maxKeyLength)) return key;
  let name = key.replace(/[^A-Za-z0-9_]/g, '_');
  if (name === '' || /^[0-9]/.test(name)) name = `_${name}`;
  return name.slice(0, Math.max(1, maxKeyLength));
}

/**
 * Sanitises every key of `value` at every depth; drops null values (they carry nothing a column
 * could hold). `reserved` names (lower-case) count as taken at this level. Returns `value` itself
 * when nothing needs changing (the common case), so ingest does not copy every event.
 */
export function sanitiseObject(value: { [key: string]: unknown }, reserved?: ReadonlySet<string>, limits: KeyLimits = defaultSchemaLimits): JsonObject {
  return sanitiseLevel(value, reserved, limits, 0);
}

/** `value` is an object at nesting `level` (the event itself is level 0). */
function sanitiseLevel(value: { [key: string]: unknown }, reserved: ReadonlySet<string> | undefined, limits: KeyLimits, level: number): JsonObject {
  for (const key in value) {
    const v = value[key];
    // Lower-case safe keys cannot collide with each other, so they need no bookkeeping.
    if (v === null || v === undefined || key.length > limits.maxKeyLength || !LOWER_SAFE.test(key) || reserved?.has(key)) {
      return rebuild(value, reserved, limits, level, key, undefined);
    }
    const s = sanitiseValue(v, limits, level + 1);
    // Each value is sanitised once: the rebuild takes this result instead of redoing it (redoing
    // it at every level would cost 2^depth).
    if (s !== v) return rebuild(value, reserved, limits, level, key, s);
  }
  return value as JsonObject;
}

/**
 * A sanitised copy of `value`. Keys before `stop` need no change; `stopValue`, when given, is the
 * sanitised value of `stop`.
 */
function rebuild(
  value: { [key: string]: unknown },
  reserved: ReadonlySet<string> | undefined,
  limits: KeyLimits,
  level: number,
  stop: string,
  stopValue: JsonValue | undefined,
): JsonObject {
  const out: JsonObject = emptyFields();
  const seen = new Set<string>(reserved);
  let before = true;
  for (const key in value) {
    const v = value[key];
    if (key === stop) before = false;
    if (v === null || v === undefined) continue;
    let name = sanitiseKey(key, limits.maxKeyLength);
    let lower = name.toLowerCase();
    if (seen.has(lower)) {
      let n = 2;
      while (seen.has(`${lower}_${n}`)) n++;
      name = `${name}_${n}`;
      lower = name.toLowerCase();
    }
    seen.add(lower);
    setOwn(out, name, before ? (v as JsonValue) : key === stop && stopValue !== undefined ? stopValue : sanitiseValue(v, limits, level + 1));
  }
  return out;
}

/** `value` sits at nesting `level`: a container there beyond `maxDepth` becomes its JSON text. */
function sanitiseValue(value: unknown, limits: KeyLimits, level: number): JsonValue {
  // Neither engine stores a lone surrogate as it is.
  if (typeof value === 'string') return wellFormed(value);
  if (value === null || typeof value !== 'object') return value as JsonValue;
  if (level > limits.maxDepth) return jsonText(value);
  if (Array.isArray(value)) {
    let out: JsonValue[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      const s = sanitiseValue(item, limits, level + 1);
      if (s !== item && out === undefined) out = value.slice(0, i) as JsonValue[];
      out?.push(s);
    }
    return out ?? (value as JsonValue[]);
  }
  return sanitiseLevel(value as { [key: string]: unknown }, undefined, limits, level);
}
