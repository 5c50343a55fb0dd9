/**
 * How DuckDB spells each function of the registry (src/sql/functions.ts): the DuckDB printer's
 * translation table. It is a `Record<FunctionName, …>`, so a registry function without an entry
 * here does not compile. Each entry lists the DuckDB functions and operators it emits; the
 * lock-down (lockdown.ts) allows exactly those in generated statements.
 *
 * Every entry keeps BigQuery's semantics: 0-based offsets, regexp "contains", NULL on no match,
 * timestamps in UTC, DATETIME kept apart from TIMESTAMP so results encode differently. Types and
 * argument coercions were settled by the semantic pass; entries only print.
 */
import type { DatePart } from '../../sql/ast.ts';
import type { FunctionPrinter, FunctionTable, Printed, Translation } from '../../sql/generator.ts';
import type { RFunc } from '../../sql/resolved.ts';
import { isScalar } from '../../sql/types.ts';

/** The longest list generate_timestamp_array may build. */
export const MAX_GENERATED_ELEMENTS = 100_000;
export const TOO_MANY_ELEMENTS = `generate_timestamp_array would make more than ${MAX_GENERATED_ELEMENTS} elements`;

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

/** String → TIMESTAMP (UTC), honouring an offset or `Z` in the text. */
export function stringToTimestamp(sql: string, safe = false): string {
  const c = safe ? 'TRY_CAST' : 'CAST';
  return `${c}(${c}(${sql} AS TIMESTAMPTZ) AS TIMESTAMP)`;
}

/** A TIMESTAMP from an argument that may be a string or a date (where the registry does not coerce). */
function asTimestamp(t: Printed): string {
  return isScalar(t.type, 'string') || isScalar(t.type, 'date') ? stringToTimestamp(t.sql) : t.sql;
}

function part(call: RFunc, i: number): DatePart {
  const a = call.args[i];
  // The semantic pass checked it (the registry's `datepart` argument kind).
  return a?.kind === 'datepart' ? a.part : 'day';
}

function truncate(sql: string, p: DatePart): string {
  // BigQuery weeks start on Sunday; DuckDB's on Monday.
  if (p === 'week') return `(date_trunc('week', ${sql} + INTERVAL 1 DAY) - INTERVAL 1 DAY)`;
  return `date_trunc('${duckPart(p)}', ${sql})`;
}

function tzConvert(ts: string, tz: string): string {
  // TIMESTAMP (UTC) → wall-clock time in `tz`.
  return `timezone(${tz}, CAST(${ts} AS TIMESTAMPTZ))`;
}

