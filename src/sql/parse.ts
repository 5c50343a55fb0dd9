/**
 * BigQuery SQL text → Quarry's AST (ast.ts), through sqlparser-rs (WASM, BigQuery dialect).
 *
 * The converter is an allow-list: every sqlparser node kind and clause that is not mapped here is
 * rejected with QUERY_NOT_ALLOWED naming the construct, so nothing the rest of the pipeline does
 * not understand can reach an engine. sqlparser's JSON is externally tagged (`{"Variant": payload}`
 * or `"Variant"`); optional fields that are None come through as `undefined`.
 */
import { QuarryError, isQuarryError } from '../errors.ts';
import {
  type BinaryOp,
  boundText,
  type CastType,
  type Cte,
  type DatePart,
  type Expr,
  type From,
  type FrameBound,
  frameText,
  type FuncCall,
  freezeTree,
  frozen,
  type Join,
  type OrderItem,
  type Query,
  type Select,
  type SelectItem,
  type SetExpr,
  type TableFactor,
  type WindowFrame,
  type WindowSpec,
} from './ast.ts';
import { isFunctionName, restrictedFunction } from './functions.ts';
import { parseStatements } from './sqlparser.ts';

type J = Record<string, unknown>;

/** A node under construction: frozen (`frozen`) before it leaves its builder. */
type Draft<T> = { -readonly [K in keyof T]: T[K] };

