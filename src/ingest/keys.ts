/**
 * Field names as stored: column-safe names, so the names Supabase Studio queries exist. Each
 * source has a key rule (`Source.key_rule`, docs/INGEST.md "Key names"):
 *
 * - `logflare` (every source created since): Logflare's own renaming (its `IngestTransformers`,
 *   transform `:clean_to_bigquery_column_spec`), see `logflareKey`;
 * - `legacy` (sources created before it): every character outside `[A-Za-z0-9_]` becomes `_`, a
 *   leading digit gets a leading `_`, names are cut to `maxKeyLength` characters, see `legacyKey`.
 *   Kept so a source's existing columns keep receiving the same names.
 *
 * Under both rules an empty name is stored as `_` (neither engine has a column without a name),
 * and names are unique per object ignoring case (DuckDB's rule): when two keys of one object end up
 * equal, the later ones get `_2`, `_3`, ... so no value is lost.
 *
 * Nesting is bounded too (src/storage/limits.ts): an object or array deeper than `maxDepth` levels
 * is kept whole as its JSON text (original keys), a string in its place.
 *
 * Keys are user input: `__proto__` is a key like others (src/storage/fields.ts).
 */
import { DEFAULT_KEY_RULE, type KeyRule } from '../schemas/source.ts';
import type { JsonObject, JsonValue } from '../storage/event.ts';
import { emptyFields, setOwn } from '../storage/fields.ts';
import { jsonText, wellFormed } from '../storage/json-text.ts';
import { defaultSchemaLimits } from '../storage/limits.ts';

export { DEFAULT_KEY_RULE, type KeyRule };

export interface KeyLimits {
  maxDepth: number;
  maxKeyLength: number;
}

interface KeyOptions extends KeyLimits {
  rule: KeyRule;
}

const SAFE_CHARS = /^[A-Za-z_][A-Za-z0-9_]*$/;
const LOWER_SAFE = /^[a-z_][a-z0-9_]*$/;

/**
 * Column-name prefixes BigQuery reserves, as Logflare lists them (case-sensitive, as it matches
 * them): a key starting with one gets a leading `_`.
 */
export const RESERVED_PREFIXES: readonly string[] = [
  '_TABLE_',
  '_FILE_',
  '_PARTITION',
  '_ROW_TIMESTAMP',
  '__ROOT__',
  '_COLIDENTIFIER',
  '_CHANGE_SEQUENCE_NUMBER',
  '_CHANGE_TYPE',
  '_CHANGE_TIMESTAMP',
];

function safeChar(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
}

function reservedPrefix(key: string): boolean {
  if (key.charCodeAt(0) !== 95 /* _ */) return false;
  for (const p of RESERVED_PREFIXES) if (key.startsWith(p)) return true;
  return false;
}

/** True for a name the source's rule stores as it is (an empty name never is: it becomes `_`). */
export function safeKey(key: string, maxKeyLength: number = defaultSchemaLimits.maxKeyLength, rule: KeyRule = DEFAULT_KEY_RULE): boolean {
  return key.length <= maxKeyLength && SAFE_CHARS.test(key) && (rule === 'legacy' || !reservedPrefix(key));
}

/**
 * Logflare's renaming of one key. The key is read code point by code point:
 * - `-` becomes `_`; any other code point outside `[A-Za-z0-9_]` (a multi-byte one included)
 *   becomes one `_`;
 * - one leading `_` is added for each of: the key had a `-`; it had another such character; it
 *   starts with a reserved prefix (`RESERVED_PREFIXES`); it starts with a digit, counted only when
 *   neither a `-` nor a reserved prefix already added one (`1-key` → `_1_key`, `1key!` → `__1key_`);
 * - a result longer than `maxKeyLength` (128) is cut to that length and gets one more leading `_`
 *   (129 characters then). The result is ASCII, so characters and bytes are the same count.
 *
 * An empty key is returned empty, as Logflare does (the object level stores it as `_`).
 */
export function logflareKey(key: string, maxKeyLength: number = defaultSchemaLimits.maxKeyLength): string {
  if (key === '' || (key.length <= maxKeyLength && SAFE_CHARS.test(key) && !reservedPrefix(key))) return key;
  let body = '';
  let dash = false;
  let other = false;
  for (const ch of key) {
    if (ch === '-') {
      dash = true;
      body += '_';
    } else if (ch.length === 1 && safeChar(ch.charCodeAt(0))) {
      body += ch;
    } else {
      other = true;
      body += '_';
    }
  }
  const prefixed = reservedPrefix(key);
  const digit = !prefixed && !dash && /^[0-9]/.test(key);
  const name = '_'.repeat(Number(prefixed) + Number(dash) + Number(digit) + Number(other)) + body;
  return name.length > maxKeyLength ? `_${name.slice(0, maxKeyLength)}` : name;
}

/** Quarry's rule before Logflare's was adopted: kept for the sources created under it. */
export function legacyKey(key: string, maxKeyLength: number = defaultSchemaLimits.maxKeyLength): string {
  if (safeKey(key, maxKeyLength, 'legacy')) return key;
  let name = key.replace(/[^A-Za-z0-9_]/g, '_');
  if (name === '' || /^[0-9]/.test(name)) name = `_${name}`;
  return name.slice(0, Math.max(1, maxKeyLength));
}

/** The stored name of one key under `rule`, before making it unique within its object. */
export function sanitiseKey(key: string, maxKeyLength: number = defaultSchemaLimits.maxKeyLength, rule: KeyRule = DEFAULT_KEY_RULE): string {
  if (rule === 'legacy') return legacyKey(key, maxKeyLength);
  return key === '' ? '_' : logflareKey(key, maxKeyLength);
}

/**
 * Sanitises every key of `value` at every depth; drops null values (they carry nothing a column
 * could hold). `reserved` names (lower-case) count as taken at this level. Returns `value` itself
 * when nothing needs changing (the common case), so ingest does not copy every event.
 */
export function sanitiseObject(
  value: { [key: string]: unknown },
  reserved?: ReadonlySet<string>,
  limits: KeyLimits = defaultSchemaLimits,
  rule: KeyRule = DEFAULT_KEY_RULE,
): JsonObject {
  return sanitiseLevel(value, reserved, { maxDepth: limits.maxDepth, maxKeyLength: limits.maxKeyLength, rule }, 0);
}

/** `value` is an object at nesting `level` (the event itself is level 0). */
function sanitiseLevel(value: { [key: string]: unknown }, reserved: ReadonlySet<string> | undefined, limits: KeyOptions, level: number): JsonObject {
  for (const key in value) {
    const v = value[key];
    // Lower-case safe keys are kept by both rules (the reserved prefixes are upper-case) and cannot
    // collide with each other, so they need no bookkeeping.
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
  limits: KeyOptions,
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
    let name = sanitiseKey(key, limits.maxKeyLength, limits.rule);
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
function sanitiseValue(value: unknown, limits: KeyOptions, level: number): JsonValue {
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
