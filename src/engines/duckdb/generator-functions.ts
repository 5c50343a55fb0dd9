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
import { QuarryError } from '../../errors.ts';
import type { DatePart } from '../../sql/ast.ts';
import { type FormatSpelling, formatParts } from '../../sql/format.ts';
import type { FunctionContext, FunctionPrinter, FunctionTable, Printed, Translation } from '../../sql/generator.ts';
import type { RFunc } from '../../sql/resolved.ts';
import { INITCAP_DELIMITERS, NET_HOST_LEADING_DOTS, NET_HOST_PATTERN, NET_HOST_TRAILING_DOTS, NET_HOST_TRIM } from '../../sql/text-rules.ts';
import {
  constantFormat,
  type Field,
  type FormatValue,
  formatValue,
  type TimeFormatSpelling,
  type ParseSpelling,
  parsePlan,
  parseValue,
} from '../../sql/time-format.ts';
import { holdsRecord, isScalar, type VType } from '../../sql/types.ts';
import { elementLimit, type GuardSpelling, withValueGuards } from '../../sql/value-bounds.ts';
import { quoteIdent } from './types.ts';

/** The longest list generate_timestamp_array may build. */
const tooManyElements = (max: number) => `generate_timestamp_array would make more than ${max} elements`;
const tooManyArray = (max: number) => `the array would have more than ${max} elements`;

function safeArithmetic(call: RFunc, op: '+' | '-' | '*', a: Printed, b: Printed): string {
  if (!isScalar(call.type, 'int')) return `(${a.sql} ${op} ${b.sql})`;
  return `TRY_CAST(CAST(${a.sql} AS HUGEINT) ${op} CAST(${b.sql} AS HUGEINT) AS BIGINT)`;
}

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

/** A DuckDB string literal. */
function sqlString(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}

/**
 * INITCAP, one character at a time in a scalar subquery (DuckDB has no initcap, and the lock-down
 * admits no lambdas). `ß` stays as it is: it has no one-character upper case (BigQuery keeps it).
 */
function initcap(s: string, delimiters: string | undefined, ctx: FunctionContext): string {
  const d = delimiters ?? sqlString(INITCAP_DELIMITERS);
  const chars = ctx.fresh('c');
  const i = `${chars}."i"`;
  const c = `substring(${s}, ${i}, 1)`;
  const first = `CASE WHEN ${c} = 'ß' THEN ${c} ELSE upper(${c}) END`;
  const each = `CASE WHEN strpos(${d}, ${c}) > 0 THEN ${c} WHEN ${i} = 1 OR strpos(${d}, substring(${s}, ${i} - 1, 1)) > 0 THEN ${first} ELSE lower(${c}) END`;
  const word = `(SELECT string_agg(${each}, '' ORDER BY ${i}) FROM (SELECT unnest(range(1, length(${s}) + 1)) AS "i") AS ${chars})`;
  return `CASE WHEN ${delimiters ? `${delimiters} IS NULL THEN NULL WHEN ` : ''}${s} = '' THEN '' ELSE ${word} END`;
}

const float = (sql: string, p: { printf: string }) => `printf(${sqlString(p.printf)}, CAST(${sql} AS DOUBLE))`;
const formatSpelling: FormatSpelling = {
  text: sqlString,
  value: {
    d: (sql, p) => (p.plain ? `CAST(${sql} AS VARCHAR)` : `printf(${sqlString(p.printf)}, CAST(${sql} AS BIGINT))`),
    f: float,
    F: float,
    s: (sql) => `CAST(${sql} AS VARCHAR)`,
    t: (sql) => `coalesce(CAST(${sql} AS VARCHAR), 'NULL')`,
  },
};

/** FORMAT: its pieces joined with `||`, which is NULL when any piece is. */
function format(call: RFunc, args: readonly Printed[]): string {
  const parts = formatParts(
    call.args,
    args.map((a) => a.sql),
    formatSpelling,
  );
  return parts.length === 0 ? "''" : `(${parts.join(' || ')})`;
}

/** Whether a list holding records is somewhere in a value of type `t`. */
function holdsRecordList(t: VType): boolean {
  if (t.k === 'list') return holdsRecord(t.element);
  return t.k === 'record' && Object.values(t.fields).some(holdsRecordList);
}

