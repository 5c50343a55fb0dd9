/**
 * Quarry's own SQL syntax tree: the one shape every front end produces (the BigQuery parser in
 * parse.ts, the LQL compiler by hand through build.ts) and every engine generator consumes.
 *
 * Contract:
 * - Plain, JSON-friendly objects discriminated by `kind`; treat them as immutable (rewrites build
 *   new nodes).
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
 */

export type DatePart =
  | 'microsecond'
  | 'millisecond'
  | 'second'
  | 'minute'
  | 'hour'
  | 'day'
  | 'dayofweek'
  | 'dayofyear'
  | 'week'
  | 'month'
  | 'quarter'
  | 'year';

/** Target types of CAST / SAFE_CAST, in BigQuery's names. */
export type CastType = 'string' | 'int64' | 'float64' | 'numeric' | 'bool' | 'timestamp' | 'datetime' | 'date' | 'bytes';

export type BinaryOp =
  | 'and'
  | 'or'
  | '='
  | '!='
  | '<'
  | '<='
  | '>'
  | '>='
  | '+'
  | '-'
  | '*'
  | '/'
  | '%'
  | '||'
  | '&'
  | '|'
  | '^';

export type Expr =
  | ColumnRef
  | Param
  | Literal
  | { kind: 'interval'; value: Expr; unit: DatePart }
  | { kind: 'datepart'; part: DatePart }
  | { kind: 'binary'; op: BinaryOp; left: Expr; right: Expr }
  | { kind: 'unary'; op: 'not' | '-' | '+'; expr: Expr }
  | FuncCall
  | { kind: 'cast'; expr: Expr; to: CastType; safe: boolean }
  | { kind: 'case'; operand?: Expr; whens: { when: Expr; result: Expr }[]; else?: Expr }
  | { kind: 'isNull'; expr: Expr; negated: boolean }
  | { kind: 'isBool'; expr: Expr; value: boolean; negated: boolean }
  /** `a IS [NOT] DISTINCT FROM b` (negated = NOT DISTINCT, i.e. null-safe equality). */
  | { kind: 'distinctFrom'; left: Expr; right: Expr; negated: boolean }
  | { kind: 'inList'; expr: Expr; list: Expr[]; negated: boolean }
  | { kind: 'inUnnest'; expr: Expr; array: Expr; negated: boolean }
  | { kind: 'inQuery'; expr: Expr; query: Query; negated: boolean }
  | { kind: 'between'; expr: Expr; low: Expr; high: Expr; negated: boolean }
  | { kind: 'like'; expr: Expr; pattern: Expr; negated: boolean }
  | { kind: 'exists'; query: Query; negated: boolean }
  | { kind: 'subquery'; query: Query }
  | { kind: 'array'; elements: Expr[] }
  /** `STRUCT(a AS x, b)` / `STRUCT<x INT64>(a)`: a record value; `type` casts the field. */
  | { kind: 'struct'; fields: StructField[] }
  | { kind: 'index'; expr: Expr; index: Expr; mode: 'offset' | 'safe_offset' | 'ordinal' | 'safe_ordinal' }
  /** Field access on something that is not a plain column path, e.g. `arr[offset(0)].path`. */
  | { kind: 'field'; expr: Expr; name: string }
  | { kind: 'extract'; part: DatePart; expr: Expr };

export interface StructField {
  name?: string;
  value: Expr;
  type?: CastType;
}

export interface ColumnRef {
  kind: 'column';
  path: string[];
}

export interface Param {
  kind: 'param';
  name: string;
}

export type Literal =
  | { kind: 'literal'; type: 'string'; value: string }
  | { kind: 'literal'; type: 'number'; value: string }
  | { kind: 'literal'; type: 'bool'; value: boolean }
  | { kind: 'literal'; type: 'null' };

export interface FuncCall {
  kind: 'func';
  /** Lower-case BigQuery function name. */
  name: string;
  args: Expr[];
  /** `count(*)`. */
  star?: boolean;
  distinct?: boolean;
  /** Aggregate modifiers: `array_agg(x ORDER BY y LIMIT n)`, `string_agg(...)`. */
  orderBy?: OrderItem[];
  limit?: Expr;
  ignoreNulls?: boolean;
  over?: WindowSpec;
}

export interface WindowSpec {
  partitionBy: Expr[];
  orderBy: OrderItem[];
  /** Frame clause, already checked, written in the portable ROWS/RANGE form. */
  frame?: string;
}

export interface OrderItem {
  expr: Expr;
  desc: boolean;
  nulls?: 'first' | 'last';
}

export interface SelectItem {
  expr: Expr;
  alias?: string;
}

export type TableFactor =
  | { kind: 'table'; name: string; alias?: string }
  | { kind: 'derived'; query: Query; alias?: string }
  | { kind: 'unnest'; expr: Expr; alias?: string };

export interface Join {
  type: 'cross' | 'inner' | 'left' | 'right' | 'full';
  table: TableFactor;
  on?: Expr;
  using?: string[];
}

export interface From {
  first: TableFactor;
  joins: Join[];
}

export interface Select {
  kind: 'select';
  distinct: boolean;
  columns: SelectItem[];
  from?: From;
  where?: Expr;
  groupBy: Expr[];
  having?: Expr;
  qualify?: Expr;
}

export interface SetOp {
  kind: 'setop';
  op: 'union' | 'intersect' | 'except';
  all: boolean;
  left: SetExpr;
  right: SetExpr;
}

export type SetExpr = Select | SetOp | { kind: 'nested'; query: Query };

export interface Cte {
  name: string;
  query: Query;
}

export interface Query {
  kind: 'query';
  with: Cte[];
  body: SetExpr;
  orderBy: OrderItem[];
  limit?: Expr;
  offset?: Expr;
}