/** Counts capture groups of a literal pattern, to choose what REGEXP_EXTRACT returns. */
function captureGroups(call: RFunc): number {
  const e = call.args[1];
  if (e?.kind !== 'literal' || e.value.type !== 'string') return 0;
  const m = e.value.value.match(/(?<!\\)\((?!\?)/g);
  return m ? m.length : 0;
}

const t = (emits: readonly string[], print: FunctionPrinter): Translation => ({ emits, print });
const list = (args: readonly Printed[]) => args.map((a) => a.sql).join(', ');
const simple = (name: string): Translation => t([name], (_c, args) => `${name}(${list(args)})`);
const aggregate = (name: string): Translation =>
  t([name], (call, args, ctx) => `${name}(${call.distinct ? 'DISTINCT ' : ''}${list(args)}${ctx.innerOrder(call)})${ctx.over(call)}`);
const windowOnly = (name: string): Translation => t([name], (call, _args, ctx) => `${name}()${ctx.over(call)}`);
const valueWindow = (name: string): Translation =>
  t([name], (call, [x], ctx) => `${name}(${x!.sql}${call.ignoreNulls ? ' IGNORE NULLS' : ''})${ctx.over(call)}`);
const zone = (args: readonly Printed[], i: number) => args[i]?.sql ?? "'UTC'";

export const duckDbFunctions: FunctionTable = {
  regexp_contains: t(['regexp_matches'], (_c, [s, re]) => `regexp_matches(${s!.sql}, ${re!.sql})`),
  regexp_extract: t(['regexp_matches', 'regexp_extract'], (call, [s, re]) => {
    const group = captureGroups(call) > 0 ? 1 : 0;
    return `CASE WHEN regexp_matches(${s!.sql}, ${re!.sql}) THEN regexp_extract(${s!.sql}, ${re!.sql}, ${group}) END`;
  }),
  regexp_replace: t(['regexp_replace'], (_c, [s, re, rep]) => `regexp_replace(${s!.sql}, ${re!.sql}, ${rep!.sql}, 'g')`),
  starts_with: simple('starts_with'),
  ends_with: simple('ends_with'),
  lower: simple('lower'),
  upper: simple('upper'),
  // BigQuery's CONCAT is NULL when any argument is; `||` behaves the same.
  concat: t(['||'], (_c, args) => `(${args.map((a) => `CAST(${a.sql} AS VARCHAR)`).join(' || ')})`),
  length: simple('length'),
  strpos: simple('strpos'),
  substr: t(['substring'], (_c, args) => `substring(${list(args)})`),
  substring: simple('substring'),
  split: t(['string_split'], (_c, [s, d]) => `string_split(${s!.sql}, ${d ? d.sql : "','"})`),
  trim: simple('trim'),
  ltrim: simple('ltrim'),
  rtrim: simple('rtrim'),
  replace: simple('replace'),
  json_value: t(['json_extract_string'], (_c, args) => `json_extract_string(${list(args)})`),
  json_extract_scalar: t(['json_extract_string'], (_c, args) => `json_extract_string(${list(args)})`),

  ifnull: t(['coalesce'], (_c, args) => `coalesce(${list(args)})`),
  coalesce: simple('coalesce'),
  nullif: simple('nullif'),
  if: t([], (_c, [c, a, b]) => `CASE WHEN ${c!.sql} THEN ${a!.sql} ELSE ${b!.sql} END`),
  greatest: simple('greatest'),
  least: simple('least'),

  abs: simple('abs'),
  round: t(['round'], (_c, [x, d]) => `round(CAST(${x!.sql} AS DOUBLE)${d ? `, ${d.sql}` : ''})`),
  ceil: simple('ceil'),
  floor: simple('floor'),
  mod: t(['%'], (_c, [a, b]) => `(${a!.sql} % ${b!.sql})`),
  div: t(['trunc', '/'], (_c, [a, b]) => `CAST(trunc(${a!.sql} / ${b!.sql}) AS BIGINT)`),
  sqrt: simple('sqrt'),
  pow: simple('pow'),
  power: t(['pow'], (_c, args) => `pow(${list(args)})`),
  safe_divide: t(['/'], (_c, [a, b]) => `CASE WHEN ${b!.sql} = 0 THEN NULL ELSE ${a!.sql} / ${b!.sql} END`),

  array_length: t(['len'], (_c, [a]) =>
    // A record is BigQuery's one-element repeated record.
    a!.type.k === 'record' || a!.type.k === 'missing' ? `CASE WHEN ${a!.sql} IS NULL THEN 0 ELSE 1 END` : `len(${a!.sql})`,
  ),
  generate_timestamp_array: t(['epoch_us', '//', '-', 'error', 'generate_series'], (_c, [s, e, step]) => {
    // DuckDB builds the whole list inside one call, which an interrupt cannot stop: refuse a list
    // longer than MAX_GENERATED_ELEMENTS before building it.
    const count = `((epoch_us(${e!.sql}) - epoch_us(${s!.sql})) // epoch_us(${step!.sql}))`;
    return `(CASE WHEN ${count} > ${MAX_GENERATED_ELEMENTS} THEN error('${TOO_MANY_ELEMENTS}') ELSE generate_series(${s!.sql}, ${e!.sql}, ${step!.sql}) END)`;
  }),

  current_timestamp: t(['get_current_timestamp'], () => 'CAST(get_current_timestamp() AS TIMESTAMP)'),
  current_datetime: t(['get_current_timestamp', 'timezone'], (_c, args) => tzConvert('get_current_timestamp()', zone(args, 0))),
  current_date: t(['get_current_timestamp', 'timezone'], (_c, args) => `CAST(${tzConvert('get_current_timestamp()', zone(args, 0))} AS DATE)`),
  timestamp_trunc: t(['date_trunc', 'timezone', '+', '-'], (call, [ts, , tz]) => {
    const p = part(call, 1);
    // Truncate in the given zone, then back to UTC.
    if (tz) return `CAST(timezone(${tz.sql}, ${truncate(tzConvert(ts!.sql, tz.sql), p)}) AS TIMESTAMP)`;
    return truncate(ts!.sql, p);
  }),
  datetime_trunc: t(['date_trunc', '+', '-'], (call, [d]) => truncate(d!.sql, part(call, 1))),
  date_trunc: t(['date_trunc', '+', '-'], (call, [d]) => {
    const sql = truncate(d!.sql, part(call, 1));
    return d!.type.k === 'scalar' && d!.type.t !== 'date' ? sql : `CAST(${sql} AS DATE)`;
  }),
  timestamp_sub: t(['-'], (_c, [ts, i]) => `(${ts!.sql} - ${i!.sql})`),
  timestamp_add: t(['+'], (_c, [ts, i]) => `(${ts!.sql} + ${i!.sql})`),
  datetime_sub: t(['-'], (_c, [d, i]) => `(${d!.sql} - ${i!.sql})`),
  datetime_add: t(['+'], (_c, [d, i]) => `(${d!.sql} + ${i!.sql})`),
  date_sub: t(['-'], (_c, [d, i]) => `CAST(${d!.sql} - ${i!.sql} AS DATE)`),
  date_add: t(['+'], (_c, [d, i]) => `CAST(${d!.sql} + ${i!.sql} AS DATE)`),
  timestamp_diff: t(['date_sub'], (call, [a, b]) => `date_sub('${duckPart(part(call, 2))}', ${b!.sql}, ${a!.sql})`),
  datetime_diff: t(['date_diff'], (call, [a, b]) => `date_diff('${duckPart(part(call, 2))}', ${b!.sql}, ${a!.sql})`),
  date_diff: t(['date_diff'], (call, [a, b]) => `date_diff('${duckPart(part(call, 2))}', ${b!.sql}, ${a!.sql})`),
  format_timestamp: t(['strftime', 'timezone'], (_c, [fmt, ts, tz]) => `strftime(${tz ? tzConvert(ts!.sql, tz.sql) : ts!.sql}, ${fmt!.sql})`),
  datetime: t(['timezone'], (_c, [x, tz]) => (tz ? tzConvert(asTimestamp(x!), tz.sql) : `CAST(${x!.sql} AS TIMESTAMP)`)),
  timestamp: t(['timezone'], (_c, [x, tz]) => {
    if (tz) return `CAST(timezone(${tz.sql}, CAST(${x!.sql} AS TIMESTAMP)) AS TIMESTAMP)`;
    if (isScalar(x!.type, 'timestamp')) return x!.sql;
    if (isScalar(x!.type, 'datetime') || isScalar(x!.type, 'date')) return `CAST(${x!.sql} AS TIMESTAMP)`;
    return stringToTimestamp(x!.sql);
  }),
  date: t(['timezone'], (_c, [x, tz]) => `CAST(${tz ? tzConvert(asTimestamp(x!), tz.sql) : x!.sql} AS DATE)`),
  unix_micros: t(['epoch_us'], (_c, [x]) => `epoch_us(${x!.sql})`),
  unix_millis: t(['epoch_ms'], (_c, [x]) => `epoch_ms(${x!.sql})`),
  unix_seconds: t(['epoch_us', 'floor', '/'], (_c, [x]) => `CAST(floor(epoch_us(${x!.sql}) / 1000000) AS BIGINT)`),
  timestamp_micros: t(['make_timestamp'], (_c, [x]) => `make_timestamp(CAST(${x!.sql} AS BIGINT))`),
  timestamp_millis: t(['make_timestamp', '*'], (_c, [x]) => `make_timestamp(CAST(${x!.sql} AS BIGINT) * 1000)`),
  timestamp_seconds: t(['make_timestamp', '*'], (_c, [x]) => `make_timestamp(CAST(${x!.sql} AS BIGINT) * 1000000)`),

  count: t(['count', 'count_star'], (call, args, ctx) => {
    if (call.star) return `count(*)${ctx.over(call)}`;
    return `count(${call.distinct ? 'DISTINCT ' : ''}${list(args)}${ctx.innerOrder(call)})${ctx.over(call)}`;
  }),
  countif: aggregate('count_if'),
  sum: aggregate('sum'),
  avg: aggregate('avg'),
  min: aggregate('min'),
  max: aggregate('max'),
  any_value: aggregate('any_value'),
  logical_or: aggregate('bool_or'),
  logical_and: aggregate('bool_and'),
  stddev: aggregate('stddev_samp'),
  variance: aggregate('var_samp'),
  approx_count_distinct: t(['count'], (call, [x], ctx) => `count(DISTINCT ${x!.sql})${ctx.over(call)}`),
  string_agg: t(['string_agg'], (call, [x, sep], ctx) => {
    const distinct = call.distinct ? 'DISTINCT ' : '';
    return `string_agg(${distinct}${x!.sql}, ${sep ? sep.sql : "','"}${ctx.innerOrder(call)})${ctx.over(call)}`;
  }),
  array_agg: t(['array_agg', 'list_slice'], (call, [x], ctx) => {
    const distinct = call.distinct ? 'DISTINCT ' : '';
    const filter = call.ignoreNulls ? ` FILTER (WHERE ${x!.sql} IS NOT NULL)` : '';
    const sql = `array_agg(${distinct}${x!.sql}${ctx.innerOrder(call)})${filter}${ctx.over(call)}`;
    return call.limit ? `list_slice(${sql}, 1, ${ctx.print(call.limit)})` : sql;
  }),
  approx_quantiles: t(['quantile_disc'], (call, [x], ctx) => {
    // The semantic pass checked the count is a constant between 1 and 1000.
    const n = call.args[1];
    const count = n?.kind === 'literal' && n.value.type === 'number' ? Number(n.value.value) : 1;
    const points = Array.from({ length: count + 1 }, (_, i) => String(i / count)).join(', ');
    // Discrete quantiles: like BigQuery, every value returned is one of the inputs.
    return `quantile_disc(${x!.sql}, [${points}])${ctx.over(call)}`;
  }),

  row_number: windowOnly('row_number'),
  rank: windowOnly('rank'),
  dense_rank: windowOnly('dense_rank'),
  percent_rank: windowOnly('percent_rank'),
  cume_dist: windowOnly('cume_dist'),
  ntile: aggregate('ntile'),
  lag: aggregate('lag'),
  lead: aggregate('lead'),
  first_value: valueWindow('first_value'),
  last_value: valueWindow('last_value'),
};
