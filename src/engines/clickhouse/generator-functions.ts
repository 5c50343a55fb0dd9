/**
 * How ClickHouse spells each allow-listed BigQuery function (the generator's TRANSFORMS table).
 * Every entry keeps BigQuery's meaning as the DuckDB engine does: 0-based offsets, regexp
 * "contains" (`match`), NULL on no match, timestamps in UTC with microseconds, weeks from Sunday,
 * DATETIME kept apart from TIMESTAMP so results encode differently. Every name of the registry
 * (src/sql/functions.ts) has an entry; a test checks it.
 */
import { QuarryError } from '../../errors.ts';
import type { DatePart, Expr, FuncCall } from '../../sql/ast.ts';
import { scalar, unknownType, type VType } from '../../sql/types.ts';
import { quoteString } from './client.ts';
import { asArray, type Typed } from './generator-scope.ts';

export interface FunctionContext {
  /** Generates an argument expression. */
  arg(e: Expr): Typed;
  /** Generates the call's window suffix: ` OVER (...)`, or ''. */
  over(call: FuncCall): string;
  /** The keys of an ORDER BY inside an aggregate (none: []). */
  innerOrder(call: FuncCall): { sql: string; desc: boolean }[];
}

type Transform = (call: FuncCall, ctx: FunctionContext) => Typed;

/** The longest list generate_timestamp_array may build. */
export const MAX_GENERATED_ELEMENTS = 100_000;
export const TOO_MANY_ELEMENTS = `generate_timestamp_array would make more than ${MAX_GENERATED_ELEMENTS} elements`;

const T = {
  string: scalar('string'),
  int: scalar('int'),
  float: scalar('float'),
  bool: scalar('bool'),
  timestamp: scalar('timestamp'),
  datetime: scalar('datetime'),
  date: scalar('date'),
};

const _TS = "DateTime64(6, 'UTC')";

/** A ClickHouse interval of `n` (SQL) units. */
export function intervalOf(n: string, unit: DatePart): string {
  const fn: Partial<Record<DatePart, string>> = {
    microsecond: 'toIntervalMicrosecond',
    millisecond: 'toIntervalMillisecond',
    second: 'toIntervalSecond',
    minute: 'toIntervalMinute',
    hour: 'toIntervalHour',
    day: 'toIntervalDay',
    week: 'toIntervalWeek',
    month: 'toIntervalMonth',
    quarter: 'toIntervalQuarter',
    year: 'toIntervalYear',
  };
  const f = fn[unit];
  if (f === undefined) throw new QuarryError('INVALID_QUERY', `INTERVAL does not support ${unit.toUpperCase()}`);
  return `${f}(toInt64(${n}))`;
}

/** String → TIMESTAMP (UTC), honouring an offset or `Z` in the text. */
export function stringToTimestamp(sql: string, safe = false): string {
  return `${safe ? 'parseDateTime64BestEffortOrNull' : 'parseDateTime64BestEffort'}(${sql}, 6, 'UTC')`;
}

/** Makes a TIMESTAMP from an argument that may be a string or a date. */
function asTimestamp(t: Typed): string {
  if (t.type.k === 'scalar' && t.type.t === 'string') return stringToTimestamp(t.sql);
  if (t.type.k === 'scalar' && t.type.t === 'date') return `toDateTime64(${t.sql}, 6, 'UTC')`;
  return t.sql;
}

function datePartArg(call: FuncCall, i: number): DatePart {
  const a = call.args[i];
  if (a?.kind !== 'datepart') {
    throw new QuarryError('INVALID_QUERY', `${call.name.toUpperCase()} expects a date part (e.g. MINUTE, HOUR, DAY) as argument ${i + 1}`);
  }
  return a.part;
}

function intervalArg(call: FuncCall, i: number, ctx: FunctionContext): string {
  const a = call.args[i];
  if (a?.kind !== 'interval') throw new QuarryError('INVALID_QUERY', `${call.name.toUpperCase()} expects an INTERVAL as argument ${i + 1}`);
  return ctx.arg(a).sql;
}

