/**
 * An endpoint: a saved BigQuery-dialect query served over HTTP (docs/API.md §5), with the field
 * rules that do not need the SQL layer. Query validation against the catalogue happens in
 * service.ts, where the SQL layer is at hand.
 */
import { QuarryError } from '../errors.ts';
import type { ParamSpec } from './typed-params.ts';

export type EndpointLanguage = 'bq_sql';

export interface Endpoint {
  /** UUID. */
  id: string;
  /** Unique; also addresses the endpoint in the query path. */
  name: string;
  description: string | null;
  query: string;
  language: EndpointLanguage;
  /** Callers may replace the final SELECT with their own `sql` or `lql`. */
  sandboxable: boolean;
  /** At most this many rows come back, 1..10000. */
  max_limit: number;
  /** 0 = results are not cached. */
  cache_duration_seconds: number;
  /** Background refresh interval of a live cache entry; 0 = no refresh. */
  proactive_requerying_seconds: number;
  enable_auth: boolean;
  redact_pii: boolean;
  /** Free-form, comma separated `key=value` labels (kept for Logflare compatibility). */
  labels: string | null;
  /** Typed parameters (typed-params.ts); null: every parameter binds as a string. */
  params: ParamSpec[] | null;
  created_at: string;
  updated_at: string;
}

/** What a client may set. `name` and `query` are required on create; everything is optional on patch. */
export interface EndpointInput {
  name?: string;
  description?: string | null;
  query?: string;
  language?: EndpointLanguage;
  sandboxable?: boolean;
  max_limit?: number;
  cache_duration_seconds?: number;
  proactive_requerying_seconds?: number;
  enable_auth?: boolean;
  redact_pii?: boolean;
  labels?: string | null;
  params?: ParamSpec[] | null;
}

/** Settings of a new endpoint that the client left out. */
export const endpointDefaults = {
  description: null,
  language: 'bq_sql',
  sandboxable: false,
  max_limit: 1000,
  cache_duration_seconds: 0,
  proactive_requerying_seconds: 1800,
  enable_auth: true,
  redact_pii: false,
  labels: null,
  params: null,
} as const satisfies Omit<Endpoint, 'id' | 'name' | 'query' | 'created_at' | 'updated_at'>;

export const MAX_LIMIT_CEILING = 10_000;
/** A week: longer caches would mostly hold results nobody asks for. */
export const MAX_CACHE_SECONDS = 7 * 24 * 3600;

const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const UUID_PATTERN = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;

/** A path segment that parses as a UUID (hyphenated or 32 hex digits) addresses an endpoint by id. */
export function looksLikeUuid(segment: string): boolean {
  return UUID_PATTERN.test(segment);
}

/** The canonical (lower-case, hyphenated) form of a UUID path segment. */
export function normaliseUuid(segment: string): string {
  const hex = segment.replaceAll('-', '').toLowerCase();
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function wholeIn(v: unknown, min: number, max: number): boolean {
  return typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;
}

/**
 * Checks the fields of a create (`partial` false) or an update (`partial` true) that do not need
 * the SQL layer. Returns per-field messages; empty when valid.
 */
export function checkEndpointFields(input: EndpointInput, partial: boolean): Record<string, string[]> {
  const fields: Record<string, string[]> = {};
  const add = (field: string, message: string) => {
    fields[field] ??= [];
    fields[field].push(message);
  };
  if (!partial || input.name !== undefined) {
    if (typeof input.name !== 'string' || input.name === '') add('name', 'is required');
    else if (looksLikeUuid(input.name)) add('name', 'must not look like a UUID (it would be read as an id)');
    else if (!NAME_PATTERN.test(input.name)) {
      add('name', 'must be 1 to 128 letters, digits, dots, dashes or underscores, starting with a letter or digit');
    }
  }
  if (!partial || input.query !== undefined) {
    if (typeof input.query !== 'string' || input.query.trim() === '') add('query', 'is required');
  }
  if (input.language !== undefined && input.language !== 'bq_sql') add('language', 'must be bq_sql');
  if (input.max_limit !== undefined && !wholeIn(input.max_limit, 1, MAX_LIMIT_CEILING)) {
    add('max_limit', `must be a whole number from 1 to ${MAX_LIMIT_CEILING}`);
  }
  if (input.cache_duration_seconds !== undefined && !wholeIn(input.cache_duration_seconds, 0, MAX_CACHE_SECONDS)) {
    add('cache_duration_seconds', `must be a whole number of seconds from 0 (no cache) to ${MAX_CACHE_SECONDS}`);
  }
  if (
    input.proactive_requerying_seconds !== undefined &&
    !wholeIn(input.proactive_requerying_seconds, 0, MAX_CACHE_SECONDS)
  ) {
    add('proactive_requerying_seconds', `must be a whole number of seconds from 0 (no refresh) to ${MAX_CACHE_SECONDS}`);
  }
  return fields;
}

/** Throws VALIDATION_FAILED when `fields` holds any message. */
export function throwIfInvalid(fields: Record<string, string[]>): void {
  if (Object.keys(fields).length > 0) throw validationFailed(fields);
}

/** The 422 for per-field messages, with a one-line summary of them. */
export function validationFailed(fields: Record<string, string[]>): QuarryError {
  const summary = Object.entries(fields)
    .map(([f, msgs]) => `${f} ${msgs.join('; ')}`)
    .join('. ');
  return new QuarryError('VALIDATION_FAILED', `The endpoint is not valid: ${summary}.`, { fields });
}

/** A new endpoint from a validated create input. */
export function newEndpoint(id: string, input: EndpointInput & { name: string; query: string }, now: string): Endpoint {
  return {
    ...endpointDefaults,
    ...definedOnly(input),
    id,
    name: input.name,
    query: input.query,
    created_at: now,
    updated_at: now,
  };
}

/** `current` with the set fields of `patch` applied. */
export function applyPatch(current: Endpoint, patch: EndpointInput, now: string): Endpoint {
  return { ...current, ...definedOnly(patch), id: current.id, created_at: current.created_at, updated_at: now };
}

export const INPUT_KEYS = [
  'name',
  'description',
  'query',
  'language',
  'sandboxable',
  'max_limit',
  'cache_duration_seconds',
  'proactive_requerying_seconds',
  'enable_auth',
  'redact_pii',
  'labels',
  'params',
] as const satisfies readonly (keyof EndpointInput)[];

/** Every field of an endpoint, in storage and API order. */
export const ENDPOINT_FIELDS = ['id', ...INPUT_KEYS, 'created_at', 'updated_at'] as const satisfies readonly (keyof Endpoint)[];

/** Exactly the endpoint's fields (drops anything else an object may carry). */
export function endpointFields(e: Endpoint): Endpoint {
  const out: Record<string, unknown> = {};
  for (const k of ENDPOINT_FIELDS) out[k] = e[k];
  return out as unknown as Endpoint;
}

/** Only the settable fields of `input` that are present; unknown keys (id, timestamps) are dropped. */
function definedOnly(input: EndpointInput): EndpointInput {
  const out: Record<string, unknown> = {};
  for (const k of INPUT_KEYS) if (input[k] !== undefined) out[k] = input[k];
  return out as EndpointInput;
}
