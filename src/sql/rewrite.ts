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
 */
import { functions } from './functions.ts';
import {
  freeze,
  type RExpr,
  type RFactor,
  type RFrom,
  type RQuery,
  type RSelect,
  type RSetExpr,
  someExpr,
} from './resolved.ts';
import { assertNever, scalar } from './types.ts';

export interface LateMaterialisation {
  /** Largest constant LIMIT it applies to (the engine does it itself below some size). */
  maxRows: number;
}

export function lateMaterialise(q: RQuery, options: LateMaterialisation): RQuery {
  const withCtes = q.with.map((c) => freeze({ name: c.name, query: lateMaterialise(c.query, options) }));
  const body = setExpr(q.body, options);
  const query: RQuery = freeze({ ...q, with: freeze(withCtes), body });
  return topN(query, options) ?? query;
}

function setExpr(body: RSetExpr, options: LateMaterialisation): RSetExpr {
  switch (body.kind) {
    case 'select':
      return freeze({ ...body, from: body.from ? from(body.from, options) : undefined });
    case 'nested':
      return freeze({ kind: 'nested', query: lateMaterialise(body.query, options) });
    case 'setop':
      return freeze({ ...body, left: setExpr(body.left, options), right: setExpr(body.right, options) });
    default:
      return assertNever(body);
  }
}

function from(f: RFrom, options: LateMaterialisation): RFrom {
  const factor = (x: RFactor): RFactor => (x.kind === 'range' && x.query ? freeze({ ...x, query: lateMaterialise(x.query, options) }) : x);
  return freeze({ first: factor(f.first), joins: freeze(f.joins.map((j) => freeze({ ...j, factor: factor(j.factor) }))) });
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
