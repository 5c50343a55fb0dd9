/**
 * The Fastify application: one plugin per route group, each given only the services it needs.
 * No business logic lives in src/http; handlers translate HTTP to calls on those services.
 */
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import type { Auth } from '../auth/auth.ts';
import { QuarryError } from '../errors.ts';
import type { TokenRepository } from '../metadata/tokens.ts';
import { errorHandler, sendError, toQuarryError } from './errors.ts';
import { explorerRoutes } from './explorer-routes.ts';
import { healthRoutes } from './health-routes.ts';
import { ErrorResponse } from './schemas.ts';
import { type SourceAdmin, sourceRoutes } from './source-routes.ts';
import { tokenRoutes } from './token-routes.ts';

/**
 * One log line per request: method, path (without the query string, which may carry a token),
 * status and duration. Headers are never logged.
 */
class RequestLog extends LogController {
  override incomingRequest(): void {}
  override requestCompleted(_error: Error | null | undefined, req: FastifyRequest, reply: FastifyReply): void {
    const path = req.url.split('?')[0];
    const ms = Number(reply.elapsedTime.toFixed(1));
    req.log.info({ method: req.method, path, status: reply.statusCode, ms }, `${req.method} ${path} ${reply.statusCode} ${ms}ms`);
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
  /** Route plugins of other parts (ingest, endpoints), registered after the core ones. */
  register?: (app: FastifyInstance) => Promise<void>;
}

export async function buildApp(deps: AppDeps) {
  const app = Fastify({
    logger: deps.logLevel === 'silent' ? false : { level: deps.logLevel },
    logController: new RequestLog(),
    bodyLimit: deps.bodyLimitBytes,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    // No type coercion: `"enable_auth": null` must be refused, not read as false. All errors at
    // once, so a 422 names every bad field.
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, allErrors: true } },
    // Errors raised before routing (a malformed URL, ...) get the same error shape as the rest.
    frameworkErrors: (error, _req, reply) => sendError(reply, toQuarryError(error)),
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler((req, reply) =>
    sendError(reply, new QuarryError('NOT_FOUND', `No route ${req.method} ${req.url.split('?')[0]}.`)),
  );

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

  app.get('/api/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  return app;
}
