/**
 * The SQL front end's public surface: parse → validate → sandbox merge, on one AST.
 *
 *   checkSavedQuery(sql, catalog)          at endpoint save time
 *   prepareEndpointQuery({saved, caller})  per request; the result goes to an engine's run()
 */
import { QuarryError } from '../errors.ts';
import type { Catalog, SourceTable } from '../storage/schema.ts';
import type { Query } from './ast.ts';
import { defaultQueryBounds, type QueryBounds } from './bounds.ts';
import { checkCost } from './cost.ts';
import { Lru } from './lru.ts';
import { parseSql } from './parse.ts';
import { mergeSandboxed } from './sandbox.ts';
import { type Resolved, resolveQuery } from './resolve.ts';
import { findName, type VType } from './types.ts';
import { validateQuery } from './validate.ts';
import { boundValues, valueLimits } from './value-bounds.ts';
import { checkValueGrowth } from './value-growth.ts';

export type { Query } from './ast.ts';
export { defaultQueryBounds, type QueryBounds } from './bounds.ts';
export { analyse } from './analyse.ts';
export { type BindValue, specialiseForValues } from './bind-time.ts';
export { parseSql } from './parse.ts';

import type { PreparedQuery } from './prepared.ts';

export type { PreparedQuery };

export interface SavedQueryInfo {
  params: string[];
  ctes: string[];
}

/** Validates a saved query (PARSE_ERROR / QUERY_NOT_ALLOWED / INVALID_QUERY) and describes it. */
export function checkSavedQuery(sql: string, catalog: Catalog): SavedQueryInfo {
  const { prepared, ctes } = savedQuery(sql, catalog);
  return { params: prepared.params, ctes };
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
  /** The cost and value-size bounds of the query as it will run (default: defaultQueryBounds). */
  bounds?: QueryBounds;
}

/**
 * Parses, validates and merges, then checks the bounds on the query as it will run (bounds.ts:
 * QUERY_TOO_COMPLEX, or INVALID_QUERY for a value too large), or returns the result of an identical earlier call (same saved
 * text, caller SQL text or caller AST, and catalogue, with the same sources present). A caller
 * given as an AST (LQL) is remembered by its structure: LQL binds every value it reads, the clock's
 * included, as a parameter, so the same LQL text makes the same tree on every request. Errors are
 * never remembered. The returned query is shared: treat it as read-only.
 */
export function prepareEndpointQuery(input: PrepareInput): PreparedQuery {
  return withinBounds(mergedQuery(input), input.bounds ?? defaultQueryBounds);
}

function mergedQuery(input: PrepareInput): PreparedQuery {
  const saved = savedQuery(input.saved, input.catalog);
  if (!input.caller) return saved.prepared;
  if (!input.sandboxable) {
    throw new QuarryError('BAD_REQUEST', 'This endpoint is not sandboxable: it does not accept sql or lql parameters');
  }
  // A merged query stays valid exactly as long as its saved query does: the caller may read only
  // CTEs, so its validation consults nothing in the catalogue.
  const memo = memoFor(mergedByText, input.catalog);
  const key = 'ast' in input.caller ? JSON.stringify([input.saved, 'ast', input.caller.ast]) : JSON.stringify([input.saved, input.caller.sql]);
  const known = memo.get(key);
  if (known?.saved === saved) return known.prepared;
  const prepared = 'ast' in input.caller ? mergeCaller(saved, input.caller.ast, true) : mergeCaller(saved, parseSql(input.caller.sql), false);
  memo.set(key, { saved, prepared });
  return prepared;
}

function mergeCaller(saved: SavedQuery, caller: Query, fromCode: boolean): PreparedQuery {
  const { prepared } = saved;
  const callerAnalysis = validateQuery(caller, { catalog: prepared.catalog, sandboxCtes: saved.ctes });
  const declared = new Set(prepared.params);
  const extra = callerAnalysis.params.filter((p) => !declared.has(p));
  // A query built by code (LQL) brings its own bound parameters; a user's SQL text may only use
  // the ones the saved query declares.
  if (extra.length > 0 && !fromCode) {
    const known = prepared.params.length > 0 ? prepared.params.map((p) => `@${p}`).join(', ') : 'none';
    throw new QuarryError('INVALID_QUERY', `Unknown parameter @${extra[0]}: this endpoint declares ${known}`);
  }
  return { ast: mergeSandboxed(prepared.ast, caller), params: [...prepared.params, ...extra], catalog: prepared.catalog };
}

/**
 * Per merged query and bounds: the query checked and with its value-building calls marked. Kept so
 * that a remembered query keeps one identity (engines remember translations per AST).
 */
const boundedQueries = new WeakMap<PreparedQuery, Map<string, PreparedQuery>>();

