/**
 * Validation rules every query passes before any engine sees it (docs/API.md §4): allow-listed
 * functions with the right number of arguments, and only the tables the query may read. Single
 * statement, SELECT only and no wildcards are already guaranteed by the parser's converter.
 */
import { QuarryError } from '../errors.ts';
import type { Catalog } from '../storage/schema.ts';
import { type Analysis, analyse } from './analyse.ts';
import type { Query } from './ast.ts';
import { functionDef, restrictedFunction } from './functions.ts';
import { walkQuery } from './walk.ts';

export interface ValidateOptions {
  catalog: Catalog;
  /**
   * Sandbox mode: the query may read only these CTEs (the saved query's) and CTEs it defines
   * itself; sources by name are refused.
   */
  sandboxCtes?: readonly string[];
}

/** Names the engine uses for its own tables; a CTE may not take one (defence in depth). */
const RESERVED_NAME = /^(src_|_quarry)/i;

/**
 * How deeply the syntax tree may nest. Real queries stay far below (logs.all: 11, Studio's: under
 * 20); DuckDB's planning time grows faster than linearly with depth and cannot be interrupted, so a
 * long operator chain would otherwise outlive the time limit.
 */
export const MAX_TREE_DEPTH = 100;

function treeDepth(node: unknown, limit: number): number {
  if (typeof node !== 'object' || node === null) return 0;
  if (limit <= 0) return 1;
  let deepest = 0;
  for (const child of Object.values(node)) deepest = Math.max(deepest, treeDepth(child, limit - 1));
  return deepest + 1;
}

export function validateQuery(query: Query, options: ValidateOptions): Analysis {
  if (treeDepth(query, MAX_TREE_DEPTH) > MAX_TREE_DEPTH) {
    throw new QuarryError('INVALID_QUERY', `The query nests too deeply (more than ${MAX_TREE_DEPTH} levels of expressions)`);
  }
  checkFunctions(query);
  checkCteNames(query);
  const analysis = analyse(query);
  const allowed = options.sandboxCtes ? new Set(options.sandboxCtes.map((n) => n.toLowerCase())) : undefined;
  const refused: string[] = [];
  for (const t of analysis.tables) {
    if (t.cte) continue;
    if (allowed) {
      if (!allowed.has(t.name.toLowerCase())) refused.push(t.name);
    } else if (!options.catalog.sourceByName(t.name)) {
      throw new QuarryError('QUERY_NOT_ALLOWED', `can't find source ${t.name}`);
    }
  }
  if (refused.length > 0) {
    throw new QuarryError('QUERY_NOT_ALLOWED', `Table not found in CTE: (${[...new Set(refused)].join(', ')})`);
  }
  return analysis;
}

function checkCteNames(query: Query): void {
  walkQuery(query, {
    query(q) {
      for (const cte of q.with) {
        if (RESERVED_NAME.test(cte.name)) {
          throw new QuarryError('QUERY_NOT_ALLOWED', `CTE names starting with src_ or _quarry are reserved: ${cte.name}`);
        }
      }
    },
  });
}

function checkFunctions(query: Query): void {
  walkQuery(query, {
    expr(e) {
      if (e.kind !== 'func') return;
      const spec = functionDef(e.name);
      if (!spec) throw restrictedFunction(e.name);
      const n = e.args.length + (e.star ? 1 : 0);
      if (n < spec.min || n > spec.max) {
        const expected = spec.min === spec.max ? `${spec.min}` : `${spec.min} to ${spec.max}`;
        throw new QuarryError('INVALID_QUERY', `${e.name.toUpperCase()} takes ${expected} argument(s), got ${n}`);
      }
      if (spec.kind === 'window' && !e.over) throw new QuarryError('INVALID_QUERY', `${e.name.toUpperCase()} needs an OVER clause`);
      if (spec.kind === 'scalar' && e.over) throw new QuarryError('INVALID_QUERY', `${e.name.toUpperCase()} is not an aggregate or window function`);
      if ((e.distinct || e.orderBy || e.limit) && spec.kind !== 'aggregate') {
        throw new QuarryError('INVALID_QUERY', `DISTINCT, ORDER BY and LIMIT are only allowed inside aggregate functions (found in ${e.name.toUpperCase()})`);
      }
    },
  });
}
