/**
 * The one typed transform of the AST (ast.ts): every rewrite and every visit of a syntax tree goes
 * through `AstTransformer`, whose exhaustive switches (ending in `assertNever`) list what each node
 * kind holds. A node kind added to ast.ts fails to compile here until it is handled, and then every
 * rewrite and visitor reaches inside it.
 *
 * Hooks see a node before its children and get `recurse`, which rebuilds the node with the
 * transform applied to each child:
 *
 *   transformQuery(q, { expr: (e, recurse) => (e.kind === 'param' ? other : recurse(e)) })
 *
 * - a hook may return a replacement without recursing (its children are then not visited), recurse
 *   and inspect the result, or recurse into only some children itself (calling the transformer's
 *   methods, `t.expr(child)`);
 * - `condition` is called for expressions in filtering positions (WHERE, HAVING, QUALIFY,
 *   JOIN ... ON) instead of `expr`; `cte` for each WITH entry, in order (a CTE sees those before it);
 * - a node none of whose children changed is returned as itself, so a transform that changes
 *   nothing returns the very tree it was given (visitors allocate nothing) and unchanged subtrees
 *   are shared;
 * - rebuilt nodes are frozen (`frozen`: children already are), with the keys the parser would give
 *   them (an optional child a hook drops is left out, never set to undefined).
 */
import type { Cte, Expr, From, FuncCall, Join, OrderItem, Query, Select, SelectItem, SetExpr, StructField, TableFactor, WindowSpec } from './ast.ts';
import { frozen } from './ast.ts';

type CaseWhen = Extract<Expr, { kind: 'case' }>['whens'][number];
import { assertNever } from './types.ts';

export interface AstHooks {
  query?(q: Query, recurse: (q: Query) => Query): Query;
  cte?(c: Cte, recurse: (c: Cte) => Cte): Cte;
  select?(s: Select, recurse: (s: Select) => Select): Select;
  factor?(f: TableFactor, recurse: (f: TableFactor) => TableFactor): TableFactor;
  expr?(e: Expr, recurse: (e: Expr) => Expr): Expr;
  /** An expression in a filtering position: WHERE, HAVING, QUALIFY, JOIN ... ON (default: `expr`). */
  condition?(e: Expr, recurse: (e: Expr) => Expr): Expr;
}

/** Maps a list, returning the list itself when no element changed (a new list is frozen with the node holding it). */
export function mapSame<T, S = undefined>(list: readonly T[], f: (this: S, item: T) => T, self?: S): readonly T[] {
  let out: T[] | undefined;
  for (let i = 0; i < list.length; i++) {
    const item = list[i] as T;
    const mapped = f.call(self as S, item);
    if (mapped !== item && out === undefined) out = list.slice(0, i);
    out?.push(mapped);
  }
  return out ?? list;
}

/** `node` with `changes` applied (keys set to undefined removed), frozen; `node` itself when nothing differs. */
export function withChanges<T extends object>(node: T, changes: Partial<T>): T {
  let out: Record<string, unknown> | undefined;
  for (const key of Object.keys(changes) as (keyof T & string)[]) {
    const value = changes[key];
    if (value === node[key]) continue;
    out ??= { ...(node as Record<string, unknown>) };
    if (value === undefined) delete out[key];
    else out[key] = value;
  }
  return out === undefined ? node : frozen(out as T);
}

/** `node` with `key` set to `value`; `node` itself when it is the same (no allocation on a visit). */
function set<T extends object, K extends keyof T>(node: T, key: K, value: T[K]): T {
  return value === node[key] ? node : withChanges(node, { [key]: value } as unknown as Partial<T>);
}

function set2<T extends object, K1 extends keyof T, K2 extends keyof T>(node: T, k1: K1, v1: T[K1], k2: K2, v2: T[K2]): T {
  return v1 === node[k1] && v2 === node[k2] ? node : withChanges(node, { [k1]: v1, [k2]: v2 } as unknown as Partial<T>);
}

export class AstTransformer {
  readonly #hooks: AstHooks;
  // What each hook gets as `recurse`: made once, for the hooks there are.
  readonly #queryChildren: ((q: Query) => Query) | undefined;
  readonly #cteChildren: ((c: Cte) => Cte) | undefined;
  readonly #selectChildren: ((s: Select) => Select) | undefined;
  readonly #factorChildren: ((f: TableFactor) => TableFactor) | undefined;
  readonly #exprChildren: ((e: Expr) => Expr) | undefined;

  constructor(hooks: AstHooks) {
    this.#hooks = hooks;
    this.#queryChildren = hooks.query && ((q) => this.queryChildren(q));
    this.#cteChildren = hooks.cte && ((c) => this.cteChildren(c));
    this.#selectChildren = hooks.select && ((s) => this.selectChildren(s));
    this.#factorChildren = hooks.factor && ((f) => this.factorChildren(f));
    this.#exprChildren = hooks.expr || hooks.condition ? (e) => this.exprChildren(e) : undefined;
  }

