/**
 * The source a JSON object body names (docs/INGEST.md, "The API"). Logflare finds the source in the
 * request's parameters, into which Phoenix merges the top-level keys of a JSON object body, so a
 * body `{"source_name": "app", ...}` names its source as `?source_name=app` would. Quarry reads it
 * only when neither the query nor a header names one.
 */

/** Keys holding a source id, then keys holding a name, in the order they are looked at (as in the query). */
export const SOURCE_ID_KEYS = ['source', 'collection'] as const;
export const SOURCE_NAME_KEYS = ['source_name', 'collection_name'] as const;

/** A source named by id or by name; `key` when a body key named it (for messages). */
export interface NamedSource {
  by: 'id' | 'name';
  value: string;
  key?: string;
}

/**
 * The source a body sent as JSON names with a top-level key, or undefined (not JSON, not an object,
 * no such key holding non-empty text). Never throws: a body that does not parse is the route's to refuse.
 */
export function sourceInBody(text: string, contentType: string | undefined): NamedSource | undefined {
  if (!sentAsJson(contentType) || !/^\s*\{/.test(text)) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const body = value as Record<string, unknown>;
  for (const [by, keys] of [
    ['id', SOURCE_ID_KEYS],
    ['name', SOURCE_NAME_KEYS],
  ] as const) {
    for (const key of keys) {
      const v = Object.hasOwn(body, key) ? body[key] : undefined;
      if (typeof v === 'string' && v !== '') return { by, value: v, key };
    }
  }
  return undefined;
}

/** Whether a top-level key of an event object is one that may name the source (its value text). */
export function isSourceKey(key: string, value: unknown): boolean {
  return typeof value === 'string' && ((SOURCE_ID_KEYS as readonly string[]).includes(key) || (SOURCE_NAME_KEYS as readonly string[]).includes(key));
}

/**
 * What Logflare's parsers turn into parameters: `application/json`, `application/<x>+json` and
 * `application/csp-report` (read as JSON). No Content-Type is read as JSON by Quarry's routes, so it
 * counts too; NDJSON and text bodies never name a source.
 */
function sentAsJson(contentType: string | undefined): boolean {
  const type = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  return type === '' || type === 'application/json' || type === 'application/csp-report' || (type.startsWith('application/') && type.endsWith('+json'));
}
