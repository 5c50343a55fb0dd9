/**
 * Bind-time specialisation. A saved query often tests a parameter alone against constants to make
 * it optional or to pick a branch: `(@start IS NULL OR @start = '' OR t.timestamp > @start)`,
 * `CASE WHEN @interval IN ('hourly', '3hr') THEN ... END`. Those tests have one outcome for the
 * whole run, so they are decided from the run's values and the conditions and CASEs around them
 * simplified, before the query reaches an engine: an engine then sees `t.timestamp > @start`
 * alone, which it can use to prune by time, instead of an OR it must evaluate row by row.
 *
 * The values stay bound parameters. Only each test's outcome shapes the query, and the outcomes
 * depend only on whether a value is NULL and which of the query's own literals it equals, so one
 * specialised query serves every run with the same outcomes (memoised per prepared query) and no
 * value ever becomes SQL text.
 *
 * Decided (for a parameter `@p` and string literals only):
 *   `@p IS [NOT] NULL`, `@p = 'x'`, `@p != 'x'`, `@p [NOT] IN ('x', ...)`, `CASE @p WHEN 'x' ...`
 * Simplified around them, with SQL's three-valued logic:
 *   `AND`, `OR`, `NOT`, searched and simple `CASE`. In a filtering position (WHERE, HAVING,
 *   QUALIFY, JOIN ... ON, a WHEN condition, and through AND/OR below them) NULL filters like
 *   FALSE; elsewhere a test whose outcome is NULL is left as it is.
 */
import type { Expr, From, Join, OrderItem, Query, Select, SetExpr, TableFactor } from './ast.ts';
import type { PreparedQuery } from './prepared.ts';
import { Lru } from './lru.ts';
import { assertNever } from './types.ts';
import { walkQuery } from './walk.ts';

/** A bound value as far as decisions go: NULL, a string, or some other non-NULL typed value. */
export type BindValue = string | null | undefined | { readonly type: string };

/** Per tested parameter, the string literals it is compared with (per AST: parsing is shared). */
const testedByAst = new WeakMap<Query, ReadonlyMap<string, ReadonlySet<string>>>();
/** Specialised queries per prepared query (whose catalogue they keep), by outcome signature. */
const specialisedByQuery = new WeakMap<PreparedQuery, Lru<string, PreparedQuery>>();
/** Outcome signatures per query: a handful in practice (a parameter's classes × the others'). */
const SPECIALISED_PER_QUERY = 32;

/**
 * The query specialised for these values' outcomes, or `prepared` itself when it tests no
 * parameter alone. Returns the same object for the same outcomes (engines cache by AST).
 */
export function specialiseForValues(prepared: PreparedQuery, values: Readonly<Record<string, BindValue>>): PreparedQuery {
  let tested = testedByAst.get(prepared.ast);
  if (tested === undefined) {
    tested = testedParams(prepared.ast);
    testedByAst.set(prepared.ast, tested);
  }
  if (tested.size === 0) return prepared;
  let specialised = specialisedByQuery.get(prepared);
  if (!specialised) {
    specialised = new Lru(SPECIALISED_PER_QUERY);
    specialisedByQuery.set(prepared, specialised);
  }
  const key = signature(tested, values);
  const known = specialised.get(key);
  if (known) return known;
  const ast = new Folder(values).query(prepared.ast);
  const result = ast === prepared.ast ? prepared : { ...prepared, ast };
  specialised.set(key, result);
  return result;
}

/**
 * A parameter's value as decisions see it: null (NULL or absent), its text, or undefined for a
 * typed value (not NULL, compared by the engine). Never a member `values` inherits.
 */
function decisionValue(values: Readonly<Record<string, BindValue>>, name: string): string | null | undefined {
  const v = Object.hasOwn(values, name) ? values[name] : undefined;
  if (v === null || v === undefined) return null;
  return typeof v === 'string' ? v : undefined;
}

/** Per tested parameter: NULL, typed, equal to one of its literals (which), or none of them. */
function signature(tested: ReadonlyMap<string, ReadonlySet<string>>, values: Readonly<Record<string, BindValue>>): string {
  const parts: string[] = [];
  for (const [name, literals] of tested) {
    const v = decisionValue(values, name);
    if (v === null) parts.push('n');
    else if (v === undefined) parts.push('t');
    else parts.push(literals.has(v) ? `=${JSON.stringify(v)}` : 'o');
  }
  return parts.join(',');
}

