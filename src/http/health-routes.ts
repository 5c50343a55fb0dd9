import { type FastifyPluginAsyncTypebox, Type } from '@fastify/type-provider-typebox';

export interface HealthOptions {
  /** False while starting or shutting down. */
  isReady: () => boolean;
  /** What this node cannot reach right now (its metadata store, its engine); empty when all is well. */
  problems?: () => Promise<string[]>;
}

export const healthRoutes: FastifyPluginAsyncTypebox<HealthOptions> = async (app, { isReady, problems }) => {
  app.get(
    '/health',
    {
      schema: {
        summary: 'Ready to ingest and query?',
        tags: ['health'],
        response: {
          200: Type.Object({ status: Type.Literal('ok') }),
          503: Type.Object({
            status: Type.Literal('unavailable'),
            reasons: Type.Array(Type.String(), { description: 'Why, for an operator.' }),
          }),
        },
      },
    },
    async (_req, reply) => {
      if (!isReady()) return reply.code(503).send({ status: 'unavailable', reasons: ['starting or shutting down'] });
      const reasons = problems ? await problems() : [];
      return reasons.length === 0 ? reply.send({ status: 'ok' }) : reply.code(503).send({ status: 'unavailable', reasons });
    },
  );
};
