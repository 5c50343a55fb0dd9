/**
 * The one typed transform of the resolved tree (resolved.ts), as ast-transform.ts is the AST's:
 * every rewrite (rewrite.ts) and visit of a resolved tree goes through `ResolvedTransformer`, whose
 * exhaustive switches (ending in `assertNever`) list what each node kind holds, so a node kind
 * added to resolved.ts fails to compile here until it is handled.
 *
 * Hooks see a node before its children and get `recurse`, which rebuilds the node with the
 * transform applied to each child; a hook may return a replacement without recursing, recurse and
 * inspect the result, or recurse into some children itself through the transformer's methods.
 * A node none of whose children changed is returned as itself (a visit allocates nothing); rebuilt
 * nodes are frozen and keep every key (resolved nodes spell an absent child as `undefined`).
 * Range variables and types are shared, never copied: range variables are compared by identity.
 */
import {
  freeze,
  type RCte,
  type RExpr,
  type RFactor,
  type RFrom,
  type RFunc,
  type RJoin,
  type ROrder,
  type RQuery,
  type RSelect,
  type RSelectItem,
  type RSetExpr,
  type RWindow,
} from './resolved.ts';
import { assertNever } from './types.ts';

export interface ResolvedHooks {
  query?(q: RQuery, recurse: (q: RQuery) => RQuery): RQuery;
  select?(s: RSelect, recurse: (s: RSelect) => RSelect): RSelect;
  factor?(f: RFactor, recurse: (f: RFactor) => RFactor): RFactor;
  expr?(e: RExpr, recurse: (e: RExpr) => RExpr): RExpr;
}

/** Maps a list, returning the list itself when no element changed (frozen when rebuilt). */
function mapSame<T, S = undefined>(list: readonly T[], f: (this: S, item: T) => T, self?: S): readonly T[] {
  let out: T[] | undefined;
  for (let i = 0; i < list.length; i++) {
    const item = list[i] as T;
    const mapped = f.call(self as S, item);
    if (mapped !== item && out === undefined) out = list.slice(0, i);
    out?.push(mapped);
  }
  return out === undefined ? list : freeze(out);
}

/** `node` with `changes` applied, frozen; `node` itself when nothing differs. */
function withChanges<T extends object>(node: T, changes: Partial<T>): T {
  let out: T | undefined;
  for (const key of Object.keys(changes) as (keyof T)[]) {
    if (changes[key] === node[key]) continue;
    out ??= { ...node };
    out[key] = changes[key] as T[keyof T];
  }
  return out === undefined ? node : freeze(out);
}

/** `node` with `key` set to `value`; `node` itself when it is the same (no allocation on a visit). */
function set<T extends object, K extends keyof T>(node: T, key: K, value: T[K]): T {
  return value === node[key] ? node : withChanges(node, { [key]: value } as unknown as Partial<T>);
}

function set2<T extends object, K1 extends keyof T, K2 extends keyof T>(node: T, k1: K1, v1: T[K1], k2: K2, v2: T[K2]): T {
  return v1 === node[k1] && v2 === node[k2] ? node : withChanges(node, { [k1]: v1, [k2]: v2 } as unknown as Partial<T>);
}

type CaseWhen = Extract<RExpr, { kind: 'case' }>['whens'][number];
type StructField = Extract<RExpr, { kind: 'struct' }>['fields'][number];

export class ResolvedTransformer {
  readonly #hooks: ResolvedHooks;
  // What each hook gets as `recurse`: made once, for the hooks there are.
  readonly #queryChildren: ((q: RQuery) => RQuery) | undefined;
  readonly #selectChildren: ((s: RSelect) => RSelect) | undefined;
  readonly #factorChildren: ((f: RFactor) => RFactor) | undefined;
  readonly #exprChildren: ((e: RExpr) => RExpr) | undefined;

  constructor(hooks: ResolvedHooks) {
    this.#hooks = hooks;
    this.#queryChildren = hooks.query && ((q) => this.queryChildren(q));
    this.#selectChildren = hooks.select && ((s) => this.selectChildren(s));
    this.#factorChildren = hooks.factor && ((f) => this.factorChildren(f));
    this.#exprChildren = hooks.expr && ((e) => this.exprChildren(e));
  }

  // -------------------------------------------------------------------------------------------
  // Each node with its hook

  query(q: RQuery): RQuery {
    return this.#hooks.query ? this.#hooks.query(q, this.#queryChildren!) : this.queryChildren(q);
  }

  select(s: RSelect): RSelect {
    return this.#hooks.select ? this.#hooks.select(s, this.#selectChildren!) : this.selectChildren(s);
  }

  factor(f: RFactor): RFactor {
    return this.#hooks.factor ? this.#hooks.factor(f, this.#factorChildren!) : this.factorChildren(f);
  }

  expr(e: RExpr): RExpr {
    return this.#hooks.expr ? this.#hooks.expr(e, this.#exprChildren!) : this.exprChildren(e);
  }

