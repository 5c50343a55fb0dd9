/**
 * LQL rules → the SQL AST (src/sql/ast.ts), so an `lql` query goes through the same validation,
 * sandbox merge, translation and encoding as an `sql` one.
 *
 * Every filter value becomes a generated parameter (`@__lql_0`, `@__lql_1`, …) returned beside
 * the AST, bound as a string like every endpoint parameter and cast to the type it is compared
 * as: values never become SQL text.
 *
 * The produced query is the final SELECT only (no WITH): it reads one CTE of the saved query,
 * and the sandbox merge puts it under the saved query's WITH clause.
 */
import { QuarryError } from '../errors.ts';
import type { CastType, Expr, Query } from '../sql/ast.ts';
import { and, bin, col, countStar, datepart, fn, lit, not, or, order, param, select, unnest } from '../sql/build.ts';
import { assertNever, type VType } from '../sql/types.ts';
import { parseLql } from './parse.ts';
import type { ChartRule, FilterRule, FilterValue, LqlRules } from './rules.ts';
import { dayStart, nextDayStart } from './timestamps.ts';
import { parseDate, parseTime } from '../time.ts';

export interface CompileContext {
  /** The saved query's CTE names, in order. */
  ctes: string[];
  /** The clock for `now`, `today`, `last@…` (default: the current time). */
  now?: Date;
  /**
   * The type of a field of the chosen CTE (`['metadata', 'response', 'status_code']`), when
   * known (the semantic pass's types of the saved query's CTEs). Filter values are then read as
   * the field's type (`m.user_id:123` compares as a string on a string field; `@>` converts to the
   * list's element type), and a value that cannot be read so is refused; without it, the value's
   * own form decides (unquoted numbers and booleans are numbers and booleans, everything else a
   * string).
   */
  fieldType?: (cte: string, path: readonly string[]) => VType | undefined;
}

export interface CompiledLql {
  /** A single SELECT over one CTE, without a WITH clause. */
  ast: Query;
  /** Generated parameters (`__lql_0` → value), to bind alongside the endpoint's own. */
  params: Record<string, string>;
  /** The CTE the query reads. */
  cte: string;
  rules: LqlRules;
}

/** Prefix of the generated parameter names; callers' own parameters never start with it. */
export const LQL_PARAM_PREFIX = '__lql_';

export function compileLql(lql: string, ctx: CompileContext): CompiledLql {
  const rules = parseLql(lql, ctx.now ? { now: ctx.now } : {});
  return compileRules(rules, ctx);
}

export function compileRules(rules: LqlRules, ctx: CompileContext): CompiledLql {
  const cte = chooseCte(rules, ctx.ctes);
  const params: Record<string, string> = {};
  const bind = (value: string): Expr => {
    const name = `${LQL_PARAM_PREFIX}${Object.keys(params).length}`;
    params[name] = value;
    return param(name);
  };
  const typeOf = (path: string): VType | undefined => ctx.fieldType?.(cte, path.split('.'));
  const where = and(...rules.filters.map((rule) => filterExpr(rule, bind, typeOf(rule.path))));

  if (rules.chart) {
    const { columns, bucket } = chartColumns(rules.chart);
    const ast = select({ columns, from: cte, where, groupBy: [bucket], orderBy: [order(bucket, 'asc')] });
    return { ast, params, cte, rules };
  }
  // Which request failed, not only when: the row's id and message come by default where the CTE has them.
  const shown = DEFAULT_COLUMNS.filter((name) => ctx.fieldType?.(cte, [name]) !== undefined);
  const ast = select({ columns: selectColumns(rules, shown), from: cte, where, orderBy: [order(col('timestamp'), 'desc')] });
  return { ast, params, cte, rules };
}

