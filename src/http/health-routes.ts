import { type FastifyPluginAsyncTypebox, Type } from '@fastify/type-provider-typebox';

export interface HealthOptions {
  /** False while starting or shutting down. */
  isReady: () => boolean;
}

export const healthRoutes: FastifyPluginAsyncTypebox<HealthOptions> = async (app, { isReady }) => {
  app.get(
    '/health',
    {
      schema: {
        summary: 'Ready to ingest and query?',
        tags: ['health'],
        response: {
          200: Type.Object({ status: Type.Literal('ok') }),
          503: Type.Object({ status: Type.Literal('unavailable') }),
        },
      },
    },
    async (_req, reply) => (isReady() ? reply.send({ status: 'ok' }) : reply.code(503).send({ status: 'unavailable' })),
  );
};
