/**
 * Running endpoints (docs/API.md §4): `GET`/`POST /api/endpoints/query/:idOrName` and the legacy
 * `/endpoints/query/:idOrName`. The handler only translates HTTP to EndpointRunner calls. Browsers
 * may call every route here (cors.ts).
 */
import { finished } from 'node:stream';
import { type FastifyPluginAsyncTypebox, Type } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type Auth, ENDPOINT_NOT_FOUND } from '../auth/auth.ts';
import type { Endpoint } from '../endpoints/model.ts';
import type { QueryObserver } from '../endpoints/observation.ts';
import type { EndpointRunner, RunOutcome } from '../endpoints/runner.ts';
import { mergeParams } from '../endpoints/params.ts';
import { QuarryError } from '../errors.ts';
import { QUERY_CORS, allowCrossOrigin } from './cors.ts';
import { toQuarryError } from './errors.ts';
import { CONTENT_TYPES, FORMAT_PARAM, chooseFormat, formatBody } from './formats.ts';
import { ErrorResponse, authErrors } from './schemas.ts';

export interface EndpointQueryRoutesOptions {
  auth: Auth;
  runner: EndpointRunner;
  /** Told about every run of an existing endpoint once answered (stats, metrics). */
  observe?: QueryObserver;
}

/** What the observer hears about a request: set as the run goes. */
interface RunTrace {
  endpoint: Endpoint;
  outcome?: RunOutcome;
  error?: unknown;
}

declare module 'fastify' {
  interface FastifyRequest {
    endpointRun?: RunTrace;
  }
}

const PathParams = Type.Object({
  idOrName: Type.String({
    description: 'The endpoint id (a UUID) or its name, e.g. `logs.all`.',
    examples: ['logs.all'],
  }),
});

const reservedDescriptions = {
  sql: Type.Optional(
    Type.String({
      description:
        "Sandboxable endpoints only: a BigQuery-dialect SELECT that replaces the saved final SELECT and may read only the saved query's CTEs and its own.",
    }),
  ),
  lql: Type.Optional(Type.String({ description: 'Sandboxable endpoints only: an LQL query over the saved CTEs (ignored when `sql` is given).' })),
};

const QueryString = Type.Object(
  {
    ...reservedDescriptions,
    format: Type.Optional(
      Type.String({
        description:
          'Response format: `json` (default), `ndjson` or `csv`; wins over the `Accept` header. A saved query that declares `@format` binds it instead.',
        examples: ['csv'],
      }),
    ),
  },
  {
    additionalProperties: true,
    description: "Every other parameter is bound, as a string, to the saved query's `@name` of the same name.",
  },
);

const Body = Type.Object(reservedDescriptions, {
  additionalProperties: true,
  description: 'Parameters as a JSON object; a value here wins over the query string.',
});

const Headers = Type.Object(
  {
    'lf-endpoint-redact-pii': Type.Optional(
      Type.String({
        description: "`true` redacts IPv4/IPv6 addresses in the result; `false` does not. Absent: the endpoint's setting.",
      }),
    ),
  },
  { additionalProperties: true },
);

const Result = Type.Object(
  { result: Type.Array(Type.Record(Type.String(), Type.Unknown()), { description: 'At most max_limit rows.' }) },
  {
    description:
      'The rows (`format=ndjson` or `Accept: application/x-ndjson`: one row object per line; `format=csv` or `Accept: text/csv`: CSV with a header row). `X-Cache` says HIT or MISS, `Age` the seconds since computation.',
  },
);

const responses = {
  200: Result,
  400: ErrorResponse,
  ...authErrors,
  404: ErrorResponse,
  500: ErrorResponse,
  503: ErrorResponse,
  504: ErrorResponse,
};

const REDACT_HEADER = 'lf-endpoint-redact-pii';

/** A header value made of visible ASCII only (field paths may hold anything). */
function headerSafe(text: string): string {
  return text.replace(/[^\x20-\x7e]/g, '?').slice(0, 4000);
}