function chooseCte(rules: LqlRules, ctes: string[]): string {
  if (ctes.length === 0) {
    throw new QuarryError('QUERY_NOT_ALLOWED', 'No CTEs found in query: LQL can only read the CTEs of the saved query, and it has none');
  }
  if (rules.from) {
    const wanted = rules.from.table;
    if (!ctes.includes(wanted)) {
      throw new QuarryError('QUERY_NOT_ALLOWED', `Table '${wanted}' not found in available CTEs: ${ctes.join(', ')}`);
    }
    return wanted;
  }
  if (ctes.length > 1) {
    throw new QuarryError('QUERY_NOT_ALLOWED', `Multiple CTEs available (${ctes.join(', ')}). You must specify which one to query using \`f:name\``);
  }
  return ctes[0]!;
}

// ---- select lists ------------------------------------------------------------------------------

function pathColumn(path: string): Expr {
  return col(...path.split('.'));
}

function defaultAlias(path: string): string | undefined {
  return path.includes('.') ? path.replaceAll('.', '_') : undefined;
}

/** Shown after `timestamp` when there is no `s:`, when the CTE's columns are known to hold them. */
const DEFAULT_COLUMNS = ['id', 'event_message'];

/**
 * Explicit `s:` paths; otherwise `timestamp`, the `shown` defaults and the paths the filters use
 * (never `*`).
 */
function selectColumns(rules: LqlRules, shown: readonly string[]): (Expr | [Expr, string])[] {
  const items: { path: string; alias: string | undefined }[] =
    rules.selects.length > 0
      ? rules.selects.map((s) => ({ path: s.path, alias: s.alias ?? defaultAlias(s.path) }))
      : ['timestamp', ...shown, ...rules.filters.map((f) => f.path)].map((path) => ({ path, alias: defaultAlias(path) }));
  const seen = new Set<string>();
  const columns: (Expr | [Expr, string])[] = [];
  for (const { path, alias } of items) {
    const name = alias ?? path;
    if (seen.has(name)) continue;
    seen.add(name);
    columns.push(alias === undefined ? pathColumn(path) : [pathColumn(path), alias]);
  }
  return columns;
}

function chartColumns(chart: ChartRule): { columns: [Expr, string][]; bucket: Expr } {
  const bucket = fn('timestamp_trunc', [col('timestamp'), datepart(chart.period)]);
  const field = pathColumn(chart.path);
  let aggregate: Expr;
  switch (chart.aggregate) {
    case 'count':
      aggregate = chart.path === 'timestamp' ? countStar() : fn('count', [field]);
      break;
    case 'countd':
      aggregate = fn('count', [field], { distinct: true });
      break;
    case 'avg':
    case 'sum':
    case 'max':
      aggregate = fn(chart.aggregate, [field]);
      break;
    case 'p50':
    case 'p95':
    case 'p99':
      aggregate = {
        kind: 'index',
        expr: fn('approx_quantiles', [field, lit(100)]),
        index: lit(Number(chart.aggregate.slice(1))),
        mode: 'offset',
      };
      break;
  }
  return {
    columns: [
      [bucket, 'timestamp'],
      [aggregate, chart.aggregate],
    ],
    bucket,
  };
}

// ---- filters -----------------------------------------------------------------------------------

type Bind = (value: string) => Expr;

function filterExpr(rule: FilterRule, bind: Bind, fieldType: VType | undefined): Expr {
  const column = pathColumn(rule.path);
  const isNullCheck = rule.operator === '=' && rule.value.type === 'null';
  // As Logflare: a record (map) matches no value; say so rather than match nothing.
  if (fieldType?.k === 'record' && !isNullCheck) {
    throw new QuarryError(
      'INVALID_QUERY',
      `Field \`${rule.path}\` is a record (a map of fields), which cannot be compared with a value: filter one of its fields, such as \`${rule.path}.${Object.keys(fieldType.fields)[0] ?? 'name'}\` (in LQL clause \`${rule.source.text}\`)`,
    );
  }
  const positive = positiveExpr(rule, column, bind, fieldType);
  if (!rule.negate) return positive;
  // NOT on a NULL field is NULL, which would drop the row: a negated filter keeps rows where the
  // field is missing, as Logflare does.
  if (isNullCheck) return not(positive);
  return or({ kind: 'isNull', expr: column, negated: false }, not(positive));
}

