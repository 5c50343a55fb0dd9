/**
 * Endpoint management (docs/API.md §5, private scope): `GET/POST /api/endpoints`,
 * `GET/PUT/PATCH/DELETE /api/endpoints/:id`. The bodies are the endpoint vocabulary
 * (src/schemas/endpoint.ts). The service checks a body in one pass, fields against the vocabulary,
 * the query against the catalogue and the typed parameters against the query's, so one 422 lists
 * every wrong field; the route only refuses a body that is not a JSON object.
 */
import { type FastifyPluginAsyncTypebox, Type } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { Auth } from '../auth/auth.ts';
import { endpointFields } from '../endpoints/model.ts';
import type { QueryObserver } from '../endpoints/observation.ts';
import type { EndpointRunner } from '../endpoints/runner.ts';
import type { EndpointService } from '../endpoints/service.ts';
import type { EndpointStats } from '../endpoints/stats.ts';
import { EndpointCreate, EndpointPatch, EndpointSchema } from '../schemas/endpoint.ts';
import { endpointQueryRoutes } from './endpoint-query-routes.ts';
import { endpointStatsRoutes } from './endpoint-stats-routes.ts';
import { queryRoutes } from './query-routes.ts';
import { ErrorResponse, authErrors, vocabularyValidator } from './schemas.ts';

export interface EndpointRoutesOptions {
  auth: Auth;
  service: EndpointService;
}

const IdParams = Type.Object({ id: Type.String({ description: 'The endpoint id (UUID).' }) });

/** What the route itself checks of a body (the service checks the rest, see above). */
const JsonObject = Type.Object({}, { errorMessage: { type: 'must be a JSON object of endpoint settings' } });
const validator = vocabularyValidator('endpoint');

export const endpointRoutes: FastifyPluginAsyncTypebox<EndpointRoutesOptions> = async (app, { auth, service }) => {
  app.addHook('onRequest', async (req) => {
    auth.require(req, { kind: 'manage' });
  });
  // Bodies are documented as the vocabulary and checked by the service; parameters as declared.
  app.setValidatorCompiler((route) => validator(route.httpPart === 'body' ? { ...route, schema: JsonObject } : route));
  const tags = ['endpoints'];
  const invalid = { 400: ErrorResponse, 422: ErrorResponse };

  app.get('/api/endpoints', { schema: { tags, summary: 'List endpoints', response: { 200: Type.Array(EndpointSchema), ...authErrors } } }, async () =>
    service.list().map(endpointFields),
  );

  app.post(
    '/api/endpoints',
    {
      schema: {
        tags,
        summary: 'Create an endpoint',
        body: EndpointCreate,
        response: { 201: EndpointSchema, ...invalid, ...authErrors },
      },
    },
    async (req, reply) => reply.code(201).send(endpointFields(await service.create(req.body))),
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
        body: EndpointCreate,
        response: { 200: EndpointSchema, 404: ErrorResponse, ...invalid, ...authErrors },
      },
    },
    async (req) => {
      service.get(req.params.id);
      if (req.validationError) throw req.validationError;
      return endpointFields(await service.replace(req.params.id, req.body));
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
        body: EndpointPatch,
        response: { 200: EndpointSchema, 404: ErrorResponse, ...invalid, ...authErrors },
      },
    },
    async (req) => {
      service.get(req.params.id);
      if (req.validationError) throw req.validationError;
      return endpointFields(await service.update(req.params.id, req.body));
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

/** Registers the endpoint plugins: running endpoints, ad hoc queries, managing them and (with `stats`) their usage. */
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
  await app.register(queryRoutes, { auth: deps.auth, runner: deps.runner });
  if (deps.stats) await app.register(endpointStatsRoutes, { auth: deps.auth, runner: deps.runner, stats: deps.stats });
}
