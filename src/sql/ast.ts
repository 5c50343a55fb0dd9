/**
 * Quarry's own SQL syntax tree: the one shape every front end produces (the BigQuery parser in
 * parse.ts, the LQL compiler by hand through build.ts) and every engine generator consumes.
 *
 * Contract:
 * - Plain, JSON-friendly objects discriminated by `kind`, with `readonly` fields and arrays. The
 *   parser and the builders (build.ts) freeze every node they make (`frozen`, `freezeTree`), so a
 *   tree shared between requests through the memo caches cannot be edited in place; rewrites
 *   build new nodes.
 * - Names are kept as written. Column references are unresolved paths: `m.request.path` is
 *   `{kind:'column', path:['m','request','path']}`; what each part means (table alias, UNNEST
 *   alias, column, record field) is decided by the generator from its scope and the catalogue.
 * - Table names are the whole (possibly dotted) name: `` `cloudflare.logs.prod` `` is
 *   `{kind:'table', name:'cloudflare.logs.prod'}`; CTE references are tables too.
 * - `@name` is `{kind:'param', name}`; parameters are never literals.
 * - Number literals keep their source text (`'1.50'`), so nothing is lost to float rounding.
 * - Functions are lower-cased BigQuery names (`regexp_contains`); which ones exist is the
 *   allow-list in functions.ts, checked by validate.ts. Date parts (`minute` in
 *   `timestamp_trunc(ts, minute)`) are `{kind:'datepart'}` arguments.
 * - Array subscripts carry BigQuery's mode: `offset`/`safe_offset` are 0-based, `ordinal`/
 *   `safe_ordinal` 1-based; a bare `x[i]` is `offset`.
 * - A comma in FROM is a `cross` join (BigQuery semantics: it is correlated for UNNEST).
 * - Trees are rebuilt and visited through ast-transform.ts (`transformQuery`, `visitQuery`), whose
 *   exhaustive switches make a new node kind fail to compile until it is handled there.
 */
import { assertNever } from './types.ts';

export type DatePart = 'microsecond' | 'millisecond' | 'second' | 'minute' | 'hour' | 'day' | 'dayofweek' | 'dayofyear' | 'week' | 'month' | 'quarter' | 'year';

/** Target types of CAST / SAFE_CAST, in BigQuery's names. */
export type CastType = 'string' | 'int64' | 'float64' | 'numeric' | 'bool' | 'timestamp' | 'datetime' | 'date' | 'bytes';

export type BinaryOp = 'and' | 'or' | '=' | '!=' | '<' | '<=' | '>' | '>=' | '+' | '-' | '*' | '/' | '%' | '||' | '&' | '|' | '^';

export type Expr =
  | ColumnRef
  | Param
  | Literal
  | { readonly kind: 'interval'; readonly value: Expr; readonly unit: DatePart }
  | { readonly kind: 'datepart'; readonly part: DatePart }
  | { readonly kind: 'binary'; readonly op: BinaryOp; readonly left: Expr; readonly right: Expr }
  | { readonly kind: 'unary'; readonly op: 'not' | '-' | '+'; readonly expr: Expr }
  | FuncCall
  | { readonly kind: 'cast'; readonly expr: Expr; readonly to: CastType; readonly safe: boolean }
  | { readonly kind: 'case'; readonly operand?: Expr; readonly whens: readonly { readonly when: Expr; readonly result: Expr }[]; readonly else?: Expr }
  | { readonly kind: 'isNull'; readonly expr: Expr; readonly negated: boolean }
  | { readonly kind: 'isBool'; readonly expr: Expr; readonly value: boolean; readonly negated: boolean }
  /** `a IS [NOT] DISTINCT FROM b` (negated = NOT DISTINCT, i.e. null-safe equality). */
  | { readonly kind: 'distinctFrom'; readonly left: Expr; readonly right: Expr; readonly negated: boolean }
  | { readonly kind: 'inList'; readonly expr: Expr; readonly list: readonly Expr[]; readonly negated: boolean }
  | { readonly kind: 'inUnnest'; readonly expr: Expr; readonly array: Expr; readonly negated: boolean }
  | { readonly kind: 'inQuery'; readonly expr: Expr; readonly query: Query; readonly negated: boolean }
  | { readonly kind: 'between'; readonly expr: Expr; readonly low: Expr; readonly high: Expr; readonly negated: boolean }
  | { readonly kind: 'like'; readonly expr: Expr; readonly pattern: Expr; readonly negated: boolean }
  | { readonly kind: 'exists'; readonly query: Query; readonly negated: boolean }
  | { readonly kind: 'subquery'; readonly query: Query }
  | { readonly kind: 'array'; readonly elements: readonly Expr[] }
  /** `STRUCT(a AS x, b)` / `STRUCT<x INT64>(a)`: a record value; `type` casts the field. */
  | { readonly kind: 'struct'; readonly fields: readonly StructField[] }
  | { readonly kind: 'index'; readonly expr: Expr; readonly index: Expr; readonly mode: 'offset' | 'safe_offset' | 'ordinal' | 'safe_ordinal' }
  /** Field access on something that is not a plain column path, e.g. `arr[offset(0)].path`. */
  | { readonly kind: 'field'; readonly expr: Expr; readonly name: string }
  | { readonly kind: 'extract'; readonly part: DatePart; readonly expr: Expr };

export interface StructField {
  readonly name?: string;
  readonly value: Expr;
  readonly type?: CastType;
}

export interface ColumnRef {
  readonly kind: 'column';
  readonly path: readonly string[];
}

export interface Param {
  readonly kind: 'param';
  readonly name: string;
}

