/**
 * Depth-first traversal of the AST, for analysis and validation: every query (CTEs, derived
 * tables, subqueries in expressions, set operation branches), every table reference and every
 * expression, keeping track of which CTE names are visible at each table reference. Built on the
 * AST's one transform (ast-transform.ts), which knows what every node kind holds.
 */
import type { Expr, Query, TableFactor } from './ast.ts';
import { AstTransformer, exprChildren } from './ast-transform.ts';

export interface Visitor {
  query?(q: Query): void;
  /** `cteVisible` tells whether the name resolves to a CTE in scope at this point. */
  table?(t: Extract<TableFactor, { kind: 'table' }>, cteVisible: boolean): void;
  expr?(e: Expr): void;
}

export function walkQuery(query: Query, visitor: Visitor, visibleCtes: ReadonlySet<string> = new Set()): void {
  scoped(visitor, visibleCtes).query(query);
}

/** A visiting transformer: each query sees the CTEs of the queries around it, and those defined before it in its WITH. */
function scoped(visitor: Visitor, visible: ReadonlySet<string>): AstTransformer {
  let scope = new Set(visible);
  return new AstTransformer({
    query(q, recurse) {
      visitor.query?.(q);
      const outer = scope;
      scope = new Set(scope);
      recurse(q);
      scope = outer;
      return q;
    },
    cte(c, recurse) {
      // WITH is not recursive: a CTE sees the CTEs defined before it, the rest of the query all of them.
      recurse(c);
      scope.add(c.name.toLowerCase());
      return c;
    },
    factor(f, recurse) {
      if (f.kind === 'table') visitor.table?.(f, scope.has(f.name.toLowerCase()));
      return recurse(f);
    },
    expr(e, recurse) {
      visitor.expr?.(e);
      return recurse(e);
    },
  });
}

/** Direct sub-expressions and subqueries of an expression. */
export function children(e: Expr): [readonly Expr[], readonly Query[]] {
  return exprChildren(e);
}

/** True when `e` reads a column anywhere in it (a subquery counts: it may be correlated). */
export function readsColumns(e: Expr): boolean {
  const [exprs, queries] = children(e);
  return e.kind === 'column' || queries.length > 0 || exprs.some(readsColumns);
}
