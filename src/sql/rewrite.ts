/**
 * Rewrites of the resolved tree, applied before printing when the engine declares the capability
 * they need. Each builds new nodes; none looks at printed SQL.
 *
 * Late materialisation (`Capabilities.rowId`):
 *   SELECT <wide columns> FROM table WHERE ... ORDER BY ... LIMIT n
 * becomes the top n found on the ordering columns alone, then only those rows read in full:
 *   SELECT ... FROM table WHERE rowid IN (SELECT rowid FROM table WHERE ... ORDER BY ... LIMIT n)
 *   ORDER BY ... LIMIT n
 * The same rows come back in the same order: the inner query picks them exactly as the plain top-n
 * would. Applied to the top query, CTEs, derived tables and set-operation branches, never to a
 * subquery in an expression.
 *
 * Top n into a CTE (`Capabilities.topNIntoCte`):
 *   WITH c AS (q) SELECT <row-wise columns> FROM c [CROSS JOIN UNNEST(<record>) ...] [WHERE <row-wise>]
 *   ORDER BY <columns of c> LIMIT n
 * also orders and limits `c` itself (`q ORDER BY ... LIMIT n`, by `q`'s own expressions for those
 * columns, and the outer WHERE added to its own) when `q` is one SELECT and nothing else reads `c`: record
 * UNNESTs neither add nor drop rows, so the outer query's n rows are among `c`'s first n, and `q`
 * becomes a top-n an engine runs without materialising every row of the CTE. (The AST pass in
 * optimise.ts does this before resolution when there is no UNNEST; a record UNNEST is only known
 * as such once resolved.) `q` must be plain (no grouping, DISTINCT or window): the outer filter
 * moves in. Where every outer column has a form over the CTE's FROM, the outer query and the
 * limited CTE merge into one SELECT.
 *
 * One-row constant CTEs inlined (every engine):
 *   WITH dates AS (SELECT <row-free expression> AS start) ... WHERE t.timestamp >= (SELECT start FROM dates)
 * reads the expression itself in place of the scalar subquery: a CTE without FROM is exactly one
 * row, and an expression that reads no row, no subquery and no volatile function has one value
 * per statement (`current_timestamp()` included). Engines then see a constant they can prune
 * with instead of a subquery they run first (usage.api-counts' window start).
 */
import { functions } from './functions.ts';
import { allOf, and, freeze, type ROrder, type RExpr, type RFrom, type RangeVar, type RQuery, type RSelect, type RSelectItem } from './resolved.ts';
import { someExpr, transformResolved, transformResolvedExpr, visitingTransformer } from './resolved-transform.ts';
import { scalar } from './types.ts';

export interface LateMaterialisation {
  /** Largest constant LIMIT it applies to (the engine does it itself below some size). */
  maxRows: number;
}

export function lateMaterialise(q: RQuery, options: LateMaterialisation): RQuery {
  return transformResolved(q, {
    // Each query from the inside out: CTEs, derived tables and set-operation branches first.
    query: (x, recurse) => {
      const query = recurse(x);
      return topN(query, options) ?? query;
    },
    // Never a subquery in an expression.
    expr: (e) => e,
  });
}

/** An expression computed from its own row alone, the same each time. */
function rowLocal(e: RExpr): boolean {
  return !someExpr(
    e,
    (x) =>
      x.kind === 'subquery' ||
      x.kind === 'exists' ||
      x.kind === 'inQuery' ||
      (x.kind === 'func' && (x.over !== undefined || functions[x.name].kind !== 'scalar' || functions[x.name].volatile)),
  );
}

function plain(s: RSelect): boolean {
  return !s.distinct && s.groupBy.length === 0 && !s.having && !s.qualify && s.columns.every((c) => rowLocal(c.expr));
}

