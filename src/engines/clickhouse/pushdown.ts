/**
 * Paths read through a CTE, for the ClickHouse printer to read straight from the table.
 *
 * A CTE such as logs.all's `edge_logs` passes a source's record column on
 * (`select t.metadata from ... as t`); the caller then reads a few paths below it
 * (`edge_logs.metadata.response.status_code`). ClickHouse reads a JSON sub-object passed through a
 * CTE or subquery in full (every path below `metadata`) and only then picks the path: 30-40x the
 * work of reading the path's own column (docs/SCALING.md). So for each such path the printer adds a
 * column of its own to the CTE, read from the table's `fields` column, and the caller reads that.
 *
 * Only scalar paths (read cast to a concrete type) of plain projections qualify: a CTE whose every select item is a column, without DISTINCT,
 * GROUP BY, HAVING, QUALIFY, set operations or ORDER BY positions (an added column must change no
 * row and no position), defined once in the statement. Anything else is printed as before.
 */
import { children, type RExpr, type RFrom, type RQuery, type RSelect, type RSetExpr } from '../../sql/resolved.ts';
import { assertNever, scalar, type VType } from '../../sql/types.ts';
import { PRESENCE_KEY } from '../../storage/presence.ts';
import { recordsInText } from '../record-presence.ts';

type ColumnExpr = Extract<RExpr, { kind: 'column' }>;

/** A path below a CTE column, and the table column the CTE reads it from. */
export interface PushedPath {
  /** The path as the table stores it: the CTE item's column and fields, then the caller's fields. */
  readonly source: ColumnExpr;
}

export interface PushdownPlan {
  /** By CTE name, then by `column\0field\0…` of the caller's reference. */
  readonly paths: ReadonlyMap<string, ReadonlyMap<string, PushedPath>>;
  /** The SELECT of each CTE that gets columns added, with them in order. */
  readonly selects: ReadonlyMap<RSelect, readonly PushedPath[]>;
}

export function pathKey(column: string, fields: readonly string[]): string {
  return [column, ...fields].join('\u0000');
}

/** Calls `visit` on every expression of `q`, its CTEs and subqueries. */
function walkQuery(q: RQuery, visit: (e: RExpr, q: RQuery) => void, ctes: (name: string) => void): void {
  for (const c of q.with) {
    ctes(c.name);
    walkQuery(c.query, visit, ctes);
  }
  const expr = (e: RExpr): void => {
    visit(e, q);
    const { exprs, queries } = children(e);
    for (const x of exprs) expr(x);
    for (const sub of queries) walkQuery(sub, visit, ctes);
  };
  const from = (f: RFrom): void => {
    for (const factor of [f.first, ...f.joins.map((j) => j.factor)]) {
      switch (factor.kind) {
        case 'range':
          if (factor.query) walkQuery(factor.query, visit, ctes);
          break;
        case 'unnestList':
          expr(factor.array);
          break;
        case 'unnestRecord':
          expr(factor.value);
          break;
        default:
          assertNever(factor);
      }
    }
    for (const j of f.joins) if (j.on) expr(j.on);
  };
  const body = (b: RSetExpr): void => {
    switch (b.kind) {
      case 'select':
        if (b.from) from(b.from);
        for (const c of b.columns) expr(c.expr);
        for (const e of [b.where, b.having, b.qualify, ...b.groupBy]) if (e) expr(e);
        break;
      case 'setop':
        body(b.left);
        body(b.right);
        break;
      case 'nested':
        walkQuery(b.query, visit, ctes);
        break;
      default:
        assertNever(b);
    }
  };
  body(q.body);
  for (const o of q.orderBy) expr(o.expr);
  for (const e of [q.limit, q.offset]) if (e) expr(e);
}

/** A CTE body that is a plain projection of columns (see the module comment). */
function plainProjection(q: RQuery): RSelect | undefined {
  const s = q.body;
  if (s.kind !== 'select' || s.distinct || s.groupBy.length > 0 || s.having || s.qualify) return undefined;
  if (!s.columns.every((c) => c.expr.kind === 'column')) return undefined;
  if (q.orderBy.some((o) => o.expr.kind === 'position')) return undefined;
  return s;
}

/** Which paths below the top-level CTEs' record columns the statement reads, and from where. */
export function planPushdown(root: RQuery, marked: (record: ColumnExpr) => boolean = () => false): PushdownPlan {
  const defined = new Map<string, number>();
  const uses: ColumnExpr[] = [];
  walkQuery(
    root,
    (e) => {
      // A presence test reads the record's marker (src/storage/presence.ts), a Bool path like any
      // other scalar, where the record is stored with markers.
      // So does text made of a record (its presence decides whether the text is NULL).
      for (const record of e.kind === 'present' ? [e.value] : recordsInText(e)) {
        if (record.kind === 'column' && record.from.kind === 'cte' && record.column !== undefined && marked(record)) {
          uses.push({ ...record, fields: [...record.fields, PRESENCE_KEY], type: scalar('bool') });
        }
      }
      // Scalars only: they are read cast to a concrete type. A list or record path stays a dynamic
      // value, which ClickHouse cannot, e.g., join a correlated subquery on.
      if (e.kind === 'column' && e.from.kind === 'cte' && e.fields.length > 0 && e.column !== undefined && e.type.k === 'scalar') uses.push(e);
    },
    (name) => defined.set(name.toLowerCase(), (defined.get(name.toLowerCase()) ?? 0) + 1),
  );
  const paths = new Map<string, Map<string, PushedPath>>();
  const selects = new Map<RSelect, PushedPath[]>();
  for (const cte of root.with) {
    if (defined.get(cte.name.toLowerCase()) !== 1) continue;
    const select = plainProjection(cte.query);
    if (!select) continue;
    for (const use of uses) {
      if (use.from.kind !== 'cte' || use.from.cte !== cte.name) continue;
      const item = select.columns.find((c) => c.name === use.column)?.expr;
      if (item?.kind !== 'column' || item.from.kind !== 'table' || item.column === undefined) continue;
      const key = pathKey(use.column as string, use.fields);
      let byPath = paths.get(cte.name);
      if (!byPath) {
        byPath = new Map();
        paths.set(cte.name, byPath);
      }
      if (byPath.has(key)) continue;
      const source: ColumnExpr = { kind: 'column', from: item.from, column: item.column, fields: [...item.fields, ...use.fields], type: use.type as VType };
      const pushed: PushedPath = { source };
      byPath.set(key, pushed);
      selects.set(select, [...(selects.get(select) ?? []), pushed]);
    }
  }
  return { paths, selects };
}
