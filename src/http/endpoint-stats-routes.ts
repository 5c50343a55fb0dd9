/**
 * `GET /api/endpoints/:id/stats` (docs/API.md §5, private scope): this node's usage of one endpoint
 * over the last hour and the last day. As for running an endpoint, the segment is its id when it
 * reads as a UUID, else its name (`/api/endpoints/logs.all/stats`).
 */
import { type FastifyPluginAsyncTypebox, Type } from '@fastify/type-provider-typebox';
import type { Auth } from '../auth/auth.ts';
import type { EndpointRunner } from '../endpoints/runner.ts';
import type { EndpointStats } from '../endpoints/stats.ts';
import { QuarryError } from '../errors.ts';
import { ErrorResponse, authErrors } from './schemas.ts';

export interface EndpointStatsRoutesOptions {
  auth: Auth;
  /** Finds an endpoint as running one does: by id when the segment reads as a UUID, else by name. */
  runner: Pick<EndpointRunner, 'resolve'>;
  stats: EndpointStats;
}

const Nullable = <T extends ReturnType<typeof Type.Number>>(t: T) => Type.Union([t, Type.Null()]);

const Window = Type.Object({
  calls: Type.Integer(),
  errors: Type.Integer(),
  errors_by_code: Type.Record(Type.String(), Type.Integer(), { description: 'Failed runs by error code.' }),
  duration_ms: Type.Object(
    { p50: Nullable(Type.Number()), p95: Nullable(Type.Number()), max: Nullable(Type.Number()) },
    { description: 'From arrival to response; percentiles accurate to about 19% (log-scale slots). null without calls.' },
  ),
  cache: Type.Object({
    hits: Type.Integer(),
    misses: Type.Integer(),
    hit_ratio: Type.Union([Type.Number(), Type.Null()], { description: 'hits / (hits + misses); null without successful runs.' }),
  }),
  rows_returned: Type.Integer(),
});

const StatsView = Type.Object(
  {
    endpoint_id: Type.String({ format: 'uuid' }),
    scope: Type.Literal('node', { description: 'Counted in memory by the node that answers; not shared between nodes, reset on restart.' }),
    since: Type.String({ format: 'date-time' }),
    last_hour: Window,
    last_day: Window,
    last_error: Type.Union([
      Type.Object({ code: Type.String(), status: Type.Integer(), message: Type.String(), at: Type.String({ format: 'date-time' }) }),
      Type.Null(),
    ]),
  },
  { $id: 'EndpointStats' },
);

export const endpointStatsRoutes: FastifyPluginAsyncTypebox<EndpointStatsRoutesOptions> = async (app, { auth, runner, stats }) => {
  app.addHook('onRequest', async (req) => {
    auth.require(req, { kind: 'manage' });
  });
  app.get(
    '/api/endpoints/:id/stats',
    {
      schema: {
        tags: ['endpoints'],
        summary: "This node's usage of an endpoint over the last hour and day",
        params: Type.Object({ id: Type.String({ description: 'The endpoint id (UUID), or its name.' }) }),
        response: { 200: StatsView, 404: ErrorResponse, ...authErrors },
      },
    },
    async (req) => {
      const endpoint = runner.resolve(req.params.id);
      if (!endpoint) throw new QuarryError('NOT_FOUND', `No endpoint with id or name ${req.params.id}.`);
      return stats.view(endpoint.id);
    },
  );
};