function topN(q: RQuery, options: LateMaterialisation): RQuery | undefined {
  const s = q.body;
  const limit = q.limit;
  if (q.with.length > 0 || q.orderBy.length === 0 || q.offset || s.kind !== 'select' || !s.from || !plain(s)) return undefined;
  if (limit?.kind !== 'literal' || limit.value.type !== 'number' || !/^\d+$/.test(limit.value.value)) return undefined;
  if (Number(limit.value.value) > options.maxRows) return undefined;
  // A positional ORDER BY names a select-list column, which the inner query does not have.
  if (q.orderBy.some((o) => o.expr.kind === 'position')) return undefined;
  const first = s.from.first;
  // One stored table and nothing else (record UNNESTs are plain field access).
  if (first.kind !== 'range' || first.range.kind !== 'table' || !s.from.joins.every((j) => j.factor.kind === 'unnestRecord')) return undefined;
  const table = first.range;
  // A stored column called rowid would shadow the engine's.
  if (table.columns.some((c) => c.name.toLowerCase() === 'rowid')) return undefined;
  const rowid: RExpr = freeze({ kind: 'rowid', from: table, type: scalar('int') });
  const inner: RQuery = freeze({
    kind: 'query',
    with: freeze([]),
    body: freeze({ ...s, columns: freeze([freeze({ expr: rowid, name: 'rowid' })]) }),
    orderBy: q.orderBy,
    limit,
    offset: undefined,
    columns: freeze([freeze({ name: 'rowid', type: rowid.type })]),
  });
  const outerFrom: RFrom = freeze({ first, joins: freeze(s.from.joins.map((j) => freeze({ ...j, on: undefined }))) });
  const where: RExpr = freeze({ kind: 'inQuery', expr: rowid, query: inner, negated: false, type: scalar('bool') });
  return freeze({ ...q, body: freeze({ ...s, from: outerFrom, where }) });
}

export function limitCteToTopN(q: RQuery): RQuery {
  const s = q.body;
  const limit = q.limit;
  if (q.with.length === 0 || q.orderBy.length === 0 || q.offset || s.kind !== 'select' || !s.from || !plain(s)) return q;
  if (limit?.kind !== 'literal' || limit.value.type !== 'number' || !/^\d+$/.test(limit.value.value)) return q;
  const first = s.from.first;
  if (first.kind !== 'range' || first.range.kind !== 'cte') return q;
  if (!s.from.joins.every((j) => j.factor.kind === 'unnestRecord' && j.using === undefined)) return q;
  // A record UNNEST's condition (the record's presence) filters rows as the WHERE clause does.
  const outerFilter = allOf(...s.from.joins.map((j) => j.on), s.where);
  if (outerFilter && !rowLocal(outerFilter)) return q;
  const range = first.range;
  const index = q.with.findIndex((c) => c.name === range.cte);
  const cte = q.with[index];
  if (!cte || cte.query.limit || cte.query.offset || cte.query.body.kind !== 'select' || cteReads(q, range.cte) !== 1) return q;
  // A grouped or DISTINCT CTE filters and orders groups, not rows: the outer filter cannot move in.
  if (!plain(cte.query.body)) return q;
  const items = cte.query.body.columns;
  const orderBy: ROrder[] = [];
  for (const o of q.orderBy) {
    const e = o.expr.kind === 'position' ? s.columns[o.expr.index - 1]?.expr : o.expr;
    if (e?.kind !== 'column' || e.from !== range || e.fields.length > 0 || e.column === undefined) return q;
    const name = e.column;
    // The CTE's own expression for that column (a position would shift if a printer adds columns).
    const item = onlyItem(items, name);
    if (!item || !rowLocal(item.expr)) return q;
    orderBy.push(freeze({ expr: item.expr, desc: o.desc, nulls: o.nulls }));
  }
  // The outer filter, in the CTE's own terms, is applied before the CTE's top n (and stays outside).
  let body: RSelect = cte.query.body;
  if (outerFilter) {
    const filter = throughCte(outerFilter, range, items);
    if (!filter) return q;
    const where = body.where ? and(body.where, filter) : filter;
    body = freeze({ ...body, where });
  }
  const ordered = freeze(orderBy);
  const flat = cte.query.with.length === 0 ? flatten(q, index, s, body, ordered, range, items) : undefined;
  if (flat) return flat;
  const limited: RQuery = freeze({ ...cte.query, body, orderBy: ordered, limit });
  const with_ = q.with.map((c, i) => (i === index ? freeze({ name: c.name, query: limited }) : c));
  return freeze({ ...q, with: freeze(with_) });
}