function withinBounds(prepared: PreparedQuery, bounds: QueryBounds): PreparedQuery {
  const key = JSON.stringify(bounds);
  const known = boundedQueries.get(prepared)?.get(key);
  if (known) return known;
  checkCost(prepared.ast, bounds);
  const limits = valueLimits(bounds.maxValueBytes);
  const ast = boundValues(prepared.ast, limits);
  checkValueGrowth(ast, { ...limits, maxGrowth: bounds.maxValueGrowth });
  const bounded = ast === prepared.ast ? prepared : { ...prepared, ast };
  let byBounds = boundedQueries.get(prepared);
  if (!byBounds) {
    byBounds = new Map();
    boundedQueries.set(prepared, byBounds);
  }
  byBounds.set(key, bounded);
  return bounded;
}

/** A validated saved query, and the sources it reads (validation consults the catalogue for nothing else). */
interface SavedQuery {
  prepared: PreparedQuery;
  ctes: string[];
  sources: readonly string[];
}

/** Per catalogue: validated saved queries by text, and merged queries by (saved text, caller SQL text). */
const savedByText = new WeakMap<Catalog, Lru<string, SavedQuery>>();
const mergedByText = new WeakMap<Catalog, Lru<string, { saved: SavedQuery; prepared: PreparedQuery }>>();
const memoLimit = 512;

function memoFor<V>(memos: WeakMap<Catalog, Lru<string, V>>, catalog: Catalog): Lru<string, V> {
  let memo = memos.get(catalog);
  if (!memo) {
    memo = new Lru(memoLimit);
    memos.set(catalog, memo);
  }
  return memo;
}

// Parsing is most of the cost, and does not depend on the catalogue: once per text, across catalogues.
const parsedByText = new Lru<string, Query>(256);

/** The saved query validated against `catalog`, reused while every source it reads still exists. */
function savedQuery(sql: string, catalog: Catalog): SavedQuery {
  const memo = memoFor(savedByText, catalog);
  const known = memo.get(sql);
  if (known?.sources.every((name) => catalog.sourceByName(name) !== undefined)) return known;
  let query = parsedByText.get(sql);
  if (!query) {
    query = parseSql(sql);
    parsedByText.set(sql, query);
  }
  const analysis = validateQuery(query, { catalog });
  const sources = new Set<string>();
  for (const t of analysis.tables) if (!t.cte) sources.add(t.name);
  const saved: SavedQuery = { prepared: { ast: query, params: analysis.params, catalog }, ctes: analysis.ctes, sources: [...sources] };
  memo.set(sql, saved);
  return saved;
}

/**
 * The type of a field of one of a saved query's CTEs (`cte`, `['metadata', 'response',
 * 'status_code']`), from the semantic pass over the saved query as the catalogue stands; undefined
 * when the CTE, the column or the field is not known. LQL reads its filter values as these types.
 */
export function savedCteFieldTypes(saved: string, catalog: Catalog): (cte: string, path: readonly string[]) => VType | undefined {
  const ctes = cteColumns(saved, catalog);
  return (cte, path) => {
    const columns = ctes.get(cte.toLowerCase());
    const head = path[0];
    if (!columns || head === undefined) return undefined;
    let type: VType | undefined = findName(
      columns.map((c) => [c.name, c.type] as const),
      head,
    )?.[1];
    for (const name of path.slice(1)) {
      if (type?.k !== 'record') return undefined;
      type = findName(Object.entries(type.fields), name)?.[1];
    }
    return type;
  };
}

type CteColumns = ReadonlyMap<string, Resolved['query']['columns']>;

/** Per catalogue and saved text: the CTE columns, with the catalogue entries they were typed from. */
const cteColumnsByText = new WeakMap<Catalog, Lru<string, { deps: [string, SourceTable | undefined][]; ctes: CteColumns }>>();

/** The typed output columns of a saved query's CTEs, reused while its sources' catalogue entries are unchanged. */
function cteColumns(saved: string, catalog: Catalog): CteColumns {
  const memo = memoFor(cteColumnsByText, catalog);
  const known = memo.get(saved);
  if (known?.deps.every(([name, entry]) => catalog.sourceByName(name) === entry)) return known.ctes;
  try {
    const s = savedQuery(saved, catalog);
    const deps = s.sources.map((name): [string, SourceTable | undefined] => [name, catalog.sourceByName(name)]);
    const { query } = resolveQuery(s.prepared.ast, { catalog });
    const ctes: CteColumns = new Map(query.with.map((c) => [c.name.toLowerCase(), c.query.columns]));
    memo.set(saved, { deps, ctes });
    return ctes;
  } catch {
    // The saved query does not resolve as the catalogue stands: values keep their own form.
    return new Map();
  }
}