function positiveExpr(rule: FilterRule, column: Expr, bind: Bind, fieldType: VType | undefined): Expr {
  const scalar = scalarTarget(rule.path, fieldType);
  switch (rule.operator) {
    case 'string_contains':
      return bin('>', fn('strpos', [asString(column, fieldType), bind(rule.value)]), lit(0));
    case '~':
      return fn('regexp_contains', [asString(column, fieldType), bind(rule.value)]);
    case 'list_includes': {
      const element = fieldType?.k === 'list' ? scalarTarget(rule.path, fieldType.element) : undefined;
      return { kind: 'inUnnest', expr: valueExpr(rule.value, bind, element, rule), array: column, negated: false };
    }
    case 'list_includes_regexp': {
      const element = col('__lql_element');
      const elementType = fieldType?.k === 'list' ? fieldType.element : undefined;
      const match = fn('regexp_contains', [asString(element, elementType), bind(rule.value)]);
      const query = select({ columns: [lit(1)], from: unnest(column, '__lql_element'), where: match });
      return { kind: 'exists', query, negated: false };
    }
    case 'in':
      return { kind: 'inList', expr: column, list: rule.values.map((v) => valueExpr(v, bind, scalar, rule)), negated: false };
    case 'range':
      return rangeExpr(column, rule, bind, scalar);
    default: {
      if (rule.value.type === 'null') {
        if (rule.operator !== '=') throw new QuarryError('PARSE_ERROR', `NULL can only be compared with \`:\` (in LQL clause \`${rule.source.text}\`)`);
        return { kind: 'isNull', expr: column, negated: false };
      }
      if (rule.value.type === 'date') return dateComparison(column, rule.operator, rule.value.value, bind);
      return bin(rule.operator, column, valueExpr(rule.value, bind, scalar, rule));
    }
  }
}

/** A whole UTC day `d` compared with a timestamp: `= d` is the day, `> d` after it, and so on. */
function dateComparison(column: Expr, operator: '=' | '>' | '>=' | '<' | '<=', date: string, bind: Bind): Expr {
  const start = (): Expr => timestampParam(dayStart(date), bind);
  const end = (): Expr => timestampParam(nextDayStart(date), bind);
  switch (operator) {
    case '=':
      return and(bin('>=', column, start()), bin('<', column, end()))!;
    case '>':
      return bin('>=', column, end());
    case '>=':
      return bin('>=', column, start());
    case '<':
      return bin('<', column, start());
    case '<=':
      return bin('<', column, end());
  }
}

function rangeExpr(column: Expr, rule: Extract<FilterRule, { operator: 'range' }>, bind: Bind, scalar: CastType | undefined): Expr {
  const { from, to } = rule;
  if (from.type !== 'date' && to.type !== 'date') {
    return { kind: 'between', expr: column, low: valueExpr(from, bind, scalar, rule), high: valueExpr(to, bind, scalar, rule), negated: false };
  }
  const low = from.type === 'date' ? bin('>=', column, timestampParam(dayStart(from.value), bind)) : bin('>=', column, valueExpr(from, bind, scalar, rule));
  const high = to.type === 'date' ? bin('<', column, timestampParam(nextDayStart(to.value), bind)) : bin('<=', column, valueExpr(to, bind, scalar, rule));
  return and(low, high)!;
}

function timestampParam(value: string, bind: Bind): Expr {
  return { kind: 'cast', expr: bind(value), to: 'timestamp', safe: false };
}

/**
 * The type a value is cast to before comparing: the field's own type when known, `timestamp` for
 * the timestamp column; undefined means "from the value's form".
 */
