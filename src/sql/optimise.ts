/**
 * Tree rewrites on the AST (before resolution) that keep the meaning of a query but let an engine
 * avoid sorting whole tables; engine-neutral, applied for every engine:
 *
 * - When the final SELECT is a plain projection of one CTE (no WHERE, grouping, DISTINCT,
 *   aggregates or windows) with a constant LIMIT, and no other CTE reads that CTE, the LIMIT is
 *   pushed into the CTE, whose `ORDER BY timestamp DESC` then becomes a top-n scan.
 * - CTEs nothing reads are dropped (their missing-path warnings would only be noise).
 * - An ORDER BY without LIMIT inside a CTE is dropped when its order cannot be observed: the
 *   final SELECT sorts itself, aggregates, or reads something else. (BigQuery gives such an
 *   inner ORDER BY no meaning either.)
 */
import type { Expr, Query, Select } from './ast.ts';
import { functionDef } from './functions.ts';
import { AstTransformer } from './ast-transform.ts';
import { walkQuery } from './walk.ts';

/**
 * The row cap: a LIMIT the query gets, or lowers its own to (a non-constant LIMIT becomes
 * `least(limit, cap)`).
 */
export function capRows(query: Query, maxRows: number): Query {
  const max = Math.max(0, Math.floor(maxRows));
  const cap: Expr = { kind: 'literal', type: 'number', value: String(max) };
  if (!query.limit) return { ...query, limit: cap };
  const own = query.limit;
  if (own.kind === 'literal' && own.type === 'number' && /^\d+$/.test(own.value)) {
    return Number(own.value) <= max ? query : { ...query, limit: cap };
  }
  return { ...query, limit: { kind: 'func', name: 'least', args: [own, cap] } };
}

export function optimise(input: Query): Query {
  const query = pruneUnusedCtes(input);
  if (query.with.length === 0) return query;
  const body = query.body.kind === 'select' ? query.body : undefined;
  const target = body && plainProjectionSource(body);
  const preservesOrder = target !== undefined && (query.orderBy.length === 0 || sameOrder(query, target));
  const readByOthers = new Set<string>();
  for (const cte of query.with) {
    walkQuery(cte.query, {
      table(t) {
        readByOthers.add(t.name.toLowerCase());
      },
    });
  }
  const limit = constantLimit(query);
  const with_ = query.with.map((cte) => {
    const name = cte.name.toLowerCase();
    const q = cte.query;
    if (q.orderBy.length === 0 || q.offset) return cte;
    const isTarget = target === name && preservesOrder;
    if (isTarget && limit !== undefined && !readByOthers.has(name) && body?.where === undefined && !query.offset) {
      const own = constantLimit(q);
      const n = own === undefined ? limit : Math.min(own, limit);
      return { name: cte.name, query: { ...q, limit: { kind: 'literal', type: 'number', value: String(n) } as Expr } };
    }
    if (!isTarget && !q.limit && !readByOthers.has(name)) return { name: cte.name, query: { ...q, orderBy: [] } };
    return cte;
  });
  return { ...query, with: with_ };
}

/** The CTE name when the SELECT is `SELECT <columns> FROM cte [WHERE ...]` with nothing else. */
function plainProjectionSource(s: Select): string | undefined {
  if (s.distinct || s.groupBy.length > 0 || s.having || s.qualify || !s.from) return undefined;
  if (s.from.joins.length > 0 || s.from.first.kind !== 'table') return undefined;
  let aggregates = false;
  const visit = new AstTransformer({
    expr(e, recurse) {
      if (e.kind === 'func' && (e.over || functionDef(e.name)?.kind !== 'scalar')) aggregates = true;
      if (e.kind === 'subquery' || e.kind === 'exists' || e.kind === 'inQuery') aggregates = true;
      return recurse(e);
    },
  });
  for (const c of s.columns) visit.expr(c.expr);
  return aggregates ? undefined : s.from.first.name.toLowerCase();
}

/** The outer ORDER BY is the CTE's own (same columns, same directions). */
function sameOrder(outer: Query, cteName: string): boolean {
  const cte = outer.with.find((c) => c.name.toLowerCase() === cteName);
  if (!cte || cte.query.orderBy.length !== outer.orderBy.length) return false;
  return outer.orderBy.every((o, i) => {
    const inner = cte.query.orderBy[i]!;
    return o.desc === inner.desc && lastName(o.expr) !== undefined && lastName(o.expr) === lastName(inner.expr);
  });
}

function lastName(e: Expr): string | undefined {
  return e.kind === 'column' ? e.path.at(-1)!.toLowerCase() : undefined;
}

function constantLimit(q: Query): number | undefined {
  const l = q.limit;
  return l?.kind === 'literal' && l.type === 'number' && /^\d+$/.test(l.value) ? Number(l.value) : undefined;
}

function pruneUnusedCtes(query: Query): Query {
  if (query.with.length === 0) return query;
  const reads = (q: Query): Set<string> => {
    const names = new Set<string>();
    walkQuery(q, {
      table(t) {
        names.add(t.name.toLowerCase());
      },
    });
    return names;
  };
  const bodyOnly: Query = { ...query, with: [] };
  const needed = reads(bodyOnly);
  // CTEs only read earlier CTEs: walking backwards reaches every dependency.
  for (let i = query.with.length - 1; i >= 0; i--) {
    const cte = query.with[i]!;
    if (needed.has(cte.name.toLowerCase())) for (const n of reads(cte.query)) needed.add(n);
  }
  const kept = query.with.filter((c) => needed.has(c.name.toLowerCase()));
  return kept.length === query.with.length ? query : { ...query, with: kept };
}
