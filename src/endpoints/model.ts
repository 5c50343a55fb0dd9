/**
 * An endpoint: a saved BigQuery-dialect query served over HTTP (docs/API.md §5). Its fields, their
 * rules, defaults and messages are the endpoint vocabulary (src/schemas/endpoint.ts); this module
 * applies it: the field checks of a create or patch, a new endpoint, a patch. Query validation
 * against the catalogue happens in service.ts, where the SQL layer is at hand.
 */
import { Type } from 'typebox';
import type { QuarryError } from '../errors.ts';
import {
  type Endpoint,
  EndpointCreate,
  type EndpointInput,
  EndpointPatch,
  EndpointSchema,
  MAX_CACHE_SECONDS,
  MAX_LIMIT_CEILING,
  UUID_PATTERN,
  endpointSettings,
} from '../schemas/endpoint.ts';
import { type FieldErrors, onlyProperties, schemaCheck, validationFailed as invalid } from '../schemas/validate.ts';

export type { Endpoint, EndpointInput };
export { MAX_CACHE_SECONDS, MAX_LIMIT_CEILING };

export type EndpointLanguage = Endpoint['language'];

type Defaulted = Omit<Endpoint, 'id' | 'name' | 'query' | 'created_at' | 'updated_at'>;

/** Settings of a new endpoint that the client left out: the vocabulary's defaults. */
export const endpointDefaults: Readonly<Defaulted> = Object.freeze(
  Object.fromEntries(
    Object.entries(endpointSettings)
      .filter(([, schema]) => 'default' in schema)
      .map(([key, schema]) => [key, (schema as unknown as { default: unknown }).default]),
  ) as unknown as Defaulted,
);

const UUID = new RegExp(UUID_PATTERN);

/** A path segment that parses as a UUID (hyphenated or 32 hex digits) addresses an endpoint by id. */
export function looksLikeUuid(segment: string): boolean {
  return UUID.test(segment);
}

/** The canonical (lower-case, hyphenated) form of a UUID path segment. */
export function normaliseUuid(segment: string): string {
  const hex = segment.replaceAll('-', '').toLowerCase();
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The body schemas but `params`, whose list typed-params.ts checks against the query's parameters. */
const createCheck = schemaCheck(Type.Omit(EndpointCreate, ['params']));
const patchCheck = schemaCheck(Type.Omit(EndpointPatch, ['params']));

/**
 * Checks the fields of a create (`partial` false) or an update (`partial` true) against the
 * endpoint vocabulary, all but `params` (checkParamSpecs, which needs the query's parameters).
 * Returns per-field messages; empty when valid.
 */
export function checkEndpointFields(input: unknown, partial: boolean): FieldErrors {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return { body: ['must be a JSON object of endpoint settings'] };
  return (partial ? patchCheck : createCheck).errors(input);
}

/** Throws VALIDATION_FAILED when `fields` holds any message. */
export function throwIfInvalid(fields: FieldErrors): void {
  if (Object.keys(fields).length > 0) throw validationFailed(fields);
}

/** The 422 for per-field messages, with a one-line summary of them. */
export function validationFailed(fields: FieldErrors): QuarryError {
  return invalid('endpoint', fields);
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

/** The settable fields, in storage and API order. */
export const INPUT_KEYS = Object.keys(endpointSettings) as (keyof EndpointInput)[];

/** Every field of an endpoint, in storage and API order. */
export const ENDPOINT_FIELDS = Object.keys(EndpointSchema.properties) as (keyof Endpoint)[];

/** Exactly the endpoint's fields (drops anything else an object may carry). */
export function endpointFields(e: Endpoint): Endpoint {
  return onlyProperties(EndpointSchema, e);
}

/** Only the settable fields of `input` that are present; unknown keys (id, timestamps) are dropped. */
function definedOnly(input: EndpointInput): EndpointInput {
  const out: Record<string, unknown> = {};
  for (const k of INPUT_KEYS) if (input[k] !== undefined) out[k] = input[k];
  return out as EndpointInput;
}
