/**
 * Scopes and what they allow (docs/API.md §2).
 *   private                      everything
 *   query                        run any endpoint
 *   query:endpoint:<id>          run that endpoint
 *   ingest | public              ingest into any source
 *   ingest:source:<id>           ingest into that source
 */
export type Action =
  | { kind: 'manage' }
  | { kind: 'query'; endpointId: string }
  | { kind: 'ingest'; sourceId: string };

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
      return (
        scopes.includes('ingest') || scopes.includes('public') || scopes.includes(`ingest:source:${action.sourceId}`)
      );
  }
}

export function describeAction(action: Action): string {
  switch (action.kind) {
    case 'manage':
      return 'the management API (needs scope "private")';
    case 'query':
      return `endpoint ${action.endpointId} (needs scope "query" or "query:endpoint:${action.endpointId}")`;
    case 'ingest':
      return `source ${action.sourceId} (needs scope "ingest" or "ingest:source:${action.sourceId}")`;
  }
}
