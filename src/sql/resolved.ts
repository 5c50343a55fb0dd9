/**
 * The resolved, typed tree: what the semantic pass (resolve.ts) makes of a validated AST and what
 * every engine's generator prints. Nothing in it needs resolving again:
 *
 * - every column reference names the range variable it reads (a stored table, a CTE, a derived
 *   table, a list UNNEST's element) and the record fields below it; a record UNNEST is not a
 *   range variable of its own: `m.request.path` over `unnest(t.metadata) as m` is
 *   `t.metadata.request.path`;
 * - every expression carries its type (`type`);
 * - functions are registry names (`FunctionName`), with arguments already coerced (a STRING
 *   where a TIMESTAMP is expected is an explicit `cast` node marked `implicit`);
 * - select-list aliases used in GROUP BY / ORDER BY are positions.
 *
 * Nodes are frozen when built (`freeze`) and never edited; rewrites (rewrite.ts) build new ones
 * through the tree's one typed transform (resolved-transform.ts).
 */
import { own } from '../storage/fields.ts';
import type { FieldType, RecordPath } from '../storage/schema.ts';
import type { BinaryOp, CastType, DatePart, Literal, WindowFrame } from './ast.ts';
import type { FunctionName } from './functions.ts';
import { assertNever, scalar, type VType } from './types.ts';

export interface OutColumn {
  readonly name: string;
  readonly type: VType;
}

/** A name in FROM that columns are read through. Compared by identity. */
export type RangeVar =
  /**
   * A source's stored table. `columns` are every field readers see; when some are kept in the
   * table's catch-all column (src/storage/overflow.ts), `typed` is the part stored as columns.
   */
  | {
      readonly kind: 'table';
      readonly alias: string;
      readonly table: string;
      readonly columns: readonly OutColumn[];
      readonly typed?: Readonly<Record<string, FieldType>>;
      /** Records every event of the table carried (TableSchema.carried): their presence needs no test. */
      readonly carried?: readonly RecordPath[];
    }
  /** A CTE read by name (`cte` is its name as defined). */
  | { readonly kind: 'cte'; readonly alias: string; readonly cte: string; readonly columns: readonly OutColumn[] }
  | { readonly kind: 'derived'; readonly alias: string; readonly columns: readonly OutColumn[] }
  /** The elements of a list UNNEST (one row per element). */
  | { readonly kind: 'element'; readonly alias: string; readonly type: VType };

export type RExpr =
  | {
      readonly kind: 'column';
      readonly from: RangeVar;
      /** The stored/output column; undefined for an `element` range variable. */
      readonly column: string | undefined;
      /** Record fields below the column, as stored. */
      readonly fields: readonly string[];
      readonly type: VType;
    }
  /** A path no event has carried: reads as NULL (and was reported as a warning). */
  | { readonly kind: 'missing'; readonly type: VType }
  | { readonly kind: 'param'; readonly name: string; readonly type: VType }
  | { readonly kind: 'literal'; readonly value: Literal; readonly type: VType }
  | { readonly kind: 'interval'; readonly value: RExpr; readonly unit: DatePart; readonly type: VType }
  | { readonly kind: 'datepart'; readonly part: DatePart; readonly type: VType }
  | { readonly kind: 'binary'; readonly op: BinaryOp; readonly left: RExpr; readonly right: RExpr; readonly type: VType }
  | { readonly kind: 'unary'; readonly op: 'not' | '-' | '+'; readonly expr: RExpr; readonly type: VType }
  | RFunc
  | { readonly kind: 'cast'; readonly expr: RExpr; readonly to: CastType; readonly safe: boolean; readonly implicit: boolean; readonly type: VType }
  | {
      readonly kind: 'case';
      readonly operand: RExpr | undefined;
      readonly whens: readonly { readonly when: RExpr; readonly result: RExpr }[];
      readonly else: RExpr | undefined;
      readonly type: VType;
    }
  | { readonly kind: 'isNull'; readonly expr: RExpr; readonly negated: boolean; readonly type: VType }
  /**
   * The event carried this record (`CROSS JOIN UNNEST(record)` keeps only such rows, as in
   * BigQuery). Engines test the presence marker storage writes into every record (src/storage/presence.ts).
   */
  | { readonly kind: 'present'; readonly value: RExpr; readonly type: VType }
  | { readonly kind: 'isBool'; readonly expr: RExpr; readonly value: boolean; readonly negated: boolean; readonly type: VType }
  | { readonly kind: 'distinctFrom'; readonly left: RExpr; readonly right: RExpr; readonly negated: boolean; readonly type: VType }
  | { readonly kind: 'inList'; readonly expr: RExpr; readonly list: readonly RExpr[]; readonly negated: boolean; readonly type: VType }
  | { readonly kind: 'inUnnest'; readonly expr: RExpr; readonly array: RExpr; readonly negated: boolean; readonly type: VType }
  | { readonly kind: 'inQuery'; readonly expr: RExpr; readonly query: RQuery; readonly negated: boolean; readonly type: VType }
  | { readonly kind: 'between'; readonly expr: RExpr; readonly low: RExpr; readonly high: RExpr; readonly negated: boolean; readonly type: VType }
  | { readonly kind: 'like'; readonly expr: RExpr; readonly pattern: RExpr; readonly negated: boolean; readonly type: VType }
  | { readonly kind: 'exists'; readonly query: RQuery; readonly negated: boolean; readonly type: VType }
  | { readonly kind: 'subquery'; readonly query: RQuery; readonly type: VType }
  | { readonly kind: 'array'; readonly elements: readonly RExpr[]; readonly type: VType }
  /** `STRUCT(a AS x, b AS y)`: a record value. */
  | { readonly kind: 'struct'; readonly fields: readonly { readonly name: string; readonly value: RExpr }[]; readonly type: VType }
  | {
      readonly kind: 'index';
      readonly expr: RExpr;
      readonly index: RExpr;
      /** 1-based (`ordinal`) or 0-based (`offset`); `safe` is NULL out of range (our lists always are). */
      readonly oneBased: boolean;
      readonly type: VType;
    }
  /** A field of a record-valued expression that is not a column path (`STRUCT(...).x`, `a[offset(0)].x`). */
  | { readonly kind: 'field'; readonly expr: RExpr; readonly name: string; readonly type: VType }
  | { readonly kind: 'extract'; readonly part: DatePart; readonly expr: RExpr; readonly type: VType }
  /** A select-list column by position: GROUP BY / ORDER BY `1`, or a select-list alias there. */
  | { readonly kind: 'position'; readonly index: number; readonly type: VType }
  /** The engine's row identifier of a stored table (late materialisation, rewrite.ts). */
  | { readonly kind: 'rowid'; readonly from: RangeVar; readonly type: VType };