/**
 * The outer query over the limited CTE (and its record UNNESTs, which are field access) picks
 * exactly the CTE's rows in the CTE's order: it becomes the CTE's own SELECT (`inner`, the outer
 * filter already in it) with the outer query's columns in the CTE's terms, ordered by `orderBy`
 * under the outer query's own LIMIT, and the CTE goes. One query level less for ClickHouse.
 * Undefined when some outer column has no form over the CTE's FROM.
 */
function flatten(
  q: RQuery,
  index: number,
  outer: RSelect,
  inner: RSelect,
  orderBy: readonly ROrder[],
  range: RangeVar,
  items: readonly RSelectItem[],
): RQuery | undefined {
  const columns: RSelectItem[] = [];
  for (const c of outer.columns) {
    const expr = throughCte(c.expr, range, items);
    if (!expr) return undefined;
    columns.push(freeze({ ...c, expr }));
  }
  if (columns.some((c) => mayShadow(c, inner, orderBy, columns))) return undefined;
  return freeze({
    ...q,
    with: freeze(q.with.filter((_, i) => i !== index)),
    body: freeze({ ...inner, columns: freeze(columns) }),
    orderBy,
  });
}

/**
 * Physical columns printers read that the resolved tree does not name: ClickHouse's `fields` (the
 * JSON column holding every field but id, timestamp and event_message), DuckDB's `rowid` and
 * overflow column. Internal names printers make up start with `__` (`fresh`).
 */
const PRINTER_COLUMNS: ReadonlySet<string> = new Set(['fields', 'rowid', '$overflow']);
const PLAIN_NAME = /^[a-z_][a-z0-9_]*$/;

/**
 * Whether the caller's select item `c`, once its alias sits in the same SELECT as the saved query's
 * filter, could take the place of a name that filter (or the ordering, or another item) reads:
 * an engine may resolve a name to a select-list alias before a column (ClickHouse does unless
 * `prefer_column_name_to_alias` is set), so the caller's `'A' AS project`, `… AS t` or
 * `` … AS `t.fields.project` `` would be what the project filter compares. Such an alias keeps
 * the caller's query over the limited CTE instead, a scope of its own. An alias is harmless when
 * it names exactly the column it holds (Studio's `select id, timestamp …`), or names nothing a
 * reference can start with: not a range variable, a stored column, a column the SELECT reads, a
 * printer's own column; and it must be a plain name (no dots, quotes or internal `__` prefix).
 * A field's name (`request.path AS path`) is fine: it only ever follows a range variable.
 */
function mayShadow(c: RSelectItem, inner: RSelect, orderBy: readonly ROrder[], columns: readonly RSelectItem[]): boolean {
  const name = c.name.toLowerCase();
  if (!PLAIN_NAME.test(name) || name.startsWith('__') || PRINTER_COLUMNS.has(name)) return true;
  // The range variables of the SELECT's FROM (a record UNNEST has none: it reads a column).
  const ranges: RangeVar[] = [];
  for (const f of inner.from ? [inner.from.first, ...inner.from.joins.map((j) => j.factor)] : []) {
    if (f.kind !== 'unnestRecord') ranges.push(f.range);
  }
  if (ranges.some((r) => r.alias.toLowerCase() === name)) return true;
  // The column it holds, when it is one: the same name read from the same place is the same value.
  const e = c.expr;
  if (e.kind === 'column' && e.fields.length === 0 && e.column?.toLowerCase() === name) return false;
  if (ranges.some((r) => r.kind !== 'element' && r.columns.some((col) => col.name.toLowerCase() === name))) return true;
  let read = false;
  const visit = visitingTransformer({
    expr(x) {
      // A path's later steps (`request.path`) are printed after the range variable, never alone.
      if (x.kind === 'column' && x.column?.toLowerCase() === name) read = true;
    },
  });
  if (inner.where) visit.expr(inner.where);
  if (inner.from) visit.from(inner.from);
  for (const o of orderBy) visit.order(o);
  for (const x of columns) visit.expr(x.expr);
  return read;
}

