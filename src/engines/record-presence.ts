/**
 * Where a record a `present` test reads (src/sql/presence.ts) is stored, so a printer can test the
 * record's presence marker (src/storage/presence.ts) instead of every field: the record as a
 * stored table's column path, followed through CTEs and derived tables that pass it on as a plain
 * column. Anything else (a record built by the query, an element of a list, a set operation) has no
 * marker to read, and the printer tests the value itself.
 */
import { children, type OutColumn, type RangeVar, type RExpr, type RFrom, type RQuery, type RSetExpr } from '../sql/resolved.ts';
import { assertNever, holdsRecord } from '../sql/types.ts';
import { hasPath } from '../storage/carried.ts';

export type ColumnExpr = Extract<RExpr, { kind: 'column' }>;

/** The queries a statement's CTE and derived range variables read, to follow their columns. */
export class RecordOrigins {
  readonly #byColumns = new Map<readonly OutColumn[], RQuery>();
  readonly #ctes = new Map<string, RQuery[]>();
  /** Ranges an outer join can read as all NULL (the inner side of LEFT, RIGHT and FULL joins). */
  readonly #nullable = new Set<RangeVar>();

  constructor(root: RQuery) {
    this.#query(root);
  }

  /**
   * The stored table column path holding `e`'s record (`e` itself when it reads a table), or
   * undefined when the value does not come from one unchanged.
   */
  stored(e: ColumnExpr): ColumnExpr | undefined {
    return this.#follow(e, () => undefined);
  }

  /**
   * Whether every row `e` is read on holds its record: it is a stored record that every event of
   * its table carried (TableSchema.carried), passed on unchanged, and no outer join on the way can
   * make it NULL. Its presence test is then true on every row.
   */
  carried(e: ColumnExpr): boolean {
    let nullable = false;
    const stored = this.#follow(e, (range) => {
      if (this.#nullable.has(range)) nullable = true;
    });
    if (nullable || stored?.from.kind !== 'table' || stored.column === undefined) return false;
    return hasPath(stored.from.carried ?? [], [stored.column, ...stored.fields]);
  }

  /** `stored`, calling `visit` with each range the value is read through. */
  #follow(e: ColumnExpr, visit: (range: RangeVar) => void): ColumnExpr | undefined {
    const from = e.from;
    visit(from);
    switch (from.kind) {
      case 'table':
        return e;
      case 'element':
        return undefined;
      case 'cte':
      case 'derived': {
        const byName = from.kind === 'cte' ? this.#ctes.get(from.cte.toLowerCase()) : undefined;
        const q = this.#byColumns.get(from.columns) ?? (byName?.length === 1 ? byName[0] : undefined);
        if (q === undefined || q.body.kind !== 'select') return undefined;
        // Names are matched as the resolver matches them (case aside); two such names: give up.
        const named = q.body.columns.filter((c) => c.name.toLowerCase() === e.column?.toLowerCase());
        const item = named.length === 1 ? named[0]?.expr : undefined;
        if (item?.kind !== 'column' || item.column === undefined) return undefined;
        return this.#follow({ ...item, fields: [...item.fields, ...e.fields], type: e.type }, visit);
      }
      default:
        return assertNever(from);
    }
  }

  #query(q: RQuery): void {
    this.#byColumns.set(q.columns, q);
    for (const c of q.with) {
      const key = c.name.toLowerCase();
      this.#ctes.set(key, [...(this.#ctes.get(key) ?? []), c.query]);
      this.#query(c.query);
    }
    this.#body(q.body);
    for (const o of q.orderBy) this.#expr(o.expr);
  }

  #body(b: RSetExpr): void {
    switch (b.kind) {
      case 'select':
        if (b.from) this.#from(b.from);
        for (const c of b.columns) this.#expr(c.expr);
        for (const e of [b.where, b.having, b.qualify, ...b.groupBy]) if (e) this.#expr(e);
        return;
      case 'setop':
        this.#body(b.left);
        this.#body(b.right);
        return;
      case 'nested':
        this.#query(b.query);
        return;
      default:
        assertNever(b);
    }
  }

  #from(f: RFrom): void {
    const factors = [f.first, ...f.joins.map((j) => j.factor)];
    for (const factor of factors) {
      if (factor.kind === 'range' && factor.query) this.#query(factor.query);
    }
    f.joins.forEach((j, i) => {
      const nulled = j.type === 'left' ? [j.factor] : j.type === 'right' ? factors.slice(0, i + 1) : j.type === 'full' ? factors.slice(0, i + 2) : [];
      for (const x of nulled) if (x.kind === 'range') this.#nullable.add(x.range);
    });
    for (const j of f.joins) if (j.on) this.#expr(j.on);
  }

  #expr(e: RExpr): void {
    const { exprs, queries } = children(e);
    for (const x of exprs) this.#expr(x);
    for (const q of queries) this.#query(q);
  }
}

/** Functions whose text result holds a record argument's JSON, which must not show the presence marker. */
const RECORD_TEXT_FUNCTIONS: ReadonlySet<string> = new Set(['to_json_string', 'json_query', 'json_extract', 'concat', 'array_to_string']);

/** A call whose text holds the JSON of a record argument (its markers to be taken out). */
export function recordTextCall(e: RExpr): boolean {
  return e.kind === 'func' && RECORD_TEXT_FUNCTIONS.has(e.name) && e.args.some((a) => holdsRecord(a.type));
}

/** An event's record read as a column path (not a STRUCT the query built, not a list's element). */
function eventRecordColumn(e: RExpr): e is ColumnExpr {
  return e.kind === 'column' && e.from.kind !== 'element' && e.type.k === 'record' && e.type.value !== true;
}

/**
 * The event records whose JSON text `e` is made of (a record argument of TO_JSON_STRING, JSON_QUERY,
 * CONCAT, …, a record cast to STRING, an operand of `||`): `e` is NULL where one of them is absent,
 * as it is on an engine that reads an absent record as NULL. An engine that reads it as an empty
 * object tests their presence.
 */
export function recordsInText(e: RExpr): ColumnExpr[] {
  switch (e.kind) {
    case 'func':
      return recordTextCall(e) ? e.args.filter(eventRecordColumn) : [];
    case 'cast':
      return e.to === 'string' && eventRecordColumn(e.expr) ? [e.expr] : [];
    case 'binary':
      return e.op === '||' ? [e.left, e.right].filter(eventRecordColumn) : [];
    default:
      return [];
  }
}
