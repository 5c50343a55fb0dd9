/**
 * Depth-first traversal of the AST, for analysis and validation. Visits every query (CTEs,
 * derived tables, subqueries in expressions, set operation branches), every table factor and
 * every expression, keeping track of which CTE names are visible at each table reference.
 */
import type { Expr, From, Query, SetExpr, TableFactor } from './ast.ts';
import { assertNever } from './types.ts';

export interface Visitor {
  query?(q: Query): void;
  /** `cteVisible` tells whether the name resolves to a CTE in scope at this point. */
  table?(t: Extract<TableFactor, { kind: 'table' }>, cteVisible: boolean): void;
  expr?(e: Expr): void;
}

export function walkQuery(query: Query, visitor: Visitor, visibleCtes: ReadonlySet<string> = new Set()): void {
  visitor.query?.(query);
  const scope = new Set(visibleCtes);
  for (const cte of query.with) {
    // A CTE sees the CTEs defined before it (WITH is not recursive here).
    walkQuery(cte.query, visitor, scope);
    scope.add(cte.name.toLowerCase());
  }
  walkSetExpr(query.body, visitor, scope);
  for (const o of query.orderBy) walkExpr(o.expr, visitor, scope);
  if (query.limit) walkExpr(query.limit, visitor, scope);
  if (query.offset) walkExpr(query.offset, visitor, scope);
}

function walkSetExpr(body: SetExpr, visitor: Visitor, scope: ReadonlySet<string>): void {
  switch (body.kind) {
    case 'nested':
      walkQuery(body.query, visitor, scope);
      return;
    case 'setop':
      walkSetExpr(body.left, visitor, scope);
      walkSetExpr(body.right, visitor, scope);
      return;
    case 'select':
      if (body.from) walkFrom(body.from, visitor, scope);
      for (const c of body.columns) walkExpr(c.expr, visitor, scope);
      for (const e of [body.where, ...body.groupBy, body.having, body.qualify]) if (e) walkExpr(e, visitor, scope);
      return;
    default:
      assertNever(body);
  }
}

function walkFrom(from: From, visitor: Visitor, scope: ReadonlySet<string>): void {
  walkFactor(from.first, visitor, scope);
  for (const j of from.joins) {
    walkFactor(j.table, visitor, scope);
    if (j.on) walkExpr(j.on, visitor, scope);
  }
}

function walkFactor(f: TableFactor, visitor: Visitor, scope: ReadonlySet<string>): void {
  switch (f.kind) {
    case 'table':
      visitor.table?.(f, scope.has(f.name.toLowerCase()));
      return;
    case 'derived':
      walkQuery(f.query, visitor, scope);
      return;
    case 'unnest':
      walkExpr(f.expr, visitor, scope);
      return;
    case 'nested':
      walkFrom(f.from, visitor, scope);
      return;
    default:
      assertNever(f);
  }
}

export function walkExpr(e: Expr, visitor: Visitor, scope: ReadonlySet<string> = new Set()): void {
  visitor.expr?.(e);
  const [exprs, queries] = children(e);
  for (const x of exprs) walkExpr(x, visitor, scope);
  for (const q of queries) walkQuery(q, visitor, scope);
}

/** Direct sub-expressions and subqueries of an expression. */
export function children(e: Expr): [readonly Expr[], readonly Query[]] {
  switch (e.kind) {
    case 'column':
    case 'param':
    case 'literal':
    case 'datepart':
      return [[], []];
    case 'interval':
      return [[e.value], []];
    case 'binary':
    case 'distinctFrom':
      return [[e.left, e.right], []];
    case 'unary':
    case 'cast':
    case 'isNull':
    case 'isBool':
    case 'extract':
    case 'field':
      return [[e.expr], []];
    case 'func': {
      const list = [...e.args, ...(e.orderBy ?? []).map((o) => o.expr)];
      if (e.limit) list.push(e.limit);
      if (e.over) list.push(...e.over.partitionBy, ...e.over.orderBy.map((o) => o.expr));
      return [list, []];
    }
    case 'case': {
      const list: Expr[] = e.operand ? [e.operand] : [];
      for (const c of e.whens) list.push(c.when, c.result);
      if (e.else) list.push(e.else);
      return [list, []];
    }
    case 'inList':
      return [[e.expr, ...e.list], []];
    case 'inUnnest':
      return [[e.expr, e.array], []];
    case 'inQuery':
      return [[e.expr], [e.query]];
    case 'between':
      return [[e.expr, e.low, e.high], []];
    case 'like':
      return [[e.expr, e.pattern], []];
    case 'exists':
    case 'subquery':
      return [[], [e.query]];
    case 'array':
      return [e.elements, []];
    case 'struct':
      return [e.fields.map((f) => f.value), []];
    case 'index':
      return [[e.expr, e.index], []];
    default:
      return assertNever(e);
  }
}

/** True when `e` reads a column anywhere in it (a subquery counts: it may be correlated). */
export function readsColumns(e: Expr): boolean {
  const [exprs, queries] = children(e);
  return e.kind === 'column' || queries.length > 0 || exprs.some(readsColumns);
}