/** Truncates a DateTime64 to `p`, keeping DateTime64(6) (weeks start on Sunday, as in BigQuery). */
function truncate(sql: string, p: DatePart, tz = "'UTC'"): string {
  const utc = (x: string) => (tz === "'UTC'" ? x : `toTimeZone(${x}, 'UTC')`);
  switch (p) {
    case 'microsecond':
      return sql;
    case 'millisecond':
    case 'second':
    case 'minute':
    case 'hour':
      return utc(`toStartOfInterval(${sql}, ${intervalOf('1', p)}, ${tz})`);
    case 'day':
      return utc(`toDateTime64(toStartOfDay(${sql}, ${tz}), 6, ${tz})`);
    case 'week':
      return utc(`toDateTime64(toStartOfWeek(${sql}, 0, ${tz}), 6, ${tz})`);
    case 'month':
      return utc(`toDateTime64(toStartOfMonth(${sql}, ${tz}), 6, ${tz})`);
    case 'quarter':
      return utc(`toDateTime64(toStartOfQuarter(${sql}, ${tz}), 6, ${tz})`);
    case 'year':
      return utc(`toDateTime64(toStartOfYear(${sql}, ${tz}), 6, ${tz})`);
    default:
      throw new QuarryError('INVALID_QUERY', `Cannot truncate to ${p.toUpperCase()}`);
  }
}

/** Whole `p` units between two DateTime64 values, as BigQuery counts them (boundaries crossed). */
function diff(p: DatePart, a: string, b: string): string {
  switch (p) {
    case 'microsecond':
      return `(toUnixTimestamp64Micro(${a}) - toUnixTimestamp64Micro(${b}))`;
    case 'millisecond':
      return `intDiv(toUnixTimestamp64Micro(${a}) - toUnixTimestamp64Micro(${b}), 1000)`;
    case 'second':
    case 'minute':
    case 'hour':
    case 'day':
    case 'week':
    case 'month':
    case 'quarter':
    case 'year':
      return `dateDiff('${p}', ${b}, ${a}, 'UTC')`;
    default:
      throw new QuarryError('INVALID_QUERY', `Cannot count ${p.toUpperCase()} between two times`);
  }
}

function simple(name: string, type: VType | ((args: Typed[]) => VType)): Transform {
  return (call, ctx) => {
    const args = call.args.map(ctx.arg);
    return { sql: `${name}(${args.map((a) => a.sql).join(', ')})`, type: typeof type === 'function' ? type(args) : type };
  };
}

/** An aggregate: `name(DISTINCT? args) OVER (...)`; an ORDER BY inside it is refused (not kept by ClickHouse). */
function aggregate(name: string, type: VType | ((args: Typed[]) => VType), distinctName?: string): Transform {
  return (call, ctx) => {
    const args = call.args.map(ctx.arg);
    const fn = call.distinct ? (distinctName ?? `${name}Distinct`) : name;
    return {
      sql: `${fn}(${args.map((a) => a.sql).join(', ')})${ctx.over(call)}`,
      type: typeof type === 'function' ? type(args) : type,
    };
  };
}

const firstType = (args: Typed[]): VType => args[0]?.type ?? unknownType;

/** TIMESTAMP (UTC) → the wall-clock time in `tz`, as a DateTime64 whose digits are that time. */
function tzConvert(ts: string, tz: string): string {
  return `toDateTime64(toString(${ts}, ${tz}), 6, 'UTC')`;
}

