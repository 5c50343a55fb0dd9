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
import { type Expr, frozen, type Query } from './ast.ts';
import { AstTransformer, withChanges } from './ast-transform.ts';
import type { PreparedQuery } from './prepared.ts';
import { Lru } from './lru.ts';
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
 * Rebuilds the tree with the decided tests folded (through the AST's transform: ast-transform.ts).
 * Returns the very same node wherever nothing below it changed, so an undecidable query comes back
 * as itself.
 */
class Folder {
  readonly #t: AstTransformer;

  constructor(private readonly values: Readonly<Record<string, BindValue>>) {
    this.#t = new AstTransformer({
      expr: (e) => this.expr(e, 'value'),
      // WHERE, HAVING, QUALIFY and JOIN ... ON: a condition decided NULL filters as FALSE.
      condition: (e) => {
        const folded = this.expr(e, 'filter');
        return known(folded) === null ? FALSE : folded;
      },
      select: (s, recurse) => {
        const out = recurse(s);
        // A filtering clause that is TRUE is no clause at all (JOIN ... ON TRUE stays: it is a join).
        const kept = (clause: Expr | undefined) => (clause !== undefined && known(clause) === true ? undefined : clause);
        return withChanges(out, { where: kept(out.where), having: kept(out.having), qualify: kept(out.qualify) });
      },
    });
  }

  query(q: Query): Query {
    return this.#t.query(q);
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
        return this.#t.exprChildren(e);
      case 'unary': {
        if (e.op !== 'not') return this.#t.exprChildren(e);
        const inner = this.expr(e.expr, 'value');
        const v = known(inner);
        if (v === true || v === false) return outcome(!v);
        return inner === e.expr ? e : frozen({ ...e, expr: inner });
      }
      case 'case':
        return this.caseExpr(e);
      default:
        return this.#t.exprChildren(e);
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
}