  // -------------------------------------------------------------------------------------------
  // Each node with its hook

  query(q: Query): Query {
    return this.#hooks.query ? this.#hooks.query(q, this.#queryChildren!) : this.queryChildren(q);
  }

  cte(c: Cte): Cte {
    return this.#hooks.cte ? this.#hooks.cte(c, this.#cteChildren!) : this.cteChildren(c);
  }

  select(s: Select): Select {
    return this.#hooks.select ? this.#hooks.select(s, this.#selectChildren!) : this.selectChildren(s);
  }

  factor(f: TableFactor): TableFactor {
    return this.#hooks.factor ? this.#hooks.factor(f, this.#factorChildren!) : this.factorChildren(f);
  }

  expr(e: Expr): Expr {
    return this.#hooks.expr ? this.#hooks.expr(e, this.#exprChildren!) : this.exprChildren(e);
  }

  condition(e: Expr): Expr {
    if (this.#hooks.condition) return this.#hooks.condition(e, this.#exprChildren!);
    return this.expr(e);
  }

  setExpr(s: SetExpr): SetExpr {
    switch (s.kind) {
      case 'select':
        return this.select(s);
      case 'setop':
        return set2(s, 'left', this.setExpr(s.left), 'right', this.setExpr(s.right));
      case 'nested':
        return set(s, 'query', this.query(s.query));
      default:
        return assertNever(s);
    }
  }

  from(f: From): From {
    return set2(f, 'first', this.factor(f.first), 'joins', mapSame(f.joins, this.join, this));
  }

  join(j: Join): Join {
    return set2(j, 'table', this.factor(j.table), 'on', j.on && this.condition(j.on));
  }

  order(o: OrderItem): OrderItem {
    return set(o, 'expr', this.expr(o.expr));
  }

  window(w: WindowSpec): WindowSpec {
    // The frame holds no expression (its offsets are whole numbers as written).
    return set2(w, 'partitionBy', mapSame(w.partitionBy, this.expr, this), 'orderBy', mapSame(w.orderBy, this.order, this));
  }

  selectItem(c: SelectItem): SelectItem {
    return set(c, 'expr', this.expr(c.expr));
  }

  structField(f: StructField): StructField {
    return set(f, 'value', this.expr(f.value));
  }

  whenOf(w: CaseWhen): CaseWhen {
    return set2(w, 'when', this.expr(w.when), 'result', this.expr(w.result));
  }

  // -------------------------------------------------------------------------------------------
  // Each node's children (what `recurse` does)

  queryChildren(q: Query): Query {
    const with_ = mapSame(q.with, this.cte, this);
    const body = this.setExpr(q.body);
    const orderBy = mapSame(q.orderBy, this.order, this);
    const limit = q.limit && this.expr(q.limit);
    const offset = q.offset && this.expr(q.offset);
    if (with_ === q.with && body === q.body && orderBy === q.orderBy && limit === q.limit && offset === q.offset) return q;
    return withChanges(q, { with: with_, body, orderBy, limit, offset });
  }

  cteChildren(c: Cte): Cte {
    return set(c, 'query', this.query(c.query));
  }

  selectChildren(s: Select): Select {
    const from = s.from && this.from(s.from);
    const columns = mapSame(s.columns, this.selectItem, this);
    const where = s.where && this.condition(s.where);
    const groupBy = mapSame(s.groupBy, this.expr, this);
    const having = s.having && this.condition(s.having);
    const qualify = s.qualify && this.condition(s.qualify);
    if (from === s.from && columns === s.columns && where === s.where && groupBy === s.groupBy && having === s.having && qualify === s.qualify) return s;
    return withChanges(s, { from, columns, where, groupBy, having, qualify });
  }

  factorChildren(f: TableFactor): TableFactor {
    switch (f.kind) {
      case 'table':
        return f;
      case 'derived':
        return set(f, 'query', this.query(f.query));
      case 'unnest':
        return set(f, 'expr', this.expr(f.expr));
      case 'nested':
        return set(f, 'from', this.from(f.from));
      default:
        return assertNever(f);
    }
  }

  exprChildren(e: Expr): Expr {
    switch (e.kind) {
      case 'column':
      case 'param':
      case 'literal':
      case 'datepart':
        return e;
      case 'interval':
        return set(e, 'value', this.expr(e.value));
      case 'binary':
      case 'distinctFrom':
        return set2<typeof e, 'left', 'right'>(e, 'left', this.expr(e.left), 'right', this.expr(e.right));
      case 'unary':
      case 'cast':
      case 'isNull':
      case 'isBool':
      case 'extract':
      case 'field':
        return set<typeof e, 'expr'>(e, 'expr', this.expr(e.expr));
      case 'func':
        return this.call(e);
      case 'case': {
        const operand = e.operand && this.expr(e.operand);
        const whens = mapSame(e.whens, this.whenOf, this);
        const else_ = e.else && this.expr(e.else);
        return operand === e.operand && whens === e.whens && else_ === e.else ? e : withChanges(e, { operand, whens, else: else_ });
      }
      case 'inList':
        return set2(e, 'expr', this.expr(e.expr), 'list', mapSame(e.list, this.expr, this));
      case 'inUnnest':
        return set2(e, 'expr', this.expr(e.expr), 'array', this.expr(e.array));
      case 'inQuery':
        return set2(e, 'expr', this.expr(e.expr), 'query', this.query(e.query));
      case 'between': {
        const expr = this.expr(e.expr);
        const low = this.expr(e.low);
        const high = this.expr(e.high);
        return expr === e.expr && low === e.low && high === e.high ? e : withChanges(e, { expr, low, high });
      }
      case 'like':
        return set2(e, 'expr', this.expr(e.expr), 'pattern', this.expr(e.pattern));
      case 'exists':
      case 'subquery':
        return set<typeof e, 'query'>(e, 'query', this.query(e.query));
      case 'array':
        return set(e, 'elements', mapSame(e.elements, this.expr, this));
      case 'struct':
        return set(e, 'fields', mapSame(e.fields, this.structField, this));
      case 'index':
        return set2(e, 'expr', this.expr(e.expr), 'index', this.expr(e.index));
      default:
        return assertNever(e);
    }
  }

  private call(e: FuncCall): FuncCall {
    const args = mapSame(e.args, this.expr, this);
    const orderBy = e.orderBy && mapSame(e.orderBy, this.order, this);
    const limit = e.limit && this.expr(e.limit);
    const over = e.over && this.window(e.over);
    if (args === e.args && orderBy === e.orderBy && limit === e.limit && over === e.over) return e;
    return withChanges(e, { args, orderBy, limit, over });
  }
}

/** `q` rebuilt by `hooks` (itself when they change nothing). */
export function transformQuery(q: Query, hooks: AstHooks): Query {
  return new AstTransformer(hooks).query(q);
}

/** `e` rebuilt by `hooks` (itself when they change nothing). */
export function transformExpr(e: Expr, hooks: AstHooks): Expr {
  return new AstTransformer(hooks).expr(e);
}

/** What a visit sees: every node of each kind, parents before children. */
export interface AstVisitor {
  query?(q: Query): void;
  cte?(c: Cte): void;
  select?(s: Select): void;
  factor?(f: TableFactor): void;
  expr?(e: Expr): void;
}

/** Calls the visitor on every node of `q`, at any depth (CTEs, derived tables, subqueries). */
export function visitQuery(q: Query, visitor: AstVisitor): void {
  new AstTransformer(visiting(visitor)).query(q);
}

/** Calls the visitor on `e` and every node below it (subqueries included). */
export function visitExpr(e: Expr, visitor: AstVisitor): void {
  new AstTransformer(visiting(visitor)).expr(e);
}

/** Hooks that call the visitor and change nothing. */
function visiting(v: AstVisitor): AstHooks {
  const hooks: AstHooks = {};
  if (v.query)
    hooks.query = (q, recurse) => {
      v.query!(q);
      return recurse(q);
    };
  if (v.cte)
    hooks.cte = (c, recurse) => {
      v.cte!(c);
      return recurse(c);
    };
  if (v.select)
    hooks.select = (s, recurse) => {
      v.select!(s);
      return recurse(s);
    };
  if (v.factor)
    hooks.factor = (f, recurse) => {
      v.factor!(f);
      return recurse(f);
    };
  if (v.expr)
    hooks.expr = (e, recurse) => {
      v.expr!(e);
      return recurse(e);
    };
  return hooks;
}

// A transformer that records the direct children of one expression (its hooks do not recurse).
let childExprs: Expr[] = [];
let childQueries: Query[] = [];
const collector = new AstTransformer({
  expr(e) {
    childExprs.push(e);
    return e;
  },
  query(q) {
    childQueries.push(q);
    return q;
  },
});

/** Direct sub-expressions and subqueries of an expression. */
export function exprChildren(e: Expr): [readonly Expr[], readonly Query[]] {
  const exprs: Expr[] = [];
  const queries: Query[] = [];
  const saved = [childExprs, childQueries] as const;
  childExprs = exprs;
  childQueries = queries;
  try {
    collector.exprChildren(e);
  } finally {
    [childExprs, childQueries] = saved;
  }
  return [exprs, queries];
}