/** What `recordJson` emits (the lock-down allows exactly the functions translations declare). */
export const RECORD_JSON_EMITS: readonly string[] = [
  'to_json',
  'json_merge_patch',
  'json_object',
  'string_agg',
  'coalesce',
  'unnest',
  'range',
  'len',
  '+',
  '||',
];

/**
 * A value as DuckDB JSON with every record in it (at any depth, in lists too) without its NULL
 * members. A record's STRUCT carries every field any event of the source ever had, other
 * projects' too, and ingest stores no nulls: a NULL member is one this row's event did not carry,
 * so serialising a record shows only what the row's own event holds (docs/SQL.md). The results
 * encoder (encode.ts) leaves them out the same way. `json_merge_patch('{}', x)` (RFC 7386) drops
 * null members of objects at every depth but copies arrays as they are, so a list holding records
 * is done element by element, in order, in a scalar subquery (no lambdas: the lock-down admits
 * none). Values without records are plain `to_json`.
 */
export function recordJson(sql: string, type: VType, fresh: (prefix: string) => string): string {
  if (!holdsRecord(type)) return `to_json(${sql})`;
  if (type.k === 'record') {
    const fields = Object.entries(type.fields);
    if (!holdsRecordList(type) || fields.length === 0) return `json_merge_patch('{}', to_json(${sql}))`;
    const members = fields.map(([name, ft]) => `${sqlString(name)}, ${recordJson(`(${sql}).${quoteIdent(name)}`, ft, fresh)}`);
    return `(CASE WHEN (${sql}) IS NULL THEN NULL ELSE json_merge_patch('{}', json_object(${members.join(', ')})) END)`;
  }
  if (type.k !== 'list') return `to_json(${sql})`;
  const s = fresh('j');
  const element = recordJson(`${s}."e"`, type.element, fresh);
  const items = `string_agg(coalesce(CAST(${element} AS VARCHAR), 'null'), ',' ORDER BY ${s}."i")`;
  const each = `(SELECT CAST('[' || coalesce(${items}, '') || ']' AS JSON) FROM (SELECT unnest(${sql}) AS "e", unnest(range(1, len(${sql}) + 1)) AS "i") AS ${s})`;
  return `(CASE WHEN (${sql}) IS NULL THEN NULL ELSE ${each} END)`;
}

/** A value as text: records (and lists holding them) as `recordJson`'s JSON, anything else as it is. */
export function asText(x: Pick<Printed, 'sql' | 'type'>, fresh: (prefix: string) => string): string {
  return holdsRecord(x.type) ? `CAST(${recordJson(x.sql, x.type, fresh)} AS VARCHAR)` : x.sql;
}

/** A JSON function's input: a record as `recordJson`'s JSON (DuckDB would serialise it with its NULL members). */
const jsonInput = (x: Printed, ctx: FunctionContext) => (holdsRecord(x.type) ? recordJson(x.sql, x.type, ctx.fresh) : x.sql);

const t = (emits: readonly string[], print: FunctionPrinter): Translation => ({ emits, print });

