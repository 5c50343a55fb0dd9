/**
 * Logflare's integration routes (docs/INGEST.md, "Logflare's integration routes"): `POST
 * {prefix}/json`, `/vector`, `/cloudflare`, `/cloud-event`, `/vercel` (and `/zeit`), `/netlify`,
 * `/github`, `/browser/reports`, `/typecasts`, `/logplex`, `/syslogs` (and `/syslog`) under `/logs`,
 * `/api/logs` and `/api/events`. Each
 * maps its body to events (src/ingest/integrations/) and hands them to the ingest pipeline.
 *
 * Registered inside the ingest plugin (ingest-routes.ts), so the token and source check (the source
 * may be named by a JSON object body's `source` / `source_name` key, `config.sourceInBody`), CORS,
 * the raw body with its Content-Encoding decoded, the error answers and the metrics are those of all
 * ingest. A body that does not map is a 400 and stores nothing.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { IngestService } from '../ingest/pipeline.ts';
import { integrations } from '../ingest/integrations/index.ts';
import type { SourceRef } from '../storage/sources.ts';
import { IngestQuery, ingestResponses } from './schemas.ts';

export interface IntegrationRoutesOptions {
  ingest: Pick<IngestService, 'ingest'>;
  /** Largest accepted body, compressed or not, in bytes (the ingest routes' limit). */
  bodyLimitBytes: number;
}

export const INTEGRATION_PREFIXES = ['/logs', '/api/logs', '/api/events'] as const;

export const integrationRoutes: FastifyPluginAsyncTypebox<IntegrationRoutesOptions> = async (app, options) => {
  const { ingest, bodyLimitBytes } = options;
  for (const integration of integrations) {
    const schema = {
      tags: ['ingest'],
      summary: integration.summary,
      description: `Stored as Logflare stores it (docs/INGEST.md, "Logflare's integration routes"). 200 means every event is durable.`,
      querystring: IngestQuery,
      response: ingestResponses,
    };
    for (const prefix of INTEGRATION_PREFIXES) {
      app.post(`${prefix}${integration.path}`, { schema, bodyLimit: bodyLimitBytes, config: { sourceInBody: true } }, async (req) => {
        const text = Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '';
        const events = integration.events({ text, contentType: req.headers['content-type'], headers: req.headers });
        req.ingestEvents = events.length;
        await ingest.ingest(req.ingestSource as SourceRef, events);
        return { message: 'Logged!' };
      });
    }
  }
};