/** How many FROM clauses anywhere in `q` (CTEs, derived tables, subqueries) read the CTE called `name`. */
function cteReads(q: RQuery, name: string): number {
  let n = 0;
  visitingTransformer({
    factor(f) {
      if (f.kind === 'range' && f.range.kind === 'cte' && f.range.cte === name) n++;
    },
  }).query(q);
  return n;
}

type ColumnExpr = Extract<RExpr, { kind: 'column' }>;

/** The select item called `name`, when exactly one is. */
function onlyItem(items: readonly RSelectItem[], name: string): RSelectItem | undefined {
  const matching = items.filter((i) => i.name === name);
  return matching.length === 1 ? matching[0] : undefined;
}

/**
 * A row-wise expression over the CTE `range` rewritten over the CTE's own FROM: each column of the
 * CTE becomes the CTE's expression for it (a path below one, the path below that column).
 * Undefined when some reference has no such form.
 */
function throughCte(e: RExpr, range: RangeVar, items: readonly RSelectItem[]): RExpr | undefined {
  let ok = true;
  const column = (c: ColumnExpr): RExpr => {
    const item = c.column === undefined ? undefined : onlyItem(items, c.column);
    if (c.from !== range || !item) {
      ok = false;
      return c;
    }
    if (c.fields.length === 0) return item.expr;
    if (item.expr.kind !== 'column') {
      ok = false;
      return c;
    }
    return freeze({ ...item.expr, fields: freeze([...item.expr.fields, ...c.fields]), type: c.type });
  };
  const out = transformResolvedExpr(e, { expr: (x, recurse) => (x.kind === 'column' ? column(x) : recurse(x)) });
  return ok ? out : undefined;
}

export function inlineOneRowCtes(q: RQuery): RQuery {
  const constants = new Map<string, ReadonlyMap<string, RExpr>>();
  for (const c of q.with) {
    const b = c.query.body;
    if (b.kind !== 'select' || b.from || b.distinct || b.where || b.groupBy.length > 0 || b.having || b.qualify) continue;
    if (c.query.with.length > 0 || c.query.orderBy.length > 0 || c.query.limit || c.query.offset) continue;
    const names = b.columns.map((i) => i.name);
    const items = b.columns.filter(
      (i) => names.indexOf(i.name) === names.lastIndexOf(i.name) && rowLocal(i.expr) && !someExpr(i.expr, (x) => x.kind === 'column'),
    );
    if (items.length > 0) constants.set(c.name, new Map(items.map((i) => [i.name, i.expr])));
  }
  if (constants.size === 0) return q;
  // A nested WITH that defines one of these names again would make a reference ambiguous here.
  let shadowed = false;
  const visit = visitingTransformer({
    query(x) {
      if (x.with.some((c) => constants.has(c.name))) shadowed = true;
    },
  });
  visit.setExpr(q.body);
  for (const c of q.with) visit.query(c.query);
  if (shadowed) return q;
  return transformResolved(q, { expr: (e, recurse) => (e.kind === 'subquery' ? constantOf(e.query, constants) : undefined) ?? recurse(e) });
}

/** The constant a scalar subquery `(SELECT c FROM cte)` reads, when `cte` is one of `constants`. */
function constantOf(sub: RQuery, constants: ReadonlyMap<string, ReadonlyMap<string, RExpr>>): RExpr | undefined {
  const b = sub.body;
  if (sub.with.length > 0 || sub.orderBy.length > 0 || sub.limit || sub.offset || b.kind !== 'select' || !b.from || b.from.joins.length > 0) return undefined;
  if (b.distinct || b.where || b.groupBy.length > 0 || b.having || b.qualify || b.columns.length !== 1) return undefined;
  const first = b.from.first;
  const only = b.columns[0]?.expr;
  if (first.kind !== 'range' || first.range.kind !== 'cte' || only?.kind !== 'column' || only.from !== first.range || only.fields.length > 0) return undefined;
  return only.column === undefined ? undefined : constants.get(first.range.cte)?.get(only.column);
}
