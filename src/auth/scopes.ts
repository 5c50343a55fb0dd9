/**
 * Scopes and what they allow (docs/API.md §2).
 *   private                      everything
 *   query                        run any endpoint
 *   query:endpoint:<id>          run that endpoint
 *   ingest | public              ingest into any source
 *   ingest:source:<id>           ingest into that source
 */
export type Action = { kind: 'manage' } | { kind: 'query'; endpointId: string } | { kind: 'ingest'; sourceId: string };

const SCOPE_PATTERN = /^(private|query|ingest|public|query:endpoint:[0-9a-fA-F-]{36}|ingest:source:[0-9a-fA-F-]{36})$/;

export function isValidScope(scope: string): boolean {
  return SCOPE_PATTERN.test(scope);
}

export function allows(scopes: readonly string[], action: Action): boolean {
  if (scopes.includes('private')) return true;
  switch (action.kind) {
    case 'manage':
      return false;
    case 'query':
      return scopes.includes('query') || scopes.includes(`query:endpoint:${action.endpointId}`);
    case 'ingest':
      return scopes.includes('ingest') || scopes.includes('public') || scopes.includes(`ingest:source:${action.sourceId}`);
  }
}

/**
 * How far a token's scopes reach for one kind of action: every resource (`all`), only the ones its
 * `…:<id>` scopes name (`some`), or none at all. The access rules (auth.ts) answer a resource a
 * token may not use by this reach, never by whether the resource exists.
 */
export type Reach = 'all' | 'some' | 'none';

export function queryReach(scopes: readonly string[]): Reach {
  if (scopes.includes('private') || scopes.includes('query')) return 'all';
  return scopes.some((s) => s.startsWith('query:endpoint:')) ? 'some' : 'none';
}

export function ingestReach(scopes: readonly string[]): Reach {
  if (scopes.includes('private') || scopes.includes('ingest') || scopes.includes('public')) return 'all';
  return scopes.some((s) => s.startsWith('ingest:source:')) ? 'some' : 'none';
}

/**
 * What a refused action needs, for a 403 message: the scope names only, never an endpoint or
 * source id (a source id names its table), so the message is the same for every resource.
 */
export function describeAction(action: Action): string {
  switch (action.kind) {
    case 'manage':
      return 'the management API (needs scope "private")';
    case 'query':
      return 'this endpoint (needs scope "query" or "query:endpoint:<endpoint id>")';
    case 'ingest':
      return 'this source (needs scope "ingest", "public" or "ingest:source:<source id>")';
  }
}