function testedParams(query: Query): Map<string, Set<string>> {
  const tested = new Map<string, Set<string>>();
  const note = (name: string, literals: readonly string[]) => {
    const set = tested.get(name) ?? new Set<string>();
    tested.set(name, set);
    for (const l of literals) set.add(l);
  };
  walkQuery(query, {
    expr(e) {
      const t = paramTest(e);
      if (t) note(t.param, t.literals);
      if (e.kind === 'case' && e.operand?.kind === 'param') {
        const literals = e.whens.map((w) => stringLiteral(w.when));
        if (literals.every((l) => l !== undefined)) note(e.operand.name, literals as string[]);
      }
    },
  });
  return tested;
}

/** A test of one parameter against string literals (`IS NULL` tests against none). */
interface ParamTest {
  readonly param: string;
  readonly literals: readonly string[];
  /** The outcome for a value: true, false, or null (unknown in SQL's sense). */
  decide(value: string | null): boolean | null;
}

function paramTest(e: Expr): ParamTest | undefined {
  switch (e.kind) {
    case 'isNull':
      if (e.expr.kind !== 'param') return undefined;
      return { param: e.expr.name, literals: [], decide: (v) => (v === null) !== e.negated };
    case 'binary': {
      if (e.op !== '=' && e.op !== '!=') return undefined;
      const [param, other] = e.left.kind === 'param' ? [e.left, e.right] : [e.right, e.left];
      const literal = stringLiteral(other);
      if (param.kind !== 'param' || literal === undefined) return undefined;
      const equal = e.op === '=';
      return { param: param.name, literals: [literal], decide: (v) => (v === null ? null : (v === literal) === equal) };
    }
    case 'inList': {
      if (e.expr.kind !== 'param') return undefined;
      const literals = e.list.map(stringLiteral);
      if (literals.length === 0 || literals.some((l) => l === undefined)) return undefined;
      return { param: e.expr.name, literals: literals as string[], decide: (v) => (v === null ? null : literals.includes(v) !== e.negated) };
    }
    default:
      return undefined;
  }
}

function stringLiteral(e: Expr): string | undefined {
  return e.kind === 'literal' && e.type === 'string' ? e.value : undefined;
}

const TRUE: Expr = Object.freeze({ kind: 'literal', type: 'bool', value: true });
const FALSE: Expr = Object.freeze({ kind: 'literal', type: 'bool', value: false });
const NULL: Expr = Object.freeze({ kind: 'literal', type: 'null' });

/** The outcome an expression is known to have: true, false, null, or undefined (not known). */
function known(e: Expr): boolean | null | undefined {
  if (e.kind !== 'literal') return undefined;
  if (e.type === 'bool') return e.value;
  return e.type === 'null' ? null : undefined;
}

function outcome(v: boolean | null): Expr {
  return v === null ? NULL : v ? TRUE : FALSE;
}

/** Where an expression's value is used: to filter rows (NULL filters as FALSE), or as a value. */
type Use = 'filter' | 'value';

/**
 * Rebuilds the tree with the decided tests folded. Returns the very same node wherever nothing
 * below it changed, so an undecidable query comes back as itself.
 */
class Folder {
  constructor(private readonly values: Readonly<Record<string, BindValue>>) {}

  query(q: Query): Query {
    const with_ = same(q.with, (c) => {
      const query = this.query(c.query);
      return query === c.query ? c : { name: c.name, query };
    });
    const body = this.setExpr(q.body);
    const orderBy = same(q.orderBy, (o) => this.order(o));
    const limit = q.limit && this.expr(q.limit, 'value');
    const offset = q.offset && this.expr(q.offset, 'value');
    if (with_ === q.with && body === q.body && orderBy === q.orderBy && limit === q.limit && offset === q.offset) return q;
    return { ...q, with: with_, body, orderBy, ...(limit ? { limit } : {}), ...(offset ? { offset } : {}) };
  }

  private setExpr(s: SetExpr): SetExpr {
    switch (s.kind) {
      case 'select':
        return this.select(s);
      case 'setop': {
        const left = this.setExpr(s.left);
        const right = this.setExpr(s.right);
        return left === s.left && right === s.right ? s : { ...s, left, right };
      }
      case 'nested': {
        const query = this.query(s.query);
        return query === s.query ? s : { kind: 'nested', query };
      }
      default:
        return assertNever(s);
    }
  }

  private select(s: Select): Select {
    const from = s.from && this.from(s.from);
    const columns = same(s.columns, (c) => {
      const expr = this.expr(c.expr, 'value');
      return expr === c.expr ? c : { ...c, expr };
    });
    const where = s.where && this.filter(s.where);
    const groupBy = same(s.groupBy, (g) => this.expr(g, 'value'));
    const having = s.having && this.filter(s.having);
    const qualify = s.qualify && this.filter(s.qualify);
    if (from === s.from && columns === s.columns && where === s.where && groupBy === s.groupBy && having === s.having && qualify === s.qualify) return s;
    return {
      kind: 'select',
      distinct: s.distinct,
      columns,
      groupBy,
      ...(from ? { from } : {}),
      ...(where ? { where } : {}),
      ...(having ? { having } : {}),
      ...(qualify ? { qualify } : {}),
    };
  }

