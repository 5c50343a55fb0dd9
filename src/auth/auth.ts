/**
 * Authentication: finds the caller's token in a request and checks it against an action.
 * Transports, checked in this order: `Authorization: Bearer <t>`, `X-API-KEY: <t>`, `?api_key=<t>`.
 *
 * No oracle (docs/API.md §2): what a caller is told never depends on whether an endpoint or source
 * it may not use exists. Without a valid token every endpoint name or id answers the same 401; a
 * token that may run no endpoint at all gets the same 403 for every name; a token limited to some
 * endpoints gets the same 404 for the others as for a name that does not exist (they are not
 * visible to it); a token limited to some sources gets the same 403 for the others as for a source
 * that does not exist. Messages name the scope needed, never an id.
 */
import { QuarryError, isQuarryError } from '../errors.ts';
import type { AccessToken, TokenRepository } from '../metadata/tokens.ts';
import { type Action, allows, describeAction, ingestReach, queryReach } from './scopes.ts';

/** The one 404 of the query route: the same for an unknown name and an endpoint the token may not see. */
export const ENDPOINT_NOT_FOUND = 'No endpoint with this id or name is visible to this access token.';

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

/** What the query route knows of the endpoint asked for. */
export interface QueryTarget {
  id: string;
  enable_auth: boolean;
}

export interface Auth {
  /** The token presented, if any and live; throws only when `assertFresh` does. */
  identify(req: RequestCredentials): AccessToken | undefined;
  /** Throws UNAUTHORIZED (no/unknown/revoked token) or FORBIDDEN (token lacks the scope). */
  require(req: RequestCredentials, action: Action): AccessToken;
  /**
   * May the caller run `endpoint` (undefined: no endpoint has the id or name asked for)? Returns the
   * caller's token (undefined for an anonymous call of an endpoint with `enable_auth: false`), or
   * throws UNAUTHORIZED (no valid token), FORBIDDEN (the token may run no endpoint at all) or
   * NOT_FOUND (unknown, or not among the endpoints the token may run), each the same whether the
   * endpoint exists or not.
   */
  requireQuery(req: RequestCredentials, endpoint: QueryTarget | undefined): AccessToken | undefined;
  /**
   * May the caller ingest into the source `find` looks up (it throws NOT_FOUND for an unknown one)?
   * Token first (401), then whether it may ingest at all (403), then the source: a token limited to
   * some sources gets the same 403 for an unknown source as for one outside its scopes; a token that
   * may ingest anywhere gets `find`'s 404.
   */
  requireIngest<S extends { id: string }>(req: RequestCredentials, find: () => S): { token: AccessToken; source: S };
  /**
   * `requireIngest`'s checks before the source: a token (401) that may ingest somewhere (403). For a
   * request whose source is only known once its body is read; `requireIngest` follows then.
   */
  requireIngestToken(req: RequestCredentials): AccessToken;
}

export function createAuth(tokens: TokenRepository, options: AuthOptions = {}): Auth {
  const assertFresh = options.assertFresh ?? (() => undefined);
  function identify(req: RequestCredentials) {
    const value = extractToken(req);
    if (value === undefined) return undefined;
    assertFresh();
    return tokens.findByValue(value);
  }
  function authenticate(req: RequestCredentials): AccessToken {
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
    return token;
  }
  const forbidden = (action: Action) => new QuarryError('FORBIDDEN', `This access token may not use ${describeAction(action)}.`);
  function requireIngestToken(req: RequestCredentials): AccessToken {
    const token = authenticate(req);
    if (ingestReach(token.scopes) === 'none') throw forbidden({ kind: 'ingest', sourceId: '' });
    return token;
  }
  return {
    identify,
    require(req, action) {
      const token = authenticate(req);
      if (!allows(token.scopes, action)) throw forbidden(action);
      return token;
    },
    requireQuery(req, endpoint) {
      // Open by design: anyone may run it, with or without a token (an unknown one is ignored).
      if (endpoint && !endpoint.enable_auth) return identify(req);
      const token = authenticate(req);
      const reach = queryReach(token.scopes);
      if (reach === 'none') throw forbidden({ kind: 'query', endpointId: '' });
      // An endpoint a scoped token may not run is not visible to it (the contract's 404 "no
      // endpoint with that id or name visible to the caller"): the same answer as an unknown name.
      if (!endpoint || !allows(token.scopes, { kind: 'query', endpointId: endpoint.id })) {
        throw new QuarryError('NOT_FOUND', ENDPOINT_NOT_FOUND);
      }
      return token;
    },
    requireIngestToken,
    requireIngest(req, find) {
      const token = requireIngestToken(req);
      const reach = ingestReach(token.scopes);
      let source: ReturnType<typeof find>;
      try {
        source = find();
      } catch (e) {
        if (reach === 'some' && isQuarryError(e) && e.code === 'NOT_FOUND') throw forbidden({ kind: 'ingest', sourceId: '' });
        throw e;
      }
      if (!allows(token.scopes, { kind: 'ingest', sourceId: source.id })) throw forbidden({ kind: 'ingest', sourceId: '' });
      return { token, source };
    },
  };
}
