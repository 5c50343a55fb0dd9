/**
 * Cross-origin access as Logflare grants it (docs/API.md §7): `Access-Control-Allow-Origin: *` on
 * ingest and on running endpoints only, on every answer of those routes (errors included, so a
 * browser can read why it was refused), and `OPTIONS` preflight answered 204 before any token check
 * (a browser sends no credentials on a preflight). Management routes get none: their tokens are
 * private and have no business in a web page (Logflare's management API sends no CORS headers either).
 */
import type { FastifyInstance, FastifyReply, RouteOptions } from 'fastify';

export interface CorsPolicy {
  /** Access-Control-Allow-Methods of a preflight answer. */
  readonly methods: readonly string[];
  /** Access-Control-Allow-Headers of a preflight answer: request headers a page may send. */
  readonly allowHeaders: readonly string[];
  /** Access-Control-Expose-Headers: response headers, beyond the safelisted ones, a page may read. */
  readonly exposeHeaders: readonly string[];
}

/** Logflare's `max_age`: 20 days (browsers cap it lower: Chromium at 2 hours, Firefox at 24). */
export const CORS_MAX_AGE_SECONDS = 1_728_000;

/** Logflare's list (Authorization, Content-Type, Content-Length, X-Requested-With, X-API-Key) and Content-Encoding. */
const requestHeaders = ['Authorization', 'Content-Type', 'Content-Length', 'Content-Encoding', 'X-Requested-With', 'X-API-Key'];

export const INGEST_CORS: CorsPolicy = {
  methods: ['POST', 'OPTIONS'],
  allowHeaders: [...requestHeaders, 'X-Source', 'X-Collection'],
  exposeHeaders: ['Retry-After'],
};

export const QUERY_CORS: CorsPolicy = {
  methods: ['GET', 'POST', 'OPTIONS'],
  allowHeaders: [...requestHeaders, 'LF-ENDPOINT-LABELS', 'LF-ENDPOINT-REDACT-PII', 'LF-ENDPOINT-BIGQUERY-RESERVATION'],
  exposeHeaders: ['X-Cache', 'Age', 'X-Query-Warnings', 'Retry-After'],
};

function preflightHeaders(policy: CorsPolicy): Record<string, string> {
  return {
    'Access-Control-Allow-Origin': '*',
    'Access-Control-Allow-Methods': policy.methods.join(', '),
    'Access-Control-Allow-Headers': policy.allowHeaders.join(', '),
    'Access-Control-Max-Age': String(CORS_MAX_AGE_SECONDS),
  };
}

function methodsOf(route: RouteOptions): string[] {
  return Array.isArray(route.method) ? route.method : [route.method];
}

/**
 * Applies `policy` to every route of the plugin `app` (call it before the plugin's other hooks and
 * routes): each route added afterwards gets an `OPTIONS` twin, and every request gets the origin
 * header first thing, so an answer from a later hook (401, 404) carries it too.
 */
export function allowCrossOrigin(app: FastifyInstance, policy: CorsPolicy): void {
  const preflight = preflightHeaders(policy);
  const expose = policy.exposeHeaders.join(', ');
  const answerPreflight = (reply: FastifyReply): FastifyReply => reply.code(204).headers(preflight).send();

  // Answered here, so the plugin's later onRequest hooks (the token check) never see a preflight.
  app.addHook('onRequest', async (req, reply) => {
    if (req.method === 'OPTIONS') return answerPreflight(reply);
    reply.header('Access-Control-Allow-Origin', '*').header('Access-Control-Expose-Headers', expose);
  });

  const withPreflight = new Set<string>();
  app.addHook('onRoute', function (route) {
    if (methodsOf(route).includes('OPTIONS') || withPreflight.has(route.url)) return;
    withPreflight.add(route.url);
    // On the instance that added the route (`this`), whose prefix routePath lacks. The handler
    // only makes the router match: the hook above answers first.
    this.options(route.routePath, { schema: { hide: true } }, async (_req, reply) => answerPreflight(reply));
  });
}