export interface RFunc {
  readonly kind: 'func';
  readonly name: FunctionName;
  readonly args: readonly RExpr[];
  readonly star: boolean;
  readonly distinct: boolean;
  readonly orderBy: readonly ROrder[];
  readonly limit: RExpr | undefined;
  readonly ignoreNulls: boolean;
  readonly over: RWindow | undefined;
  /** As FuncCall.maxBytes: the engine guards the built value's size. */
  readonly maxBytes: number | undefined;
  readonly type: VType;
}

export interface RWindow {
  readonly partitionBy: readonly RExpr[];
  readonly orderBy: readonly ROrder[];
  /** Checked against the call and its ORDER BY; each printer spells it (generator.ts `windowFrame`). */
  readonly frame: WindowFrame | undefined;
}

export interface ROrder {
  readonly expr: RExpr;
  readonly desc: boolean;
  /** Where NULLs go, made explicit (BigQuery: first ascending, last descending). */
  readonly nulls: 'first' | 'last';
}

export type RFactor =
  | { readonly kind: 'range'; readonly range: Exclude<RangeVar, { kind: 'element' }>; readonly query: RQuery | undefined }
  /** UNNEST of a list: one row per element (`keepEmpty`: LEFT JOIN ... ON TRUE keeps rows whose list is empty). */
  | { readonly kind: 'unnestList'; readonly range: Extract<RangeVar, { kind: 'element' }>; readonly array: RExpr; readonly keepEmpty: boolean }
  /** UNNEST of a record: no rows added or dropped; its alias reads `value`. */
  | { readonly kind: 'unnestRecord'; readonly value: RExpr };

export interface RJoin {
  readonly type: 'cross' | 'inner' | 'left' | 'right' | 'full';
  readonly factor: RFactor;
  readonly on: RExpr | undefined;
  readonly using: readonly string[] | undefined;
}

export interface RFrom {
  readonly first: RFactor;
  readonly joins: readonly RJoin[];
}

export interface RSelectItem {
  readonly expr: RExpr;
  readonly name: string;
}

export interface RSelect {
  readonly kind: 'select';
  readonly distinct: boolean;
  readonly columns: readonly RSelectItem[];
  readonly from: RFrom | undefined;
  readonly where: RExpr | undefined;
  readonly groupBy: readonly RExpr[];
  readonly having: RExpr | undefined;
  readonly qualify: RExpr | undefined;
}

export type RSetExpr =
  | RSelect
  | { readonly kind: 'setop'; readonly op: 'union' | 'intersect' | 'except'; readonly all: boolean; readonly left: RSetExpr; readonly right: RSetExpr }
  | { readonly kind: 'nested'; readonly query: RQuery };

