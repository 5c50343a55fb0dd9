/**
 * Ad hoc querying (docs/API.md, "Ad hoc queries"): `GET`/`POST /api/query`, Logflare's query API.
 * The SQL runs exactly as a saved endpoint's query would: as a transient endpoint that is never
 * stored (no cache, not sandboxable, at most 1000 rows), through the EndpointRunner, so validation,
 * the time limit, admission, the row and byte caps and error mapping are the endpoints' own.
 * Management scope only (`private`); no CORS, as Logflare serves it from its management API.
 */
import { finished } from 'node:stream';
import { type FastifyPluginAsyncTypebox, Type } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Auth } from '../auth/auth.ts';
import { type Endpoint, endpointDefaults } from '../endpoints/model.ts';
import { mergeParams, paramString } from '../endpoints/params.ts';
import type { EndpointRunner } from '../endpoints/runner.ts';
import { QuarryError } from '../errors.ts';
import { CONTENT_TYPES, formatBody } from './formats.ts';
import { ErrorResponse, authErrors } from './schemas.ts';

export interface QueryRoutesOptions {
  auth: Auth;
  runner: EndpointRunner;
}

/** Logflare caps the ad hoc query API at this many rows. */
export const AD_HOC_MAX_ROWS = 1000;

/** The parameters that carry the query, in the order they are looked at; never bound as `@name`. */
const QUERY_PARAMS = ['sql', 'bq_sql'] as const;
/** Logflare's other dialects: Quarry speaks BigQuery SQL only. */
const OTHER_DIALECTS = ['pg_sql', 'ch_sql'] as const;
/** Never bound to a `@name` either (the endpoints' reserved `lql`, the credential). */
const NOT_BOUND = new Set<string>([...QUERY_PARAMS, ...OTHER_DIALECTS, 'lql', 'api_key']);

/**
 * One id for every ad hoc run: the runner keeps one parsed query per endpoint id (replaced when the
 * query text changes), so a fixed id keeps that to a single entry however many queries are asked.
 */
const AD_HOC_ID = '00000000-0000-4000-8000-00000000a40c';
const EPOCH = new Date(0).toISOString();

/** A saved-query definition for `sql` that is never stored. */
export function adHocEndpoint(sql: string): Endpoint {
  return {
    ...endpointDefaults,
    id: AD_HOC_ID,
    name: 'ad hoc query',
    query: sql,
    sandboxable: false,
    max_limit: AD_HOC_MAX_ROWS,
    cache_duration_seconds: 0,
    proactive_requerying_seconds: 0,
    enable_auth: true,
    redact_pii: false,
    created_at: EPOCH,
    updated_at: EPOCH,
  };
}

/** The SQL text of a request, or a 400 that says what to send. */
export function adHocSql(params: Readonly<Record<string, unknown>>): string {
  for (const name of QUERY_PARAMS) {
    const text = paramString(params[name]);
    if (text !== null && text.trim() !== '') return text;
  }
  for (const name of OTHER_DIALECTS) {
    if (paramString(params[name]) !== null) {
      throw new QuarryError(
        'BAD_REQUEST',
        `The "${name}" parameter is not supported: Quarry queries are BigQuery-dialect SQL; send the query as "sql" (or "bq_sql").`,
      );
    }
  }
  throw new QuarryError('BAD_REQUEST', 'A query is required: send BigQuery-dialect SQL as the "sql" (or "bq_sql") parameter.');
}

const queryFields = {
  sql: Type.Optional(Type.String({ description: 'A BigQuery-dialect SELECT reading sources by name, with optional `@name` parameters.' })),
  bq_sql: Type.Optional(Type.String({ description: "The same as `sql` (Logflare's name for BigQuery SQL)." })),
  pg_sql: Type.Optional(Type.String({ description: 'Not supported: refused with 400.' })),
  ch_sql: Type.Optional(Type.String({ description: 'Not supported: refused with 400.' })),
};

const QueryString = Type.Object(queryFields, {
  additionalProperties: true,
  description: "Every other parameter is bound, as a string, to the query's `@name` of the same name (absent: NULL).",
});

const Body = Type.Object(queryFields, {
  additionalProperties: true,
  description: 'The query and its parameters as a JSON object; a value here wins over the query string.',
});

const Result = Type.Object(
  { result: Type.Array(Type.Record(Type.String(), Type.Unknown()), { description: `At most ${AD_HOC_MAX_ROWS} rows.` }) },
  { description: 'The rows, as a saved endpoint returns them.' },
);

const responses = { 200: Result, 400: ErrorResponse, ...authErrors, 500: ErrorResponse, 503: ErrorResponse, 504: ErrorResponse };

export const queryRoutes: FastifyPluginAsyncTypebox<QueryRoutesOptions> = async (app, { auth, runner }) => {
  async function run(req: FastifyRequest, reply: FastifyReply, body: unknown) {
    const token = auth.require(req, { kind: 'manage' });
    const merged = mergeParams(req.query, body);
    const sql = adHocSql(merged);
    const params: Record<string, unknown> = Object.create(null);
    for (const [k, v] of Object.entries(merged)) if (!NOT_BOUND.has(k)) params[k] = v;
    const outcome = await runner.run(adHocEndpoint(sql), {
      params,
      caller: `token:${token.id}`,
      receivedAt: performance.now() - reply.elapsedTime,
    });
    finished(reply.raw, () => outcome.release());
    return reply.code(200).type(CONTENT_TYPES.json).send(formatBody(outcome.body, 'json'));
  }

  const tags = ['query'];
  app.get('/api/query', { schema: { tags, summary: 'Run an ad hoc query', querystring: QueryString, response: responses } }, (req, reply) =>
    run(req, reply, undefined),
  );
  app.post(
    '/api/query',
    {
      schema: { tags, summary: 'Run an ad hoc query sent as a JSON body', querystring: QueryString, body: Body, response: responses },
      preValidation: async (req) => {
        if (req.body === undefined || req.body === null) req.body = {};
      },
    },
    (req, reply) => run(req, reply, req.body),
  );
};