  setExpr(s: RSetExpr): RSetExpr {
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

  from(f: RFrom): RFrom {
    return set2(f, 'first', this.factor(f.first), 'joins', mapSame(f.joins, this.join, this));
  }

  join(j: RJoin): RJoin {
    return set2(j, 'factor', this.factor(j.factor), 'on', j.on && this.expr(j.on));
  }

  order(o: ROrder): ROrder {
    return set(o, 'expr', this.expr(o.expr));
  }

  cte(c: RCte): RCte {
    return set(c, 'query', this.query(c.query));
  }

  selectItem(c: RSelectItem): RSelectItem {
    return set(c, 'expr', this.expr(c.expr));
  }

  structField(f: StructField): StructField {
    return set(f, 'value', this.expr(f.value));
  }

  whenOf(w: CaseWhen): CaseWhen {
    return set2(w, 'when', this.expr(w.when), 'result', this.expr(w.result));
  }

  window(w: RWindow): RWindow {
    // The frame holds no expression (its offsets are whole numbers as written).
    return set2(w, 'partitionBy', mapSame(w.partitionBy, this.expr, this), 'orderBy', mapSame(w.orderBy, this.order, this));
  }

  // -------------------------------------------------------------------------------------------
  // Each node's children (what `recurse` does)

  queryChildren(q: RQuery): RQuery {
    const with_ = mapSame(q.with, this.cte, this);
    const body = this.setExpr(q.body);
    const orderBy = mapSame(q.orderBy, this.order, this);
    const limit = q.limit && this.expr(q.limit);
    const offset = q.offset && this.expr(q.offset);
    if (with_ === q.with && body === q.body && orderBy === q.orderBy && limit === q.limit && offset === q.offset) return q;
    return withChanges(q, { with: with_, body, orderBy, limit, offset });
  }

  selectChildren(s: RSelect): RSelect {
    const from = s.from && this.from(s.from);
    const columns = mapSame(s.columns, this.selectItem, this);
    const where = s.where && this.expr(s.where);
    const groupBy = mapSame(s.groupBy, this.expr, this);
    const having = s.having && this.expr(s.having);
    const qualify = s.qualify && this.expr(s.qualify);
    if (from === s.from && columns === s.columns && where === s.where && groupBy === s.groupBy && having === s.having && qualify === s.qualify) return s;
    return withChanges(s, { from, columns, where, groupBy, having, qualify });
  }

  factorChildren(f: RFactor): RFactor {
    switch (f.kind) {
      case 'range':
        return set(f, 'query', f.query && this.query(f.query));
      case 'unnestList':
        return set(f, 'array', this.expr(f.array));
      case 'unnestRecord':
        return set(f, 'value', this.expr(f.value));
      default:
        return assertNever(f);
    }
  }

  exprChildren(e: RExpr): RExpr {
    switch (e.kind) {
      case 'column':
      case 'missing':
      case 'param':
      case 'literal':
      case 'datepart':
      case 'position':
      case 'rowid':
        return e;
      case 'interval':
        return set(e, 'value', this.expr(e.value));
      case 'present':
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

  private call(e: RFunc): RFunc {
    const args = mapSame(e.args, this.expr, this);
    const orderBy = mapSame(e.orderBy, this.order, this);
    const limit = e.limit && this.expr(e.limit);
    const over = e.over && this.window(e.over);
    if (args === e.args && orderBy === e.orderBy && limit === e.limit && over === e.over) return e;
    return withChanges(e, { args, orderBy, limit, over });
  }
}

/** `q` rebuilt by `hooks` (itself when they change nothing). */
export function transformResolved(q: RQuery, hooks: ResolvedHooks): RQuery {
  return new ResolvedTransformer(hooks).query(q);
}

/** `e` rebuilt by `hooks` (itself when they change nothing). */
export function transformResolvedExpr(e: RExpr, hooks: ResolvedHooks): RExpr {
  return new ResolvedTransformer(hooks).expr(e);
}

/** What a visit sees: every node of each kind, parents before children. */
export interface ResolvedVisitor {
  query?(q: RQuery): void;
  select?(s: RSelect): void;
  factor?(f: RFactor): void;
  expr?(e: RExpr): void;
}

/** A transformer that calls the visitor on every node it reaches and changes nothing. */
export function visitingTransformer(v: ResolvedVisitor): ResolvedTransformer {
  const hooks: ResolvedHooks = {};
  if (v.query)
    hooks.query = (q, recurse) => {
      v.query!(q);
      return recurse(q);
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
  return new ResolvedTransformer(hooks);
}

/** Calls the visitor on every node of `q` at any depth (CTEs, derived tables, subqueries). */
export function visitResolved(q: RQuery, visitor: ResolvedVisitor): void {
  visitingTransformer(visitor).query(q);
}

// A transformer that records the direct children of one expression (its hooks do not recurse).
let childExprs: RExpr[] = [];
let childQueries: RQuery[] = [];
const collector = new ResolvedTransformer({
  expr(e) {
    childExprs.push(e);
    return e;
  },
  query(q) {
    childQueries.push(q);
    return q;
  },
});

/** Direct sub-expressions and subqueries of a resolved expression. */
export function resolvedChildren(e: RExpr): { exprs: readonly RExpr[]; queries: readonly RQuery[] } {
  const exprs: RExpr[] = [];
  const queries: RQuery[] = [];
  const saved = [childExprs, childQueries] as const;
  childExprs = exprs;
  childQueries = queries;
  try {
    collector.exprChildren(e);
  } finally {
    [childExprs, childQueries] = saved;
  }
  return { exprs, queries };
}

/** True when `test` holds for the expression or any expression below it (not entering subqueries). */
export function someExpr(e: RExpr, test: (x: RExpr) => boolean): boolean {
  return test(e) || resolvedChildren(e).exprs.some((c) => someExpr(c, test));
}