/** Counts capture groups of a literal pattern, to choose what REGEXP_EXTRACT returns. */
function captureGroups(e: Expr | undefined): number {
  if (e?.kind !== 'literal' || e.type !== 'string') return 0;
  const m = e.value.match(/(?<!\\)\((?!\?)/g);
  return m ? m.length : 0;
}

export const functionTransforms: Readonly<Record<string, Transform>> = {
  regexp_contains: simple('match', T.bool),
  regexp_extract: (call, ctx) => {
    const [s, re] = call.args.map(ctx.arg);
    const group = captureGroups(call.args[1]) > 0;
    const found = group ? `regexpExtract(${s!.sql}, ${re!.sql}, 1)` : `regexpExtract(${s!.sql}, ${re!.sql}, 0)`;
    return { sql: `if(match(${s!.sql}, ${re!.sql}), ${found}, NULL)`, type: T.string };
  },
  regexp_replace: (call, ctx) => {
    const [s, re, rep] = call.args.map(ctx.arg);
    return { sql: `replaceRegexpAll(${s!.sql}, ${re!.sql}, ${rep!.sql})`, type: T.string };
  },
  starts_with: simple('startsWith', T.bool),
  ends_with: simple('endsWith', T.bool),
  lower: simple('lowerUTF8', T.string),
  upper: simple('upperUTF8', T.string),
  concat: (call, ctx) => {
    // BigQuery's CONCAT is NULL when any argument is; so is ClickHouse's on Nullable arguments.
    const args = call.args.map(ctx.arg);
    return { sql: `concat(${args.map((a) => (a.type.k === 'scalar' && a.type.t === 'string' ? a.sql : `toString(${a.sql})`)).join(', ')})`, type: T.string };
  },
  length: simple('lengthUTF8', T.int),
  strpos: simple('positionUTF8', T.int),
  substr: (call, ctx) => substring(call, ctx),
  substring: (call, ctx) => substring(call, ctx),
  split: (call, ctx) => {
    const [s, d] = call.args.map(ctx.arg);
    return { sql: `splitByString(${d ? d.sql : "','"}, ${s!.sql})`, type: { k: 'list', element: T.string } };
  },
  trim: trim('both'),
  ltrim: trim('leading'),
  rtrim: trim('trailing'),
  replace: simple('replaceAll', T.string),
  json_value: jsonValue,
  json_extract_scalar: jsonValue,

  ifnull: simple('ifNull', firstType),
  coalesce: simple('coalesce', firstType),
  nullif: simple('nullIf', firstType),
  if: (call, ctx) => {
    const [c, a, b] = call.args.map(ctx.arg);
    return { sql: `if(${c!.sql}, ${a!.sql}, ${b!.sql})`, type: a!.type };
  },
  greatest: simple('greatest', firstType),
  least: simple('least', firstType),

  abs: simple('abs', firstType),
  round: (call, ctx) => {
    const args = call.args.map(ctx.arg);
    // BigQuery rounds half away from zero; ClickHouse's round() rounds half to even on floats.
    const digits = args[1] ? args[1].sql : '0';
    return { sql: `(sign(toFloat64(${args[0]!.sql})) * floor(abs(toFloat64(${args[0]!.sql})) * pow(10, ${digits}) + 0.5) / pow(10, ${digits}))`, type: T.float };
  },
  ceil: (call, ctx) => ({ sql: `ceil(toFloat64(${ctx.arg(call.args[0]!).sql}))`, type: T.float }),
  floor: (call, ctx) => ({ sql: `floor(toFloat64(${ctx.arg(call.args[0]!).sql}))`, type: T.float }),
  mod: (call, ctx) => {
    const [a, b] = call.args.map(ctx.arg);
    return { sql: `modulo(${a!.sql}, ${b!.sql})`, type: T.int };
  },
  div: (call, ctx) => {
    const [a, b] = call.args.map(ctx.arg);
    return { sql: `toInt64(trunc(${a!.sql} / ${b!.sql}))`, type: T.int };
  },
  sqrt: simple('sqrt', T.float),
  pow: simple('pow', T.float),
  power: simple('pow', T.float),
  safe_divide: (call, ctx) => {
    const [a, b] = call.args.map(ctx.arg);
    return { sql: `if(${b!.sql} = 0, NULL, ${a!.sql} / ${b!.sql})`, type: T.float };
  },

  array_length: (call, ctx) => {
    const a = ctx.arg(call.args[0]!);
    if (a.type.k === 'record') return { sql: `if(empty(JSONAllPaths(${a.sql})), 0, 1)`, type: T.int };
    if (a.type.k === 'missing') return { sql: '0', type: T.int };
    // An absent list is NULL (length NULL), as on DuckDB.
    return { sql: `if(${a.sql} IS NULL, NULL, length(${asArray(a)}))`, type: T.int };
  },
  generate_timestamp_array: (call, ctx) => {
    const [start, end] = call.args.slice(0, 2).map(ctx.arg);
    const stepArg = call.args[2];
    if (stepArg?.kind !== 'interval') throw new QuarryError('INVALID_QUERY', 'GENERATE_TIMESTAMP_ARRAY expects an INTERVAL as argument 3');
    const [s, e] = [asTimestamp(start!), asTimestamp(end!)];
    const n = ctx.arg(stepArg.value).sql;
    const stepMicros = intervalMicros(n, stepArg.unit);
    const count = `intDiv(toUnixTimestamp64Micro(${e}) - toUnixTimestamp64Micro(${s}), ${stepMicros})`;
    // Refused before building, like the DuckDB engine: no list longer than MAX_GENERATED_ELEMENTS.
    return {
      sql: `arrayMap(i -> fromUnixTimestamp64Micro(toUnixTimestamp64Micro(${s}) + i * ${stepMicros}, 'UTC'), range(toUInt64(greatest(${count} + 1, 0) + throwIf(${count} > ${MAX_GENERATED_ELEMENTS}, '${TOO_MANY_ELEMENTS}'))))`,
      type: { k: 'list', element: T.timestamp },
    };
  },

  current_timestamp: () => ({ sql: "now64(6, 'UTC')", type: T.timestamp }),
  current_datetime: (call, ctx) => {
    const tz = call.args[0] ? ctx.arg(call.args[0]).sql : "'UTC'";
    return { sql: tzConvert("now64(6, 'UTC')", tz), type: T.datetime };
  },
  current_date: (call, ctx) => {
    const tz = call.args[0] ? ctx.arg(call.args[0]).sql : "'UTC'";
    return { sql: `toDate32(now64(6, 'UTC'), ${tz})`, type: T.date };
  },
  timestamp_trunc: (call, ctx) => {
    const ts = ctx.arg(call.args[0]!);
    const p = datePartArg(call, 1);
    if (call.args[2]) return { sql: truncate(asTimestamp(ts), p, ctx.arg(call.args[2]).sql), type: T.timestamp };
    return { sql: truncate(asTimestamp(ts), p), type: T.timestamp };
  },
  datetime_trunc: (call, ctx) => ({ sql: truncate(asTimestamp(ctx.arg(call.args[0]!)), datePartArg(call, 1)), type: T.datetime }),
  date_trunc: (call, ctx) => {
    const d = ctx.arg(call.args[0]!);
    const sql = truncate(asTimestamp(d), datePartArg(call, 1));
    return d.type.k === 'scalar' && d.type.t !== 'date' && d.type.t !== 'string' ? { sql, type: d.type } : { sql: `toDate32(${sql})`, type: T.date };
  },
  timestamp_sub: (call, ctx) => ({ sql: `(${asTimestamp(ctx.arg(call.args[0]!))} - ${intervalArg(call, 1, ctx)})`, type: T.timestamp }),
  timestamp_add: (call, ctx) => ({ sql: `(${asTimestamp(ctx.arg(call.args[0]!))} + ${intervalArg(call, 1, ctx)})`, type: T.timestamp }),
  datetime_sub: (call, ctx) => ({ sql: `(${asTimestamp(ctx.arg(call.args[0]!))} - ${intervalArg(call, 1, ctx)})`, type: T.datetime }),
  datetime_add: (call, ctx) => ({ sql: `(${asTimestamp(ctx.arg(call.args[0]!))} + ${intervalArg(call, 1, ctx)})`, type: T.datetime }),
  date_sub: (call, ctx) => ({ sql: `toDate32(${ctx.arg(call.args[0]!).sql} - ${intervalArg(call, 1, ctx)})`, type: T.date }),
  date_add: (call, ctx) => ({ sql: `toDate32(${ctx.arg(call.args[0]!).sql} + ${intervalArg(call, 1, ctx)})`, type: T.date }),
  timestamp_diff: (call, ctx) => {
    const [a, b] = call.args.slice(0, 2).map(ctx.arg);
    return { sql: diff(datePartArg(call, 2), asTimestamp(a!), asTimestamp(b!)), type: T.int };
  },
  datetime_diff: (call, ctx) => {
    const [a, b] = call.args.slice(0, 2).map(ctx.arg);
    return { sql: diff(datePartArg(call, 2), asTimestamp(a!), asTimestamp(b!)), type: T.int };
  },
  date_diff: (call, ctx) => {
    const [a, b] = call.args.slice(0, 2).map(ctx.arg);
    return { sql: `dateDiff('${datePartArg(call, 2)}', ${b!.sql}, ${a!.sql})`, type: T.int };
  },
  format_timestamp: (call, ctx) => {
    const [, ts, tz] = call.args.map(ctx.arg);
    const f = call.args[0];
    if (f?.kind !== 'literal' || f.type !== 'string') throw new QuarryError('INVALID_QUERY', 'FORMAT_TIMESTAMP on the ClickHouse engine needs a constant format');
    const value = tz ? tzConvert(asTimestamp(ts!), tz.sql) : asTimestamp(ts!);
    // strftime's %M is minutes; ClickHouse's (MySQL-style) is %i.
    return { sql: `formatDateTime(${value}, ${quoteString(f.value.replaceAll('%M', '%i'))})`, type: T.string };
  },
  datetime: (call, ctx) => {
    const [x, tz] = call.args.map(ctx.arg);
    if (tz) return { sql: tzConvert(asTimestamp(x!), tz.sql), type: T.datetime };
    return { sql: asTimestamp(x!), type: T.datetime };
  },
  timestamp: (call, ctx) => {
    const [x, tz] = call.args.map(ctx.arg);
    if (tz) {
      // The text (or DATETIME) is wall-clock time in `tz`.
      const text = x!.type.k === 'scalar' && x!.type.t === 'string' ? x!.sql : `toString(${x!.sql})`;
      return { sql: `toDateTime64(parseDateTime64BestEffort(${text}, 6, ${tz.sql}), 6, 'UTC')`, type: T.timestamp };
    }
    return { sql: asTimestamp(x!), type: T.timestamp };
  },
  date: (call, ctx) => {
    const [x, tz] = call.args.map(ctx.arg);
    if (tz) return { sql: `toDate32(${asTimestamp(x!)}, ${tz.sql})`, type: T.date };
    if (x!.type.k === 'scalar' && x!.type.t === 'string') return { sql: `toDate32(${x!.sql})`, type: T.date };
    return { sql: `toDate32(${x!.sql})`, type: T.date };
  },
  unix_micros: (call, ctx) => ({ sql: `toUnixTimestamp64Micro(${asTimestamp(ctx.arg(call.args[0]!))})`, type: T.int }),
  unix_millis: (call, ctx) => ({ sql: `intDiv(toUnixTimestamp64Micro(${asTimestamp(ctx.arg(call.args[0]!))}), 1000)`, type: T.int }),
  unix_seconds: (call, ctx) => ({ sql: `intDiv(toUnixTimestamp64Micro(${asTimestamp(ctx.arg(call.args[0]!))}), 1000000)`, type: T.int }),
  timestamp_micros: (call, ctx) => ({ sql: `fromUnixTimestamp64Micro(toInt64(${ctx.arg(call.args[0]!).sql}), 'UTC')`, type: T.timestamp }),
  timestamp_millis: (call, ctx) => ({ sql: `fromUnixTimestamp64Micro(toInt64(${ctx.arg(call.args[0]!).sql}) * 1000, 'UTC')`, type: T.timestamp }),
  timestamp_seconds: (call, ctx) => ({ sql: `fromUnixTimestamp64Micro(toInt64(${ctx.arg(call.args[0]!).sql}) * 1000000, 'UTC')`, type: T.timestamp }),

  count: (call, ctx) => {
    if (call.star) return { sql: `count()${ctx.over(call)}`, type: T.int };
    const x = ctx.arg(call.args[0]!);
    return { sql: `${call.distinct ? 'countDistinct' : 'count'}(${x.sql})${ctx.over(call)}`, type: T.int };
  },
  countif: (call, ctx) => ({ sql: `countIf(ifNull(${ctx.arg(call.args[0]!).sql}, false))${ctx.over(call)}`, type: T.int }),
  sum: aggregate('sum', (args) => (args[0]?.type.k === 'scalar' && args[0].type.t === 'int' ? T.int : T.float)),
  avg: aggregate('avg', T.float),
  min: aggregate('min', firstType, 'min'),
  max: aggregate('max', firstType, 'max'),
  any_value: aggregate('any', firstType, 'any'),
  logical_or: (call, ctx) => ({ sql: `toBool(max(${ctx.arg(call.args[0]!).sql}))${ctx.over(call)}`, type: T.bool }),
  logical_and: (call, ctx) => ({ sql: `toBool(min(${ctx.arg(call.args[0]!).sql}))${ctx.over(call)}`, type: T.bool }),
  stddev: aggregate('stddevSamp', T.float),
  variance: aggregate('varSamp', T.float),
  approx_count_distinct: (call, ctx) => ({ sql: `countDistinct(${ctx.arg(call.args[0]!).sql})${ctx.over(call)}`, type: T.int }),
  string_agg: (call, ctx) => {
    const [x, sep] = call.args.map(ctx.arg);
    const values = `arrayFilter(v -> v IS NOT NULL, ${collect(call, ctx, x!.sql)})`;
    return { sql: `nullIf(arrayStringConcat(${values}, ${sep ? sep.sql : "','"}), '')${ctx.over(call)}`, type: T.string };
  },
  array_agg: (call, ctx) => {
    const x = ctx.arg(call.args[0]!);
    let sql = collect(call, ctx, x.sql);
    if (call.ignoreNulls) sql = `arrayFilter(v -> v IS NOT NULL, ${sql})`;
    sql += ctx.over(call);
    if (call.limit) sql = `arraySlice(${sql}, 1, ${ctx.arg(call.limit).sql})`;
    return { sql, type: { k: 'list', element: x.type } };
  },
  approx_quantiles: (call, ctx) => {
    const x = ctx.arg(call.args[0]!);
    const n = call.args[1];
    if (n?.kind !== 'literal' || n.type !== 'number' || !/^\d+$/.test(n.value) || Number(n.value) < 1 || Number(n.value) > 1000) {
      throw new QuarryError('INVALID_QUERY', 'APPROX_QUANTILES needs a constant number of quantiles between 1 and 1000');
    }
    const count = Number(n.value);
    const points = Array.from({ length: count + 1 }, (_, i) => String(i / count)).join(', ');
    // Discrete quantiles: like BigQuery, every value returned is one of the inputs.
    return { sql: `quantilesExactLow(${points})(${x.sql})${ctx.over(call)}`, type: { k: 'list', element: x.type } };
  },

  row_number: (call, ctx) => ({ sql: `row_number()${ctx.over(call)}`, type: T.int }),
  rank: (call, ctx) => ({ sql: `rank()${ctx.over(call)}`, type: T.int }),
  dense_rank: (call, ctx) => ({ sql: `dense_rank()${ctx.over(call)}`, type: T.int }),
  percent_rank: (call, ctx) => ({ sql: `percent_rank()${ctx.over(call)}`, type: T.float }),
  cume_dist: (call, ctx) => ({ sql: `cume_dist()${ctx.over(call)}`, type: T.float }),
  ntile: (call, ctx) => ({ sql: `ntile(${ctx.arg(call.args[0]!).sql})${ctx.over(call)}`, type: T.int }),
  lag: lagLead('lagInFrame'),
  lead: lagLead('leadInFrame'),
  first_value: (call, ctx) => {
    const x = ctx.arg(call.args[0]!);
    return { sql: `first_value(${x.sql})${call.ignoreNulls ? '' : ' RESPECT NULLS'}${ctx.over(call)}`, type: x.type };
  },
  last_value: (call, ctx) => {
    const x = ctx.arg(call.args[0]!);
    return { sql: `last_value(${x.sql})${call.ignoreNulls ? '' : ' RESPECT NULLS'}${ctx.over(call)}`, type: x.type };
  },
};

/**
 * The values of an aggregate as an array, NULLs kept (groupArray skips NULL values, so each value
 * travels in a tuple), DISTINCT and `ORDER BY` inside the call applied.
 */
function collect(call: FuncCall, ctx: FunctionContext, x: string): string {
  const keys = ctx.innerOrder(call);
  if (call.distinct && keys.length === 0) return `arrayMap(t -> t.1, groupUniqArray(tuple(${x})))`;
  if (keys.length === 0) return `arrayMap(t -> t.1, groupArray(tuple(${x})))`;
  const tuple = `tuple(${[x, ...keys.map((k) => k.sql)].join(', ')})`;
  if (keys.some((k) => k.desc !== keys[0]!.desc)) {
    throw new QuarryError('QUERY_NOT_ALLOWED', `${call.name.toUpperCase()} ordered both ascending and descending is not supported on the ClickHouse engine`);
  }
  const sort = keys[0]!.desc ? 'arrayReverseSort' : 'arraySort';
  const sorted = `${sort}(t -> tuple(${keys.map((_, i) => `t.${i + 2}`).join(', ')}), ${call.distinct ? 'groupUniqArray' : 'groupArray'}(${tuple}))`;
  return `arrayMap(t -> t.1, ${sorted})`;
}

/** lag/lead over the whole partition, as in BigQuery (ClickHouse's *InFrame honour the frame). */
function lagLead(name: string): Transform {
  return (call, ctx) => {
    const args = call.args.map(ctx.arg);
    const over = ctx.over(call);
    const frame = over.replace(/\)$/, ' ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)');
    const offset = args[1] ? args[1].sql : '1';
    const fallback = args[2] ? args[2].sql : 'NULL';
    return { sql: `${name}(toNullable(${args[0]!.sql}), ${offset}, ${fallback})${frame}`, type: args[0]!.type };
  };
}

