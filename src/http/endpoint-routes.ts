/**
 * Endpoint management (docs/API.md §5, private scope): `GET/POST /api/endpoints`,
 * `GET/PUT/PATCH/DELETE /api/endpoints/:id`. Invalid input is a 422 with per-field messages,
 * whether the JSON schema or the save-time query check found it.
 */
import { type FastifyPluginAsyncTypebox, Type } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Auth } from '../auth/auth.ts';
import {
  type EndpointInput,
  MAX_CACHE_SECONDS,
  MAX_LIMIT_CEILING,
  checkEndpointFields,
  endpointFields,
  validationFailed,
} from '../endpoints/model.ts';
import type { QueryObserver } from '../endpoints/observation.ts';
import type { EndpointRunner } from '../endpoints/runner.ts';
import type { EndpointService } from '../endpoints/service.ts';
import type { EndpointStats } from '../endpoints/stats.ts';
import { PARAM_TYPES, type ParamType, checkParamSpecs } from '../endpoints/typed-params.ts';
import type { QuarryError } from '../errors.ts';
import { endpointQueryRoutes } from './endpoint-query-routes.ts';
import { endpointStatsRoutes } from './endpoint-stats-routes.ts';
import { ErrorResponse, authErrors } from './schemas.ts';

export interface EndpointRoutesOptions {
  auth: Auth;
  service: EndpointService;
}

const fieldDocs = {
  name: Type.String({ description: 'Unique; also addresses the endpoint in the query path.', examples: ['logs.all'] }),
  description: Type.Union([Type.String(), Type.Null()]),
  query: Type.String({
    description: 'BigQuery-dialect SQL with `@name` parameters: CTEs followed by a final SELECT. Validated at save time.',
  }),
  language: Type.Literal('bq_sql'),
  sandboxable: Type.Boolean({ description: 'Callers may send their own `sql`/`lql` over the CTEs.' }),
  max_limit: Type.Integer({ minimum: 1, maximum: MAX_LIMIT_CEILING, description: 'At most this many rows come back.' }),
  cache_duration_seconds: Type.Integer({
    minimum: 0,
    maximum: MAX_CACHE_SECONDS,
    description: 'How long a result is cached, from its computation; 0 = no cache.',
  }),
  proactive_requerying_seconds: Type.Integer({
    minimum: 0,
    maximum: MAX_CACHE_SECONDS,
    description: 'A live cached result is recomputed in the background this often; 0 = never.',
  }),
  enable_auth: Type.Boolean({ description: 'false: anyone may run the endpoint without a token.' }),
  redact_pii: Type.Boolean({ description: 'Redact IP addresses in results unless the request header says otherwise.' }),
  labels: Type.Union([Type.String(), Type.Null()], { description: 'Comma-separated `key=value` labels.' }),
};

const typeNames = Object.keys(PARAM_TYPES) as ParamType[];
const paramsDescription =
  'Typed parameters: each `@name` described here is checked against its type (400 naming it when a value does not fit), ' +
  'takes its default when absent and is bound with its type. Parameters not described (and every parameter when null) bind as strings.';

/** A typed parameter as stored and returned. */
const ParamSpecSchema = Type.Object({
  name: Type.String({ description: 'A parameter the query uses, without the `@`.' }),
  type: Type.Unsafe<ParamType>({
    type: 'string',
    enum: typeNames,
    description: typeNames.map((t) => `\`${t}\`: ${PARAM_TYPES[t]}`).join('; '),
  }),
  default: Type.Optional(
    Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()], { description: 'Bound when the request leaves the parameter out.' }),
  ),
  required: Type.Optional(Type.Boolean({ description: 'A request without it is a 400.' })),
  description: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  values: Type.Optional(Type.Array(Type.String(), { description: 'enum only: the allowed values.' })),
});

const EndpointSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    ...fieldDocs,
    params: Type.Union([Type.Array(ParamSpecSchema), Type.Null()], { description: paramsDescription }),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'Endpoint' },
);

const { name, query, ...settings } = fieldDocs;
const CreateBody = Type.Object(
  {
    name,
    query,
    ...Type.Partial(Type.Object(settings)).properties,
    // Checked by the save-time rules, which name each bad setting (`params[2].type`), not by the schema.
    params: Type.Optional(
      Type.Unknown({
        description: `${paramsDescription} A list of {name, type, default, required, description, values} (as in the Endpoint schema), or null.`,
      }),
    ),
  },
  { description: 'Unknown fields (id, created_at, ...) are ignored.' },
);
const PatchBody = Type.Partial(CreateBody);
const IdParams = Type.Object({ id: Type.String({ description: 'The endpoint id (UUID).' }) });


interface SchemaIssue {
  instancePath?: string;
  message?: string;
  params?: Record<string, unknown>;
}