export interface RCte {
  readonly name: string;
  readonly query: RQuery;
}

export interface RQuery {
  readonly kind: 'query';
  readonly with: readonly RCte[];
  readonly body: RSetExpr;
  readonly orderBy: readonly ROrder[];
  readonly limit: RExpr | undefined;
  readonly offset: RExpr | undefined;
  /** The result columns. */
  readonly columns: readonly OutColumn[];
}

/**
 * Where a column reference's value is stored: in the table's typed columns; only in its
 * catch-all overflow column (read it as JSON at the path `column.fields…`); or, for a record,
 * partly in each (`mixed`: some field at some depth below it is in the overflow).
 */
export type ColumnStorage = 'typed' | 'overflow' | 'mixed';

export function columnStorage(e: Extract<RExpr, { kind: 'column' }>): ColumnStorage {
  const from = e.from;
  if (from.kind !== 'table' || from.typed === undefined || e.column === undefined) return 'typed';
  let t = own(from.typed, e.column);
  for (const f of e.fields) {
    if (t === undefined) return 'overflow';
    t = t.kind === 'record' ? own(t.fields, f) : undefined;
  }
  if (t === undefined) return 'overflow';
  return hasMoreFields(e.type, t) ? 'mixed' : 'typed';
}

/** True when the record type `v` has a field, at any depth, that the stored type `t` lacks. */
function hasMoreFields(v: VType, t: FieldType): boolean {
  if (v.k !== 'record' || t.kind !== 'record') return false;
  for (const name of Object.keys(v.fields)) {
    const inner = own(t.fields, name);
    if (inner === undefined || hasMoreFields(v.fields[name] as VType, inner)) return true;
  }
  return false;
}

/** Freezes a node (shallowly: its children, arrays included, were frozen when they were built). */
export function freeze<T extends object>(node: T): T {
  return Object.freeze(node) as T;
}

/** `left AND right`. */
export function and(left: RExpr, right: RExpr): RExpr {
  return freeze<RExpr>({ kind: 'binary', op: 'and', left, right, type: scalar('bool') });
}

/** The conjunction of the conditions given (undefined ones left out), or undefined for none. */
export function allOf(...conditions: readonly (RExpr | undefined)[]): RExpr | undefined {
  const given = conditions.filter((c): c is RExpr => c !== undefined);
  return given.length === 0 ? undefined : given.reduce(and);
}

/**
 * Direct sub-expressions and subqueries of a resolved expression. Kept for the engines' record
 * origins and ClickHouse's pushdown, which walk the tree themselves; everything else reads and
 * rebuilds the tree through resolved-transform.ts (`visitResolved`, `resolvedChildren`).
 */
export function children(e: RExpr): { exprs: readonly RExpr[]; queries: readonly RQuery[] } {
  const none: readonly RExpr[] = [];
  switch (e.kind) {
    case 'column':
    case 'missing':
    case 'param':
    case 'literal':
    case 'datepart':
    case 'position':
    case 'rowid':
      return { exprs: none, queries: [] };
    case 'interval':
      return { exprs: [e.value], queries: [] };
    case 'binary':
    case 'distinctFrom':
      return { exprs: [e.left, e.right], queries: [] };
    case 'unary':
    case 'cast':
    case 'isNull':
    case 'isBool':
    case 'extract':
    case 'field':
      return { exprs: [e.expr], queries: [] };
    case 'present':
      return { exprs: [e.value], queries: [] };
    case 'func': {
      const exprs = [...e.args, ...e.orderBy.map((o) => o.expr)];
      if (e.limit) exprs.push(e.limit);
      if (e.over) exprs.push(...e.over.partitionBy, ...e.over.orderBy.map((o) => o.expr));
      return { exprs, queries: [] };
    }
    case 'case': {
      const exprs: RExpr[] = e.operand ? [e.operand] : [];
      for (const w of e.whens) exprs.push(w.when, w.result);
      if (e.else) exprs.push(e.else);
      return { exprs, queries: [] };
    }
    case 'inList':
      return { exprs: [e.expr, ...e.list], queries: [] };
    case 'inUnnest':
      return { exprs: [e.expr, e.array], queries: [] };
    case 'inQuery':
      return { exprs: [e.expr], queries: [e.query] };
    case 'between':
      return { exprs: [e.expr, e.low, e.high], queries: [] };
    case 'like':
      return { exprs: [e.expr, e.pattern], queries: [] };
    case 'exists':
    case 'subquery':
      return { exprs: none, queries: [e.query] };
    case 'array':
      return { exprs: e.elements, queries: [] };
    case 'struct':
      return { exprs: e.fields.map((f) => f.value), queries: [] };
    case 'index':
      return { exprs: [e.expr, e.index], queries: [] };
    default:
      return assertNever(e);
  }
}