function substring(call: FuncCall, ctx: FunctionContext): Typed {
  const [s, start, len] = call.args.map(ctx.arg);
  // BigQuery: a start of 0 is 1; negative counts from the end.
  const from = `if(${start!.sql} = 0, 1, ${start!.sql})`;
  return { sql: len ? `substringUTF8(${s!.sql}, ${from}, ${len.sql})` : `substringUTF8(${s!.sql}, ${from})`, type: T.string };
}

function trim(side: 'both' | 'leading' | 'trailing'): Transform {
  return (call, ctx) => {
    const [s, chars] = call.args.map(ctx.arg);
    if (!chars) {
      const fn = { both: 'trimBoth', leading: 'trimLeft', trailing: 'trimRight' }[side];
      return { sql: `${fn}(${s!.sql})`, type: T.string };
    }
    return { sql: `trim(${side.toUpperCase()} ${chars.sql} FROM ${s!.sql})`, type: T.string };
  };
}

function jsonValue(call: FuncCall, ctx: FunctionContext): Typed {
  const [doc, path] = call.args.map(ctx.arg);
  const p = call.args[1];
  if (p?.kind !== 'literal' || p.type !== 'string' || !/^\$(\.[A-Za-z_][A-Za-z0-9_]*|\[\d+\])*$/.test(p.value)) {
    throw new QuarryError('INVALID_QUERY', `${call.name.toUpperCase()} on the ClickHouse engine needs a constant path like '$.a.b' or '$.a[0]'`);
  }
  void path;
  const keys = [...p.value.matchAll(/\.([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]/g)].map((m) => (m[1] !== undefined ? `'${m[1]}'` : String(Number(m[2]) + 1)));
  const args = [doc!.sql, ...keys].join(', ');
  // JSON_VALUE gives scalars only: an object or array reads NULL.
  return { sql: `if(JSONType(${args}) IN ('Object', 'Array', 'Null'), NULL, if(JSONType(${args}) = 'String', JSONExtractString(${args}), JSONExtractRaw(${args})))`, type: T.string };
}

/** Microseconds in `n` units of a fixed-length part. */
function intervalMicros(n: string, unit: DatePart): string {
  const per: Partial<Record<DatePart, number>> = {
    microsecond: 1,
    millisecond: 1000,
    second: 1_000_000,
    minute: 60_000_000,
    hour: 3_600_000_000,
    day: 86_400_000_000,
    week: 604_800_000_000,
  };
  const m = per[unit];
  if (m === undefined) throw new QuarryError('INVALID_QUERY', `GENERATE_TIMESTAMP_ARRAY does not support a step in ${unit.toUpperCase()}`);
  return `(toInt64(${n}) * ${m})`;
}