export type Literal =
  | { readonly kind: 'literal'; readonly type: 'string'; readonly value: string }
  | { readonly kind: 'literal'; readonly type: 'number'; readonly value: string }
  | { readonly kind: 'literal'; readonly type: 'bool'; readonly value: boolean }
  | { readonly kind: 'literal'; readonly type: 'null' };

export interface FuncCall {
  readonly kind: 'func';
  /** Lower-case BigQuery function name. */
  readonly name: string;
  readonly args: readonly Expr[];
  /** `count(*)`. */
  readonly star?: boolean;
  readonly distinct?: boolean;
  /** Aggregate modifiers: `array_agg(x ORDER BY y LIMIT n)`, `string_agg(...)`. */
  readonly orderBy?: readonly OrderItem[];
  readonly limit?: Expr;
  readonly ignoreNulls?: boolean;
  readonly over?: WindowSpec;
  /**
   * The largest value, bytes, this call may build, set by the value bounds (value-bounds.ts) on a
   * call whose size is not known before it runs; engines print a guard that raises beyond it.
   */
  readonly maxBytes?: number;
}

export interface WindowSpec {
  readonly partitionBy: readonly Expr[];
  readonly orderBy: readonly OrderItem[];
  /** `ROWS|RANGE BETWEEN start AND end`; absent: the engine's default (BigQuery's, on both engines). */
  readonly frame?: WindowFrame;
}

/**
 * A window frame, always with both ends (`ROWS 2 PRECEDING` is `ROWS BETWEEN 2 PRECEDING AND
 * CURRENT ROW`). The parser checks the ends' order (the start never after the end, no frame
 * starting UNBOUNDED FOLLOWING or ending UNBOUNDED PRECEDING); the semantic pass what the frame
 * needs of the call (RANGE with an offset: one numeric ORDER BY key; no frame on LAG, RANK, ...).
 */
export interface WindowFrame {
  readonly units: 'rows' | 'range';
  readonly start: FrameBound;
  readonly end: FrameBound;
}

/** One end of a frame; `offset` is a whole number as written (digits). */
export type FrameBound =
  | { readonly kind: 'unboundedPreceding' }
  | { readonly kind: 'preceding'; readonly offset: string }
  | { readonly kind: 'currentRow' }
  | { readonly kind: 'following'; readonly offset: string }
  | { readonly kind: 'unboundedFollowing' };

/** A frame as SQL spells it on BigQuery, DuckDB and ClickHouse alike: `ROWS BETWEEN 1 PRECEDING AND CURRENT ROW`. */
export function frameText(frame: WindowFrame): string {
  return `${frame.units.toUpperCase()} BETWEEN ${boundText(frame.start)} AND ${boundText(frame.end)}`;
}

export function boundText(b: FrameBound): string {
  switch (b.kind) {
    case 'unboundedPreceding':
      return 'UNBOUNDED PRECEDING';
    case 'preceding':
      return `${b.offset} PRECEDING`;
    case 'currentRow':
      return 'CURRENT ROW';
    case 'following':
      return `${b.offset} FOLLOWING`;
    case 'unboundedFollowing':
      return 'UNBOUNDED FOLLOWING';
    default:
      return assertNever(b);
  }
}

export interface OrderItem {
  readonly expr: Expr;
  readonly desc: boolean;
  readonly nulls?: 'first' | 'last';
}

export interface SelectItem {
  readonly expr: Expr;
  readonly alias?: string;
}

export type TableFactor =
  | { readonly kind: 'table'; readonly name: string; readonly alias?: string }
  | { readonly kind: 'derived'; readonly query: Query; readonly alias?: string }
  | { readonly kind: 'unnest'; readonly expr: Expr; readonly alias?: string }
  /** A parenthesised join tree, `a LEFT JOIN (b CROSS JOIN UNNEST(b.m) AS m) ON ...` (no alias). */
  | { readonly kind: 'nested'; readonly from: From; readonly alias?: undefined };

export interface Join {
  readonly type: 'cross' | 'inner' | 'left' | 'right' | 'full';
  readonly table: TableFactor;
  readonly on?: Expr;
  readonly using?: readonly string[];
}

export interface From {
  readonly first: TableFactor;
  readonly joins: readonly Join[];
}

export interface Select {
  readonly kind: 'select';
  readonly distinct: boolean;
  readonly columns: readonly SelectItem[];
  readonly from?: From;
  readonly where?: Expr;
  readonly groupBy: readonly Expr[];
  readonly having?: Expr;
  readonly qualify?: Expr;
}

export interface SetOp {
  readonly kind: 'setop';
  readonly op: 'union' | 'intersect' | 'except';
  readonly all: boolean;
  readonly left: SetExpr;
  readonly right: SetExpr;
}

export type SetExpr = Select | SetOp | { readonly kind: 'nested'; readonly query: Query };

export interface Cte {
  readonly name: string;
  readonly query: Query;
}

export interface Query {
  readonly kind: 'query';
  readonly with: readonly Cte[];
  readonly body: SetExpr;
  readonly orderBy: readonly OrderItem[];
  readonly limit?: Expr;
  readonly offset?: Expr;
}

/** Freezes a node whose children are already frozen (arrays included). */
export function frozen<T extends object>(node: T): T {
  if (!Object.isFrozen(node)) {
    for (const v of Object.values(node)) if (Array.isArray(v) || (typeof v === 'object' && v !== null && !Object.isFrozen(v))) freezeTree(v);
    Object.freeze(node);
  }
  return node;
}

/** Freezes a whole tree (nodes already frozen are taken to be frozen below too). */
export function freezeTree<T>(node: T): T {
  if (typeof node !== 'object' || node === null || Object.isFrozen(node)) return node;
  for (const v of Object.values(node)) freezeTree(v);
  return Object.freeze(node);
}
