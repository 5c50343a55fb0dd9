/**
 * The Fastify application: one plugin per route group, each given only the services it needs.
 * No business logic lives in src/http; handlers translate HTTP to calls on those services.
 */
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import type { Auth } from '../auth/auth.ts';
import type { HttpTimeouts } from '../config.ts';
import { sharedSchemaCompilers } from './schema-compilers.ts';
import { QuarryError, errorBody } from '../errors.ts';
import type { TokenRepository } from '../metadata/tokens.ts';
import { decodeRequestBodies } from './content-encoding.ts';
import { errorHandler, sendError, toQuarryError } from './errors.ts';
import { explorerRoutes } from './explorer-routes.ts';
import { healthRoutes } from './health-routes.ts';
import { type OpenApiEndpointSources, endpointPaths } from './openapi-endpoints.ts';
import { ErrorResponse } from './schemas.ts';
import { type SourceAdmin, sourceRoutes } from './source-routes.ts';
import { tokenRoutes } from './token-routes.ts';

/**
 * One log line per request, at the debug level (at info the log stays readable: start-up, warnings,
 * background work): method, path (without the query string, which may carry a token), status and
 * duration. Headers are never logged.
 */
class RequestLog extends LogController {
  override incomingRequest(): void {}
  override requestCompleted(_error: Error | null | undefined, req: FastifyRequest, reply: FastifyReply): void {
    const path = req.url.split('?')[0];
    const ms = Number(reply.elapsedTime.toFixed(1));
    req.log.debug({ method: req.method, path, status: reply.statusCode, ms }, `${req.method} ${path} ${reply.statusCode} ${ms}ms`);
  }
}

export interface AppDeps {
  auth: Auth;
  tokens: TokenRepository;
  sources: SourceAdmin;
  isReady: () => boolean;
  /** What this node cannot reach right now, for /health (see health-routes.ts). */
  problems?: () => Promise<string[]>;
  logLevel: string;
  bodyLimitBytes: number;
  /** Defaults: headers 10 s, whole request 30 s, idle keep-alive 72 s. */
  httpTimeouts?: HttpTimeouts;
  /** Saved endpoints, each listed in the OpenAPI document as an operation of its own. */
  savedEndpoints?: OpenApiEndpointSources;
  /** Route plugins of other parts (ingest, endpoints), registered after the core ones. */
  register?: (app: FastifyInstance) => Promise<void>;
}

const defaultTimeouts: HttpTimeouts = { headersMs: 10_000, requestMs: 30_000, keepAliveMs: 72_000 };

/** A 408 in the usual error shape, written straight to a socket whose request never completed. */
function requestTimeoutResponse(): string {
  const body = JSON.stringify(errorBody(new QuarryError('REQUEST_TIMEOUT', 'The request was not received in time (headers or body too slow).')));
  return (
    'HTTP/1.1 408 Request Timeout\r\nContent-Type: application/json; charset=utf-8\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
  );
}

export async function buildApp(deps: AppDeps) {
  const timeouts = deps.httpTimeouts ?? defaultTimeouts;
  const app = Fastify({
    // Slow clients (one body byte every few seconds) cannot hold a connection: Node answers 408
    // once headers or the whole request take longer than allowed, checked every second.
    http: {
      headersTimeout: Math.min(timeouts.headersMs, timeouts.requestMs),
      requestTimeout: timeouts.requestMs,
      connectionsCheckingInterval: Math.min(1000, timeouts.headersMs),
    },
    requestTimeout: timeouts.requestMs,
    keepAliveTimeout: timeouts.keepAliveMs,
    clientErrorHandler: (error, socket) => {
      const code = (error as NodeJS.ErrnoException).code;
      if (socket.writable && (code === 'ERR_HTTP_REQUEST_TIMEOUT' || code === 'ERR_HTTP_HEADERS_TIMEOUT')) {
        socket.end(requestTimeoutResponse());
        return;
      }
      if (socket.writable) {
        const body = JSON.stringify(errorBody(new QuarryError('BAD_REQUEST', 'The request is not valid HTTP.')));
        socket.end(
          'HTTP/1.1 400 Bad Request\r\nContent-Type: application/json; charset=utf-8\r\n' +
            `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
        );
        return;
      }
      socket.destroy(error);
    },
    logger: deps.logLevel === 'silent' ? false : { level: deps.logLevel },
    logController: new RequestLog(),
    bodyLimit: deps.bodyLimitBytes,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    // No type coercion: `"enable_auth": null` must be refused, not read as false. All errors at
    // once, so a 422 names every bad field.
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, allErrors: true, validateSchema: false } },
    schemaController: sharedSchemaCompilers,
    // Errors raised before routing (a malformed URL, ...) get the same error shape as the rest.
    frameworkErrors: (error, _req, reply) => sendError(reply, toQuarryError(error)),
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.setErrorHandler(errorHandler);
  decodeRequestBodies(app, deps.bodyLimitBytes);
  app.setNotFoundHandler((req, reply) => sendError(reply, new QuarryError('NOT_FOUND', `No route ${req.method} ${req.url.split('?')[0]}.`)));

  // While shutting down, a response closes its connection, so keep-alive clients cannot hold
  // the process open (Fastify keeps connections alive for 72 s).
  app.addHook('onSend', async (_req, reply) => {
    if (!deps.isReady()) reply.header('Connection', 'close');
  });

  app.addSchema(ErrorResponse);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Quarry',
        description: 'Log analytics: Logflare-compatible ingest and saved SQL queries served as HTTP endpoints.',
        version: '0.1.0',
      },
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer' },
          apiKey: { type: 'apiKey', in: 'header', name: 'X-API-KEY' },
        },
      },
      security: [{ bearer: [] }, { apiKey: [] }],
    },
  });

  await app.register(healthRoutes, { isReady: deps.isReady, ...(deps.problems ? { problems: deps.problems } : {}) });
  await app.register(explorerRoutes);
  await app.register(tokenRoutes, { auth: deps.auth, tokens: deps.tokens });
  await app.register(sourceRoutes, { auth: deps.auth, sources: deps.sources });
  if (deps.register) await deps.register(app);

  app.get('/api/openapi.json', { schema: { hide: true } }, async (req) => {
    const doc = app.swagger() as { paths?: Record<string, unknown>; components?: Record<string, unknown> };
    if (!deps.savedEndpoints) return doc;
    // The document is shared: extend a copy with the saved endpoints this caller may run.
    const extra = await endpointPaths(deps.savedEndpoints, deps.auth.identify(req)?.scopes);
    const components = doc.components ?? {};
    return {
      ...doc,
      paths: { ...doc.paths, ...extra.paths },
      components: { ...components, responses: { ...(components.responses as object | undefined), ...extra.responses } },
    };
  });
  return app;
}
