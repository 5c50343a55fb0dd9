/**
 * Request parameters of an endpoint run (docs/API.md §4): merged from the query string and a JSON
 * body, every declared `@param` bound as a string or NULL, and the reserved `sql` / `lql`.
 */
import type { ParamValue } from '../query/port.ts';

/** Parameters as they arrive: query string values (string or repeated → array) or JSON body values. */
export type RawParams = Readonly<Record<string, unknown>>;

/** Bound values: strings (untyped parameters) or typed values (an endpoint's typed parameters). */
export type BoundParams = Record<string, ParamValue | null>;

/** Parameter names that are never bound to a saved query's `@param`. */
export const RESERVED_PARAMS: ReadonlySet<string> = new Set(['sql', 'lql']);

/** Query string and body merged; a body value wins over a query-string value of the same name. */
export function mergeParams(query: unknown, body: unknown): Record<string, unknown> {
  // No prototype: a `__proto__` key is just a parameter name here.
  const out: Record<string, unknown> = Object.create(null);
  for (const source of [query, body]) {
    if (source === null || typeof source !== 'object' || Array.isArray(source)) continue;
    for (const [k, v] of Object.entries(source)) if (v !== undefined) out[k] = v;
  }
  return out;
}

/**
 * The string a raw value binds as, or null. A repeated query-string parameter binds its last
 * value; JSON numbers and booleans bind as their text; objects and arrays as their JSON.
 */
export function paramString(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) {
    return value.length === 0 ? null : (value[value.length - 1] as string);
  }
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return JSON.stringify(value);
}

/** Every declared name bound: its value as a string, or null when absent. Undeclared names are ignored. */
export function bindDeclared(declared: readonly string[], raw: RawParams): BoundParams {
  const bound: BoundParams = {};
  for (const name of declared) {
    if (RESERVED_PARAMS.has(name)) continue;
    bound[name] = Object.hasOwn(raw, name) ? paramString(raw[name]) : null;
  }
  return bound;
}

export type CallerQuery = { kind: 'sql'; text: string } | { kind: 'lql'; text: string } | null;

/** The caller's own query, if any: a non-blank `sql` wins over `lql`. */
export function callerQuery(raw: RawParams): CallerQuery {
  const sql = paramString(raw.sql);
  if (sql !== null && sql.trim() !== '') return { kind: 'sql', text: sql };
  const lql = paramString(raw.lql);
  if (lql !== null && lql.trim() !== '') return { kind: 'lql', text: lql };
  return null;
}

/**
 * The `LF-ENDPOINT-REDACT-PII` header decides redaction when present (`true`, case-insensitive,
 * turns it on; any other value off); otherwise the endpoint's own setting does.
 */
export function redactionFor(header: string | string[] | undefined, endpointDefault: boolean): boolean {
  const value = Array.isArray(header) ? header[header.length - 1] : header;
  if (value === undefined) return endpointDefault;
  return value.trim().toLowerCase() === 'true';
}