const pad = (sql: string, width: number, fill = '0') => `lpad(CAST(${sql} AS VARCHAR), ${width}, '${fill}')`;
/** Minutes east of UTC of the wall-clock value (0 without a time zone argument). */
const offsetMinutes = (v: FormatValue) => `((epoch_us(${v.value}) - epoch_us(${v.instant})) // 60000000)`;
const offsetText = (v: FormatValue, colon: boolean) => {
  if (!v.zoned) return sqlString(colon ? '+00:00' : '+0000');
  const o = offsetMinutes(v);
  return `(CASE WHEN ${o} < 0 THEN '-' ELSE '+' END || ${pad(`abs(${o}) // 60`, 2)} || '${colon ? ':' : ''}' || ${pad(`abs(${o}) % 60`, 2)})`;
};
const FORMAT_FIELDS: Readonly<Record<Field, string | ((v: FormatValue) => string)>> = {
  year: '%Y',
  year4: (v) => pad(`year(${v.value})`, 4),
  year2: '%y',
  century: (v) => pad(`year(${v.value}) // 100`, 2),
  isoYear: '%G',
  isoYear2: (v) => pad(`isoyear(${v.value}) % 100`, 2),
  month: '%m',
  monthName: '%B',
  monthAbbr: '%b',
  quarter: (v) => `CAST(quarter(${v.value}) AS VARCHAR)`,
  day: '%d',
  daySpace: (v) => pad(`day(${v.value})`, 2, ' '),
  dayOfYear: '%j',
  weekdayName: '%A',
  weekdayAbbr: '%a',
  weekdayMonday1: '%u',
  weekdaySunday0: '%w',
  weekSunday: '%U',
  weekMonday: '%W',
  isoWeek: '%V',
  hour: '%H',
  hourSpace: (v) => pad(`hour(${v.value})`, 2, ' '),
  hour12: '%I',
  hour12Space: (v) => `lpad(strftime(${v.value}, '%-I'), 2, ' ')`,
  ampm: '%p',
  ampmLower: (v) => `lower(strftime(${v.value}, '%p'))`,
  minute: '%M',
  second: '%S',
  epochSeconds: (v) => `CAST(CAST(floor(epoch_us(${v.instant}) / 1000000) AS BIGINT) AS VARCHAR)`,
  offset: (v) => offsetText(v, false),
  offsetColon: (v) => offsetText(v, true),
  zoneName: (v) => {
    if (!v.zoned) return "'UTC'";
    const o = offsetMinutes(v);
    const hm = `CAST(abs(${o}) // 60 AS VARCHAR) || CASE WHEN abs(${o}) % 60 = 0 THEN '' ELSE ':' || ${pad(`abs(${o}) % 60`, 2)} END`;
    return `(CASE WHEN ${o} = 0 THEN 'UTC' ELSE 'UTC' || CASE WHEN ${o} < 0 THEN '-' ELSE '+' END || ${hm} END)`;
  },
};
const TIME_FORMAT_EMITS = [
  'strftime',
  'timezone',
  'lpad',
  'year',
  'isoyear',
  'quarter',
  'day',
  'hour',
  'lower',
  'epoch_us',
  'floor',
  'abs',
  'rtrim',
  'left',
  '||',
  '-',
  '//',
  '%',
  '/',
  '<',
  '=',
];

/** FORMAT_* in DuckDB: strftime specifiers where they mean BigQuery's, expressions elsewhere. */
const timeFormatSpelling: TimeFormatSpelling = {
  fields: FORMAT_FIELDS,
  call: (value, specifiers) => `strftime(${value}, ${sqlString(specifiers)})`,
  // %g: milliseconds, %f: microseconds; other digit counts cut %f.
  secondsWith: (digits) => (digits === 3 ? '%S.%g' : digits === 6 ? '%S.%f' : undefined),
  fraction: (value, digits) => (digits < 6 ? `left(strftime(${value}, '%f'), ${digits})` : `strftime(${value}, ${sqlString(`%f${'0'.repeat(digits - 6)}`)})`),
  trimmedFraction: (value) => `rtrim(strftime(${value}, '.%f'), '.0')`,
  concat: (parts) => `(${parts.join(' || ')})`,
  empty: (value) => `CASE WHEN ${value} IS NULL THEN NULL ELSE '' END`,
};

function formatTime(call: RFunc, fn: 'format_timestamp' | 'format_datetime' | 'format_date', value: string, instant: string, zoned: boolean): string {
  return formatValue(constantFormat(call.args, fn), fn, { value, instant, zoned }, timeFormatSpelling);
}

