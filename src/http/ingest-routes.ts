/**
 * Logflare-compatible ingest (docs/API.md §3): `POST /api/logs`, `/logs`, `/api/events` with
 * `?source_name=<name>` or `?source=<id>`. The token and the source are checked before the body is
 * read, except that when neither the query nor a header names the source, the routes that allow it
 * find it in a JSON object body (`source` / `source_name` keys, body-source.ts) once that is read.
 * The body is read raw (JSON or NDJSON, decoded first when compressed: content-encoding.ts) and
 * handed to the ingest pipeline, which answers only once every event is durable. Browsers may call
 * every route here (cors.ts).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { Auth } from '../auth/auth.ts';
import { QuarryError } from '../errors.ts';
import { bodyFormat, parseBody } from '../ingest/body.ts';
import { type NamedSource, sourceInBody } from '../ingest/body-source.ts';
import type { IngestService } from '../ingest/pipeline.ts';
import type { IngestObservation } from '../metrics/metrics.ts';
import type { SourceRef } from '../storage/sources.ts';
import { INGEST_CORS, allowCrossOrigin } from './cors.ts';
import { integrationRoutes } from './integration-routes.ts';
import { otlpRoutes } from './otlp-routes.ts';
import { IngestQuery, ingestResponses } from './schemas.ts';

export interface IngestSourceLookup {
  get(id: string): SourceRef | undefined;
  byName(name: string): SourceRef | undefined;
}

export interface IngestRoutesOptions {
  auth: Auth;
  sources: IngestSourceLookup;
  ingest: Pick<IngestService, 'ingest'>;
  /** Largest accepted body, compressed or not, in bytes (default 10 MiB). */
  bodyLimitBytes?: number;
  /** Told about every ingest request once answered (the metrics). */
  observe?: (o: IngestObservation) => void;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The body may name the source when the query and headers do not (generic and integration routes). */
    sourceInBody?: boolean;
  }
  interface FastifyRequest {
    ingestSource?: SourceRef;
    /** Events the body held, once parsed. */
    ingestEvents?: number;
  }
}

export const ingestRoutes: FastifyPluginAsyncTypebox<IngestRoutesOptions> = async (app, options) => {
  const { auth, sources, ingest } = options;
  const limit = options.bodyLimitBytes ?? 10 * 1024 * 1024;

  // First, so preflights are answered before the token check and refusals carry the CORS header.
  allowCrossOrigin(app, INGEST_CORS);

  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: limit }, (_req, body, done) => done(null, body));

  // Token first (401), then whether it may ingest at all (403), then the source (404, or 403 for a
  // token limited to other sources, whether it exists or not): all before the body is read. When
  // only the body can name the source, the token is checked here and the source once it is read.
  app.addHook('onRequest', async (req) => {
    const named = sourceInRequest(req);
    if (named === undefined && bodyMayName(req)) {
      auth.requireIngestToken(req);
      return;
    }
    req.ingestSource = auth.requireIngest(req, () => findSource(named, sources, bodyMayName(req))).source;
  });
  app.addHook('preHandler', async (req) => {
    if (req.ingestSource !== undefined || !bodyMayName(req)) return;
    const text = Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '';
    const named = sourceInBody(text, req.headers['content-type']);
    req.ingestSource = auth.requireIngest(req, () => findSource(named, sources, true)).source;
  });

  const observe = options.observe;
  if (observe) {
    app.addHook('onResponse', async (req, reply) => {
      if (req.method === 'OPTIONS') return;
      observe({
        source: req.ingestSource?.name,
        status: reply.statusCode,
        events: req.ingestEvents ?? 0,
        bytes: req.decodedBody?.receivedEncodedLength ?? (Buffer.isBuffer(req.body) ? req.body.length : 0),
      });
    });
  }

  const schema = {
    tags: ['ingest'],
    summary: 'Ingest log events',
    description:
      'Body: one event object, an array of events, {"batch": [events]} (application/json) or one event per line ' +
      '(application/x-ndjson); Content-Encoding gzip, deflate or br accepted. 200 means every event is durable.',
    querystring: IngestQuery,
    response: ingestResponses,
  };
  for (const url of ['/api/logs', '/logs', '/api/events']) {
    app.post(url, { schema, bodyLimit: limit, config: { sourceInBody: true } }, async (req) => {
      const source = req.ingestSource as SourceRef;
      const text = Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '';
      const { events, arrayText } = parseBody(text, bodyFormat(req.headers['content-type']));
      req.ingestEvents = events.length;
      await ingest.ingest(source, events, arrayText);
      return { message: 'Logged!' };
    });
  }

  // OTLP/HTTP (/v1/logs and the same under each prefix), inside this plugin so its hooks apply.
  await app.register(otlpRoutes, { ingest, bodyLimitBytes: limit });
  await app.register(integrationRoutes, { ingest, bodyLimitBytes: limit });
};

function bodyMayName(req: FastifyRequest): boolean {
  return req.routeOptions.config?.sourceInBody === true;
}

/** What names the source in the query or the headers, if anything does (an id before a name). */
function sourceInRequest(req: FastifyRequest): NamedSource | undefined {
  const query = (req.query ?? {}) as Record<string, unknown>;
  const header = (name: string) => {
    const v = req.headers[name];
    return typeof v === 'string' && v !== '' ? v : undefined;
  };
  const id = str(query.source) ?? str(query.collection) ?? header('x-source') ?? header('x-collection');
  if (id !== undefined) return { by: 'id', value: id };
  const name = str(query.source_name) ?? str(query.collection_name);
  return name === undefined ? undefined : { by: 'name', value: name };
}

function findSource(named: NamedSource | undefined, sources: IngestSourceLookup, bodyMayName: boolean): SourceRef {
  // A key of the body is said, so that a value the sender meant as something else (a CloudEvent's
  // `source` attribute, an event's own `source` field) is recognised as the cause.
  const from = named?.key ? ` (named by the "${named.key}" key of the JSON body)` : '';
  if (named?.by === 'id') {
    const s = sources.get(named.value);
    if (s === undefined) throw new QuarryError('NOT_FOUND', `No source with id ${named.value}${from}.`);
    return s;
  }
  if (named?.by === 'name') {
    const s = sources.byName(named.value);
    if (s === undefined) throw new QuarryError('NOT_FOUND', `No source named "${named.value}"${from}.`);
    return s;
  }
  const ways = 'add ?source_name=<name> or ?source=<source id>, or send its id in an X-Source header';
  throw new QuarryError(
    'BAD_REQUEST',
    bodyMayName
      ? `Say which source to ingest into: ${ways}, or put a "source_name" (name) or "source" (id) key in a JSON object body.`
      : `Say which source to ingest into: ${ways}.`,
  );
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}
