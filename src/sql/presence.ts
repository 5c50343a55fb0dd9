/**
 * `CROSS JOIN UNNEST(record)` keeps only the events that carried the record, as in BigQuery. The
 * semantic pass states that as a `present` test on the join; this module makes the test and drops
 * it where the WHERE clause already implies it (`response.status_code >= 400` is never true for an
 * event without `response`), so the common Studio shapes read no extra column.
 */
import { isAggregate } from './functions.ts';
import { allOf, freeze, type RExpr, type RFrom, type RJoin, type RQuery } from './resolved.ts';
import { someExpr } from './resolved-transform.ts';
import { scalar } from './types.ts';

const bool = scalar('bool');

/** The test that a row carried `value` (a record), or undefined when it always does. */
export function presence(value: RExpr): RExpr | undefined {
  switch (value.kind) {
    case 'missing':
      // A record no event of the source has carried: no row has it.
      return freeze<RExpr>({ kind: 'literal', value: { kind: 'literal', type: 'bool', value: false }, type: bool });
    case 'struct':
      return undefined;
    default:
      return freeze<RExpr>({ kind: 'present', value, type: bool });
  }
}

function conjuncts(e: RExpr): RExpr[] {
  return e.kind === 'binary' && e.op === 'and' ? [...conjuncts(e.left), ...conjuncts(e.right)] : [e];
}

type Column = Extract<RExpr, { kind: 'column' }>;

function columnUnder(e: RExpr): Column | undefined {
  if (e.kind === 'cast') return columnUnder(e.expr);
  return e.kind === 'column' ? e : undefined;
}

const comparisons: ReadonlySet<string> = new Set(['=', '!=', '<>', '<', '<=', '>', '>=']);

/** Columns a conjunct is never true without (it is NULL, hence not true, when they are NULL). */
function nullRejected(e: RExpr): Column[] {
  const cols = (...xs: RExpr[]) => xs.map(columnUnder).filter((c): c is Column => c !== undefined);
  switch (e.kind) {
    case 'binary':
      return comparisons.has(e.op) ? cols(e.left, e.right) : [];
    case 'like':
      return cols(e.expr, e.pattern);
    case 'between':
      return cols(e.expr);
    case 'inList':
      return e.negated ? [] : cols(e.expr);
    case 'isNull':
      return e.negated ? cols(e.expr) : [];
    case 'isBool':
      return e.value && !e.negated ? cols(e.expr) : [];
    default:
      return [];
  }
}

function implies(column: Column, record: RExpr): boolean {
  if (record.kind !== 'column' || column.from !== record.from || column.column !== record.column) return false;
  return record.fields.length <= column.fields.length && record.fields.every((f, i) => column.fields[i] === f);
}

/** `e` without the presence tests that `impliedBy` says are implied (undefined when nothing is left). */
function prune(e: RExpr, impliedBy: (record: RExpr) => boolean): RExpr | undefined {
  return allOf(...conjuncts(e).filter((c) => c.kind !== 'present' || !impliedBy(c.value)));
}

/** The record values of the presence tests in `e`'s conjuncts. */
function presentValues(e: RExpr | undefined): Column[] {
  if (!e) return [];
  return conjuncts(e).flatMap((c) => (c.kind === 'present' && c.value.kind === 'column' ? [c.value] : []));
}

/**
 * The FROM and the extra filter with every presence test that is implied removed: by the WHERE
 * clause, or by the test of a record inside it (`m.request` present means `metadata` is).
 */
export function withoutImpliedPresence(from: RFrom, filter: RExpr | undefined, where: RExpr | undefined): { from: RFrom; filter: RExpr | undefined } {
  const rejected = where ? conjuncts(where).flatMap(nullRejected) : [];
  const tested = [...presentValues(filter), ...from.joins.flatMap((j) => (j.factor.kind === 'unnestRecord' ? presentValues(j.on) : []))];
  const impliedBy = (record: RExpr): boolean =>
    rejected.some((col) => implies(col, record)) ||
    (record.kind === 'column' && tested.some((inner) => inner.fields.length > record.fields.length && implies(inner, record)));
  if (rejected.length === 0 && tested.length < 2) return { from, filter };
  const joins = from.joins.map((j): RJoin => {
    if (j.factor.kind !== 'unnestRecord' || !j.on) return j;
    return freeze({ ...j, on: prune(j.on, impliedBy) });
  });
  return { from: freeze({ ...from, joins: freeze(joins) }), filter: filter ? prune(filter, impliedBy) : undefined };
}

function hasAggregate(e: RExpr): boolean {
  return someExpr(e, (x) => x.kind === 'func' && isAggregate(x.name) && !x.over);
}

/**
 * A scalar subquery over record UNNESTs alone (`(select r.x from unnest(e.metadata) as m,
 * unnest(m.request) as r)`) is one value of the enclosing row: its column, under its conditions
 * (the records' presence among them) as a CASE, since no row and a NULL row both give NULL. Written
 * out so, it needs no correlated subquery, which ClickHouse cannot run. Undefined for any other.
 */
export function scalarWithoutFrom(q: RQuery): RExpr | undefined {
  const s = q.body;
  if (s.kind !== 'select' || !s.from || q.with.length > 0 || q.orderBy.length > 0 || q.limit || q.offset) return undefined;
  if (s.from.first.kind !== 'unnestRecord' || !s.from.joins.every((j) => j.factor.kind === 'unnestRecord')) return undefined;
  if (s.distinct || s.groupBy.length > 0 || s.having || s.qualify || s.columns.length !== 1 || hasAggregate(s.columns[0]!.expr)) return undefined;
  const value = s.columns[0]!.expr;
  const when = allOf(...s.from.joins.map((j) => j.on), s.where);
  if (when === undefined) return value;
  return freeze<RExpr>({ kind: 'case', operand: undefined, whens: freeze([freeze({ when, result: value })]), else: undefined, type: value.type });
}