/** PARSE_*: the text read with time-format.ts's pattern, the value built from its groups. */
const parseSpelling: ParseSpelling = {
  string: sqlString,
  matches: (x, p) => `regexp_matches(${x}, ${p})`,
  // regexp_extract's group index stops at 9; a list of names reads any number of groups.
  group: (x, p, i, count) =>
    i <= 9
      ? `regexp_extract(${x}, ${p}, ${i})`
      : `struct_extract(regexp_extract(${x}, ${p}, [${Array.from({ length: count }, (_, k) => `'g${k + 1}'`).join(', ')}]), 'g${i}')`,
  int: (text) => `coalesce(TRY_CAST(${text} AS BIGINT), 0)`,
  daysInMonth: (y, m) => `day(last_day(make_date(${y}, ${m}, 1)))`,
  make: (y, m, d, h, mi, micros, zone) => {
    const wall = `(make_timestamp(${y}, ${m}, ${d}, ${h}, ${mi}, 0) + to_microseconds(CAST(${micros} AS BIGINT)))`;
    return zone ? `CAST(timezone(${zone}, ${wall}) AS TIMESTAMP)` : wall;
  },
  addMicros: (ts, micros) => `(${ts} + to_microseconds(CAST(${micros} AS BIGINT)))`,
  fromEpoch: (seconds) => `make_timestamp(${seconds} * 1000000)`,
  guard: (ok, value, message) => `CASE WHEN ${ok} THEN ${value} ELSE error(${sqlString(message)}) END`,
};
const TIME_PARSE_EMITS = [
  'regexp_matches',
  'regexp_extract',
  'struct_extract',
  'list_value',
  'coalesce',
  'day',
  'last_day',
  'make_date',
  'make_timestamp',
  'to_microseconds',
  'timezone',
  'error',
  'lower',
  'substring',
  '||',
  '+',
  '-',
  '*',
  '%',
  '<',
  '<=',
  '=',
  'between',
];
const list = (args: readonly Printed[]) => args.map((a) => a.sql).join(', ');
const simple = (name: string): Translation => t([name], (_c, args) => `${name}(${list(args)})`);
const aggregate = (name: string): Translation =>
  t([name], (call, args, ctx) => `${name}(${call.distinct ? 'DISTINCT ' : ''}${list(args)}${ctx.innerOrder(call)})${ctx.over(call)}`);
const windowOnly = (name: string): Translation => t([name], (call, _args, ctx) => `${name}()${ctx.over(call)}`);
const valueWindow = (name: string): Translation =>
  t([name], (call, [x], ctx) => `${name}(${x!.sql}${call.ignoreNulls ? ' IGNORE NULLS' : ''})${ctx.over(call)}`);
const zone = (args: readonly Printed[], i: number) => args[i]?.sql ?? "'UTC'";