/**
 * Turns a JSON-schema failure of the body into the same 422 the save-time checks give, listing
 * the schema's complaint together with every field rule the body breaks.
 */
function bodyInvalid(req: FastifyRequest, partial: boolean): QuarryError {
  const fields: Record<string, string[]> = {};
  const issues = ((req.validationError as { validation?: SchemaIssue[] } | undefined)?.validation ?? []) as SchemaIssue[];
  for (const issue of issues) {
    const missing = issue.params?.missingProperty;
    const field =
      typeof missing === 'string' ? missing : (issue.instancePath ?? '').replace(/^\//, '').split('/')[0] || 'body';
    fields[field] ??= [];
    fields[field].push(typeof missing === 'string' ? 'is required' : (issue.message ?? 'is not valid'));
  }
  const body = req.body;
  if (body !== null && typeof body === 'object' && !Array.isArray(body)) {
    const own = { ...checkEndpointFields(body as EndpointInput, partial), ...checkParamSpecs((body as EndpointInput).params, undefined) };
    for (const [field, messages] of Object.entries(own)) {
      fields[field] ??= [];
      for (const m of messages) if (!fields[field].includes(m)) fields[field].push(m);
    }
  }
  return validationFailed(fields);
}

export const endpointRoutes: FastifyPluginAsyncTypebox<EndpointRoutesOptions> = async (app, { auth, service }) => {
  app.addHook('onRequest', async (req) => {
    auth.require(req, { kind: 'manage' });
  });
  const tags = ['endpoints'];
  const invalid = { 400: ErrorResponse, 422: ErrorResponse };

  app.get(
    '/api/endpoints',
    { schema: { tags, summary: 'List endpoints', response: { 200: Type.Array(EndpointSchema), ...authErrors } } },
    async () => service.list().map(endpointFields),
  );

  app.post(
    '/api/endpoints',
    {
      attachValidation: true,
      schema: {
        tags,
        summary: 'Create an endpoint',
        body: CreateBody,
        response: { 201: EndpointSchema, ...invalid, ...authErrors },
      },
    },
    async (req, reply) => {
      if (req.validationError) throw bodyInvalid(req, false);
      return reply.code(201).send(endpointFields(await service.create(req.body as EndpointInput)));
    },
  );

  app.get(
    '/api/endpoints/:id',
    {
      schema: {
        tags,
        summary: 'Get an endpoint',
        params: IdParams,
        response: { 200: EndpointSchema, 404: ErrorResponse, ...authErrors },
      },
    },
    async (req) => endpointFields(service.get(req.params.id)),
  );

  app.put(
    '/api/endpoints/:id',
    {
      attachValidation: true,
      schema: {
        tags,
        summary: 'Replace an endpoint (settings left out return to their defaults)',
        params: IdParams,
        body: CreateBody,
        response: { 200: EndpointSchema, 404: ErrorResponse, ...invalid, ...authErrors },
      },
    },
    async (req) => {
      service.get(req.params.id);
      if (req.validationError) throw bodyInvalid(req, false);
      return endpointFields(await service.replace(req.params.id, req.body as EndpointInput));
    },
  );

  app.patch(
    '/api/endpoints/:id',
    {
      attachValidation: true,
      schema: {
        tags,
        summary: 'Change some settings of an endpoint',
        params: IdParams,
        body: PatchBody,
        response: { 200: EndpointSchema, 404: ErrorResponse, ...invalid, ...authErrors },
      },
    },
    async (req) => {
      service.get(req.params.id);
      if (req.validationError) throw bodyInvalid(req, true);
      return endpointFields(await service.update(req.params.id, req.body as EndpointInput));
    },
  );

  app.delete(
    '/api/endpoints/:id',
    {
      schema: {
        tags,
        summary: 'Delete an endpoint',
        params: IdParams,
        response: { 204: Type.Null(), 404: ErrorResponse, ...authErrors },
      },
    },
    async (req, reply) => {
      await service.delete(req.params.id);
      return reply.code(204).send(null);
    },
  );
};

/** Registers the endpoint plugins: running endpoints, managing them and (with `stats`) their usage. */
export async function registerEndpointRoutes(
  app: FastifyInstance,
  deps: { auth: Auth; runner: EndpointRunner; service: EndpointService; stats?: EndpointStats; observe?: QueryObserver },
): Promise<void> {
  await app.register(endpointQueryRoutes, {
    auth: deps.auth,
    runner: deps.runner,
    ...(deps.observe ? { observe: deps.observe } : {}),
  });
  await app.register(endpointRoutes, { auth: deps.auth, service: deps.service });
  if (deps.stats) await app.register(endpointStatsRoutes, { auth: deps.auth, service: deps.service, stats: deps.stats });
}