function isObj(v: unknown): v is J {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** [variant, payload] of an externally tagged enum value. */
function variant(v: unknown): [string, unknown] {
  if (typeof v === 'string') return [v, undefined];
  if (isObj(v)) {
    const keys = Object.keys(v);
    if (keys.length === 1) return [keys[0]!, v[keys[0]!]];
  }
  throw notAllowed('an unrecognised construct');
}

function notAllowed(what: string): QuarryError {
  return new QuarryError('QUERY_NOT_ALLOWED', `Not supported in queries: ${what}`);
}

function arr(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

function obj(v: unknown): J {
  if (!isObj(v)) throw notAllowed('an unrecognised construct');
  return v;
}

function present(v: unknown): boolean {
  if (v === undefined || v === null || v === false) return false;
  if (Array.isArray(v)) return v.length > 0;
  if (v === 'None') return false;
  return true;
}

/**
 * LIMIT and OFFSET take what BigQuery allows there: an integer literal or a parameter (possibly
 * cast). Anything else, a subquery above all, is refused here, so such a position can never hide a
 * table read from the sandbox.
 */
function rowCount(e: Expr, clause: string): Expr {
  const inner = e.kind === 'cast' ? e.expr : e;
  if ((inner.kind === 'literal' && inner.type === 'number' && /^\d+$/.test(inner.value)) || inner.kind === 'param') return e;
  throw new QuarryError('INVALID_QUERY', `${clause} takes a whole number or a parameter`);
}

/** Rejects a clause we do not translate when the parser reports it present. */
function refuse(node: J, key: string, what: string): void {
  if (present(node[key])) throw notAllowed(what);
}

// ---------------------------------------------------------------------------------------------
// Entry point

export function parseSql(sql: string): Query {
  let statements: unknown[];
  try {
    statements = parseStatements(sql);
  } catch (e) {
    throw isQuarryError(e) ? e : parseError(sql, e);
  }
  if (statements.length === 0) throw new QuarryError('PARSE_ERROR', 'The query is empty');
  if (statements.length > 1) throw new QuarryError('QUERY_NOT_ALLOWED', 'Only a single query is allowed (found several statements)');
  const [kind, payload] = variant(statements[0]);
  if (kind !== 'Query') throw new QuarryError('QUERY_NOT_ALLOWED', `Only SELECT queries are allowed (found a ${statementName(kind)} statement)`);
  // Every node is frozen where it is built; this catches any that were not.
  return freezeTree(convertQuery(payload));
}

function statementName(kind: string): string {
  return kind.replace(/([a-z])([A-Z])/g, '$1 $2').toUpperCase();
}

function parseError(sql: string, e: unknown): QuarryError {
  const raw = e instanceof Error ? e.message : String(e);
  const detail = raw.replace(/^sql parser error:\s*/i, '');
  const at = /\s*at Line: (\d+), Column: (\d+)\s*$/.exec(detail);
  let where: string;
  let text = detail;
  if (at) {
    where = `line ${at[1]}, column ${at[2]}`;
    text = detail.slice(0, at.index);
  } else {
    const lines = sql.split('\n');
    where = `line ${lines.length}, column ${(lines.at(-1)?.length ?? 0) + 1} (end of the query)`;
  }
  return new QuarryError('PARSE_ERROR', `Could not parse the query at ${where}: ${text}`, { cause: e });
}

// ---------------------------------------------------------------------------------------------
// Queries

function convertQuery(v: unknown): Query {
  const q = obj(v);
  refuse(q, 'fetch', 'FETCH');
  refuse(q, 'locks', 'FOR UPDATE / locking clauses');
  refuse(q, 'for_clause', 'FOR clauses');
  refuse(q, 'settings', 'SETTINGS');
  refuse(q, 'format_clause', 'FORMAT');
  refuse(q, 'pipe_operators', 'pipe syntax');
  const ctes: Cte[] = [];
  if (present(q.with)) {
    const w = obj(q.with);
    if (w.recursive === true) throw notAllowed('WITH RECURSIVE');
    for (const c of arr(w.cte_tables)) {
      const cte = obj(c);
      refuse(cte, 'from', 'CTE FROM');
      const alias = obj(cte.alias);
      if (arr(alias.columns).length > 0) throw notAllowed('CTE column lists');
      ctes.push(frozen({ name: ident(alias.name), query: convertQuery(cte.query) }));
    }
  }
  const body = convertSetExpr(q.body);
  let orderBy: OrderItem[] = [];
  if (present(q.order_by)) {
    const [k, items] = variant(obj(q.order_by).kind);
    if (k !== 'Expressions') throw notAllowed('ORDER BY ALL');
    refuse(obj(q.order_by), 'interpolate', 'INTERPOLATE');
    orderBy = arr(items).map(orderItem);
  }
  let limit: Expr | undefined;
  let offset: Expr | undefined;
  if (present(q.limit_clause)) {
    const [k, lc] = variant(q.limit_clause);
    if (k !== 'LimitOffset') throw notAllowed('LIMIT x, y');
    const l = obj(lc);
    refuse(l, 'limit_by', 'LIMIT BY');
    if (present(l.limit)) limit = rowCount(convertExpr(l.limit), 'LIMIT');
    if (present(l.offset)) offset = rowCount(convertExpr(obj(l.offset).value), 'OFFSET');
  }
  return frozen({ kind: 'query', with: frozen(ctes), body, orderBy: frozen(orderBy), ...(limit ? { limit } : {}), ...(offset ? { offset } : {}) });
}

function convertSetExpr(v: unknown): SetExpr {
  const [k, p] = variant(v);
  switch (k) {
    case 'Select':
      return convertSelect(p);
    case 'Query':
      return frozen({ kind: 'nested', query: convertQuery(p) });
    case 'SetOperation': {
      const s = obj(p);
      const op = ({ Union: 'union', Intersect: 'intersect', Except: 'except' } as const)[String(s.op) as 'Union'];
      if (!op) throw notAllowed(`set operation ${String(s.op)}`);
      const [quant] = variant(s.set_quantifier ?? 'None');
      if (quant === 'ByName' || quant === 'AllByName' || quant === 'DistinctByName') throw notAllowed('BY NAME');
      return frozen({ kind: 'setop', op, all: quant === 'All', left: convertSetExpr(s.left), right: convertSetExpr(s.right) });
    }
    case 'Values':
      throw notAllowed('VALUES');
    case 'Table':
      throw notAllowed('TABLE <name>');
    default:
      throw new QuarryError('QUERY_NOT_ALLOWED', `Only SELECT queries are allowed (found ${statementName(k)})`);
  }
}

const handledSelectKeys = new Set([
  'select_token',
  'optimizer_hints',
  'distinct',
  'top',
  'top_before_distinct',
  'projection',
  'exclude',
  'into',
  'from',
  'lateral_views',
  'prewhere',
  'selection',
  'connect_by',
  'group_by',
  'cluster_by',
  'distribute_by',
  'sort_by',
  'having',
  'named_window',
  'qualify',
  'window_before_qualify',
  'value_table_mode',
  'flavor',
]);

function convertSelect(v: unknown): Select {
  const s = obj(v);
  for (const key of Object.keys(s)) {
    if (!handledSelectKeys.has(key) && present(s[key])) throw notAllowed(`SELECT clause ${key}`);
  }
  refuse(s, 'top', 'TOP');
  refuse(s, 'into', 'SELECT INTO');
  refuse(s, 'exclude', 'EXCLUDE');
  refuse(s, 'lateral_views', 'LATERAL VIEW');
  refuse(s, 'prewhere', 'PREWHERE');
  refuse(s, 'connect_by', 'CONNECT BY');
  refuse(s, 'cluster_by', 'CLUSTER BY');
  refuse(s, 'distribute_by', 'DISTRIBUTE BY');
  refuse(s, 'sort_by', 'SORT BY');
  refuse(s, 'named_window', 'named windows (WINDOW)');
  refuse(s, 'value_table_mode', 'SELECT AS STRUCT / VALUE');
  if (s.flavor !== undefined && s.flavor !== 'Standard') throw notAllowed('FROM-first SELECT');
  let distinct = false;
  if (present(s.distinct)) {
    const [dk] = variant(s.distinct);
    if (dk !== 'Distinct') throw notAllowed('DISTINCT ON');
    distinct = true;
  }
  const columns = arr(s.projection).map(selectItem);
  const froms = arr(s.from);
  const from = froms.length > 0 ? convertFrom(froms) : undefined;
  const where = present(s.selection) ? convertExpr(s.selection) : undefined;
  let groupBy: Expr[] = [];
  if (present(s.group_by)) {
    const [gk, gp] = variant(s.group_by);
    if (gk !== 'Expressions') throw notAllowed('GROUP BY ALL');
    const [exprs, modifiers] = arr(gp);
    if (arr(modifiers).length > 0) throw notAllowed('GROUP BY modifiers (ROLLUP, CUBE, ...)');
    groupBy = arr(exprs).map(convertExpr);
  }
  const select: Select = {
    kind: 'select',
    distinct,
    columns: frozen(columns),
    groupBy: frozen(groupBy),
    ...(from ? { from } : {}),
    ...(where ? { where } : {}),
    ...(present(s.having) ? { having: convertExpr(s.having) } : {}),
    ...(present(s.qualify) ? { qualify: convertExpr(s.qualify) } : {}),
  };
  return frozen(select);
}

function selectItem(v: unknown): SelectItem {
  const [k, p] = variant(v);
  if (k === 'UnnamedExpr') return frozen({ expr: convertExpr(p) });
  if (k === 'ExprWithAlias') {
    const e = obj(p);
    return frozen({ expr: convertExpr(e.expr), alias: ident(e.alias) });
  }
  if (k === 'Wildcard' || k === 'QualifiedWildcard') {
    throw new QuarryError('QUERY_NOT_ALLOWED', 'Wildcards (* or t.*) are not allowed in result columns: list the columns you need');
  }
  throw notAllowed(`select item ${k}`);
}

function convertFrom(items: unknown[]): From {
  let first: TableFactor | undefined;
  const joins: Join[] = [];
  for (const item of items) {
    const twj = obj(item);
    const factor = tableFactor(twj.relation);
    if (!first) first = factor;
    else joins.push(frozen({ type: 'cross', table: factor }));
    joins.push(...arr(twj.joins).map(convertJoin));
  }
  return frozen({ first: first!, joins: frozen(joins) });
}

function convertJoin(v: unknown): Join {
  const j = obj(v);
  if (j.global === true) throw notAllowed('GLOBAL JOIN');
  const table = tableFactor(j.relation);
  const [op, constraint] = variant(j.join_operator);
  const joinTypes: Record<string, Join['type']> = {
    CrossJoin: 'cross',
    Join: 'inner',
    Inner: 'inner',
    Left: 'left',
    LeftOuter: 'left',
    Right: 'right',
    RightOuter: 'right',
    FullOuter: 'full',
  };
  const type = joinTypes[op];
  if (!type) throw notAllowed(`${statementName(op)} join`);
  if (type === 'cross') {
    const [ck] = variant(constraint ?? 'None');
    if (ck !== 'None') throw notAllowed('CROSS JOIN with a condition');
    return frozen({ type, table });
  }
  const [ck, cp] = variant(constraint);
  // BigQuery's `LEFT JOIN UNNEST(x) AS y` needs no ON (it joins each row to its own elements).
  if (ck === 'None' && table.kind === 'unnest') return frozen({ type, table });
  if (ck === 'On') return frozen({ type, table, on: convertExpr(cp) });
  if (ck === 'Using') return frozen({ type, table, using: frozen(arr(cp).map((n) => objectName(n))) });
  throw notAllowed(`${ck.toUpperCase()} join`);
}

function tableFactor(v: unknown): TableFactor {
  const [k, p] = variant(v);
  const t = obj(p);
  switch (k) {
    case 'Table': {
      if (t.args !== undefined && t.args !== null) throw notAllowed(`table function ${objectName(t.name)}()`);
      refuse(t, 'with_hints', 'table hints');
      refuse(t, 'version', 'FOR SYSTEM_TIME AS OF');
      refuse(t, 'partitions', 'PARTITION');
      refuse(t, 'with_ordinality', 'WITH ORDINALITY');
      refuse(t, 'json_path', 'JSON paths in FROM');
      refuse(t, 'sample', 'TABLESAMPLE');
      refuse(t, 'index_hints', 'index hints');
      return withAlias({ kind: 'table', name: objectName(t.name) }, tableAlias(t.alias));
    }
    case 'Derived': {
      if (t.lateral === true) throw notAllowed('LATERAL');
      refuse(t, 'sample', 'TABLESAMPLE');
      return withAlias({ kind: 'derived', query: convertQuery(t.subquery) }, tableAlias(t.alias));
    }
    case 'UNNEST': {
      if (t.with_offset === true) throw notAllowed('UNNEST ... WITH OFFSET');
      if (t.with_ordinality === true) throw notAllowed('WITH ORDINALITY');
      const exprs = arr(t.array_exprs);
      if (exprs.length !== 1) throw notAllowed('UNNEST of several arrays');
      return withAlias({ kind: 'unnest', expr: convertExpr(exprs[0]) }, tableAlias(t.alias));
    }
    case 'NestedJoin': {
      if (present(t.alias)) throw notAllowed('an alias on a parenthesised join');
      return frozen({ kind: 'nested', from: convertFrom([t.table_with_joins]) });
    }
    default:
      throw notAllowed(`${statementName(k)} in FROM`);
  }
}

function withAlias(factor: Exclude<TableFactor, { kind: 'nested' }>, alias: string | undefined): TableFactor {
  return frozen(alias === undefined ? factor : { ...factor, alias });
}

function tableAlias(v: unknown): string | undefined {
  if (!present(v)) return undefined;
  const a = obj(v);
  if (arr(a.columns).length > 0) throw notAllowed('column lists in table aliases');
  return ident(a.name);
}

function ident(v: unknown): string {
  const i = obj(v);
  if (typeof i.value !== 'string') throw notAllowed('an unrecognised identifier');
  return i.value;
}

/** A possibly dotted name (`cloudflare.logs.prod`), joined with dots. */
function objectName(v: unknown): string {
  return arr(v)
    .map((part) => {
      const [k, p] = variant(part);
      if (k !== 'Identifier') throw notAllowed('an unrecognised name');
      return ident(p);
    })
    .join('.');
}

function orderItem(v: unknown): OrderItem {
  const o = obj(v);
  refuse(o, 'with_fill', 'WITH FILL');
  const opts = isObj(o.options) ? o.options : {};
  const nulls = opts.nulls_first === true ? 'first' : opts.nulls_first === false ? 'last' : undefined;
  return frozen({ expr: convertExpr(o.expr), desc: opts.asc === false, ...(nulls ? { nulls } : {}) });
}

// ---------------------------------------------------------------------------------------------
// Expressions

const binaryOps: Record<string, BinaryOp> = {
  And: 'and',
  Or: 'or',
  Eq: '=',
  NotEq: '!=',
  Lt: '<',
  LtEq: '<=',
  Gt: '>',
  GtEq: '>=',
  Plus: '+',
  Minus: '-',
  Multiply: '*',
  Divide: '/',
  Modulo: '%',
  StringConcat: '||',
  BitwiseAnd: '&',
  BitwiseOr: '|',
  BitwiseXor: '^',
};

const dateParts: Record<string, DatePart> = {
  microsecond: 'microsecond',
  microseconds: 'microsecond',
  millisecond: 'millisecond',
  milliseconds: 'millisecond',
  second: 'second',
  seconds: 'second',
  minute: 'minute',
  minutes: 'minute',
  hour: 'hour',
  hours: 'hour',
  day: 'day',
  days: 'day',
  dayofweek: 'dayofweek',
  dayofyear: 'dayofyear',
  week: 'week',
  month: 'month',
  months: 'month',
  quarter: 'quarter',
  year: 'year',
  years: 'year',
};

export function toDatePart(name: string): DatePart | undefined {
  return dateParts[name.toLowerCase()];
}

function datePartOf(v: unknown): DatePart {
  const [k, p] = variant(v);
  const name = k === 'Custom' ? ident(p) : k;
  const part = toDatePart(name);
  if (!part) throw new QuarryError('INVALID_QUERY', `Unknown date part: ${name}`);
  return part;
}

/** Functions whose argument at the given position is a date part written as a bare word. */
const datePartArgs: Record<string, number> = {
  timestamp_trunc: 1,
  datetime_trunc: 1,
  date_trunc: 1,
  timestamp_diff: 2,
  datetime_diff: 2,
  date_diff: 2,
};

function convertExpr(v: unknown): Expr {
  const [k, p] = variant(v);
  switch (k) {
    case 'Identifier': {
      const i = obj(p);
      const name = ident(i);
      if (i.quote_style === undefined || i.quote_style === null) {
        if (name.startsWith('@@')) throw notAllowed('system variables');
        if (name.startsWith('@')) {
          const paramName = name.slice(1);
          if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(paramName)) throw new QuarryError('INVALID_QUERY', `Invalid parameter name: ${name}`);
          return { kind: 'param', name: paramName };
        }
      }
      return { kind: 'column', path: [name] };
    }
    case 'CompoundIdentifier': {
      const parts = arr(p).map((part) => {
        const name = ident(part);
        if (name.startsWith('@')) throw notAllowed('parameters inside a dotted name');
        return name;
      });
      return { kind: 'column', path: parts };
    }
    case 'Value':
      return convertValue(obj(p).value);
    case 'Nested':
      return convertExpr(p);
    case 'BinaryOp': {
      const b = obj(p);
      const op = binaryOps[String(b.op)];
      if (!op) throw notAllowed(`operator ${String(b.op)}`);
      return { kind: 'binary', op, left: convertExpr(b.left), right: convertExpr(b.right) };
    }
    case 'UnaryOp': {
      const u = obj(p);
      const op = ({ Not: 'not', Minus: '-', Plus: '+' } as const)[String(u.op) as 'Not'];
      if (!op) throw notAllowed(`operator ${String(u.op)}`);
      return { kind: 'unary', op, expr: convertExpr(u.expr) };
    }
    case 'Function':
      return convertFunction(obj(p));
    case 'Cast': {
      const c = obj(p);
      if (present(c.format)) throw notAllowed('CAST ... FORMAT');
      if (c.array === true) throw notAllowed('array casts');
      const [ck] = variant(c.kind);
      // `x::type` is Postgres syntax that self-hosted Studio sends; it means CAST.
      if (ck !== 'Cast' && ck !== 'SafeCast' && ck !== 'DoubleColon') throw notAllowed(`${ck} casts`);
      return { kind: 'cast', expr: convertExpr(c.expr), to: castType(c.data_type), safe: ck === 'SafeCast' };
    }
    case 'Case': {
      const c = obj(p);
      return {
        kind: 'case',
        whens: frozen(arr(c.conditions).map((w) => frozen({ when: convertExpr(obj(w).condition), result: convertExpr(obj(w).result) }))),
        ...(present(c.operand) ? { operand: convertExpr(c.operand) } : {}),
        ...(present(c.else_result) ? { else: convertExpr(c.else_result) } : {}),
      };
    }
    case 'IsNull':
      return { kind: 'isNull', expr: convertExpr(p), negated: false };
    case 'IsNotNull':
      return { kind: 'isNull', expr: convertExpr(p), negated: true };
    case 'IsTrue':
      return { kind: 'isBool', expr: convertExpr(p), value: true, negated: false };
    case 'IsNotTrue':
      return { kind: 'isBool', expr: convertExpr(p), value: true, negated: true };
    case 'IsFalse':
      return { kind: 'isBool', expr: convertExpr(p), value: false, negated: false };
    case 'IsNotFalse':
      return { kind: 'isBool', expr: convertExpr(p), value: false, negated: true };
    case 'IsDistinctFrom':
    case 'IsNotDistinctFrom': {
      const [l, r] = arr(p);
      return { kind: 'distinctFrom', left: convertExpr(l), right: convertExpr(r), negated: k === 'IsNotDistinctFrom' };
    }
    case 'InList': {
      const i = obj(p);
      return { kind: 'inList', expr: convertExpr(i.expr), list: arr(i.list).map(convertExpr), negated: i.negated === true };
    }
    case 'InUnnest': {
      const i = obj(p);
      return { kind: 'inUnnest', expr: convertExpr(i.expr), array: convertExpr(i.array_expr), negated: i.negated === true };
    }
    case 'InSubquery': {
      const i = obj(p);
      return { kind: 'inQuery', expr: convertExpr(i.expr), query: convertQuery(i.subquery), negated: i.negated === true };
    }
    case 'Between': {
      const b = obj(p);
      return {
        kind: 'between',
        expr: convertExpr(b.expr),
        low: convertExpr(b.low),
        high: convertExpr(b.high),
        negated: b.negated === true,
      };
    }
    case 'Like': {
      const l = obj(p);
      if (l.any === true) throw notAllowed('LIKE ANY');
      if (present(l.escape_char)) throw notAllowed('LIKE ... ESCAPE');
      return { kind: 'like', expr: convertExpr(l.expr), pattern: convertExpr(l.pattern), negated: l.negated === true };
    }
    case 'Exists': {
      const e = obj(p);
      return { kind: 'exists', query: convertQuery(e.subquery), negated: e.negated === true };
    }
    case 'Subquery':
      return { kind: 'subquery', query: convertQuery(p) };
    case 'Array': {
      const a = obj(p);
      return { kind: 'array', elements: arr(a.elem).map(convertExpr) };
    }
    case 'Struct':
      return convertStruct(obj(p));
    case 'CompoundFieldAccess': {
      const c = obj(p);
      let expr = convertExpr(c.root);
      for (const access of arr(c.access_chain)) {
        const [ak, ap] = variant(access);
        if (ak === 'Dot') {
          const field = convertExpr(ap);
          if (field.kind !== 'column') throw notAllowed('this field access');
          for (const name of field.path) expr = addField(expr, name);
        } else if (ak === 'Subscript') {
          expr = subscript(expr, ap);
        } else throw notAllowed(`${ak} access`);
      }
      return expr;
    }
    case 'Extract': {
      const e = obj(p);
      return { kind: 'extract', part: datePartOf(e.field), expr: convertExpr(e.expr) };
    }
    case 'Interval': {
      const i = obj(p);
      if (present(i.last_field) || present(i.leading_precision) || present(i.fractional_seconds_precision)) {
        throw notAllowed('this INTERVAL form');
      }
      if (!present(i.leading_field)) throw new QuarryError('INVALID_QUERY', 'INTERVAL needs a unit, e.g. INTERVAL 1 HOUR');
      return { kind: 'interval', value: convertExpr(i.value), unit: datePartOf(i.leading_field) };
    }
    case 'TypedString': {
      const t = obj(p);
      const value = convertValue(obj(t.value).value);
      if (value.kind !== 'literal' || value.type !== 'string') throw notAllowed('this typed literal');
      return { kind: 'cast', expr: value, to: castType(t.data_type), safe: false };
    }
    case 'Ceil':
    case 'Floor': {
      const c = obj(p);
      const [fk] = variant(c.field ?? 'NoDateTime');
      if (fk !== 'DateTimeField' || variant(obj(c.field).DateTimeField)[0] !== 'NoDateTime') throw notAllowed(`${k.toUpperCase()} TO`);
      return { kind: 'func', name: k.toLowerCase(), args: [convertExpr(c.expr)] };
    }
    case 'Substring': {
      const s = obj(p);
      const args = [convertExpr(s.expr)];
      if (present(s.substring_from)) args.push(convertExpr(s.substring_from));
      if (present(s.substring_for)) args.push(convertExpr(s.substring_for));
      return { kind: 'func', name: 'substr', args };
    }
    case 'Trim': {
      const t = obj(p);
      if (present(t.trim_where) || present(t.trim_what)) throw notAllowed('TRIM(... FROM ...)');
      const args = [convertExpr(t.expr)];
      for (const c of arr(t.trim_characters)) args.push(convertExpr(c));
      return { kind: 'func', name: 'trim', args };
    }
    case 'Position': {
      const s = obj(p);
      return { kind: 'func', name: 'strpos', args: [convertExpr(s.in), convertExpr(s.expr)] };
    }
    default:
      throw notAllowed(describeExprKind(k));
  }
}

function describeExprKind(k: string): string {
  const names: Record<string, string> = {
    ILike: 'ILIKE (use LOWER(x) LIKE ... or REGEXP_CONTAINS)',
    SimilarTo: 'SIMILAR TO',
    RLike: 'RLIKE',
    Tuple: 'tuples',
    AtTimeZone: 'AT TIME ZONE',
    Collate: 'COLLATE',
    Named: 'named expressions',
    MatchAgainst: 'MATCH AGAINST',
    Lambda: 'lambda functions',
    Prior: 'PRIOR',
    Convert: 'CONVERT',
    Overlay: 'OVERLAY',
    JsonAccess: 'JSON access operators',
    Dictionary: 'dictionary literals',
    Map: 'map literals',
  };
  return names[k] ?? `the ${statementName(k)} expression`;
}

/** `STRUCT(x AS a, y)` or `STRUCT<a INT64, b STRING>(x, y)`. */
function convertStruct(s: J): Expr {
  const types = arr(s.fields).map((f) => {
    const field = obj(f);
    return { name: present(field.field_name) ? ident(field.field_name) : undefined, type: castType(field.field_type) };
  });
  const values = arr(s.values);
  if (types.length > 0 && types.length !== values.length) {
    throw new QuarryError('INVALID_QUERY', `STRUCT declares ${types.length} field(s) but has ${values.length} value(s)`);
  }
  if (values.length === 0) throw new QuarryError('INVALID_QUERY', 'STRUCT needs at least one field');
  const fields = values.map((v, i) => {
    const [k, payload] = variant(v);
    let value: Expr;
    let name: string | undefined;
    if (k === 'Named') {
      const named = obj(payload);
      value = convertExpr(named.expr);
      name = ident(named.name);
    } else value = convertExpr(v);
    const declared = types[i];
    name = declared?.name ?? name;
    return frozen({ value, ...(name !== undefined ? { name } : {}), ...(declared ? { type: declared.type } : {}) });
  });
  return { kind: 'struct', fields: frozen(fields) };
}

function addField(expr: Expr, name: string): Expr {
  if (expr.kind === 'column') return { kind: 'column', path: [...expr.path, name] };
  return { kind: 'field', expr, name };
}

function subscript(expr: Expr, v: unknown): Expr {
  const [sk, sp] = variant(v);
  if (sk !== 'Index') throw notAllowed('array slices');
  const index = convertExpr(obj(sp).index);
  if (index.kind === 'func' && ['offset', 'safe_offset', 'ordinal', 'safe_ordinal'].includes(index.name)) {
    if (index.args.length !== 1) throw new QuarryError('INVALID_QUERY', `${index.name.toUpperCase()} takes one argument`);
    return { kind: 'index', expr, index: index.args[0]!, mode: index.name as 'offset' };
  }
  if (index.kind === 'literal' && index.type === 'string') throw notAllowed('subscripts by key');
  return { kind: 'index', expr, index, mode: 'offset' };
}

function convertValue(v: unknown): Expr {
  const [k, p] = variant(v);
  switch (k) {
    case 'Number': {
      const [text] = arr(p);
      if (!Number.isFinite(Number(text))) throw new QuarryError('INVALID_QUERY', `Number out of range: ${String(text).slice(0, 40)}`);
      return { kind: 'literal', type: 'number', value: String(text) };
    }
    case 'SingleQuotedString':
    case 'DoubleQuotedString':
    case 'TripleSingleQuotedString':
    case 'TripleDoubleQuotedString':
    case 'SingleQuotedRawStringLiteral':
    case 'DoubleQuotedRawStringLiteral':
    case 'TripleSingleQuotedRawStringLiteral':
    case 'TripleDoubleQuotedRawStringLiteral':
      return { kind: 'literal', type: 'string', value: String(p) };
    case 'Boolean':
      return { kind: 'literal', type: 'bool', value: p === true };
    case 'Null':
      return { kind: 'literal', type: 'null' };
    case 'Placeholder':
      throw notAllowed('positional placeholders (use @name parameters)');
    default:
      throw notAllowed(`${statementName(k)} literals`);
  }
}

function castType(v: unknown): CastType {
  const [k] = variant(v);
  const map: Record<string, CastType> = {
    String: 'string',
    Varchar: 'string',
    CharacterVarying: 'string',
    Text: 'string',
    Int64: 'int64',
    Int: 'int64',
    Integer: 'int64',
    BigInt: 'int64',
    SmallInt: 'int64',
    Int2: 'int64',
    Int4: 'int64',
    Int8: 'int64',
    Float64: 'float64',
    Double: 'float64',
    DoublePrecision: 'float64',
    Float: 'float64',
    Float4: 'float64',
    Float8: 'float64',
    Real: 'float64',
    Numeric: 'numeric',
    Decimal: 'numeric',
    BigNumeric: 'numeric',
    Bool: 'bool',
    Boolean: 'bool',
    Timestamp: 'timestamp',
    Datetime: 'datetime',
    Date: 'date',
    Bytes: 'bytes',
  };
  const t = map[k];
  if (!t) throw notAllowed(`casts to ${k.toUpperCase()}`);
  return t;
}

function convertFunction(f: J): Expr {
  const name = objectName(f.name).toLowerCase();
  if (name.includes('.') && !isFunctionName(name)) throw restrictedFunction(name);
  refuse(f, 'filter', 'FILTER (WHERE ...)');
  refuse(f, 'within_group', 'WITHIN GROUP');
  if (present(f.parameters)) throw notAllowed('parametric functions');
  // Built up here, frozen when returned.
  const args: Expr[] = [];
  const call: Draft<FuncCall> = { kind: 'func', name, args };
  if (f.null_treatment !== undefined && f.null_treatment !== null) {
    const [nt] = variant(f.null_treatment);
    if (nt === 'IgnoreNulls') call.ignoreNulls = true;
  }
  const [ak, ap] = f.args === undefined ? ['None', undefined] : variant(f.args);
  if (ak === 'Subquery') throw notAllowed(`${name}(subquery)`);
  if (ak === 'List') {
    const list = obj(ap);
    if (present(list.duplicate_treatment)) {
      const [dt] = variant(list.duplicate_treatment);
      if (dt === 'Distinct') call.distinct = true;
    }
    const given = arr(list.args);
    given.forEach((a, i) => {
      const [kind, payload] = variant(a);
      if (kind !== 'Unnamed') throw notAllowed(`named arguments in ${name}()`);
      const [ek, ep] = variant(payload);
      if (ek === 'Wildcard') {
        if (name !== 'count' || given.length !== 1) throw new QuarryError('QUERY_NOT_ALLOWED', `Wildcards are only allowed in count(*) (found in ${name})`);
        call.star = true;
        return;
      }
      if (ek !== 'Expr') throw notAllowed(`${ek} arguments`);
      if (datePartArgs[name] === i) {
        const part = datePartArg(ep);
        if (part) {
          args.push(frozen({ kind: 'datepart', part }));
          return;
        }
      }
      args.push(convertExpr(ep));
    });
    for (const clause of arr(list.clauses)) {
      const [ck, cp] = variant(clause);
      if (ck === 'OrderBy') call.orderBy = frozen(arr(cp).map(orderItem));
      else if (ck === 'Limit') call.limit = rowCount(convertExpr(cp), 'LIMIT');
      else if (ck === 'IgnoreOrRespectNulls') call.ignoreNulls = variant(cp)[0] === 'IgnoreNulls';
      else throw notAllowed(`${ck} inside ${name}()`);
    }
  }
  if (present(f.over)) {
    const [ok, op] = variant(f.over);
    if (ok !== 'WindowSpec') throw notAllowed('named windows');
    call.over = windowSpec(obj(op));
  }
  return frozen(call);
}

function datePartArg(v: unknown): DatePart | undefined {
  const [k, p] = variant(v);
  if (k !== 'Identifier') return undefined;
  const i = obj(p);
  if (i.quote_style !== undefined && i.quote_style !== null) return undefined;
  return toDatePart(ident(i));
}

function windowSpec(w: J): WindowSpec {
  if (present(w.window_name)) throw notAllowed('named windows');
  const spec: WindowSpec = { partitionBy: frozen(arr(w.partition_by).map(convertExpr)), orderBy: frozen(arr(w.order_by).map(orderItem)) };
  if (!present(w.window_frame)) return frozen(spec);
  return frozen({ ...spec, frame: windowFrame(obj(w.window_frame)) });
}

/** The order of frame bounds: a frame's start may not come after its end. */
const BOUND_ORDER: Readonly<Record<FrameBound['kind'], number>> = { unboundedPreceding: 0, preceding: 1, currentRow: 2, following: 3, unboundedFollowing: 4 };

function windowFrame(f: J): WindowFrame {
  const units = String(f.units);
  if (units !== 'Rows' && units !== 'Range') throw notAllowed(`${units.toUpperCase()} window frames`);
  const start = frameBound(f.start_bound);
  // `ROWS n PRECEDING` alone ends at the current row.
  const end: FrameBound = present(f.end_bound) ? frameBound(f.end_bound) : frozen({ kind: 'currentRow' });
  const frame: WindowFrame = frozen({ units: units === 'Rows' ? 'rows' : 'range', start, end });
  const written = present(f.end_bound) ? frameText(frame) : `${units.toUpperCase()} ${boundText(start)}`;
  if (start.kind === 'unboundedFollowing') throw invalidFrame(written, 'it cannot start at UNBOUNDED FOLLOWING');
  if (end.kind === 'unboundedPreceding') throw invalidFrame(written, 'it cannot end at UNBOUNDED PRECEDING');
  if (BOUND_ORDER[start.kind] > BOUND_ORDER[end.kind]) throw invalidFrame(written, 'it ends before it starts');
  return frame;
}

function invalidFrame(written: string, why: string): QuarryError {
  return new QuarryError('INVALID_QUERY', `Invalid window frame ${written}: ${why}`);
}

function frameBound(v: unknown): FrameBound {
  const [k, p] = variant(v);
  if (k === 'CurrentRow') return frozen({ kind: 'currentRow' });
  const dir = k === 'Preceding' ? 'preceding' : k === 'Following' ? 'following' : undefined;
  if (!dir) throw notAllowed(`window frame bound ${k}`);
  if (p === undefined || p === null) return frozen({ kind: dir === 'preceding' ? 'unboundedPreceding' : 'unboundedFollowing' });
  const n = convertExpr(p);
  if (n.kind !== 'literal' || n.type !== 'number' || !/^\d+$/.test(n.value)) throw notAllowed('window frames with bounds other than a whole number');
  return frozen({ kind: dir, offset: n.value });
}