  /** A filtering condition; one decided TRUE is no condition at all. */
  private filter(e: Expr): Expr | undefined {
    const folded = this.expr(e, 'filter');
    const v = known(folded);
    if (v === true) return undefined;
    return v === null ? FALSE : folded;
  }

  private from(f: From): From {
    const first = this.factor(f.first);
    const joins = same(f.joins, (j) => this.join(j));
    return first === f.first && joins === f.joins ? f : { first, joins };
  }

  private join(j: Join): Join {
    const table = this.factor(j.table);
    const on = j.on && this.expr(j.on, 'filter');
    if (table === j.table && on === j.on) return j;
    return { ...j, table, ...(on ? { on: known(on) === null ? FALSE : on } : {}) };
  }

  private factor(t: TableFactor): TableFactor {
    switch (t.kind) {
      case 'table':
        return t;
      case 'derived': {
        const query = this.query(t.query);
        return query === t.query ? t : { ...t, query };
      }
      case 'unnest': {
        const expr = this.expr(t.expr, 'value');
        return expr === t.expr ? t : { ...t, expr };
      }
      case 'nested': {
        const from = this.from(t.from);
        return from === t.from ? t : { ...t, from };
      }
      default:
        return assertNever(t);
    }
  }

  private order(o: OrderItem): OrderItem {
    const expr = this.expr(o.expr, 'value');
    return expr === o.expr ? o : { ...o, expr };
  }

  private value(name: string): string | null | undefined {
    return decisionValue(this.values, name);
  }

  private expr(e: Expr, use: Use): Expr {
    const test = paramTest(e);
    if (test) {
      const v = this.value(test.param);
      // A typed value is decided only by IS NULL (it is not NULL); comparisons with text are the engine's.
      if (v === undefined) return e.kind === 'isNull' ? outcome(e.negated) : e;
      const decided = test.decide(v);
      return decided === null && use === 'value' ? e : outcome(decided);
    }
    switch (e.kind) {
      case 'binary':
        if (e.op === 'and' || e.op === 'or') return this.logical(e, use);
        return this.children(e);
      case 'unary': {
        if (e.op !== 'not') return this.children(e);
        const inner = this.expr(e.expr, 'value');
        const v = known(inner);
        if (v === true || v === false) return outcome(!v);
        return inner === e.expr ? e : { ...e, expr: inner };
      }
      case 'case':
        return this.caseExpr(e);
      default:
        return this.children(e);
    }
  }

  /** AND / OR with SQL's three-valued logic; in a filter, NULL is as good as FALSE. */
  private logical(e: Extract<Expr, { kind: 'binary' }>, use: Use): Expr {
    const left = this.expr(e.left, use);
    const right = this.expr(e.right, use);
    const l = known(left);
    const r = known(right);
    const absorbing = e.op === 'or';
    if (l === absorbing || r === absorbing) return outcome(absorbing);
    // In a filter a NULL operand of AND makes the whole FALSE-like, and one of OR can be dropped.
    if (use === 'filter' && (l === null || r === null)) {
      if (e.op === 'and') return FALSE;
      if (l === null) return r === null ? FALSE : right;
      return left;
    }
    if (l === !absorbing) return right;
    if (r === !absorbing) return left;
    return left === e.left && right === e.right ? e : { ...e, left, right };
  }

