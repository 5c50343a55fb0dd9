/**
 * The SQL front end's public surface: parse → validate → sandbox merge, on one AST.
 *
 *   checkSavedQuery(sql, catalog)          at endpoint save time
 *   prepareEndpointQuery({saved, caller})  per request; the result goes to an engine's run()
 */
import { QuarryError } from '../errors.ts';
import type { Catalog } from '../storage/schema.ts';
import { type Analysis, analyse } from './analyse.ts';
import type { Query } from './ast.ts';
import { Lru } from './lru.ts';
import { parseSql } from './parse.ts';
import { mergeSandboxed } from './sandbox.ts';
import { validateQuery } from './validate.ts';

export type { Query } from './ast.ts';
export { analyse } from './analyse.ts';
export { parseSql } from './parse.ts';

/** A merged, validated query, ready for any engine. */
export interface PreparedQuery {
  ast: Query;
  /**
   * Parameters to bind, in order of appearance: the saved query's, then any an AST caller added.
   * Bind each as a string (absent → NULL).
   */
  params: string[];
  /** The catalogue the query was validated against; engines read column types from it. */
  catalog: Catalog;
}

export interface SavedQueryInfo {
  params: string[];
  ctes: string[];
}

/** Validates a saved query (PARSE_ERROR / QUERY_NOT_ALLOWED / INVALID_QUERY) and describes it. */
export function checkSavedQuery(sql: string, catalog: Catalog): SavedQueryInfo {
  const { analysis } = savedQuery(sql, catalog);
  return { params: analysis.params, ctes: analysis.ctes };
}

export type CallerQuery = { sql: string } | { ast: Query };

export interface PrepareInput {
  saved: string;
  /**
   * A caller's `sql`, or a query built as an AST (LQL), replacing the final SELECT. An AST may
   * use parameters of its own (bind their values alongside the request's).
   */
  caller?: CallerQuery;
  catalog: Catalog;
  sandboxable: boolean;
}

/**
 * A prepared query as remembered: valid for as long as each source the saved query reads still
 * exists (validation consults the catalogue for nothing else; sandboxed callers may read only
 * CTEs). Engines key their own translations on the AST and check the catalogue entries again.
 */
interface Remembered {
  prepared: PreparedQuery;
  sources: readonly string[];
}

/** Per catalogue: prepared queries by (saved text, sandboxable, caller SQL text). */
const preparedByText = new WeakMap<Catalog, Lru<string, Remembered>>();
const preparedLimit = 512;

/**
 * Parses, validates and merges, or returns the result of an identical earlier call (same saved
 * text, caller SQL text and catalogue, with the same sources present). A caller given as an AST
 * (LQL, whose compilation may depend on the clock) is not remembered. Errors are never
 * remembered. The returned query is shared: treat it as read-only.
 */
export function prepareEndpointQuery(input: PrepareInput): PreparedQuery {
  if (input.caller && 'ast' in input.caller) return prepareUncached(input);
  let memo = preparedByText.get(input.catalog);
  if (!memo) {
    memo = new Lru(preparedLimit);
    preparedByText.set(input.catalog, memo);
  }
  const key = JSON.stringify([input.saved, input.sandboxable, input.caller ? input.caller.sql : null]);
  const known = memo.get(key);
  if (known?.sources.every((name) => input.catalog.sourceByName(name) !== undefined)) return known.prepared;
  const prepared = prepareUncached(input);
  memo.set(key, { prepared, sources: sourceNames(prepared.ast) });
  return prepared;
}

/** Names read as sources (not CTEs) anywhere in the query. */
function sourceNames(query: Query): string[] {
  const names = new Set<string>();
  for (const t of analyse(query).tables) if (!t.cte) names.add(t.name);
  return [...names];
}

function prepareUncached(input: PrepareInput): PreparedQuery {
  const { query: saved, analysis } = savedQuery(input.saved, input.catalog);
  if (!input.caller) return { ast: saved, params: analysis.params, catalog: input.catalog };
  if (!input.sandboxable) {
    throw new QuarryError('BAD_REQUEST', 'This endpoint is not sandboxable: it does not accept sql or lql parameters');
  }
  const fromCode = 'ast' in input.caller;
  const caller = 'ast' in input.caller ? input.caller.ast : parseSql(input.caller.sql);
  const callerAnalysis = validateQuery(caller, { catalog: input.catalog, sandboxCtes: analysis.ctes });
  const declared = new Set(analysis.params);
  const extra = callerAnalysis.params.filter((p) => !declared.has(p));
  // A query built by code (LQL) brings its own bound parameters; a user's SQL text may only use
  // the ones the saved query declares.
  if (extra.length > 0 && !fromCode) {
    const known = analysis.params.length > 0 ? analysis.params.map((p) => `@${p}`).join(', ') : 'none';
    throw new QuarryError('INVALID_QUERY', `Unknown parameter @${extra[0]}: this endpoint declares ${known}`);
  }
  return { ast: mergeSandboxed(saved, caller), params: [...analysis.params, ...extra], catalog: input.catalog };
}

// Saved queries are parsed once per text (parsing is most of the cost); validation against the
// catalogue runs every time because sources can come and go.
const parsedCache = new Map<string, Query>();
const cacheLimit = 256;

function savedQuery(sql: string, catalog: Catalog): { query: Query; analysis: Analysis } {
  let query = parsedCache.get(sql);
  if (!query) {
    query = parseSql(sql);
    if (parsedCache.size >= cacheLimit) parsedCache.delete(parsedCache.keys().next().value!);
    parsedCache.set(sql, query);
  }
  return { query, analysis: validateQuery(query, { catalog }) };
}