function scalarTarget(path: string, fieldType: VType | undefined): CastType | undefined {
  if (path === 'timestamp') return 'timestamp';
  if (fieldType?.k !== 'scalar') return undefined;
  switch (fieldType.t) {
    case 'string':
      return 'string';
    case 'int':
      return 'int64';
    case 'float':
      return 'float64';
    case 'numeric':
      return 'numeric';
    case 'bool':
      return 'bool';
    case 'timestamp':
      return 'timestamp';
    case 'datetime':
      return 'datetime';
    case 'date':
      return 'date';
    case 'bytes':
    case 'interval':
      return undefined;
    default:
      return assertNever(fieldType.t);
  }
}

function valueExpr(value: FilterValue, bind: Bind, target: CastType | undefined, rule: FilterRule): Expr {
  if (value.type === 'null') return lit(null);
  const text = valueText(value);
  if (target !== undefined && value.type !== 'date') checkReadable(text, target, rule);
  const type = target ?? ownType(value);
  const bound = bind(text);
  return type === 'string' ? bound : { kind: 'cast', expr: bound, to: type, safe: false };
}

const typeNames: Record<CastType, string> = {
  string: 'STRING',
  int64: 'INT64',
  float64: 'FLOAT64',
  numeric: 'NUMERIC',
  bool: 'BOOL',
  timestamp: 'TIMESTAMP',
  datetime: 'DATETIME',
  date: 'DATE',
  bytes: 'BYTES',
};

const INT64_MAX = 9223372036854775807n;

/** Whether `text` reads as a value of `type` (as the cast it becomes would read it). */
function readable(text: string, type: CastType): boolean {
  const t = text.trim();
  switch (type) {
    case 'string':
    case 'bytes':
      return true;
    case 'int64': {
      if (!/^[+-]?\d+$/.test(t)) return false;
      const n = BigInt(t);
      return n <= INT64_MAX && n >= -INT64_MAX - 1n;
    }
    case 'float64':
    case 'numeric':
      return /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(t);
    case 'bool':
      return /^(true|false)$/i.test(t);
    case 'timestamp':
    case 'datetime':
      return parseTime(t) !== undefined;
    case 'date':
      return parseDate(t) !== undefined;
    default:
      return assertNever(type);
  }
}

/** A value the field's stored type cannot hold is the caller's mistake: 400, naming field, type and value. */
function checkReadable(text: string, type: CastType, rule: FilterRule): void {
  if (readable(text, type)) return;
  throw new QuarryError(
    'INVALID_QUERY',
    `Field \`${rule.path}\` is ${typeNames[type]}, and the filter value \`${text}\` is not a ${typeNames[type]} (in LQL clause \`${rule.source.text}\`)`,
  );
}

function ownType(value: Exclude<FilterValue, { type: 'null' }>): CastType {
  switch (value.type) {
    case 'string':
      return 'string';
    case 'number':
      // Integers beyond int64 compare as floats rather than fail to cast.
      return value.integer && value.text.replace('-', '').length <= 18 ? 'int64' : 'float64';
    case 'bool':
      return 'bool';
    case 'timestamp':
      return 'timestamp';
    case 'date':
      return 'date';
  }
}

function valueText(value: Exclude<FilterValue, { type: 'null' }>): string {
  switch (value.type) {
    case 'string':
    case 'timestamp':
    case 'date':
      return value.value;
    case 'number':
      return value.text;
    case 'bool':
      return String(value.value);
  }
}

/** Text operators on a field known not to be a string read its text form. */
function asString(column: Expr, fieldType: VType | undefined): Expr {
  if (fieldType === undefined || fieldType.k === 'unknown' || fieldType.k === 'missing' || (fieldType.k === 'scalar' && fieldType.t === 'string'))
    return column;
  return { kind: 'cast', expr: column, to: 'string', safe: false };
}
