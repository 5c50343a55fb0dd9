/**
 * How ClickHouse spells each function of the registry (src/sql/functions.ts): the ClickHouse
 * printer's translation table. A `Record<FunctionName, …>`, so a registry function without an
 * entry here does not compile; an entry is either a translation (listing the ClickHouse functions
 * it emits: the lock-down allows exactly those) or an explicit refusal.
 *
 * Every entry keeps BigQuery's semantics as the DuckDB engine does: 0-based offsets, regexp
 * "contains" (`match`, RE2 like BigQuery), NULL on no match, timestamps in UTC with microseconds,
 * weeks from Sunday, DATETIME apart from TIMESTAMP. Lists are cast to ClickHouse arrays where a
 * function needs one (a list read from the JSON column is a dynamic value until then).
 */
import { QuarryError } from '../../errors.ts';
import type { DatePart, WindowFrame } from '../../sql/ast.ts';
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
import { isScalar, type VType } from '../../sql/types.ts';
import { quoteString } from './quote.ts';
import { elementLimit, type GuardSpelling, withValueGuards } from '../../sql/value-bounds.ts';
import { arrayOf } from './types.ts';

/** The longest list generate_*_array may build. */
const tooManyElements = (max: number) => `generate_timestamp_array would make more than ${max} elements`;
const tooManyArray = (max: number) => `the array would have more than ${max} elements`;

const INTERVALS: Readonly<Record<DatePart, string | undefined>> = {
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
  dayofweek: undefined,
  dayofyear: undefined,
};

export function intervalFunction(unit: DatePart): string | undefined {
  return INTERVALS[unit];
}

/**
 * The text a STRING → TIMESTAMP reads (RE2), as DuckDB reads it: a date, then optionally a time
 * (`T` or spaces, then `H:M[:S[.fraction]]`, hours 0-23, minutes and seconds 0-59), then optionally
 * `Z`, `UTC` or an offset `±HH[[:]MM]`.
 */
const TIMESTAMP_TEXT =
  '^\\s*\\d{4}-\\d{1,2}-\\d{1,2}(?:(?:[Tt]|\\s+)(?:[01]?\\d|2[0-3]):[0-5]?\\d(?::[0-5]?\\d(?:\\.\\d+)?)?)?\\s*(?:[Zz]|UTC|[+-]\\d{2}(?::?\\d{2})?)?\\s*$';

/**
 * `x` (text) when it matches `pattern` (or is NULL), else '' (which every parse refuses). A plain
 * condition, so a constant `x` (a literal, a parameter) folds to a constant and the engine still
 * prunes by the sorting key; throwIf would not fold.
 */
export function textOfForm(x: string, pattern: string): string {
  return `if(isNull(${x}) OR match(${x}, ${quoteString(pattern)}), ${x}, '')`;
}

/**
 * String → TIMESTAMP (UTC), honouring an offset or `Z` in the text. parseDateTime64BestEffort
 * refuses a day the month does not have, but reads much else: `12` as the 12th of this month, hour
 * 25 as the next day's 1 o'clock. So the text must have TIMESTAMP_TEXT's form, else the query fails
 * (`safe`: NULL), as on DuckDB.
 */
export function stringToTimestamp(sql: string, safe = false): string {
  if (safe) return `if(match(ifNull(${sql}, ''), ${quoteString(TIMESTAMP_TEXT)}), parseDateTime64BestEffortOrNull(${sql}, 6, 'UTC'), NULL)`;
  return `parseDateTime64BestEffort(${textOfForm(sql, TIMESTAMP_TEXT)}, 6, 'UTC')`;
}

/** What stringToTimestamp and textOfForm emit. */
export const STRING_TO_TIMESTAMP_EMITS = ['if', 'isNull', 'or', 'match', 'ifNull', 'parseDateTime64BestEffort', 'parseDateTime64BestEffortOrNull'];

function part(call: RFunc, i: number): DatePart {
  const a = call.args[i];
  return a?.kind === 'datepart' ? a.part : 'day';
}

/** Truncates a DateTime64 to `p` (weeks start on Sunday, as in BigQuery); the result is UTC DateTime64(6). */
function truncate(sql: string, p: DatePart, tz = "'UTC'"): string {
  const utc = (x: string) => (tz === "'UTC'" ? x : `toTimeZone(${x}, 'UTC')`);
  switch (p) {
    case 'millisecond':
    case 'second':
    case 'minute':
    case 'hour':
      return utc(`toStartOfInterval(${sql}, ${INTERVALS[p]}(1), ${tz})`);
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
      return sql;
  }
}

/** Whole `p` units between two times (boundaries crossed, as BigQuery counts). */
function diff(p: DatePart, later: string, earlier: string): string {
  if (p === 'microsecond') return `(toUnixTimestamp64Micro(${later}) - toUnixTimestamp64Micro(${earlier}))`;
  if (p === 'millisecond') return `intDiv(toUnixTimestamp64Micro(${later}) - toUnixTimestamp64Micro(${earlier}), 1000)`;
  if (p === 'week') return `dateDiff('week', toStartOfWeek(${earlier}, 0), toStartOfWeek(${later}, 0))`;
  return `dateDiff('${p}', ${earlier}, ${later}, 'UTC')`;
}

/** TIMESTAMP (UTC) → the wall-clock time in `tz`, as a DateTime64 whose digits are that time. */
function tzConvert(ts: string, tz: string): string {
  return `toDateTime64(toString(${ts}, ${tz}), 6, 'UTC')`;
}