  /**
   * Drops the WHENs decided FALSE (or NULL: not taken); a WHEN decided TRUE ends the CASE there.
   * `CASE @p WHEN 'a' ...` is decided as a whole from the value.
   */
  private caseExpr(e: Extract<Expr, { kind: 'case' }>): Expr {
    const op = e.operand;
    const opValue = op?.kind === 'param' ? this.value(op.name) : undefined;
    const decided = op !== undefined && opValue !== undefined && e.whens.every((w) => stringLiteral(w.when) !== undefined);
    const operand = op && !decided ? this.expr(op, 'value') : undefined;
    const whens: { when: Expr; result: Expr }[] = [];
    let changed = decided || operand !== op;
    for (const w of e.whens) {
      const when = decided ? outcome(opValue !== null && opValue === stringLiteral(w.when)) : this.expr(w.when, op ? 'value' : 'filter');
      const result = this.expr(w.result, 'value');
      const v = op && !decided ? undefined : known(when);
      if (v === false || v === null) {
        changed = true;
        continue;
      }
      if (v === true) {
        // Every later branch is unreachable: this one is the CASE, or its ELSE.
        return whens.length === 0 ? result : { kind: 'case', whens, else: result };
      }
      changed ||= when !== w.when || result !== w.result;
      whens.push({ when, result });
    }
    const else_ = e.else && this.expr(e.else, 'value');
    if (!changed && else_ === e.else) return e;
    if (whens.length > 0) return { kind: 'case', ...(operand ? { operand } : {}), whens, ...(else_ ? { else: else_ } : {}) };
    if (else_) return else_;
    // No branch can be taken and there is no ELSE: NULL, kept as a CASE so its type stays.
    const first = e.whens[0];
    return first ? { kind: 'case', whens: [{ when: FALSE, result: this.expr(first.result, 'value') }] } : e;
  }

  /** Folds inside an expression this pass does not simplify itself. */
  private children(e: Expr): Expr {
    const x = (c: Expr) => this.expr(c, 'value');
    switch (e.kind) {
      case 'column':
      case 'param':
      case 'literal':
      case 'datepart':
        return e;
      case 'interval': {
        const value = x(e.value);
        return value === e.value ? e : { ...e, value };
      }
      case 'binary':
      case 'distinctFrom': {
        const left = x(e.left);
        const right = x(e.right);
        return left === e.left && right === e.right ? e : { ...e, left, right };
      }
      case 'unary':
      case 'cast':
      case 'isNull':
      case 'isBool':
      case 'extract':
      case 'field': {
        const expr = x(e.expr);
        return expr === e.expr ? e : { ...e, expr };
      }
      case 'func': {
        const args = same(e.args, x);
        const orderBy = e.orderBy && same(e.orderBy, (o) => this.order(o));
        const limit = e.limit && x(e.limit);
        const over = e.over && this.window(e.over);
        if (args === e.args && orderBy === e.orderBy && limit === e.limit && over === e.over) return e;
        return { ...e, args, ...(orderBy ? { orderBy } : {}), ...(limit ? { limit } : {}), ...(over ? { over } : {}) };
      }
      case 'case':
        return this.caseExpr(e);
      case 'inList': {
        const expr = x(e.expr);
        const list = same(e.list, x);
        return expr === e.expr && list === e.list ? e : { ...e, expr, list };
      }
      case 'inUnnest': {
        const expr = x(e.expr);
        const array = x(e.array);
        return expr === e.expr && array === e.array ? e : { ...e, expr, array };
      }
      case 'inQuery': {
        const expr = x(e.expr);
        const query = this.query(e.query);
        return expr === e.expr && query === e.query ? e : { ...e, expr, query };
      }
      case 'between': {
        const expr = x(e.expr);
        const low = x(e.low);
        const high = x(e.high);
        return expr === e.expr && low === e.low && high === e.high ? e : { ...e, expr, low, high };
      }
      case 'like': {
        const expr = x(e.expr);
        const pattern = x(e.pattern);
        return expr === e.expr && pattern === e.pattern ? e : { ...e, expr, pattern };
      }
      case 'exists':
      case 'subquery': {
        const query = this.query(e.query);
        return query === e.query ? e : { ...e, query };
      }
      case 'array': {
        const elements = same(e.elements, x);
        return elements === e.elements ? e : { ...e, elements };
      }
      case 'struct': {
        const fields = same(e.fields, (f) => {
          const value = x(f.value);
          return value === f.value ? f : { ...f, value };
        });
        return fields === e.fields ? e : { ...e, fields };
      }
      case 'index': {
        const expr = x(e.expr);
        const index = x(e.index);
        return expr === e.expr && index === e.index ? e : { ...e, expr, index };
      }
      default:
        return assertNever(e);
    }
  }

  private window(w: NonNullable<Extract<Expr, { kind: 'func' }>['over']>) {
    const partitionBy = same(w.partitionBy, (p) => this.expr(p, 'value'));
    const orderBy = same(w.orderBy, (o) => this.order(o));
    return partitionBy === w.partitionBy && orderBy === w.orderBy ? w : { ...w, partitionBy, orderBy };
  }
}

/** Maps a list, returning the same list when no element changed. */
function same<T>(list: readonly T[], f: (item: T) => T): readonly T[] {
  let out: T[] | undefined;
  for (let i = 0; i < list.length; i++) {
    const item = list[i] as T;
    const mapped = f(item);
    if (mapped !== item && !out) out = list.slice(0, i);
    out?.push(mapped);
  }
  return out ?? list;
}
