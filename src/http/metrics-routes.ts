/**
 * `GET /metrics` (docs/API.md §1): the Prometheus text format, for a token with the private scope or
 * the value of `METRICS_TOKEN` (so a scraper needs no management rights), sent like any token.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { type FastifyPluginAsyncTypebox, Type } from '@fastify/type-provider-typebox';
import { type Auth, extractToken } from '../auth/auth.ts';
import type { QuarryMetrics } from '../metrics/metrics.ts';
import { ErrorResponse, authErrors } from './schemas.ts';

export interface MetricsRoutesOptions {
  auth: Auth;
  metrics: QuarryMetrics;
  /** Also accepted, besides private-scope tokens. */
  metricsToken?: string;
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

export const metricsRoutes: FastifyPluginAsyncTypebox<MetricsRoutesOptions> = async (app, { auth, metrics, metricsToken }) => {
  const expected = metricsToken === undefined ? undefined : digest(metricsToken);
  app.get(
    '/metrics',
    {
      schema: {
        tags: ['observability'],
        summary: 'Prometheus metrics (private scope or METRICS_TOKEN)',
        response: { 200: Type.String({ description: 'Prometheus text exposition format 0.0.4.' }), ...authErrors, 500: ErrorResponse },
      },
    },
    async (req, reply) => {
      const presented = extractToken(req);
      // Digests have equal lengths, so the comparison takes the same time whatever was sent.
      const scraper = expected !== undefined && presented !== undefined && timingSafeEqual(digest(presented), expected);
      if (!scraper) auth.require(req, { kind: 'manage' });
      const text = await metrics.metrics();
      return reply.code(200).type(metrics.contentType).send(text);
    },
  );
};