const translations: FunctionTable = {
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
  concat: t(['||', ...RECORD_JSON_EMITS], (_c, args, ctx) => `(${args.map((a) => `CAST(${asText(a, ctx.fresh)} AS VARCHAR)`).join(' || ')})`),
  length: simple('length'),
  strpos: simple('strpos'),
  substr: t(['substring'], (_c, args) => `substring(${list(args)})`),
  substring: simple('substring'),
  split: t(['string_split'], (_c, [s, d]) => `string_split(${s!.sql}, ${d ? d.sql : "','"})`),
  trim: simple('trim'),
  ltrim: simple('ltrim'),
  rtrim: simple('rtrim'),
  replace: simple('replace'),
  char_length: t(['length'], (_c, [x]) => `length(${x!.sql})`),
  character_length: t(['length'], (_c, [x]) => `length(${x!.sql})`),
  byte_length: t(['strlen', 'octet_length'], (_c, [x]) => (isScalar(x!.type, 'bytes') ? `octet_length(${x!.sql})` : `strlen(${x!.sql})`)),
  octet_length: t(['strlen', 'octet_length'], (_c, [x]) => (isScalar(x!.type, 'bytes') ? `octet_length(${x!.sql})` : `strlen(${x!.sql})`)),
  // BigQuery gives 0 for the empty string; DuckDB's unicode() gives -1.
  ascii: t(['unicode'], (_c, [x]) => `CASE WHEN ${x!.sql} = '' THEN 0 ELSE unicode(${x!.sql}) END`),
  unicode: t(['unicode'], (_c, [x]) => `CASE WHEN ${x!.sql} = '' THEN 0 ELSE unicode(${x!.sql}) END`),
  chr: t(['chr'], (_c, [x]) => `chr(CAST(${x!.sql} AS INTEGER))`),
  left: simple('left'),
  right: simple('right'),
  lpad: t(['lpad'], (_c, [x, n, pad]) => `lpad(${x!.sql}, CAST(${n!.sql} AS INTEGER), ${pad ? pad.sql : "' '"})`),
  rpad: t(['rpad'], (_c, [x, n, pad]) => `rpad(${x!.sql}, CAST(${n!.sql} AS INTEGER), ${pad ? pad.sql : "' '"})`),
  repeat: simple('repeat'),
  reverse: simple('reverse'),
  translate: simple('translate'),
  regexp_extract_all: t(['regexp_extract_all'], (call, [x, re]) => `regexp_extract_all(${x!.sql}, ${re!.sql}, ${captureGroups(call) > 0 ? 1 : 0})`),
  regexp_substr: t(['regexp_matches', 'regexp_extract'], (call, [x, re]) => {
    const group = captureGroups(call) > 0 ? 1 : 0;
    return `CASE WHEN regexp_matches(${x!.sql}, ${re!.sql}) THEN regexp_extract(${x!.sql}, ${re!.sql}, ${group}) END`;
  }),
  to_base64: simple('to_base64'),
  from_base64: simple('from_base64'),
  to_hex: t(['lower', 'hex'], (_c, [x]) => `lower(hex(${x!.sql}))`),
  from_hex: simple('unhex'),
  // BigQuery's hashes are BYTES; DuckDB's are hex text.
  md5: t(['unhex', 'md5'], (_c, [x]) => `unhex(md5(${x!.sql}))`),
  sha1: t(['unhex', 'sha1'], (_c, [x]) => `unhex(sha1(${x!.sql}))`),
  sha256: t(['unhex', 'sha256'], (_c, [x]) => `unhex(sha256(${x!.sql}))`),
  initcap: t(['string_agg', 'unnest', 'range', 'length', 'strpos', 'substring', 'upper', 'lower', '+', '-'], (_c, [x, d], ctx) => initcap(x!.sql, d?.sql, ctx)),
  format: t(['printf', '||', 'coalesce'], (call, args) => format(call, args)),
  'net.host': t(['regexp_replace', 'regexp_extract', 'nullif'], (_c, [x]) => {
    const host = `regexp_extract(regexp_replace(${x!.sql}, ${sqlString(NET_HOST_TRIM)}, '', 'g'), ${sqlString(NET_HOST_PATTERN)}, 1)`;
    const dots = `regexp_replace(regexp_replace(${host}, ${sqlString(NET_HOST_LEADING_DOTS)}, ''), ${sqlString(NET_HOST_TRAILING_DOTS)}, '.')`;
    return `nullif(${dots}, '')`;
  }),
  json_value: t(
    ['json_extract_string', ...RECORD_JSON_EMITS],
    (_c, [x, path], ctx) => `json_extract_string(${jsonInput(x!, ctx)}, ${path ? path.sql : "'$'"})`,
  ),
  json_extract_scalar: t(
    ['json_extract_string', ...RECORD_JSON_EMITS],
    (_c, [x, path], ctx) => `json_extract_string(${jsonInput(x!, ctx)}, ${path ? path.sql : "'$'"})`,
  ),
  json_query: t(
    ['json_extract', ...RECORD_JSON_EMITS],
    (_c, [x, path], ctx) => `CAST(json_extract(${jsonInput(x!, ctx)}, ${path ? path.sql : "'$'"}) AS VARCHAR)`,
  ),
  json_extract: t(
    ['json_extract', ...RECORD_JSON_EMITS],
    (_c, [x, path], ctx) => `CAST(json_extract(${jsonInput(x!, ctx)}, ${path ? path.sql : "'$'"}) AS VARCHAR)`,
  ),
  // A record without its NULL members (recordJson): BigQuery prints them as null.
  to_json_string: t(RECORD_JSON_EMITS, (_c, [x], ctx) => `CAST(${recordJson(x!.sql, x!.type, ctx.fresh)} AS VARCHAR)`),

  ifnull: t(['coalesce'], (_c, args) => `coalesce(${list(args)})`),
  coalesce: simple('coalesce'),
  nullif: simple('nullif'),
  if: t([], (_c, [c, a, b]) => `CASE WHEN ${c!.sql} THEN ${a!.sql} ELSE ${b!.sql} END`),
  greatest: simple('greatest'),
  least: simple('least'),
  zeroifnull: t(['coalesce'], (_c, [x]) => `coalesce(${x!.sql}, 0)`),
  nullifzero: t(['nullif'], (_c, [x]) => `nullif(${x!.sql}, 0)`),

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
  // Integer overflow is NULL: computed in HUGEINT, then narrowed back with TRY_CAST.
  safe_add: t(['+'], (call, [a, b]) => safeArithmetic(call, '+', a!, b!)),
  safe_subtract: t(['-'], (call, [a, b]) => safeArithmetic(call, '-', a!, b!)),
  safe_multiply: t(['*'], (call, [a, b]) => safeArithmetic(call, '*', a!, b!)),
  safe_negate: t(['-'], (call, [x]) => (isScalar(call.type, 'int') ? `TRY_CAST(-CAST(${x!.sql} AS HUGEINT) AS BIGINT)` : `(-${x!.sql})`)),
  ieee_divide: t(['/'], (_c, [a, b]) => `(CAST(${a!.sql} AS DOUBLE) / ${b!.sql})`),
  sign: simple('sign'),
  is_inf: t(['isinf'], (_c, [x]) => `isinf(CAST(${x!.sql} AS DOUBLE))`),
  is_nan: t(['isnan'], (_c, [x]) => `isnan(CAST(${x!.sql} AS DOUBLE))`),
  exp: simple('exp'),
  ln: simple('ln'),
  // BigQuery's LOG(x) is the natural logarithm (DuckDB's is base 10); LOG(x, b) is base b.
  log: t(['ln', '/'], (_c, [x, b]) => (b ? `(ln(${x!.sql}) / ln(${b.sql}))` : `ln(${x!.sql})`)),
  log10: simple('log10'),
  cbrt: simple('cbrt'),
  trunc: t(['trunc'], (_c, [x, n]) => (n ? `trunc(CAST(${x!.sql} AS DOUBLE), CAST(${n.sql} AS INTEGER))` : `trunc(CAST(${x!.sql} AS DOUBLE))`)),
  ceiling: t(['ceil'], (_c, [x]) => `ceil(${x!.sql})`),
  cos: simple('cos'),
  sin: simple('sin'),
  tan: simple('tan'),
  acos: simple('acos'),
  asin: simple('asin'),
  atan: simple('atan'),
  atan2: simple('atan2'),
  cosh: simple('cosh'),
  sinh: simple('sinh'),
  tanh: simple('tanh'),
  acosh: simple('acosh'),
  asinh: simple('asinh'),
  atanh: simple('atanh'),
  cot: simple('cot'),
  rand: t(['random'], () => 'random()'),

  array_length: t(['len'], (_c, [a]) =>
    // A record is BigQuery's one-element repeated record.
    a!.type.k === 'record' || a!.type.k === 'missing' ? `CASE WHEN ${a!.sql} IS NULL THEN 0 ELSE 1 END` : `len(${a!.sql})`,
  ),
  generate_timestamp_array: t(['epoch_us', '//', '-', 'error', 'generate_series'], (call, [s, e, step]) => {
    // DuckDB builds the whole list inside one call, which an interrupt cannot stop: refuse a list
    // longer than the call's element limit before building it.
    const max = elementLimit(call);
    const count = `((epoch_us(${e!.sql}) - epoch_us(${s!.sql})) // epoch_us(${step!.sql}))`;
    return `(CASE WHEN ${count} > ${max} THEN error('${tooManyElements(max)}') ELSE generate_series(${s!.sql}, ${e!.sql}, ${step!.sql}) END)`;
  }),

  generate_date_array: t(['epoch_us', '//', '-', 'error', 'generate_series', 'to_days'], (call, [s, e, step]) => {
    const max = elementLimit(call);
    const [from, to] = [`CAST(${s!.sql} AS TIMESTAMP)`, `CAST(${e!.sql} AS TIMESTAMP)`];
    const by = step ? step.sql : 'to_days(1)';
    const count = `((epoch_us(${to}) - epoch_us(${from})) // epoch_us(${by}))`;
    return `(CASE WHEN ${count} > ${max} THEN error('${tooManyArray(max)}') ELSE CAST(generate_series(${from}, ${to}, ${by}) AS DATE[]) END)`;
  }),
  generate_array: t(['//', '-', 'error', 'generate_series', 'abs'], (call, [s, e, step]) => {
    const max = elementLimit(call);
    const by = step ? step.sql : '1';
    const count = `abs((${e!.sql} - ${s!.sql}) // ${by})`;
    return `(CASE WHEN ${count} > ${max} THEN error('${tooManyArray(max)}') ELSE generate_series(${s!.sql}, ${e!.sql}, ${by}) END)`;
  }),
  array_concat: t(['list_concat'], (_c, args) => args.slice(1).reduce((acc, a) => `list_concat(${acc}, ${a.sql})`, args[0]!.sql)),
  array_reverse: t(['list_reverse'], (_c, [x]) => `list_reverse(${x!.sql})`),
  // A list holding records joins each element's recordJson text (the JSON array cast to a list of its elements).
  array_to_string: t(['array_to_string', ...RECORD_JSON_EMITS], (_c, [x, sep], ctx) =>
    holdsRecord(x!.type)
      ? `array_to_string(CAST(CAST(${recordJson(x!.sql, x!.type, ctx.fresh)} AS JSON[]) AS VARCHAR[]), ${sep!.sql})`
      : `array_to_string(${x!.sql}, ${sep!.sql})`,
  ),
  array_first: t(['list_extract'], (_c, [x]) => `list_extract(${x!.sql}, 1)`),
  array_last: t(['list_extract'], (_c, [x]) => `list_extract(${x!.sql}, -1)`),
  array_slice: t(['list_slice', 'len', 'greatest', 'least', '+', '-'], (_c, [a, s, e]) => {
    // 0-based inclusive offsets, negative ones from the end, clamped to the list; NULL offsets give NULL.
    const n = `len(${a!.sql})`;
    const from = `greatest(CASE WHEN ${s!.sql} < 0 THEN ${n} + ${s!.sql} ELSE ${s!.sql} END, 0) + 1`;
    const to = `greatest(least(CASE WHEN ${e!.sql} < 0 THEN ${n} + ${e!.sql} ELSE ${e!.sql} END, ${n} - 1) + 1, 0)`;
    return `CASE WHEN ${s!.sql} IS NULL OR ${e!.sql} IS NULL THEN NULL ELSE list_slice(${a!.sql}, ${from}, ${to}) END`;
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
  format_timestamp: t(TIME_FORMAT_EMITS, (call, [, ts, tz]) =>
    formatTime(call, 'format_timestamp', tz ? tzConvert(ts!.sql, tz.sql) : ts!.sql, ts!.sql, tz !== undefined),
  ),
  datetime: t(['timezone', 'make_timestamp'], (_c, args) => {
    const [x, tz] = args;
    if (args.length === 6) return `make_timestamp(${args.map((a) => `CAST(${a.sql} AS ${a === args[5] ? 'DOUBLE' : 'BIGINT'})`).join(', ')})`;
    if (args.length > 2) throw new QuarryError('INVALID_QUERY', 'DATETIME takes 1, 2 or 6 arguments');
    return tz ? tzConvert(asTimestamp(x!), tz.sql) : `CAST(${x!.sql} AS TIMESTAMP)`;
  }),
  timestamp: t(['timezone'], (_c, [x, tz]) => {
    if (tz) return `CAST(timezone(${tz.sql}, CAST(${x!.sql} AS TIMESTAMP)) AS TIMESTAMP)`;
    if (isScalar(x!.type, 'timestamp')) return x!.sql;
    if (isScalar(x!.type, 'datetime') || isScalar(x!.type, 'date')) return `CAST(${x!.sql} AS TIMESTAMP)`;
    return stringToTimestamp(x!.sql);
  }),
  date: t(['timezone', 'make_date'], (_c, args) => {
    const [x, tz] = args;
    if (args.length === 3) return `make_date(${args.map((a) => `CAST(${a.sql} AS BIGINT)`).join(', ')})`;
    return `CAST(${tz ? tzConvert(asTimestamp(x!), tz.sql) : x!.sql} AS DATE)`;
  }),
  unix_date: t(['date_diff'], (_c, [d]) => `date_diff('day', DATE '1970-01-01', ${d!.sql})`),
  date_from_unix_date: t(['to_days', '+'], (_c, [n]) => `CAST(DATE '1970-01-01' + to_days(CAST(${n!.sql} AS INTEGER)) AS DATE)`),
  format_date: t(TIME_FORMAT_EMITS, (call, [, d]) => formatTime(call, 'format_date', d!.sql, d!.sql, false)),
  format_datetime: t(TIME_FORMAT_EMITS, (call, [, d]) => formatTime(call, 'format_datetime', d!.sql, d!.sql, false)),
  parse_timestamp: t(TIME_PARSE_EMITS, (call, [, x, tz]) =>
    parseValue(parsePlan(constantFormat(call.args, 'parse_timestamp'), 'parse_timestamp'), x!.sql, 'parse_timestamp', parseSpelling, tz?.sql),
  ),
  parse_datetime: t(TIME_PARSE_EMITS, (call, [, x]) =>
    parseValue(parsePlan(constantFormat(call.args, 'parse_datetime'), 'parse_datetime'), x!.sql, 'parse_datetime', parseSpelling),
  ),
  parse_date: t(
    TIME_PARSE_EMITS,
    (call, [, x]) => `CAST(${parseValue(parsePlan(constantFormat(call.args, 'parse_date'), 'parse_date'), x!.sql, 'parse_date', parseSpelling)} AS DATE)`,
  ),
  last_day: t(['last_day'], (_c, [d]) => `last_day(${d!.sql})`),
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
  // count_if is NULL over no rows (or only NULL conditions); BigQuery's COUNTIF is 0.
  countif: t(['coalesce', 'count_if'], (call, [x], ctx) => `coalesce(count_if(${call.distinct ? 'DISTINCT ' : ''}${x!.sql})${ctx.over(call)}, 0)`),
  sum: aggregate('sum'),
  avg: aggregate('avg'),
  min: aggregate('min'),
  max: aggregate('max'),
  any_value: aggregate('any_value'),
  logical_or: aggregate('bool_or'),
  logical_and: aggregate('bool_and'),
  stddev: aggregate('stddev_samp'),
  variance: aggregate('var_samp'),
  stddev_samp: aggregate('stddev_samp'),
  stddev_pop: aggregate('stddev_pop'),
  var_samp: aggregate('var_samp'),
  var_pop: aggregate('var_pop'),
  corr: aggregate('corr'),
  covar_pop: aggregate('covar_pop'),
  covar_samp: aggregate('covar_samp'),
  bit_and: aggregate('bit_and'),
  bit_or: aggregate('bit_or'),
  bit_xor: aggregate('bit_xor'),
  max_by: aggregate('arg_max'),
  min_by: aggregate('arg_min'),
  approx_count_distinct: t(['count'], (call, [x], ctx) => `count(DISTINCT ${x!.sql})${ctx.over(call)}`),
  string_agg: t(['string_agg', ...RECORD_JSON_EMITS], (call, [x, sep], ctx) => {
    const distinct = call.distinct ? 'DISTINCT ' : '';
    return `string_agg(${distinct}${asText(x!, ctx.fresh)}, ${sep ? sep.sql : "','"}${ctx.innerOrder(call)})${ctx.over(call)}`;
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
  nth_value: t(['nth_value'], (call, [x, n], ctx) => `nth_value(${x!.sql}, ${n!.sql}${call.ignoreNulls ? ' IGNORE NULLS' : ''})${ctx.over(call)}`),
  percentile_cont: t(['quantile_cont'], (call, [x, p], ctx) => `quantile_cont(${x!.sql}, ${p!.sql})${ctx.over(call)}`),
  percentile_disc: t(['quantile_disc'], (call, [x, p], ctx) => `quantile_disc(${x!.sql}, ${p!.sql})${ctx.over(call)}`),
};

/** The size guard of value-bounds.ts: `error()` before the function builds a value past the limit. */
const valueGuard: GuardSpelling = {
  byteLength: (x) => `CAST(${isScalar(x.type, 'bytes') ? 'octet_length' : 'strlen'}(${x.sql}) AS DOUBLE)`,
  guard: (value, tooLarge, message) => `(CASE WHEN ${tooLarge} THEN error(${sqlString(message)}) ELSE ${value} END)`,
  emits: ['error', 'strlen', 'octet_length', '*', '>'],
};

export const duckDbFunctions: FunctionTable = withValueGuards(translations, valueGuard);
