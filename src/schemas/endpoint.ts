/**
 * The endpoint vocabulary (docs/API.md §5): every field of a saved endpoint, once, with its rule,
 * its default, its description and what a client is told when it breaks the rule. From it come the
 * `Endpoint` and `EndpointInput` types, the field checks of a create, replace or patch
 * (src/endpoints/model.ts; the query and the typed parameters' cross-checks need the SQL layer and
 * run in the service), the defaults of a new endpoint, the stored document's fields and the
 * OpenAPI document's `Endpoint` and request bodies.
 */
import { type Static, Type } from 'typebox';
import { EndpointParams } from './typed-param.ts';

export const MAX_LIMIT_CEILING = 10_000;
/** A week: longer caches would mostly hold results nobody asks for. */
export const MAX_CACHE_SECONDS = 7 * 24 * 3600;

/** An endpoint's name: also how the query path addresses it. */
export const ENDPOINT_NAME_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$';
/** A UUID, hyphenated or as 32 hex digits: a path segment like this addresses an endpoint by id. */
export const UUID_PATTERN = '^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$';

const textOrNull = (description?: string) =>
  Type.Union([Type.String(), Type.Null()], { default: null, errorMessage: 'must be text or null', ...(description ? { description } : {}) });

const flag = (byDefault: boolean, description: string) => Type.Boolean({ default: byDefault, description, errorMessage: 'must be true or false' });

const seconds = (byDefault: number, zero: string, description: string) =>
  Type.Integer({
    minimum: 0,
    maximum: MAX_CACHE_SECONDS,
    default: byDefault,
    description,
    errorMessage: `must be a whole number of seconds from 0 (${zero}) to ${MAX_CACHE_SECONDS}`,
  });

/** What a client may set, in storage and API order. `name` and `query` have no default. */
export const endpointSettings = {
  name: Type.String({
    pattern: ENDPOINT_NAME_PATTERN,
    not: { type: 'string', pattern: UUID_PATTERN },
    description: 'Unique; also addresses the endpoint in the query path: letters, digits, `.`, `-`, `_`, at most 128.',
    examples: ['logs.all'],
    errorMessage: {
      type: 'is required',
      pattern: 'must be 1 to 128 letters, digits, dots, dashes or underscores, starting with a letter or digit',
      not: 'must not look like a UUID (it would be read as an id)',
    },
  }),
  description: textOrNull(),
  query: Type.String({
    pattern: '\\S',
    description: 'BigQuery-dialect SQL with `@name` parameters: CTEs followed by a final SELECT. Validated at save time.',
    errorMessage: 'is required',
  }),
  language: Type.Literal('bq_sql', { default: 'bq_sql', errorMessage: 'must be bq_sql' }),
  sandboxable: flag(false, 'Callers may send their own `sql`/`lql` over the CTEs.'),
  max_limit: Type.Integer({
    minimum: 1,
    maximum: MAX_LIMIT_CEILING,
    default: 1000,
    description: 'At most this many rows come back.',
    errorMessage: `must be a whole number from 1 to ${MAX_LIMIT_CEILING}`,
  }),
  cache_duration_seconds: seconds(0, 'no cache', 'How long a result is cached, from its computation; 0 = no cache.'),
  proactive_requerying_seconds: seconds(1800, 'no refresh', 'A live cached result is recomputed in the background this often; 0 = never.'),
  enable_auth: flag(true, 'false: anyone may run the endpoint without a token.'),
  redact_pii: flag(false, 'Redact IP addresses in results unless the request header says otherwise.'),
  labels: textOrNull('Comma-separated `key=value` labels (kept for Logflare compatibility).'),
  params: EndpointParams,
};

/** An endpoint as stored and returned. */
export const EndpointSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid', description: 'Chosen by the service.' }),
    ...endpointSettings,
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'Endpoint' },
);

export type Endpoint = Static<typeof EndpointSchema>;

/** The body of a create or replace: `name` and `query` required, the rest take their defaults. */
export const EndpointCreate = Type.Object(
  { ...Type.Partial(Type.Object(endpointSettings)).properties, name: endpointSettings.name, query: endpointSettings.query },
  { description: 'Unknown fields (id, created_at, ...) are ignored.' },
);

/** The body of a patch: only the fields given change. */
export const EndpointPatch = Type.Partial(EndpointCreate);

/** What a client may set; every field optional (a create needs `name` and `query`). */
export type EndpointInput = Static<typeof EndpointPatch>;
