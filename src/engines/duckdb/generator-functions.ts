/**
 * How DuckDB spells each allow-listed BigQuery function (the generator's TRANSFORMS table).
 * Every entry keeps BigQuery's semantics: 0-based offsets, regexp "contains", NULL on no match,
 * timestamps in UTC, DATETIME kept apart from TIMESTAMP so results encode differently.
 */
import { QuarryError } from '../../errors.ts';
import type { DatePart, Expr, FuncCall } from '../../sql/ast.ts';
import { scalar, unknownType, type VType } from '../../sql/types.ts';
import type { Typed } from './generator-scope.ts';

export interface FunctionContext {
  /** Generates an argument expression. */
  arg(e: Expr): Typed;
  /** Generates the call's aggregate/window suffix: ` FILTER ...`, ` OVER (...)`. */
  over(call: FuncCall): string;
  /** Generates `ORDER BY ...` inside an aggregate, or ''. */
  innerOrder(call: FuncCall): string;
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

/** DuckDB date_trunc / date_diff part names. */
export function duckPart(part: DatePart): string {
  switch (part) {
    case 'dayofweek':
      return 'dow';
    case 'dayofyear':
      return 'doy';
    default:
      return part;
  }
}

/** A DuckDB INTERVAL of `n` (SQL) units. */
export function intervalOf(n: string, unit: DatePart): string {
  switch (unit) {
    case 'microsecond':
      return `to_microseconds(CAST(${n} AS BIGINT))`;
    case 'millisecond':
      return `to_milliseconds(CAST(${n} AS BIGINT))`;
    case 'second':
      return `to_seconds(CAST(${n} AS BIGINT))`;
    case 'minute':
      return `to_minutes(CAST(${n} AS BIGINT))`;
    case 'hour':
      return `to_hours(CAST(${n} AS BIGINT))`;
    case 'day':
      return `to_days(CAST(${n} AS INTEGER))`;
    case 'week':
      return `to_weeks(CAST(${n} AS INTEGER))`;
    case 'month':
      return `to_months(CAST(${n} AS INTEGER))`;
    case 'quarter':
      return `to_months(CAST(${n} AS INTEGER) * 3)`;
    case 'year':
      return `to_years(CAST(${n} AS INTEGER))`;
    default:
      throw new QuarryError('INVALID_QUERY', `INTERVAL does not support ${part(unit)}`);
  }
}

function part(p: DatePart): string {
  return p.toUpperCase();
}

/** String → TIMESTAMP (UTC), honouring an offset or `Z` in the text. */
export function stringToTimestamp(sql: string, safe = false): string {
  const c = safe ? 'TRY_CAST' : 'CAST';
  return `${c}(${c}(${sql} AS TIMESTAMPTZ) AS TIMESTAMP)`;
}

/** Makes a TIMESTAMP from an argument that may be a string. */
function asTimestamp(t: Typed): string {
  if (t.type.k === 'scalar' && (t.type.t === 'string' || t.type.t === 'date')) return stringToTimestamp(t.sql);
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

function truncate(sql: string, p: DatePart): string {
  // BigQuery weeks start on Sunday; DuckDB's on Monday.
  if (p === 'week') return `(date_trunc('week', ${sql} + INTERVAL 1 DAY) - INTERVAL 1 DAY)`;
  if (p === 'dayofweek' || p === 'dayofyear') throw new QuarryError('INVALID_QUERY', `Cannot truncate to ${part(p)}`);
  return `date_trunc('${duckPart(p)}', ${sql})`;
}

function simple(name: string, type: VType | ((args: Typed[]) => VType)): Transform {
  return (call, ctx) => {
    const args = call.args.map(ctx.arg);
    return { sql: `${name}(${args.map((a) => a.sql).join(', ')})`, type: typeof type === 'function' ? type(args) : type };
  };
}

function aggregate(name: string, type: VType | ((args: Typed[]) => VType)): Transform {
  return (call, ctx) => {
    const args = call.args.map(ctx.arg);
    const distinct = call.distinct ? 'DISTINCT ' : '';
    return {
      sql: `${name}(${distinct}${args.map((a) => a.sql).join(', ')}${ctx.innerOrder(call)})${ctx.over(call)}`,
      type: typeof type === 'function' ? type(args) : type,
    };
  };
}

const firstType = (args: Typed[]): VType => args[0]?.type ?? unknownType;

function tzConvert(ts: string, tz: string): string {
  // TIMESTAMP (UTC) → wall-clock time in `tz`.
  return `timezone(${tz}, CAST(${ts} AS TIMESTAMPTZ))`;
}

/** Counts capture groups of a literal pattern, to choose what REGEXP_EXTRACT returns. */
function captureGroups(e: Expr | undefined): number {
  if (e?.kind !== 'literal' || e.type !== 'string') return 0;
  const m = e.value.match(/(?<!\\)\((?!\?)/g);
  return m ? m.length : 0;
}

export const functionTransforms: Readonly<Record<string, Transform>> = {
  regexp_contains: simple('regexp_matches', T.bool),
  regexp_extract: (call, ctx) => {
    const [s, re] = call.args.map(ctx.arg);
    const group = captureGroups(call.args[1]) > 0 ? 1 : 0;
    return { sql: `CASE WHEN regexp_matches(${s!.sql}, ${re!.sql}) THEN regexp_extract(${s!.sql}, ${re!.sql}, ${group}) END`, type: T.string };
  },
  regexp_replace: (call, ctx) => {
    const [s, re, rep] = call.args.map(ctx.arg);
    return { sql: `regexp_replace(${s!.sql}, ${re!.sql}, ${rep!.sql}, 'g')`, type: T.string };
  },
  starts_with: simple('starts_with', T.bool),
  ends_with: simple('ends_with', T.bool),
  lower: simple('lower', T.string),
  upper: simple('upper', T.string),
  concat: (call, ctx) => {
    // BigQuery's CONCAT is NULL when any argument is; `||` behaves the same.
    const args = call.args.map(ctx.arg);
    return { sql: `(${args.map((a) => `CAST(${a.sql} AS VARCHAR)`).join(' || ')})`, type: T.string };
  },
  length: simple('length', T.int),
  strpos: simple('strpos', T.int),
  substr: simple('substring', T.string),
  substring: simple('substring', T.string),
  split: (call, ctx) => {
    const [s, d] = call.args.map(ctx.arg);
    return { sql: `string_split(${s!.sql}, ${d ? d.sql : "','"})`, type: { k: 'list', element: T.string } };
  },
  trim: simple('trim', T.string),
  ltrim: simple('ltrim', T.string),
  rtrim: simple('rtrim', T.string),
  replace: simple('replace', T.string),
  json_value: simple('json_extract_string', T.string),
  json_extract_scalar: simple('json_extract_string', T.string),

  ifnull: simple('coalesce', firstType),
  coalesce: simple('coalesce', firstType),
  nullif: simple('nullif', firstType),
  if: (call, ctx) => {
    const [c, a, b] = call.args.map(ctx.arg);
    return { sql: `CASE WHEN ${c!.sql} THEN ${a!.sql} ELSE ${b!.sql} END`, type: a!.type };
  },
  greatest: simple('greatest', firstType),
  least: simple('least', firstType),

  abs: simple('abs', firstType),
  round: (call, ctx) => {
    const args = call.args.map(ctx.arg);
    return { sql: `round(CAST(${args[0]!.sql} AS DOUBLE)${args[1] ? `, ${args[1].sql}` : ''})`, type: T.float };
  },
  ceil: simple('ceil', T.float),
  floor: simple('floor', T.float),
  mod: (call, ctx) => {
    const [a, b] = call.args.map(ctx.arg);
    return { sql: `(${a!.sql} % ${b!.sql})`, type: T.int };
  },
  div: (call, ctx) => {
    const [a, b] = call.args.map(ctx.arg);
    return { sql: `CAST(trunc(${a!.sql} / ${b!.sql}) AS BIGINT)`, type: T.int };
  },
  sqrt: simple('sqrt', T.float),
  pow: simple('pow', T.float),
  power: simple('pow', T.float),
  safe_divide: (call, ctx) => {
    const [a, b] = call.args.map(ctx.arg);
    return { sql: `CASE WHEN ${b!.sql} = 0 THEN NULL ELSE ${a!.sql} / ${b!.sql} END`, type: T.float };
  },

  array_length: (call, ctx) => {
    const a = ctx.arg(call.args[0]!);
    // A record is BigQuery's one-element repeated record.
    if (a.type.k === 'record' || a.type.k === 'missing') return { sql: `CASE WHEN ${a.sql} IS NULL THEN 0 ELSE 1 END`, type: T.int };
    return { sql: `len(${a.sql})`, type: T.int };
  },
  generate_timestamp_array: (call, ctx) => {
    const [start, end] = call.args.slice(0, 2).map(ctx.arg);
    const step = intervalArg(call, 2, ctx);
    const [s, e] = [asTimestamp(start!), asTimestamp(end!)];
    // DuckDB builds the whole list inside one call, which an interrupt cannot stop: refuse a list
    // longer than MAX_GENERATED_ELEMENTS before building it.
    const count = `((epoch_us(${e}) - epoch_us(${s})) // epoch_us(${step}))`;
    return {
      sql: `(CASE WHEN ${count} > ${MAX_GENERATED_ELEMENTS} THEN error('${TOO_MANY_ELEMENTS}') ELSE generate_series(${s}, ${e}, ${step}) END)`,
      type: { k: 'list', element: T.timestamp },
    };
  },

  current_timestamp: () => ({ sql: 'CAST(get_current_timestamp() AS TIMESTAMP)', type: T.timestamp }),
  current_datetime: (call, ctx) => {
    const tz = call.args[0] ? ctx.arg(call.args[0]).sql : "'UTC'";
    return { sql: tzConvert('get_current_timestamp()', tz), type: T.datetime };
  },
  current_date: (call, ctx) => {
    const tz = call.args[0] ? ctx.arg(call.args[0]).sql : "'UTC'";
    return { sql: `CAST(${tzConvert('get_current_timestamp()', tz)} AS DATE)`, type: T.date };
  },
  timestamp_trunc: (call, ctx) => {
    const ts = ctx.arg(call.args[0]!);
    const p = datePartArg(call, 1);
    if (call.args[2]) {
      // Truncate in the given zone, then back to UTC.
      const tz = ctx.arg(call.args[2]).sql;
      return { sql: `CAST(timezone(${tz}, ${truncate(tzConvert(asTimestamp(ts), tz), p)}) AS TIMESTAMP)`, type: T.timestamp };
    }
    return { sql: truncate(asTimestamp(ts), p), type: T.timestamp };
  },
  datetime_trunc: (call, ctx) => ({ sql: truncate(ctx.arg(call.args[0]!).sql, datePartArg(call, 1)), type: T.datetime }),
  date_trunc: (call, ctx) => {
    const d = ctx.arg(call.args[0]!);
    const sql = truncate(d.sql, datePartArg(call, 1));
    return d.type.k === 'scalar' && d.type.t !== 'date' ? { sql, type: d.type } : { sql: `CAST(${sql} AS DATE)`, type: T.date };
  },
  timestamp_sub: (call, ctx) => ({ sql: `(${asTimestamp(ctx.arg(call.args[0]!))} - ${intervalArg(call, 1, ctx)})`, type: T.timestamp }),
  timestamp_add: (call, ctx) => ({ sql: `(${asTimestamp(ctx.arg(call.args[0]!))} + ${intervalArg(call, 1, ctx)})`, type: T.timestamp }),
  datetime_sub: (call, ctx) => ({ sql: `(${ctx.arg(call.args[0]!).sql} - ${intervalArg(call, 1, ctx)})`, type: T.datetime }),
  datetime_add: (call, ctx) => ({ sql: `(${ctx.arg(call.args[0]!).sql} + ${intervalArg(call, 1, ctx)})`, type: T.datetime }),
  date_sub: (call, ctx) => ({ sql: `CAST(${ctx.arg(call.args[0]!).sql} - ${intervalArg(call, 1, ctx)} AS DATE)`, type: T.date }),
  date_add: (call, ctx) => ({ sql: `CAST(${ctx.arg(call.args[0]!).sql} + ${intervalArg(call, 1, ctx)} AS DATE)`, type: T.date }),
  timestamp_diff: (call, ctx) => {
    const [a, b] = call.args.slice(0, 2).map(ctx.arg);
    return { sql: `date_sub('${duckPart(datePartArg(call, 2))}', ${asTimestamp(b!)}, ${asTimestamp(a!)})`, type: T.int };
  },
  datetime_diff: (call, ctx) => {
    const [a, b] = call.args.slice(0, 2).map(ctx.arg);
    return { sql: `date_diff('${duckPart(datePartArg(call, 2))}', ${b!.sql}, ${a!.sql})`, type: T.int };
  },
  date_diff: (call, ctx) => {
    const [a, b] = call.args.slice(0, 2).map(ctx.arg);
    return { sql: `date_diff('${duckPart(datePartArg(call, 2))}', ${b!.sql}, ${a!.sql})`, type: T.int };
  },
  format_timestamp: (call, ctx) => {
    const [fmt, ts, tz] = call.args.map(ctx.arg);
    const value = tz ? tzConvert(asTimestamp(ts!), tz.sql) : asTimestamp(ts!);
    return { sql: `strftime(${value}, ${fmt!.sql})`, type: T.string };
  },
  datetime: (call, ctx) => {
    const [x, tz] = call.args.map(ctx.arg);
    if (tz) return { sql: tzConvert(asTimestamp(x!), tz.sql), type: T.datetime };
    if (x!.type.k === 'scalar' && x!.type.t === 'string') return { sql: `CAST(${x!.sql} AS TIMESTAMP)`, type: T.datetime };
    return { sql: `CAST(${x!.sql} AS TIMESTAMP)`, type: T.datetime };
  },
  timestamp: (call, ctx) => {
    const [x, tz] = call.args.map(ctx.arg);
    if (tz) return { sql: `CAST(timezone(${tz.sql}, CAST(${x!.sql} AS TIMESTAMP)) AS TIMESTAMP)`, type: T.timestamp };
    if (x!.type.k === 'scalar' && x!.type.t === 'timestamp') return x!;
    if (x!.type.k === 'scalar' && (x!.type.t === 'datetime' || x!.type.t === 'date')) return { sql: `CAST(${x!.sql} AS TIMESTAMP)`, type: T.timestamp };
    return { sql: stringToTimestamp(x!.sql), type: T.timestamp };
  },
  date: (call, ctx) => {
    const [x, tz] = call.args.map(ctx.arg);
    const base = tz ? tzConvert(asTimestamp(x!), tz.sql) : x!.sql;
    return { sql: `CAST(${base} AS DATE)`, type: T.date };
  },
  unix_micros: (call, ctx) => ({ sql: `epoch_us(${asTimestamp(ctx.arg(call.args[0]!))})`, type: T.int }),
  unix_millis: (call, ctx) => ({ sql: `epoch_ms(${asTimestamp(ctx.arg(call.args[0]!))})`, type: T.int }),
  unix_seconds: (call, ctx) => ({ sql: `CAST(floor(epoch_us(${asTimestamp(ctx.arg(call.args[0]!))}) / 1000000) AS BIGINT)`, type: T.int }),
  timestamp_micros: (call, ctx) => ({ sql: `make_timestamp(CAST(${ctx.arg(call.args[0]!).sql} AS BIGINT))`, type: T.timestamp }),
  timestamp_millis: (call, ctx) => ({ sql: `make_timestamp(CAST(${ctx.arg(call.args[0]!).sql} AS BIGINT) * 1000)`, type: T.timestamp }),
  timestamp_seconds: (call, ctx) => ({ sql: `make_timestamp(CAST(${ctx.arg(call.args[0]!).sql} AS BIGINT) * 1000000)`, type: T.timestamp }),

  count: (call, ctx) => {
    if (call.star) return { sql: `count(*)${ctx.over(call)}`, type: T.int };
    return aggregate('count', T.int)(call, ctx);
  },
  countif: aggregate('count_if', T.int),
  sum: aggregate('sum', (args) => (args[0]?.type.k === 'scalar' && args[0].type.t === 'int' ? T.int : T.float)),
  avg: aggregate('avg', T.float),
  min: aggregate('min', firstType),
  max: aggregate('max', firstType),
  any_value: aggregate('any_value', firstType),
  logical_or: aggregate('bool_or', T.bool),
  logical_and: aggregate('bool_and', T.bool),
  stddev: aggregate('stddev_samp', T.float),
  variance: aggregate('var_samp', T.float),
  approx_count_distinct: (call, ctx) => ({ sql: `count(DISTINCT ${ctx.arg(call.args[0]!).sql})${ctx.over(call)}`, type: T.int }),
  string_agg: (call, ctx) => {
    const [x, sep] = call.args.map(ctx.arg);
    const distinct = call.distinct ? 'DISTINCT ' : '';
    const sql = `string_agg(${distinct}${x!.sql}, ${sep ? sep.sql : "','"}${ctx.innerOrder(call)})${ctx.over(call)}`;
    return { sql, type: T.string };
  },
  array_agg: (call, ctx) => {
    const x = ctx.arg(call.args[0]!);
    const distinct = call.distinct ? 'DISTINCT ' : '';
    const filter = call.ignoreNulls ? ` FILTER (WHERE ${x.sql} IS NOT NULL)` : '';
    let sql = `array_agg(${distinct}${x.sql}${ctx.innerOrder(call)})${filter}${ctx.over(call)}`;
    if (call.limit) sql = `list_slice(${sql}, 1, ${ctx.arg(call.limit).sql})`;
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
    return { sql: `quantile_disc(${x.sql}, [${points}])${ctx.over(call)}`, type: { k: 'list', element: x.type } };
  },

  row_number: (call, ctx) => ({ sql: `row_number()${ctx.over(call)}`, type: T.int }),
  rank: (call, ctx) => ({ sql: `rank()${ctx.over(call)}`, type: T.int }),
  dense_rank: (call, ctx) => ({ sql: `dense_rank()${ctx.over(call)}`, type: T.int }),
  percent_rank: (call, ctx) => ({ sql: `percent_rank()${ctx.over(call)}`, type: T.float }),
  cume_dist: (call, ctx) => ({ sql: `cume_dist()${ctx.over(call)}`, type: T.float }),
  ntile: aggregate('ntile', T.int),
  lag: aggregate('lag', firstType),
  lead: aggregate('lead', firstType),
  first_value: (call, ctx) => {
    const x = ctx.arg(call.args[0]!);
    return { sql: `first_value(${x.sql}${call.ignoreNulls ? ' IGNORE NULLS' : ''})${ctx.over(call)}`, type: x.type };
  },
  last_value: (call, ctx) => {
    const x = ctx.arg(call.args[0]!);
    return { sql: `last_value(${x.sql}${call.ignoreNulls ? ' IGNORE NULLS' : ''})${ctx.over(call)}`, type: x.type };
  },
};
