/**
 * Authentication: finds the caller's token in a request and checks it against an action.
 * Transports, checked in this order: `Authorization: Bearer <t>`, `X-API-KEY: <t>`, `?api_key=<t>`.
 */
import { QuarryError } from '../errors.ts';
import type { AccessToken, TokenRepository } from '../metadata/tokens.ts';
import { type Action, allows, describeAction } from './scopes.ts';

export interface RequestCredentials {
  headers: Record<string, string | string[] | undefined>;
  query: unknown;
}

function header(headers: RequestCredentials['headers'], name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

export function extractToken(req: RequestCredentials): string | undefined {
  const authz = header(req.headers, 'authorization');
  if (authz) {
    const m = /^Bearer\s+(.+)$/i.exec(authz.trim());
    if (m?.[1]) return m[1].trim();
  }
  const apiKey = header(req.headers, 'x-api-key');
  if (apiKey) return apiKey.trim();
  const q = req.query;
  if (q && typeof q === 'object' && 'api_key' in q) {
    const v = (q as Record<string, unknown>).api_key;
    if (typeof v === 'string' && v !== '') return v;
  }
  return undefined;
}

export interface AuthOptions {
  /**
   * Throws when this node's copy of the tokens may be out of date (a shared metadata store it has
   * not reached for too long), so a token revoked elsewhere is never accepted past the bound.
   */
  assertFresh?: () => void;
}

export interface Auth {
  /** The token presented, if any and live; throws only when `assertFresh` does. */
  identify(req: RequestCredentials): AccessToken | undefined;
  /** Throws UNAUTHORIZED (no/unknown/revoked token) or FORBIDDEN (token lacks the scope). */
  require(req: RequestCredentials, action: Action): AccessToken;
}

export function createAuth(tokens: TokenRepository, options: AuthOptions = {}): Auth {
  const assertFresh = options.assertFresh ?? (() => undefined);
  function identify(req: RequestCredentials) {
    const value = extractToken(req);
    if (value === undefined) return undefined;
    assertFresh();
    return tokens.findByValue(value);
  }
  return {
    identify,
    require(req, action) {
      const value = extractToken(req);
      if (value === undefined) {
        throw new QuarryError(
          'UNAUTHORIZED',
          'An access token is required: send it as "Authorization: Bearer <token>", an "X-API-KEY" header or an "api_key" query parameter.',
        );
      }
      assertFresh();
      const token = tokens.findByValue(value);
      if (!token) throw new QuarryError('UNAUTHORIZED', 'The access token is unknown or has been revoked.');
      if (!allows(token.scopes, action)) {
        throw new QuarryError('FORBIDDEN', `This access token may not use ${describeAction(action)}.`);
      }
      return token;
    },
  };
}
