/**
 * Cost bounds (bounds.ts): what a query amounts to once every CTE is inlined at each of its uses,
 * measured on the AST without inlining anything. A CTE read twice by a CTE read twice… multiplies,
 * which is how a few hundred bytes of SQL kept DuckDB's planner busy for minutes; each CTE is
 * measured once and its cost added at every reference, so measuring stays linear in the text.
 */
import { QuarryError } from '../errors.ts';
import type { Expr, From, Query, SetExpr, TableFactor } from './ast.ts';
import type { QueryBounds } from './bounds.ts';
import { assertNever } from './types.ts';
import { children } from './walk.ts';

export interface QueryCost {
  /** Table references (sources and CTEs) once CTEs are inlined; a CTE reading no table counts 1. */
  readonly tableReferences: number;
  /** The most items (tables, derived tables, UNNESTs) one FROM clause joins. */
  readonly joins: number;
  /** Set-operation operands once CTEs are inlined. */
  readonly setOperands: number;
  /** The deepest nesting of queries, the whole query being 1 and a CTE read one level into it. */
  readonly nesting: number;
}

const none: QueryCost = { tableReferences: 0, joins: 0, setOperands: 0, nesting: 0 };

function plus(a: QueryCost, b: QueryCost): QueryCost {
  return {
    tableReferences: a.tableReferences + b.tableReferences,
    joins: Math.max(a.joins, b.joins),
    setOperands: a.setOperands + b.setOperands,
    nesting: Math.max(a.nesting, b.nesting),
  };
}

type Scope = ReadonlyMap<string, QueryCost>;

export function measureCost(query: Query): QueryCost {
  return queryCost(query, new Map());
}

function queryCost(q: Query, outer: Scope): QueryCost {
  const scope = new Map(outer);
  // A CTE sees the CTEs defined before it; its cost counts only where it is read.
  for (const cte of q.with) scope.set(cte.name.toLowerCase(), queryCost(cte.query, scope));
  let inner = setExprCost(q.body, scope);
  for (const e of [...q.orderBy.map((o) => o.expr), q.limit, q.offset]) if (e) inner = plus(inner, exprCost(e, scope));
  return { ...inner, nesting: inner.nesting + 1 };
}

function setExprCost(body: SetExpr, scope: Scope): QueryCost {
  switch (body.kind) {
    case 'nested':
      return queryCost(body.query, scope);
    case 'setop': {
      const operands = setOperands(body);
      return operands.reduce((sum, o) => plus(sum, setExprCost(o, scope)), { ...none, setOperands: operands.length });
    }
    case 'select': {
      let cost = body.from ? fromCost(body.from, scope) : none;
      for (const c of body.columns) cost = plus(cost, exprCost(c.expr, scope));
      for (const e of [body.where, ...body.groupBy, body.having, body.qualify]) if (e) cost = plus(cost, exprCost(e, scope));
      return cost;
    }
    default:
      return assertNever(body);
  }
}

/** The operands of a chain of set operations (`a UNION ALL b UNION ALL c` has three). */
function setOperands(body: SetExpr): SetExpr[] {
  return body.kind === 'setop' ? [...setOperands(body.left), ...setOperands(body.right)] : [body];
}

function fromCost(from: From, scope: Scope): QueryCost {
  let cost: QueryCost = { ...factorCost(from.first, scope), joins: 0 };
  for (const j of from.joins) {
    cost = plus(cost, factorCost(j.table, scope));
    if (j.on) cost = plus(cost, exprCost(j.on, scope));
  }
  return { ...cost, joins: Math.max(cost.joins, items(from)) };
}

/** The items a FROM clause joins, those of parenthesised joins included. */
function items(from: From): number {
  return [from.first, ...from.joins.map((j) => j.table)].reduce((n, f) => n + (f.kind === 'nested' ? items(f.from) : 1), 0);
}

function factorCost(f: TableFactor, scope: Scope): QueryCost {
  switch (f.kind) {
    case 'table': {
      const cte = scope.get(f.name.toLowerCase());
      if (!cte) return { ...none, tableReferences: 1 };
      return { ...cte, tableReferences: Math.max(1, cte.tableReferences) };
    }
    case 'derived':
      return queryCost(f.query, scope);
    case 'unnest':
      return exprCost(f.expr, scope);
    case 'nested':
      return fromCost(f.from, scope);
    default:
      return assertNever(f);
  }
}

function exprCost(e: Expr, scope: Scope): QueryCost {
  const [exprs, queries] = children(e);
  let cost = none;
  for (const x of exprs) cost = plus(cost, exprCost(x, scope));
  for (const q of queries) cost = plus(cost, queryCost(q, scope));
  return cost;
}

/** QUERY_TOO_COMPLEX naming the first bound `query` goes past, with its limit and what it reached. */
export function checkCost(query: Query, bounds: QueryBounds): QueryCost {
  const cost = measureCost(query);
  const checks: [number, number, string, string][] = [
    [cost.tableReferences, bounds.maxTableReferences, 'QUERY_MAX_TABLE_REFERENCES', 'table references once its CTEs are inlined'],
    [cost.joins, bounds.maxJoins, 'QUERY_MAX_JOINS', 'items joined in one FROM clause'],
    [cost.setOperands, bounds.maxSetOperands, 'QUERY_MAX_SET_OPERANDS', 'set-operation operands (UNION, INTERSECT, EXCEPT) once its CTEs are inlined'],
    [cost.nesting, bounds.maxNesting, 'QUERY_MAX_NESTING', 'levels of nested queries (a CTE read counts as a level)'],
  ];
  for (const [reached, limit, setting, what] of checks) {
    if (reached > limit) {
      throw new QuarryError('QUERY_TOO_COMPLEX', `The query is too complex: it has ${count(reached)} ${what}, more than the limit of ${limit} (${setting})`);
    }
  }
  return cost;
}

function count(n: number): string {
  return Number.isSafeInteger(n) ? String(n) : n.toExponential(2);
}