export const endpointQueryRoutes: FastifyPluginAsyncTypebox<EndpointQueryRoutesOptions> = async (app, { auth, runner, observe }) => {
  allowCrossOrigin(app, QUERY_CORS);
  if (observe) {
    app.addHook('onError', async (req, _reply, error) => {
      if (req.endpointRun) req.endpointRun.error = error;
    });
    app.addHook('onResponse', async (req, reply) => {
      const trace = req.endpointRun;
      if (!trace) return;
      const error = trace.error === undefined ? undefined : toQuarryError(trace.error);
      observe({
        endpointId: trace.endpoint.id,
        endpointName: trace.endpoint.name,
        durationMs: reply.elapsedTime,
        cache: error ? undefined : trace.outcome?.cache,
        rows: error ? 0 : (trace.outcome?.body.rowCount ?? 0),
        ...(error ? { error: { code: error.code, status: error.status, message: error.message } } : {}),
      });
    });
  }

  async function run(req: FastifyRequest, reply: FastifyReply, idOrName: string, body: unknown) {
    const endpoint = runner.resolve(idOrName);
    // Stats count every request that reached an existing endpoint, refused ones included.
    const trace: RunTrace | undefined = endpoint ? { endpoint } : undefined;
    if (trace) req.endpointRun = trace;
    // No oracle: an endpoint the caller may not run answers exactly as an unknown name (auth.ts);
    // requireQuery throws for every unknown name, the check below only narrows the type.
    const token = auth.requireQuery(req, endpoint);
    if (!endpoint || !trace) throw new QuarryError('NOT_FOUND', ENDPOINT_NOT_FOUND);

    const params = mergeParams(req.query, body);
    // `format` picks the response format, unless the saved query declares @format for itself.
    const ownFormat = (await runner.declaredParams(endpoint)).includes(FORMAT_PARAM);
    const format = chooseFormat(ownFormat ? undefined : params[FORMAT_PARAM], req.headers.accept);
    const outcome = await runner.run(endpoint, {
      params,
      redactHeader: req.headers[REDACT_HEADER],
      // Fair shares are per token; callers without one share per client address.
      caller: token ? `token:${token.id}` : `ip:${req.ip}`,
      receivedAt: performance.now() - reply.elapsedTime,
    });
    // The result's memory (QUERY_RESULT_MEMORY) is held until the response has been handed to the
    // socket whole, or the connection has gone: until then its rows and text are in this process.
    finished(reply.raw, () => outcome.release());
    trace.outcome = outcome;
    const { body: result } = outcome;
    reply.header('X-Cache', outcome.cache).header('Age', String(outcome.ageSeconds));
    if (result.warnings.length > 0) reply.header('X-Query-Warnings', headerSafe(result.warnings.join(', ')));
    return reply.code(200).type(CONTENT_TYPES[format]).send(formatBody(result, format));
  }

  // Parameters may all be in the query string: an empty JSON body is no body, not an error.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, text, done) => {
    const body = typeof text === 'string' ? text : text.toString('utf8');
    if (body.trim() === '') return done(null, {});
    try {
      done(null, JSON.parse(body));
    } catch {
      done(new QuarryError('BAD_REQUEST', 'The request body is not valid JSON.'), undefined);
    }
  });

  const tags = ['query'];
  for (const [prefix, legacy] of [
    ['/api/endpoints/query', false],
    ['/endpoints/query', true],
  ] as const) {
    const deprecated = legacy ? { deprecated: true } : {};
    app.get(
      `${prefix}/:idOrName`,
      {
        schema: {
          tags,
          summary: legacy ? 'Run an endpoint (legacy path)' : 'Run an endpoint',
          ...deprecated,
          params: PathParams,
          querystring: QueryString,
          headers: Headers,
          response: responses,
        },
      },
      (req, reply) => run(req, reply, req.params.idOrName, undefined),
    );
    app.post(
      `${prefix}/:idOrName`,
      {
        schema: {
          tags,
          summary: legacy ? 'Run an endpoint with a JSON body (legacy path)' : 'Run an endpoint with a JSON body',
          ...deprecated,
          params: PathParams,
          querystring: QueryString,
          headers: Headers,
          body: Body,
          response: responses,
        },
        // A POST without a body carries its parameters in the query string only.
        preValidation: async (req) => {
          if (req.body === undefined || req.body === null) req.body = {};
        },
      },
      (req, reply) => run(req, reply, req.params.idOrName, req.body),
    );
  }
};
