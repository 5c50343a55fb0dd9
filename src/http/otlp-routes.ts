/**
 * OTLP/HTTP ingest (docs/API.md §3; docs/INGEST.md, "OpenTelemetry (OTLP/HTTP)"): `POST /v1/logs`,
 * where Logflare mounts it, and the same under `/logs`, `/api/logs` and `/api/events` (so a
 * Collector whose endpoint is any of Quarry's ingest URLs finds it), taking an
 * ExportLogsServiceRequest in `application/x-protobuf` or `application/json`. `/v1/traces` and
 * `/v1/metrics` are refused with a 404: Quarry stores logs only.
 *
 * Registered inside the ingest plugin (ingest-routes.ts), so the token and source check, CORS, the
 * raw body with its Content-Encoding decoded, and the metrics are those of all ingest; then the
 * Content-Type is checked before the body is read. Every answer, errors included, is in the
 * request's own encoding (src/ingest/otlp/response.ts), and 200 comes only once every stored event
 * is durable.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { QuarryError } from '../errors.ts';
import { nowMicros } from '../ingest/normalise.ts';
import { type OtlpLimits, defaultOtlpLimits } from '../ingest/otlp/limits.ts';
import { readLogs } from '../ingest/otlp/logs.ts';
import { OTLP_CONTENT_TYPES, type OtlpEncoding, exportLogsResponse, otlpEncoding, statusResponse } from '../ingest/otlp/response.ts';
import type { IngestService } from '../ingest/pipeline.ts';
import type { SourceRef } from '../storage/sources.ts';
import { toQuarryError } from './errors.ts';
import { IngestQuery } from './schemas.ts';

export interface OtlpRoutesOptions {
  ingest: Pick<IngestService, 'ingest'>;
  /** Largest accepted body, compressed or not, in bytes (the ingest routes' limit). */
  bodyLimitBytes: number;
  limits?: OtlpLimits;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The encoding of an OTLP request's body, and so of its answer. */
    otlpEncoding?: OtlpEncoding;
  }
}

/** Where the OTLP paths are mounted: at the root, as Logflare does, and under each ingest prefix. */
export const OTLP_PREFIXES = ['', '/logs', '/api/logs', '/api/events'] as const;

const EMPTY = Buffer.alloc(0);

function send(reply: FastifyReply, encoding: OtlpEncoding, status: number, body: Buffer): FastifyReply {
  return reply.code(status).type(OTLP_CONTENT_TYPES[encoding]).send(body);
}

function answerError(error: unknown, req: FastifyRequest, reply: FastifyReply): FastifyReply {
  const e = toQuarryError(error);
  if (e.code === 'INTERNAL') req.log.error({ err: error, path: req.routeOptions.url }, 'request failed unexpectedly');
  if (e.retryAfter !== undefined) reply.header('Retry-After', String(e.retryAfter));
  // A request in neither encoding (a 415) is answered in JSON, the one a person can read.
  const encoding = req.otlpEncoding ?? otlpEncoding(req.headers['content-type']) ?? 'json';
  return send(reply, encoding, e.status, statusResponse(encoding, e));
}

export const otlpRoutes: FastifyPluginAsyncTypebox<OtlpRoutesOptions> = async (app, options) => {
  const { ingest, bodyLimitBytes } = options;
  const limits = options.limits ?? defaultOtlpLimits;

  app.setErrorHandler(answerError);

  // After the ingest plugin's token and source check, before the body is read.
  app.addHook('onRequest', async (req) => {
    const encoding = otlpEncoding(req.headers['content-type']);
    if (encoding === undefined) {
      const given = req.headers['content-type'];
      throw new QuarryError(
        'UNSUPPORTED_MEDIA_TYPE',
        `${given === undefined ? 'No Content-Type' : `Content-Type "${given}"`} is not an OTLP encoding: send application/x-protobuf or application/json.`,
      );
    }
    req.otlpEncoding = encoding;
  });

  const logsSchema = {
    tags: ['ingest'],
    summary: 'Ingest OpenTelemetry logs (OTLP/HTTP)',
    description:
      'Body: an OTLP ExportLogsServiceRequest, application/x-protobuf or application/json (OTLP/JSON); ' +
      'Content-Encoding gzip, deflate or br accepted. One event per log record (docs/INGEST.md, "OpenTelemetry (OTLP/HTTP)"). ' +
      "Answers an ExportLogsServiceResponse in the request's encoding, with partialSuccess when records were refused; " +
      'errors are a google.rpc.Status. 200 means every stored event is durable.',
    querystring: IngestQuery,
  };

  for (const prefix of OTLP_PREFIXES) {
    app.post(`${prefix}/v1/logs`, { schema: logsSchema, bodyLimit: bodyLimitBytes }, async (req, reply) => {
      const encoding = req.otlpEncoding as OtlpEncoding;
      const { events, partial } = readLogs(Buffer.isBuffer(req.body) ? req.body : EMPTY, encoding, nowMicros(), limits);
      req.ingestEvents = events.length;
      await ingest.ingest(req.ingestSource as SourceRef, events);
      return send(reply, encoding, 200, exportLogsResponse(encoding, partial));
    });

    for (const signal of ['traces', 'metrics'] as const) {
      const refuse = async () => {
        throw new QuarryError(
          'NOT_FOUND',
          `Quarry stores logs only: OTLP ${signal} are not accepted. Send logs to ${prefix}/v1/logs and ${signal} to another backend (docs/INGEST.md, "OpenTelemetry (OTLP/HTTP)").`,
        );
      };
      const schema = {
        tags: ['ingest'],
        summary: `OTLP ${signal}: refused`,
        description: `Always 404 (a google.rpc.Status in the request's encoding): Quarry stores logs only.`,
        querystring: IngestQuery,
      };
      // Refused before the body is read.
      app.post(`${prefix}/v1/${signal}`, { schema, bodyLimit: bodyLimitBytes, onRequest: refuse }, refuse);
    }
  }
};