function captureGroups(call: RFunc): number {
  const e = call.args[1];
  if (e?.kind !== 'literal' || e.value.type !== 'string') return 0;
  const m = e.value.value.match(/(?<!\\)\((?!\?)/g);
  return m ? m.length : 0;
}

const pad = (sql: string, width: number, fill = '0') => `leftPad(toString(${sql}), ${width}, '${fill}')`;
/** Minutes east of UTC of the wall-clock value (0 without a time zone argument). */
const offsetMinutes = (v: FormatValue) => `intDiv(toUnixTimestamp64Micro(${v.value}) - toUnixTimestamp64Micro(${v.instant}), 60000000)`;
const offsetText = (v: FormatValue, colon: boolean) => {
  if (!v.zoned) return quoteString(colon ? '+00:00' : '+0000');
  const o = offsetMinutes(v);
  return `concat(if(${o} < 0, '-', '+'), ${pad(`intDiv(abs(${o}), 60)`, 2)}, '${colon ? ':' : ''}', ${pad(`abs(${o}) % 60`, 2)})`;
};
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const FORMAT_FIELDS: Readonly<Record<Field, string | ((v: FormatValue) => string)>> = {
  year: '%Y',
  year4: (v) => pad(`toYear(${v.value})`, 4),
  year2: '%y',
  century: '%C',
  isoYear: '%G',
  isoYear2: '%g',
  month: '%m',
  // %M is the month's name only while formatdatetime_parsedatetime_m_is_month_name is on, and
  // monthName() takes no Date32.
  monthName: (v) => `arrayElement([${MONTHS.map((m) => `'${m}'`).join(', ')}], toMonth(${v.value}))`,
  monthAbbr: '%b',
  quarter: '%Q',
  day: '%d',
  // ClickHouse's %e, %k and %l pad with nothing or a zero; BigQuery's with a space.
  daySpace: (v) => pad(`toDayOfMonth(${v.value})`, 2, ' '),
  dayOfYear: '%j',
  weekdayName: '%W',
  weekdayAbbr: '%a',
  weekdayMonday1: '%u',
  weekdaySunday0: '%w',
  weekSunday: (v) => pad(`intDiv(toDayOfYear(${v.value}) + 6 - toDayOfWeek(${v.value}) % 7, 7)`, 2),
  weekMonday: (v) => pad(`intDiv(toDayOfYear(${v.value}) + 7 - toDayOfWeek(${v.value}), 7)`, 2),
  isoWeek: '%V',
  hour: '%H',
  hourSpace: (v) => pad(`toHour(${v.value})`, 2, ' '),
  hour12: '%I',
  hour12Space: (v) => pad(`if(toHour(${v.value}) % 12 = 0, 12, toHour(${v.value}) % 12)`, 2, ' '),
  ampm: '%p',
  ampmLower: (v) => `lower(formatDateTime(${v.value}, '%p'))`,
  minute: '%i',
  second: '%S',
  epochSeconds: (v) => `toString(intDiv(toUnixTimestamp64Micro(${v.instant}), 1000000))`,
  offset: (v) => offsetText(v, false),
  offsetColon: (v) => offsetText(v, true),
  zoneName: (v) => {
    if (!v.zoned) return "'UTC'";
    const o = offsetMinutes(v);
    const hm = `concat(toString(intDiv(abs(${o}), 60)), if(abs(${o}) % 60 = 0, '', concat(':', ${pad(`abs(${o}) % 60`, 2)})))`;
    return `if(${o} = 0, 'UTC', concat('UTC', if(${o} < 0, '-', '+'), ${hm}))`;
  },
};
const TIME_FORMAT_EMITS = [
  'formatDateTime',
  'toDateTime64',
  'toString',
  'leftPad',
  'toYear',
  'toMonth',
  'arrayElement',
  'array',
  'toDayOfMonth',
  'toDayOfYear',
  'toDayOfWeek',
  'toHour',
  'lower',
  'toUnixTimestamp64Micro',
  'intDiv',
  'abs',
  'concat',
  'if',
  'substring',
  'replaceRegexpOne',
  'modulo',
  'plus',
  'minus',
  'less',
  'equals',
];

/** FORMAT_* in ClickHouse: formatDateTime specifiers where they mean BigQuery's, expressions elsewhere. */
const timeFormatSpelling: TimeFormatSpelling = {
  fields: FORMAT_FIELDS,
  call: (value, specifiers) => `formatDateTime(${value}, ${quoteString(specifiers)})`,
  // %f writes the value's 6 digits (DateTime64(6)).
  secondsWith: (digits) => (digits === 6 ? '%S.%f' : undefined),
  fraction: (value, digits) =>
    digits < 6 ? `substring(formatDateTime(${value}, '%f'), 1, ${digits})` : `formatDateTime(${value}, ${quoteString(`%f${'0'.repeat(digits - 6)}`)})`,
  trimmedFraction: (value) => `replaceRegexpOne(formatDateTime(${value}, '.%f'), '[.]?0+$', '')`,
  concat: (parts) => `concat(${parts.join(', ')})`,
  empty: (value) => `if(isNull(${value}), NULL, '')`,
};

function formatTime(call: RFunc, fn: 'format_timestamp' | 'format_datetime' | 'format_date', value: string, instant: string, zoned: boolean): string {
  return formatValue(constantFormat(call.args, fn), fn, { value, instant, zoned }, timeFormatSpelling);
}

/** PARSE_*: the text read with time-format.ts's pattern, the value built from its groups (UTC DateTime64(6)). */
const parseSpelling: ParseSpelling = {
  string: quoteString,
  matches: (x, p) => `match(${x}, ${p})`,
  group: (x, p, i) => `regexpExtract(${x}, ${p}, ${i})`,
  int: (text) => `toInt64OrZero(${text})`,
  daysInMonth: (y, m) => `toDayOfMonth(toLastDayOfMonth(makeDate32(${y}, ${m}, 1)))`,
  make: (y, m, d, h, mi, micros, zone) => {
    const wall = `addMicroseconds(makeDateTime64(${y}, ${m}, ${d}, ${h}, ${mi}, 0, 0, 6, 'UTC'), ${micros})`;
    return zone ? tzConvertBack(wall, zone) : wall;
  },
  addMicros: (ts, micros) => `addMicroseconds(${ts}, ${micros})`,
  fromEpoch: (seconds) => `fromUnixTimestamp64Micro(${seconds} * 1000000, 'UTC')`,
  // throwIf gives 0 unless the row fails; the printed guard never depends on evaluation order.
  guard: (ok, value, message) => `addMicroseconds(${value}, throwIf(NOT ifNull(${ok}, 0), ${quoteString(message)}))`,
};
const TIME_PARSE_EMITS = [
  'match',
  'regexpExtract',
  'toInt64OrZero',
  'toDayOfMonth',
  'toLastDayOfMonth',
  'makeDate32',
  'makeDateTime64',
  'addMicroseconds',
  'fromUnixTimestamp64Micro',
  'throwIf',
  'ifNull',
  'not',
  'lower',
  'substring',
  'concat',
  'toDateTime64',
  'toString',
  'toTimeZone',
  'isNull',
  'and',
  'or',
  'multiIf',
  'if',
  'caseWithExpression',
  'transform',
  'modulo',
  'plus',
  'minus',
  'multiply',
  'less',
  'lessOrEquals',
  'greaterOrEquals',
  'equals',
  'negate',
];

/** Wall-clock time in `tz` (a UTC DateTime64 holding its digits) → the UTC instant. */
function tzConvertBack(wall: string, tz: string): string {
  return `toTimeZone(toDateTime64(toString(${wall}), 6, ${tz}), 'UTC')`;
}

/**
 * INITCAP, one character at a time. `upperUTF8` maps fully (`ß` → `SS`); BigQuery's upper case of
 * a single character is that character when it has no one-character upper case, so that one is kept.
 */
function initcap(s: string, delimiters: string | undefined): string {
  const d = delimiters ? `ifNull(${delimiters}, '')` : quoteString(INITCAP_DELIMITERS);
  const chars = `ngrams(ifNull(${s}, ''), 1)`;
  const upper = 'if(lengthUTF8(upperUTF8(c)) = 1, upperUTF8(c), c)';
  const each = `(c, i) -> if(position(${d}, c) > 0, c, if(i = 1 OR position(${d}, arrayElement(${chars}, i - 1)) > 0, ${upper}, lowerUTF8(c)))`;
  const word = `arrayStringConcat(arrayMap(${each}, ${chars}, arrayEnumerate(${chars})))`;
  return `if(isNull(${s})${delimiters ? ` OR isNull(${delimiters})` : ''}, NULL, ${word})`;
}

const printfFloat = (sql: string, p: { printf: string }) => `printf(${quoteString(p.printf)}, toFloat64(${sql}))`;
const formatSpelling: FormatSpelling = {
  text: quoteString,
  value: {
    d: (sql, p) => (p.plain ? `toString(${sql})` : `printf(${quoteString(p.printf)}, toInt64(${sql}))`),
    f: printfFloat,
    F: printfFloat,
    s: (sql) => `toString(${sql})`,
    t: (sql) => `ifNull(toString(${sql}), 'NULL')`,
  },
};

/** FORMAT: its pieces as a concat, which is NULL when any piece is. */
function format(call: RFunc, args: readonly Printed[]): string {
  const parts = formatParts(
    call.args,
    args.map((a) => a.sql),
    formatSpelling,
  );
  if (parts.length === 0) return "''";
  return parts.length === 1 ? parts[0]! : `concat(${parts.join(', ')})`;
}

const t = (emits: readonly string[], print: FunctionPrinter): Translation => ({ emits, print });
const list = (args: readonly Printed[]) => args.map((a) => a.sql).join(', ');
const simple = (name: string): Translation => t([name], (_c, args) => `${name}(${list(args)})`);
const float = (name: string): Translation => t([name, 'toFloat64'], (_c, args) => `${name}(${args.map((a) => `toFloat64(${a.sql})`).join(', ')})`);
const arr = (a: Printed) => arrayOf(a.sql, a.type);
const zone = (args: readonly Printed[], i: number) => args[i]?.sql ?? "'UTC'";
const bytesOrString = (x: Printed) => x.sql;

/** An aggregate: `name(args)` or its `Distinct` combinator, then the window. */
const aggregate = (name: string): Translation =>
  t([name, `${name}Distinct`], (call, args, ctx) => `${call.distinct ? `${name}Distinct` : name}(${list(args)})${ctx.over(call)}`);
const windowOnly = (name: string): Translation => t([name], (call, _args, ctx) => `${name}()${ctx.over(call)}`);

/**
 * The values of an aggregate as an array, NULLs kept (groupArray skips NULL values, so each value
 * travels in a tuple), DISTINCT and an `ORDER BY` inside the call applied.
 */
function collect(call: RFunc, x: string, keys: readonly OrderKey[]): string {
  const group = call.distinct ? 'groupUniqArray' : 'groupArray';
  if (keys.length === 0) return `arrayMap(t -> t.1, ${group}(tuple(${x})))`;
  const tuple = `tuple(${[x, ...keys.map((k) => k.sql)].join(', ')})`;
  const desc = keys[0]!.desc;
  const sort = desc ? 'arrayReverseSort' : 'arraySort';
  // arraySort and arrayReverseSort both put NULLs last; a key whose NULLs come first (BigQuery's
  // default ascending) is sorted after its NULL test, which puts them first.
  const sortKeys = keys.map((k, i) => {
    const key = `t.${i + 2}`;
    if (!k.nullsFirst) return key;
    return desc ? `isNull(${key}), ${key}` : `isNotNull(${key}), ${key}`;
  });
  return `arrayMap(t -> t.1, ${sort}(t -> tuple(${sortKeys.join(', ')}), ${group}(${tuple})))`;
}

const COLLECT = ['groupArray', 'groupUniqArray', 'arrayMap', 'arraySort', 'arrayReverseSort', 'tuple', 'tupleElement', 'lambda', 'isNull', 'isNotNull'];

/** The whole partition, whatever the ORDER BY. */
const WHOLE_PARTITION: WindowFrame = Object.freeze({
  units: 'rows',
  start: Object.freeze({ kind: 'unboundedPreceding' }),
  end: Object.freeze({ kind: 'unboundedFollowing' }),
});

/**
 * lag/lead see the whole partition in BigQuery (which gives them no frame of their own, nor does the
 * semantic pass); ClickHouse's lagInFrame/leadInFrame honour the frame, so it is the whole partition.
 */
function lagLead(name: string): Translation {
  return t([name, 'toNullable'], (call, args, ctx) => {
    const over = ctx.over(call, WHOLE_PARTITION);
    const fallback = args[2] ? args[2].sql : 'NULL';
    return `${name}(toNullable(${args[0]!.sql}), ${args[1] ? args[1].sql : '1'}, ${fallback})${over}`;
  });
}

function valueWindow(name: string): Translation {
  return t([name], (call, [x], ctx) => `${name}(${x!.sql})${call.ignoreNulls ? '' : ' RESPECT NULLS'}${ctx.over(call)}`);
}

function generate(kind: 'timestamp' | 'date' | 'int'): Translation {
  return t(
    [
      'arrayMap',
      'range',
      'toUInt64',
      'greatest',
      'throwIf',
      'intDiv',
      'toUnixTimestamp64Micro',
      'fromUnixTimestamp64Micro',
      'toDate32',
      'toDateTime64',
      'lambda',
      'abs',
    ],
    (call, [s, e, step]) => {
      const max = elementLimit(call);
      if (kind === 'int') {
        const by = step ? step.sql : '1';
        const count = `intDiv(${e!.sql} - ${s!.sql}, ${by})`;
        return `arrayMap(i -> ${s!.sql} + i * ${by}, range(toUInt64(greatest(${count} + 1, 0) + throwIf(abs(${count}) > ${max}, '${tooManyArray(max)}'))))`;
      }
      const from = kind === 'date' ? `toDateTime64(${s!.sql}, 6, 'UTC')` : s!.sql;
      const to = kind === 'date' ? `toDateTime64(${e!.sql}, 6, 'UTC')` : e!.sql;
      const by = step ? step.sql : 'toIntervalDay(1)';
      // Step in microseconds: adding the interval to the epoch gives its length (fixed-length units).
      const micros = `toUnixTimestamp64Micro(toDateTime64(0, 6, 'UTC') + ${by})`;
      const count = `intDiv(toUnixTimestamp64Micro(${to}) - toUnixTimestamp64Micro(${from}), ${micros})`;
      const item = `fromUnixTimestamp64Micro(toUnixTimestamp64Micro(${from}) + i * ${micros}, 'UTC')`;
      const message = kind === 'date' ? tooManyArray(max) : tooManyElements(max);
      return `arrayMap(i -> ${kind === 'date' ? `toDate32(${item})` : item}, range(toUInt64(greatest(${count} + 1, 0) + throwIf(${count} > ${max}, '${message}'))))`;
    },
  );
}

/** JSON_VALUE / JSON_QUERY with a constant `$.a.b[0]` path. */
function jsonPath(scalarOnly: boolean): Translation {
  return t(['JSONType', 'JSONExtractString', 'JSONExtractRaw', 'if', 'in', 'toString'], (call, [doc]) => {
    const p = call.args[1];
    const path = p?.kind === 'literal' && p.value.type === 'string' ? p.value.value : '$';
    const keys = [...path.matchAll(/\.([A-Za-z_][A-Za-z0-9_]*)|\.`([^`]*)`|\[(\d+)\]/g)].map((m) =>
      m[3] !== undefined ? String(Number(m[3]) + 1) : quoteString(m[1] ?? m[2] ?? ''),
    );
    // A record is read as its JSON text (JSONType and JSONExtract* take text).
    const args = [doc!.type.k === 'record' ? `toString(${doc!.sql})` : doc!.sql, ...keys].join(', ');
    if (!scalarOnly) return `if(JSONType(${args}) IN ('Object', 'Array'), JSONExtractRaw(${args}), NULL)`;
    return `if(JSONType(${args}) IN ('Object', 'Array', 'Null'), NULL, if(JSONType(${args}) = 'String', JSONExtractString(${args}), JSONExtractRaw(${args})))`;
  });
}

function hash(name: string): Translation {
  return t([name], (_c, [x]) => `${name}(${bytesOrString(x!)})`);
}

const isInt = (type: VType) => isScalar(type, 'int');

const CODEPOINT = ['multiIf', 'empty', 'reinterpretAsUInt8', 'substring', 'bitAnd', 'less', 'plus', 'multiply'];

/** The code point of the first character (0 for ''), decoded from its UTF-8 bytes. */
function codepoint(s: string): string {
  const b = (i: number) => `reinterpretAsUInt8(substring(${s}, ${i}, 1))`;
  const low = (i: number) => `bitAnd(${b(i)}, 63)`;
  return `multiIf(empty(${s}), 0, ${b(1)} < 128, ${b(1)}, ${b(1)} < 224, bitAnd(${b(1)}, 31) * 64 + ${low(2)}, ${b(1)} < 240, bitAnd(${b(1)}, 15) * 4096 + ${low(2)} * 64 + ${low(3)}, bitAnd(${b(1)}, 7) * 262144 + ${low(2)} * 4096 + ${low(3)} * 64 + ${low(4)})`;
}

const translations: FunctionTable = {
  regexp_contains: t(['match'], (_c, [s, re]) => `match(${s!.sql}, ${re!.sql})`),
  regexp_extract: t(
    ['match', 'regexpExtract', 'if'],
    (call, [s, re]) => `if(match(${s!.sql}, ${re!.sql}), regexpExtract(${s!.sql}, ${re!.sql}, ${captureGroups(call) > 0 ? 1 : 0}), NULL)`,
  ),
  regexp_substr: t(
    ['match', 'regexpExtract', 'if'],
    (call, [s, re]) => `if(match(${s!.sql}, ${re!.sql}), regexpExtract(${s!.sql}, ${re!.sql}, ${captureGroups(call) > 0 ? 1 : 0}), NULL)`,
  ),
  regexp_extract_all: t(['extractAll', 'extractAllGroupsVertical', 'arrayMap', 'lambda', 'tupleElement'], (call, [s, re]) =>
    captureGroups(call) > 0 ? `arrayMap(g -> g[1], extractAllGroupsVertical(${s!.sql}, ${re!.sql}))` : `extractAll(${s!.sql}, ${re!.sql})`,
  ),
  regexp_replace: t(['replaceRegexpAll'], (_c, [s, re, rep]) => `replaceRegexpAll(${s!.sql}, ${re!.sql}, ${rep!.sql})`),
  starts_with: simple('startsWith'),
  ends_with: simple('endsWith'),
  lower: t(['lowerUTF8'], (_c, [x]) => `lowerUTF8(${x!.sql})`),
  upper: t(['upperUTF8'], (_c, [x]) => `upperUTF8(${x!.sql})`),
  // BigQuery's CONCAT is NULL when any argument is; so is ClickHouse's on Nullable arguments.
  concat: t(['concat', 'toString'], (_c, args) => `concat(${args.map((a) => (isScalar(a.type, 'string') ? a.sql : `toString(${a.sql})`)).join(', ')})`),
  length: t(['lengthUTF8', 'length'], (_c, [x]) => (isScalar(x!.type, 'bytes') ? `length(${x!.sql})` : `lengthUTF8(${x!.sql})`)),
  char_length: t(['lengthUTF8'], (_c, [x]) => `lengthUTF8(${x!.sql})`),
  character_length: t(['lengthUTF8'], (_c, [x]) => `lengthUTF8(${x!.sql})`),
  byte_length: t(['length'], (_c, [x]) => `length(${x!.sql})`),
  octet_length: t(['length'], (_c, [x]) => `length(${x!.sql})`),
  strpos: t(['positionUTF8'], (_c, [s, sub]) => `positionUTF8(${s!.sql}, ${sub!.sql})`),
  // BigQuery: a start of 0 is 1; negative counts from the end.
  substr: t(['substringUTF8', 'if'], (_c, [s, from, n]) => `substringUTF8(${s!.sql}, if(${from!.sql} = 0, 1, ${from!.sql})${n ? `, ${n.sql}` : ''})`),
  substring: t(['substringUTF8', 'if'], (_c, [s, from, n]) => `substringUTF8(${s!.sql}, if(${from!.sql} = 0, 1, ${from!.sql})${n ? `, ${n.sql}` : ''})`),
  split: t(['splitByString'], (_c, [s, d]) => `splitByString(${d ? d.sql : "','"}, ${s!.sql})`),
  trim: t(['trimBoth', 'trim'], (_c, [s, chars]) => (chars ? `trim(BOTH ${chars.sql} FROM ${s!.sql})` : `trimBoth(${s!.sql})`)),
  ltrim: t(['trimLeft', 'trim'], (_c, [s, chars]) => (chars ? `trim(LEADING ${chars.sql} FROM ${s!.sql})` : `trimLeft(${s!.sql})`)),
  rtrim: t(['trimRight', 'trim'], (_c, [s, chars]) => (chars ? `trim(TRAILING ${chars.sql} FROM ${s!.sql})` : `trimRight(${s!.sql})`)),
  replace: simple('replaceAll'),
  ascii: t(CODEPOINT, (_c, [x]) => codepoint(x!.sql)),
  unicode: t(CODEPOINT, (_c, [x]) => codepoint(x!.sql)),
  chr: t(['char', 'toUInt32'], (_c, [x]) => `char(toUInt32(${x!.sql}))`),
  left: t(['leftUTF8'], (_c, [x, n]) => `leftUTF8(${x!.sql}, ${n!.sql})`),
  right: t(['rightUTF8'], (_c, [x, n]) => `rightUTF8(${x!.sql}, ${n!.sql})`),
  lpad: t(['leftPadUTF8', 'toUInt64'], (_c, [x, n, pad]) => `leftPadUTF8(${x!.sql}, toUInt64(${n!.sql}), ${pad ? pad.sql : "' '"})`),
  rpad: t(['rightPadUTF8', 'toUInt64'], (_c, [x, n, pad]) => `rightPadUTF8(${x!.sql}, toUInt64(${n!.sql}), ${pad ? pad.sql : "' '"})`),
  repeat: t(['repeat', 'toUInt64'], (_c, [x, n]) => `repeat(${x!.sql}, toUInt64(${n!.sql}))`),
  reverse: t(['reverseUTF8'], (_c, [x]) => `reverseUTF8(${x!.sql})`),
  translate: t(['translateUTF8'], (_c, [x, a, b]) => `translateUTF8(${x!.sql}, ${a!.sql}, ${b!.sql})`),
  to_base64: t(['base64Encode'], (_c, [x]) => `base64Encode(${x!.sql})`),
  from_base64: t(['base64Decode'], (_c, [x]) => `base64Decode(${x!.sql})`),
  to_hex: t(['lower', 'hex'], (_c, [x]) => `lower(hex(${x!.sql}))`),
  from_hex: t(['unhex'], (_c, [x]) => `unhex(${x!.sql})`),
  md5: hash('MD5'),
  sha1: hash('SHA1'),
  sha256: hash('SHA256'),
  initcap: t(
    [
      'arrayStringConcat',
      'arrayMap',
      'lambda',
      'position',
      'lengthUTF8',
      'upperUTF8',
      'lowerUTF8',
      'ngrams',
      'ifNull',
      'isNull',
      'arrayElement',
      'arrayEnumerate',
    ],
    (_c, [x, d]) => initcap(x!.sql, d?.sql),
  ),
  format: t(['printf', 'concat', 'toString', 'toInt64', 'toFloat64', 'ifNull'], (call, args) => format(call, args)),
  'net.host': t(['replaceRegexpAll', 'replaceRegexpOne', 'extract', 'nullIf'], (_c, [x]) => {
    const host = `extract(replaceRegexpAll(${x!.sql}, ${quoteString(NET_HOST_TRIM)}, ''), ${quoteString(NET_HOST_PATTERN)})`;
    const dots = `replaceRegexpOne(replaceRegexpOne(${host}, ${quoteString(NET_HOST_LEADING_DOTS)}, ''), ${quoteString(NET_HOST_TRAILING_DOTS)}, '.')`;
    return `nullIf(${dots}, '')`;
  }),
  json_value: jsonPath(true),
  json_extract_scalar: jsonPath(true),
  json_query: jsonPath(false),
  json_extract: jsonPath(false),
  to_json_string: t(['toJSONString'], (_c, [x]) => `toJSONString(${x!.sql})`),

  ifnull: t(['ifNull'], (_c, [a, b]) => `ifNull(${a!.sql}, ${b!.sql})`),
  coalesce: simple('coalesce'),
  nullif: t(['nullIf'], (_c, [a, b]) => `nullIf(${a!.sql}, ${b!.sql})`),
  if: t(['if'], (_c, [c, a, b]) => `if(${c!.sql}, ${a!.sql}, ${b!.sql})`),
  greatest: simple('greatest'),
  least: simple('least'),
  zeroifnull: t(['ifNull'], (_c, [x]) => `ifNull(${x!.sql}, 0)`),
  nullifzero: t(['nullIf'], (_c, [x]) => `nullIf(${x!.sql}, 0)`),

  abs: simple('abs'),
  // Half away from zero, computed as the DuckDB engine does (the same float rounding).
  round: t(['sign', 'floor', 'abs', 'pow', 'toFloat64'], (_c, [x, d]) => {
    const v = `toFloat64(${x!.sql})`;
    const n = d ? d.sql : '0';
    return `(sign(${v}) * floor(abs(${v}) * pow(10, ${n}) + 0.5) / pow(10, ${n}))`;
  }),
  ceil: t(['ceil', 'toFloat64'], (_c, [x]) => `ceil(toFloat64(${x!.sql}))`),
  ceiling: t(['ceil', 'toFloat64'], (_c, [x]) => `ceil(toFloat64(${x!.sql}))`),
  floor: t(['floor', 'toFloat64'], (_c, [x]) => `floor(toFloat64(${x!.sql}))`),
  mod: t(['modulo'], (_c, [a, b]) => `modulo(${a!.sql}, ${b!.sql})`),
  div: t(['toInt64', 'trunc'], (_c, [a, b]) => `toInt64(trunc(${a!.sql} / ${b!.sql}))`),
  sqrt: simple('sqrt'),
  pow: simple('pow'),
  power: simple('pow'),
  safe_divide: t(['if'], (_c, [a, b]) => `if(${b!.sql} = 0, NULL, ${a!.sql} / ${b!.sql})`),
  // Integer overflow is NULL: computed in Int128, then narrowed back.
  safe_add: t(['accurateCastOrNull', 'toInt128'], (call, [a, b]) =>
    isInt(call.type) ? `accurateCastOrNull(toInt128(${a!.sql}) + ${b!.sql}, 'Int64')` : `(${a!.sql} + ${b!.sql})`,
  ),
  safe_subtract: t(['accurateCastOrNull', 'toInt128'], (call, [a, b]) =>
    isInt(call.type) ? `accurateCastOrNull(toInt128(${a!.sql}) - ${b!.sql}, 'Int64')` : `(${a!.sql} - ${b!.sql})`,
  ),
  safe_multiply: t(['accurateCastOrNull', 'toInt128'], (call, [a, b]) =>
    isInt(call.type) ? `accurateCastOrNull(toInt128(${a!.sql}) * ${b!.sql}, 'Int64')` : `(${a!.sql} * ${b!.sql})`,
  ),
  safe_negate: t(['accurateCastOrNull', 'toInt128'], (call, [x]) => (isInt(call.type) ? `accurateCastOrNull(-toInt128(${x!.sql}), 'Int64')` : `(-${x!.sql})`)),
  ieee_divide: t(['toFloat64'], (_c, [a, b]) => `(toFloat64(${a!.sql}) / ${b!.sql})`),
  sign: simple('sign'),
  is_inf: t(['isInfinite', 'toFloat64'], (_c, [x]) => `isInfinite(toFloat64(${x!.sql}))`),
  is_nan: t(['isNaN', 'toFloat64'], (_c, [x]) => `isNaN(toFloat64(${x!.sql}))`),
  exp: float('exp'),
  ln: float('log'),
  // BigQuery's LOG(x) is the natural logarithm; LOG(x, b) is base b.
  log: t(['log', 'toFloat64'], (_c, [x, b]) => (b ? `(log(toFloat64(${x!.sql})) / log(toFloat64(${b.sql})))` : `log(toFloat64(${x!.sql}))`)),
  log10: float('log10'),
  cbrt: float('cbrt'),
  trunc: t(['trunc', 'toFloat64'], (_c, [x, n]) => (n ? `trunc(toFloat64(${x!.sql}), ${n.sql})` : `trunc(toFloat64(${x!.sql}))`)),
  cos: float('cos'),
  sin: float('sin'),
  tan: float('tan'),
  acos: float('acos'),
  asin: float('asin'),
  atan: float('atan'),
  atan2: float('atan2'),
  cosh: float('cosh'),
  sinh: float('sinh'),
  tanh: float('tanh'),
  acosh: float('acosh'),
  asinh: float('asinh'),
  atanh: float('atanh'),
  cot: t(['tan', 'toFloat64'], (_c, [x]) => `(1 / tan(toFloat64(${x!.sql})))`),
  rand: t(['randCanonical'], () => 'randCanonical()'),

  array_length: t(['length', 'if', 'empty', 'JSONAllPaths', 'isNull'], (_c, [a]) => {
    if (a!.type.k === 'record') return `if(empty(JSONAllPaths(${a!.sql})), 0, 1)`;
    if (a!.type.k === 'missing') return '0';
    // An absent list is NULL (its length NULL), as on DuckDB.
    return `if(isNull(${a!.sql}), NULL, length(${arr(a!)}))`;
  }),
  generate_timestamp_array: generate('timestamp'),
  generate_date_array: generate('date'),
  generate_array: generate('int'),
  array_concat: t(['arrayConcat'], (_c, args) => `arrayConcat(${args.map(arr).join(', ')})`),
  array_reverse: t(['arrayReverse'], (_c, [x]) => `arrayReverse(${arr(x!)})`),
  array_to_string: t(
    ['arrayStringConcat', 'arrayFilter', 'lambda', 'isNotNull'],
    (_c, [x, sep]) => `arrayStringConcat(arrayFilter(v -> isNotNull(v), ${arr(x!)}), ${sep!.sql})`,
  ),
  array_first: t(['arrayElementOrNull'], (_c, [x]) => `arrayElementOrNull(${arr(x!)}, 1)`),
  array_last: t(['arrayElementOrNull'], (_c, [x]) => `arrayElementOrNull(${arr(x!)}, -1)`),
  array_slice: t(['arraySlice', 'length', 'greatest', 'least', 'ifNull', 'toInt64'], (_c, [a, s, e]) => {
    // 0-based inclusive offsets, negative ones from the end, clamped to the list. A list is never
    // NULL here: NULL offsets give an empty one.
    const n = `toInt64(length(${arr(a!)}))`;
    const from = `greatest(if(${s!.sql} < 0, ${n} + ${s!.sql}, ${s!.sql}), 0)`;
    const to = `least(if(${e!.sql} < 0, ${n} + ${e!.sql}, ${e!.sql}), ${n} - 1)`;
    return `arraySlice(${arr(a!)}, ${from} + 1, ifNull(greatest(${to} - ${from} + 1, 0), 0))`;
  }),

  current_timestamp: t(['now64'], () => "now64(6, 'UTC')"),
  current_datetime: t(['now64', 'toDateTime64', 'toString'], (_c, args) => tzConvert("now64(6, 'UTC')", zone(args, 0))),
  current_date: t(['now64', 'toDate32'], (_c, args) => `toDate32(now64(6, 'UTC'), ${zone(args, 0)})`),
  timestamp_trunc: t(
    [
      'toStartOfInterval',
      'toStartOfDay',
      'toStartOfWeek',
      'toStartOfMonth',
      'toStartOfQuarter',
      'toStartOfYear',
      'toDateTime64',
      'toTimeZone',
      ...Object.values(INTERVALS).filter((x): x is string => x !== undefined),
    ],
    (call, [ts, , tz]) => truncate(ts!.sql, part(call, 1), tz ? tz.sql : "'UTC'"),
  ),
  datetime_trunc: t(
    ['toStartOfInterval', 'toStartOfDay', 'toStartOfWeek', 'toStartOfMonth', 'toStartOfQuarter', 'toStartOfYear', 'toDateTime64'],
    (call, [d]) => truncate(d!.sql, part(call, 1)),
  ),
  date_trunc: t(
    ['toStartOfInterval', 'toStartOfDay', 'toStartOfWeek', 'toStartOfMonth', 'toStartOfQuarter', 'toStartOfYear', 'toDateTime64', 'toDate32'],
    (call, [d]) => {
      if (d!.type.k === 'scalar' && d!.type.t !== 'date') return truncate(d!.sql, part(call, 1));
      return `toDate32(${truncate(`toDateTime64(${d!.sql}, 6, 'UTC')`, part(call, 1))})`;
    },
  ),
  timestamp_sub: t([], (_c, [ts, i]) => `(${ts!.sql} - ${i!.sql})`),
  timestamp_add: t([], (_c, [ts, i]) => `(${ts!.sql} + ${i!.sql})`),
  datetime_sub: t([], (_c, [d, i]) => `(${d!.sql} - ${i!.sql})`),
  datetime_add: t([], (_c, [d, i]) => `(${d!.sql} + ${i!.sql})`),
  date_sub: t(['toDate32'], (_c, [d, i]) => `toDate32(${d!.sql} - ${i!.sql})`),
  date_add: t(['toDate32'], (_c, [d, i]) => `toDate32(${d!.sql} + ${i!.sql})`),
  timestamp_diff: t(['dateDiff', 'toUnixTimestamp64Micro', 'intDiv', 'toStartOfWeek'], (call, [a, b]) => diff(part(call, 2), a!.sql, b!.sql)),
  datetime_diff: t(['dateDiff', 'toUnixTimestamp64Micro', 'intDiv', 'toStartOfWeek'], (call, [a, b]) => diff(part(call, 2), a!.sql, b!.sql)),
  date_diff: t(['dateDiff', 'toStartOfWeek'], (call, [a, b]) => diff(part(call, 2), a!.sql, b!.sql)),
  format_timestamp: t(TIME_FORMAT_EMITS, (call, [, ts, tz]) =>
    formatTime(call, 'format_timestamp', tz ? tzConvert(ts!.sql, tz.sql) : ts!.sql, ts!.sql, tz !== undefined),
  ),
  format_date: t(TIME_FORMAT_EMITS, (call, [, d]) => formatTime(call, 'format_date', d!.sql, d!.sql, false)),
  format_datetime: t(TIME_FORMAT_EMITS, (call, [, d]) => formatTime(call, 'format_datetime', d!.sql, d!.sql, false)),
  datetime: t(['toDateTime64', 'toString', 'makeDateTime64', ...STRING_TO_TIMESTAMP_EMITS], (_c, args) => {
    const [x, tz] = args;
    if (args.length === 6) return `makeDateTime64(${args.map((a) => a.sql).join(', ')}, 0, 6, 'UTC')`;
    if (tz) return tzConvert(x!.sql, tz.sql);
    return isScalar(x!.type, 'string') ? stringToTimestamp(x!.sql) : `toDateTime64(${x!.sql}, 6, 'UTC')`;
  }),
  timestamp: t(['toDateTime64', 'toString', 'toTimeZone', ...STRING_TO_TIMESTAMP_EMITS], (_c, [x, tz]) => {
    if (tz) {
      // The text (or DATETIME) is wall-clock time in `tz`.
      const text = isScalar(x!.type, 'string') ? x!.sql : `toString(${x!.sql})`;
      return `toTimeZone(parseDateTime64BestEffort(${text}, 6, ${tz.sql}), 'UTC')`;
    }
    if (isScalar(x!.type, 'timestamp')) return x!.sql;
    if (isScalar(x!.type, 'string')) return stringToTimestamp(x!.sql);
    return `toDateTime64(${x!.sql}, 6, 'UTC')`;
  }),
  date: t(['toDate32', 'makeDate32'], (_c, args) => {
    const [x, tz] = args;
    if (args.length === 3) return `makeDate32(${args.map((a) => a.sql).join(', ')})`;
    return tz ? `toDate32(${x!.sql}, ${tz.sql})` : `toDate32(${x!.sql})`;
  }),
  unix_date: t(['toInt64', 'toDate32'], (_c, [d]) => `toInt64(toDate32(${d!.sql}))`),
  date_from_unix_date: t(['toDate32', 'toInt64'], (_c, [n]) => `toDate32(toInt64(${n!.sql}))`),
  parse_timestamp: t(TIME_PARSE_EMITS, (call, [, x, tz]) =>
    parseValue(parsePlan(constantFormat(call.args, 'parse_timestamp'), 'parse_timestamp'), x!.sql, 'parse_timestamp', parseSpelling, tz?.sql),
  ),
  parse_datetime: t(TIME_PARSE_EMITS, (call, [, x]) =>
    parseValue(parsePlan(constantFormat(call.args, 'parse_datetime'), 'parse_datetime'), x!.sql, 'parse_datetime', parseSpelling),
  ),
  parse_date: t(
    [...TIME_PARSE_EMITS, 'toDate32'],
    (call, [, x]) => `toDate32(${parseValue(parsePlan(constantFormat(call.args, 'parse_date'), 'parse_date'), x!.sql, 'parse_date', parseSpelling)})`,
  ),
  last_day: t(['toLastDayOfMonth', 'toDate32'], (_c, [d]) => `toDate32(toLastDayOfMonth(${d!.sql}))`),
  unix_micros: t(['toUnixTimestamp64Micro'], (_c, [x]) => `toUnixTimestamp64Micro(${x!.sql})`),
  unix_millis: t(['toUnixTimestamp64Micro', 'intDiv'], (_c, [x]) => `intDiv(toUnixTimestamp64Micro(${x!.sql}), 1000)`),
  unix_seconds: t(['toUnixTimestamp64Micro', 'intDiv'], (_c, [x]) => `intDiv(toUnixTimestamp64Micro(${x!.sql}), 1000000)`),
  timestamp_micros: t(['fromUnixTimestamp64Micro', 'toInt64'], (_c, [x]) => `fromUnixTimestamp64Micro(toInt64(${x!.sql}), 'UTC')`),
  timestamp_millis: t(['fromUnixTimestamp64Micro', 'toInt64'], (_c, [x]) => `fromUnixTimestamp64Micro(toInt64(${x!.sql}) * 1000, 'UTC')`),
  timestamp_seconds: t(['fromUnixTimestamp64Micro', 'toInt64'], (_c, [x]) => `fromUnixTimestamp64Micro(toInt64(${x!.sql}) * 1000000, 'UTC')`),

  count: t(['count', 'countDistinct'], (call, args, ctx) => {
    if (call.star) return `count()${ctx.over(call)}`;
    return `${call.distinct ? 'countDistinct' : 'count'}(${list(args)})${ctx.over(call)}`;
  }),
  // aggregate_functions_null_for_empty makes countIf NULL over no rows; BigQuery's COUNTIF is 0.
  countif: t(['countIf', 'uniqExactIf', 'ifNull'], (call, [x], ctx) => {
    // COUNTIF(DISTINCT x) counts the distinct TRUE values: 0 or 1.
    const count = call.distinct ? `uniqExactIf(${x!.sql}, ${x!.sql})` : `countIf(${x!.sql})`;
    return `ifNull(${count}${ctx.over(call)}, 0)`;
  }),
  sum: aggregate('sum'),
  avg: aggregate('avg'),
  min: t(['min'], (call, [x], ctx) => `min(${x!.sql})${ctx.over(call)}`),
  max: t(['max'], (call, [x], ctx) => `max(${x!.sql})${ctx.over(call)}`),
  any_value: t(['any'], (call, [x], ctx) => `any(${x!.sql})${ctx.over(call)}`),
  logical_or: t(['max', 'toBool'], (call, [x], ctx) => `toBool(max(${x!.sql})${ctx.over(call)})`),
  logical_and: t(['min', 'toBool'], (call, [x], ctx) => `toBool(min(${x!.sql})${ctx.over(call)})`),
  stddev: aggregate('stddevSamp'),
  variance: aggregate('varSamp'),
  stddev_samp: aggregate('stddevSamp'),
  stddev_pop: aggregate('stddevPop'),
  var_samp: aggregate('varSamp'),
  var_pop: aggregate('varPop'),
  corr: aggregate('corr'),
  covar_pop: aggregate('covarPop'),
  covar_samp: aggregate('covarSamp'),
  bit_and: aggregate('groupBitAnd'),
  bit_or: aggregate('groupBitOr'),
  bit_xor: aggregate('groupBitXor'),
  max_by: t(['argMax'], (call, [x, y], ctx) => `argMax(${x!.sql}, ${y!.sql})${ctx.over(call)}`),
  min_by: t(['argMin'], (call, [x, y], ctx) => `argMin(${x!.sql}, ${y!.sql})${ctx.over(call)}`),
  approx_count_distinct: t(['countDistinct'], (call, [x], ctx) => `countDistinct(${x!.sql})${ctx.over(call)}`),
  string_agg: t(['arrayStringConcat', 'arrayFilter', 'nullIf', 'isNotNull', ...COLLECT], (call, [x, sep], ctx) => {
    const values = `arrayFilter(v -> isNotNull(v), ${collect(call, x!.sql, orderKeys(call, ctx))})`;
    return `nullIf(arrayStringConcat(${values}, ${sep ? sep.sql : "','"}), '')${ctx.over(call)}`;
  }),
  array_agg: t(['arraySlice', 'arrayFilter', 'isNotNull', ...COLLECT], (call, [x], ctx) => {
    let sql = collect(call, x!.sql, orderKeys(call, ctx));
    if (call.ignoreNulls) sql = `arrayFilter(v -> isNotNull(v), ${sql})`;
    sql += ctx.over(call);
    return call.limit ? `arraySlice(${sql}, 1, ${ctx.print(call.limit)})` : sql;
  }),
  approx_quantiles: t(['quantilesExactLow'], (call, [x], ctx) => {
    const n = call.args[1];
    const count = n?.kind === 'literal' && n.value.type === 'number' ? Number(n.value.value) : 1;
    const points = Array.from({ length: count + 1 }, (_, i) => String(i / count)).join(', ');
    // Discrete quantiles: like BigQuery, every value returned is one of the inputs.
    return `quantilesExactLow(${points})(${x!.sql})${ctx.over(call)}`;
  }),

  row_number: windowOnly('row_number'),
  rank: windowOnly('rank'),
  dense_rank: windowOnly('dense_rank'),
  percent_rank: windowOnly('percent_rank'),
  cume_dist: windowOnly('cume_dist'),
  ntile: t(['ntile'], (call, [n], ctx) => `ntile(${n!.sql})${ctx.over(call)}`),
  lag: lagLead('lagInFrame'),
  lead: lagLead('leadInFrame'),
  first_value: valueWindow('first_value'),
  last_value: valueWindow('last_value'),
  nth_value: t(['nth_value'], (call, [x, n], ctx) => {
    if (call.ignoreNulls) throw new QuarryError('QUERY_NOT_ALLOWED', 'NTH_VALUE ... IGNORE NULLS is not supported on the ClickHouse engine');
    return `nth_value(${x!.sql}, ${n!.sql})${ctx.over(call)}`;
  }),
  percentile_cont: t(
    ['quantileExactInclusive', 'toFloat64'],
    (call, [x, p], ctx) => `quantileExactInclusive(toFloat64(${p!.sql}))(${x!.sql})${ctx.over(call)}`,
  ),
  percentile_disc: t(['quantileExactLow', 'toFloat64'], (call, [x, p], ctx) => `quantileExactLow(toFloat64(${p!.sql}))(${x!.sql})${ctx.over(call)}`),
};

/** The size guard of value-bounds.ts: `throwIf` before the function builds a value past the limit. */
const valueGuard: GuardSpelling = {
  byteLength: (x) => `toFloat64(length(${x.sql}))`,
  guard: (value, tooLarge, message) => `(${value} + throwIf(ifNull(${tooLarge}, 0), ${quoteString(message)}))`,
  emits: ['throwIf', 'ifNull', 'length', 'toFloat64', 'multiply', 'greater', 'plus'],
};

export const clickHouseFunctions: FunctionTable = withValueGuards(translations, valueGuard);

/** An ORDER BY key inside an aggregate, printed. */
interface OrderKey {
  sql: string;
  desc: boolean;
  nullsFirst: boolean;
}

/** The ORDER BY keys inside an aggregate, printed; one direction for all (arraySort sorts one way). */
function orderKeys(call: RFunc, ctx: FunctionContext): OrderKey[] {
  const keys = call.orderBy.map((o) => ({ sql: ctx.print(o.expr), desc: o.desc, nullsFirst: o.nulls === 'first' }));
  if (keys.some((k) => k.desc !== keys[0]!.desc)) {
    throw new QuarryError('QUERY_NOT_ALLOWED', `${call.name.toUpperCase()} ordered both ascending and descending is not supported on the ClickHouse engine`);
  }
  return keys;
}

/** Every ClickHouse function the table can emit (for the lock-down's allow-list). */
export function tableEmits(): string[] {
  const out = new Set<string>();
  for (const tr of Object.values(clickHouseFunctions)) if ('emits' in tr) for (const f of tr.emits) out.add(f);
  return [...out];
}
