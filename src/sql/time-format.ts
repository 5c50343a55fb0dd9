/**
 * BigQuery's format elements for FORMAT_/PARSE_ TIMESTAMP, DATETIME and DATE: the one registry of
 * what each element means, the reader of a format string into pieces, and, per function, what the
 * pieces become; each engine's function table spells the result (engines/<engine>/…-functions.ts).
 * The format must be a constant string. The semantics are ZetaSQL's (date_time_util.cc,
 * parse_date_time.cc), which BigQuery runs:
 *
 * - FORMAT_DATE writes time and zone elements (%H, %E3S, %z, …) as they are written, and
 *   FORMAT_DATETIME writes zone elements (%z, %Ez, %Z) as they are written: ZetaSQL escapes them.
 * - PARSE_DATE refuses time and zone elements, PARSE_DATETIME zone elements (ZetaSQL: "Invalid
 *   format: %H is not allowed for the DATE type").
 * - Parsing: a run of white space in the format matches any white space (none too), leading and
 *   trailing white space is allowed, names and AM/PM in any case, numbers of 1 or 2 digits (%Y up
 *   to 5, 4 before another element; %E4Y exactly 4), unspecified fields from 1970-01-01 00:00:00,
 *   the last element that sets a field wins, %y is 1969–2068, %s overrides everything, %Ez also
 *   reads `Z`, %E*S reads any number of fraction digits (beyond 6 ignored), %E<n>S up to n, a
 *   fraction is optional. A field out of range (month 13, 31 September, offset past ±14:00) fails.
 *
 * Parsing reads the text with one anchored RE2 pattern (both engines use RE2) and builds the value
 * from its groups, so both engines parse alike; the engines' own strptime/parseDateTime differ
 * from BigQuery and from each other (white space, digit counts, optional fractions, `Z`).
 */
import { QuarryError } from '../errors.ts';
import type { RExpr } from './resolved.ts';
import { assertNever } from './types.ts';

export type TimeFormatFunction = 'format_timestamp' | 'format_datetime' | 'format_date' | 'parse_timestamp' | 'parse_datetime' | 'parse_date';

/** A value a format element writes. */
export type Field =
  | 'year'
  | 'year4'
  | 'year2'
  | 'century'
  | 'isoYear'
  | 'isoYear2'
  | 'month'
  | 'monthName'
  | 'monthAbbr'
  | 'quarter'
  | 'day'
  | 'daySpace'
  | 'dayOfYear'
  | 'weekdayName'
  | 'weekdayAbbr'
  | 'weekdayMonday1'
  | 'weekdaySunday0'
  | 'weekSunday'
  | 'weekMonday'
  | 'isoWeek'
  | 'hour'
  | 'hourSpace'
  | 'hour12'
  | 'hour12Space'
  | 'ampm'
  | 'ampmLower'
  | 'minute'
  | 'second'
  | 'epochSeconds'
  | 'offset'
  | 'offsetColon'
  | 'zoneName';

export type Piece =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'field'; readonly field: Field }
  /** Seconds (2 digits) and a fraction: `digits` digits, or `*` as many as needed (none for whole seconds). */
  | { readonly kind: 'seconds'; readonly digits: number | '*' };

/** What part of a value an element reads: DATE has no time, DATETIME no zone. */
type Needs = 'date' | 'time' | 'zone' | 'none';

export interface ElementDef {
  readonly meaning: string;
  readonly pieces: readonly Piece[];
  readonly needs: Needs;
  /** Why PARSE_* refuses the element (it is then FORMAT only). */
  readonly noParse?: string;
}

const text = (t: string): Piece => Object.freeze({ kind: 'text', text: t });
const f = (field: Field): Piece => Object.freeze({ kind: 'field', field });
const secs = (digits: number | '*'): Piece => Object.freeze({ kind: 'seconds', digits });

function el(needs: Needs, meaning: string, pieces: readonly Piece[], noParse?: string): ElementDef {
  return Object.freeze({ meaning, pieces: Object.freeze([...pieces]), needs, ...(noParse ? { noParse } : {}) });
}

const WEEKS = 'week-based dates are not supported when parsing';

/** Every element, by its spelling after `%`. `%E<n>S` (n = 0…9) is read by `elementDef`. */
export const ELEMENTS: Readonly<Record<string, ElementDef>> = Object.freeze({
  A: el('date', 'full weekday name (Wednesday); ignored when parsing', [f('weekdayName')]),
  a: el('date', 'abbreviated weekday name (Wed); ignored when parsing', [f('weekdayAbbr')]),
  B: el('date', 'full month name (January)', [f('monthName')]),
  b: el('date', 'abbreviated month name (Jan)', [f('monthAbbr')]),
  h: el('date', 'as %b', [f('monthAbbr')]),
  C: el('date', 'century, 00-99', [f('century')], 'the century is not supported when parsing; use %Y'),
  c: el('time', 'date and time as %a %b %e %H:%M:%S %Y', [
    f('weekdayAbbr'),
    text(' '),
    f('monthAbbr'),
    text(' '),
    f('daySpace'),
    text(' '),
    f('hour'),
    text(':'),
    f('minute'),
    text(':'),
    f('second'),
    text(' '),
    f('year'),
  ]),
  D: el('date', 'date as %m/%d/%y', [f('month'), text('/'), f('day'), text('/'), f('year2')]),
  d: el('date', 'day of the month, 01-31', [f('day')]),
  e: el('date', 'day of the month, 1-31, single digits after a space', [f('daySpace')]),
  F: el('date', 'date as %Y-%m-%d', [f('year'), text('-'), f('month'), text('-'), f('day')]),
  G: el('date', 'ISO 8601 year', [f('isoYear')], WEEKS),
  g: el('date', 'ISO 8601 year without century, 00-99', [f('isoYear2')], WEEKS),
  H: el('time', 'hour, 00-23', [f('hour')]),
  I: el('time', 'hour, 01-12', [f('hour12')]),
  j: el('date', 'day of the year, 001-366', [f('dayOfYear')], 'the day of the year is not supported when parsing'),
  k: el('time', 'hour, 0-23, single digits after a space', [f('hourSpace')]),
  l: el('time', 'hour, 1-12, single digits after a space', [f('hour12Space')]),
  M: el('time', 'minute, 00-59', [f('minute')]),
  m: el('date', 'month, 01-12', [f('month')]),
  n: el('none', 'a newline (when parsing: any white space)', [text('\n')]),
  P: el('time', 'am or pm (when parsing: either case)', [f('ampmLower')]),
  p: el('time', 'AM or PM (when parsing: either case)', [f('ampm')]),
  Q: el('date', 'quarter, 1-4', [f('quarter')], 'the quarter is not supported when parsing'),
  R: el('time', 'time as %H:%M', [f('hour'), text(':'), f('minute')]),
  r: el('time', 'time as %I:%M:%S %p', [f('hour12'), text(':'), f('minute'), text(':'), f('second'), text(' '), f('ampm')]),
  S: el('time', 'second, 00-60', [f('second')]),
  s: el('time', 'seconds since 1970-01-01 00:00:00 UTC; when parsing it overrides every other element', [f('epochSeconds')]),
  T: el('time', 'time as %H:%M:%S', [f('hour'), text(':'), f('minute'), text(':'), f('second')]),
  t: el('none', 'a tab (when parsing: any white space)', [text('\t')]),
  U: el('date', 'week of the year, Sunday first, 00-53', [f('weekSunday')], WEEKS),
  u: el('date', 'weekday, Monday = 1, 1-7; ignored when parsing', [f('weekdayMonday1')]),
  V: el('date', 'ISO 8601 week of the year, 01-53', [f('isoWeek')], WEEKS),
  W: el('date', 'week of the year, Monday first, 00-53', [f('weekMonday')], WEEKS),
  w: el('date', 'weekday, Sunday = 0, 0-6; ignored when parsing', [f('weekdaySunday0')]),
  X: el('time', 'time as %H:%M:%S', [f('hour'), text(':'), f('minute'), text(':'), f('second')]),
  x: el('date', 'date as %m/%d/%y', [f('month'), text('/'), f('day'), text('/'), f('year2')]),
  Y: el('date', 'year with century (2021)', [f('year')]),
  y: el('date', 'year without century, 00-99 (parsing: 69-99 → 19xx, 00-68 → 20xx)', [f('year2')]),
  Z: el(
    'zone',
    'time zone: UTC, or UTC and the offset (UTC-5, UTC+5:30) under a time zone argument',
    [f('zoneName')],
    'time zone names are not supported when parsing; use %Ez or %z',
  ),
  z: el('zone', 'offset from UTC as +HHMM', [f('offset')]),
  '%': el('none', 'a %', [text('%')]),
  Ez: el('zone', 'offset from UTC as +HH:MM (parsing also reads Z, +HH and +HHMM)', [f('offsetColon')]),
  'E*S': el('time', 'seconds with as many fraction digits as needed (none for whole seconds); parsing reads an optional fraction of any length', [secs('*')]),
  E4Y: el('date', 'year, 4 digits (0001-9999)', [f('year4')]),
  // POSIX's alternative forms, which ZetaSQL reads as the plain elements.
  EC: el('date', 'as %C', [f('century')], 'the century is not supported when parsing; use %Y'),
  Ec: el('time', 'as %c', [
    f('weekdayAbbr'),
    text(' '),
    f('monthAbbr'),
    text(' '),
    f('daySpace'),
    text(' '),
    f('hour'),
    text(':'),
    f('minute'),
    text(':'),
    f('second'),
    text(' '),
    f('year'),
  ]),
  EX: el('time', 'as %X', [f('hour'), text(':'), f('minute'), text(':'), f('second')]),
  Ex: el('date', 'as %x', [f('month'), text('/'), f('day'), text('/'), f('year2')]),
  EY: el('date', 'as %Y', [f('year')]),
  Ey: el('date', 'as %y', [f('year2')]),
  Od: el('date', 'as %d', [f('day')]),
  Oe: el('date', 'as %e', [f('daySpace')]),
  OH: el('time', 'as %H', [f('hour')]),
  OI: el('time', 'as %I', [f('hour12')]),
  Om: el('date', 'as %m', [f('month')]),
  OM: el('time', 'as %M', [f('minute')]),
  OS: el('time', 'as %S', [f('second')]),
  Ou: el('date', 'as %u', [f('weekdayMonday1')]),
  OU: el('date', 'as %U', [f('weekSunday')], WEEKS),
  OV: el('date', 'as %V', [f('isoWeek')], WEEKS),
  Ow: el('date', 'as %w', [f('weekdaySunday0')]),
  OW: el('date', 'as %W', [f('weekMonday')], WEEKS),
  Oy: el('date', 'as %y', [f('year2')]),
});

/** `%E<n>S`: seconds with n fraction digits (n = 0…9; when parsing, at most n and at most 6). */
function fractionElement(n: number): ElementDef {
  return el(
    'time',
    `seconds with ${n} fraction digits`,
    [n === 0 ? f('second') : secs(n)],
    n > 6 ? 'more than 6 fraction digits are not supported when parsing' : undefined,
  );
}

/** The definition of an element spelt `spelling` (after `%`), or undefined. */
export function elementDef(spelling: string): ElementDef | undefined {
  const m = /^E(\d)S$/.exec(spelling);
  if (m) return fractionElement(Number(m[1]));
  return Object.hasOwn(ELEMENTS, spelling) ? ELEMENTS[spelling] : undefined;
}

/** One element or literal text of a format string. */
export type Token = { readonly kind: 'text'; readonly text: string } | { readonly kind: 'element'; readonly spelling: string; readonly def: ElementDef };

const ELEMENT = /%(E\*S|E\dS|E4Y|E[zCcXxYy]|O[deHImMSuUVwWy]|.)/suy;

function unsupported(spelling: string, fn: TimeFormatFunction, why?: string): QuarryError {
  return new QuarryError('INVALID_QUERY', `Unsupported format element %${spelling} in ${fn.toUpperCase()}${why ? `: ${why}` : ''}`);
}

/** Reads a format string into literal text and elements; an unknown element is INVALID_QUERY naming it. */
export function readFormat(format: string, fn: TimeFormatFunction): Token[] {
  const tokens: Token[] = [];
  let literal = '';
  for (let i = 0; i < format.length; ) {
    if (format[i] !== '%') {
      literal += format[i];
      i += 1;
      continue;
    }
    ELEMENT.lastIndex = i;
    const m = ELEMENT.exec(format);
    if (!m) throw new QuarryError('INVALID_QUERY', `The format of ${fn.toUpperCase()} ends with a single %`);
    const spelling = m[1]!;
    const def = elementDef(spelling);
    if (!def) throw unsupported(spelling, fn);
    if (literal) tokens.push(Object.freeze({ kind: 'text', text: literal }));
    literal = '';
    tokens.push(Object.freeze({ kind: 'element', spelling, def }));
    i += m[0].length;
  }
  if (literal) tokens.push(Object.freeze({ kind: 'text', text: literal }));
  return tokens;
}

/** The constant format string of a call (its first argument), or a 400. */
export function constantFormat(args: readonly RExpr[], fn: TimeFormatFunction): string {
  const a = args[0];
  if (a?.kind === 'literal' && a.value.type === 'string') return a.value.value;
  throw new QuarryError('INVALID_QUERY', `${fn.toUpperCase()} needs a constant format string (a column or parameter as the format is not supported)`);
}

// ---------------------------------------------------------------------------------------------
// Formatting

/**
 * The pieces FORMAT_* writes, adjacent text merged. Elements the value's type lacks are written
 * as they are spelt, as BigQuery does (FORMAT_DATE('%H', d) is `%H`).
 */
export function formatPieces(format: string, fn: 'format_timestamp' | 'format_datetime' | 'format_date'): Piece[] {
  const out: Piece[] = [];
  const push = (p: Piece) => {
    const last = out[out.length - 1];
    if (p.kind === 'text' && last?.kind === 'text') out[out.length - 1] = text(last.text + p.text);
    else out.push(p);
  };
  for (const t of readFormat(format, fn)) {
    if (t.kind === 'text') push(text(t.text));
    else if (escaped(t.def.needs, fn)) push(text(`%${t.spelling}`));
    else for (const p of t.def.pieces) push(p);
  }
  return out;
}

function escaped(needs: Needs, fn: TimeFormatFunction): boolean {
  if (fn === 'format_date') return needs === 'time' || needs === 'zone';
  if (fn === 'format_datetime') return needs === 'zone';
  return false;
}

// ---------------------------------------------------------------------------------------------
// Parsing

/** Where each field is in the pattern's groups (1-based); the last element that sets one wins. */
export interface ParsePlan {
  /** An anchored RE2 pattern over the whole text. */
  readonly pattern: string;
  /** How many capture groups the pattern has. */
  readonly groups: number;
  readonly year?: { readonly group: number; readonly twoDigit: boolean };
  readonly month?: { readonly group: number; readonly named: boolean };
  readonly day?: number;
  readonly hour?: { readonly group: number; readonly twelve: boolean };
  readonly ampm?: number;
  readonly minute?: number;
  readonly second?: number;
  readonly fraction?: number;
  readonly offset?: { readonly sign: number; readonly hours: number; readonly minutes: number };
  readonly epoch?: number;
}

type Draft = { -readonly [K in keyof ParsePlan]: ParsePlan[K] };

const MONTH_NAMES = '(?i:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:tember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)';
const WEEKDAY_NAMES = '(?i:mon(?:day)?|tue(?:sday)?|wed(?:nesday)?|thu(?:rsday)?|fri(?:day)?|sat(?:urday)?|sun(?:day)?)';

function regexLiteral(s: string): string {
  return s.replace(/[\\^$.|?*+()[\]{}]/g, (c) => `\\${c}`);
}

/** Reads PARSE_*'s format into one anchored pattern and where each field is in it. */
export function parsePlan(format: string, fn: 'parse_timestamp' | 'parse_datetime' | 'parse_date'): ParsePlan {
  const tokens = readFormat(format, fn);
  const plan: Draft = { pattern: '', groups: 0 };
  let pattern = '';
  let groups = 0;
  const group = (re: string) => {
    groups += 1;
    pattern += `(${re})`;
    return groups;
  };
  const space = () => {
    if (!pattern.endsWith('\\s*')) pattern += '\\s*';
  };
  for (let t = 0; t < tokens.length; t += 1) {
    const token = tokens[t]!;
    if (token.kind === 'text') {
      for (const c of token.text) {
        if (/\s/.test(c)) space();
        else pattern += regexLiteral(c);
      }
      continue;
    }
    const { spelling, def } = token;
    if (def.needs === 'zone' && fn !== 'parse_timestamp') throw unsupported(spelling, fn, `${fn === 'parse_date' ? 'DATE' : 'DATETIME'} has no time zone`);
    if (def.needs === 'time' && fn === 'parse_date') throw unsupported(spelling, fn, 'DATE has no time part');
    if (def.noParse) throw unsupported(spelling, fn, def.noParse);
    // %Y reads up to 5 digits, 4 when another element follows at once (ZetaSQL).
    const beforeElement = tokens[t + 1]?.kind === 'element';
    for (const p of def.pieces) {
      if (p.kind === 'text') {
        if (/\s/.test(p.text)) space();
        else pattern += regexLiteral(p.text);
        continue;
      }
      if (p.kind === 'seconds') {
        plan.second = group('\\d{1,2}');
        pattern += '(?:\\.';
        plan.fraction = group(p.digits === '*' ? '\\d+' : `\\d{1,${p.digits}}`);
        pattern += ')?';
        continue;
      }
      parseField(p.field, spelling, fn, beforeElement, plan, group, (re) => {
        pattern += re;
      });
    }
  }
  plan.pattern = `^\\s*${pattern}\\s*$`;
  plan.groups = groups;
  return Object.freeze({ ...plan });
}

function parseField(
  field: Field,
  spelling: string,
  fn: TimeFormatFunction,
  beforeElement: boolean,
  plan: Draft,
  group: (re: string) => number,
  raw: (re: string) => void,
): void {
  switch (field) {
    case 'year':
      plan.year = { group: group(beforeElement ? '\\d{1,4}' : '\\d{1,5}'), twoDigit: false };
      return;
    case 'year4':
      plan.year = { group: group('\\d{4}'), twoDigit: false };
      return;
    case 'year2':
      plan.year = { group: group('\\d{1,2}'), twoDigit: true };
      return;
    case 'month':
      plan.month = { group: group('\\d{1,2}'), named: false };
      return;
    case 'monthName':
    case 'monthAbbr':
      plan.month = { group: group(MONTH_NAMES), named: true };
      return;
    case 'day':
      plan.day = group('\\d{1,2}');
      return;
    case 'daySpace':
      raw('\\s*');
      plan.day = group('\\d{1,2}');
      return;
    case 'weekdayName':
    case 'weekdayAbbr':
      raw(WEEKDAY_NAMES);
      return;
    case 'weekdayMonday1':
      raw('[1-7]');
      return;
    case 'weekdaySunday0':
      raw('[0-6]');
      return;
    case 'hour':
      plan.hour = { group: group('\\d{1,2}'), twelve: false };
      return;
    case 'hourSpace':
      raw('\\s*');
      plan.hour = { group: group('\\d{1,2}'), twelve: false };
      return;
    case 'hour12':
    case 'hour12Space':
      raw('\\s*');
      plan.hour = { group: group('\\d{1,2}'), twelve: true };
      return;
    case 'ampm':
    case 'ampmLower':
      plan.ampm = group('[AaPp][Mm]');
      return;
    case 'minute':
      plan.minute = group('\\d{1,2}');
      return;
    case 'second':
      plan.second = group('\\d{1,2}');
      plan.fraction = undefined;
      return;
    case 'epochSeconds':
      plan.epoch = group('-?\\d{1,12}');
      return;
    case 'offset': {
      const sign = group('[+-]');
      const hours = group('\\d{2}');
      raw('(?:');
      const minutes = group('\\d{2}');
      raw(')?');
      plan.offset = { sign, hours, minutes };
      return;
    }
    case 'offsetColon': {
      raw('(?:Z|');
      const sign = group('[+-]');
      const hours = group('\\d{2}');
      raw('(?::?');
      const minutes = group('\\d{2}');
      raw(')?)');
      plan.offset = { sign, hours, minutes };
      return;
    }
    case 'century':
    case 'isoYear':
    case 'isoYear2':
    case 'quarter':
    case 'dayOfYear':
    case 'weekSunday':
    case 'weekMonday':
    case 'isoWeek':
    case 'zoneName':
      // Refused by the registry (noParse) before this point.
      throw unsupported(spelling, fn);
    default:
      assertNever(field);
  }
}

/** The value FORMAT_* writes, as an engine's SQL. */
export interface FormatValue {
  /** The value whose digits are written (a TIMESTAMP already in the time zone argument's wall-clock time). */
  readonly value: string;
  /** The instant (a TIMESTAMP's own value; a DATETIME as if UTC). */
  readonly instant: string;
  /** A time zone argument was given: the offset is computed, else it is +00:00. */
  readonly zoned: boolean;
}

/** How an engine spells FORMAT_*: runs of its own specifiers in one call, other fields as expressions. */
export interface TimeFormatSpelling {
  /** Each field: the engine's specifier, or the SQL of its text. */
  readonly fields: Readonly<Record<Field, string | ((v: FormatValue) => string)>>;
  /** One call writing `specifiers` (the engine's, `%%` for a percent sign) of `value`. */
  call(value: string, specifiers: string): string;
  /** The specifiers for seconds with exactly `digits` fraction digits, when the engine has them. */
  secondsWith(digits: number): string | undefined;
  /** The fraction's first `digits` digits (up to 6), or the 6 digits and zeros after them. */
  fraction(value: string, digits: number): string;
  /** The fraction without trailing zeros, with its point; '' for whole seconds. */
  trimmedFraction(value: string): string;
  concat(parts: readonly string[]): string;
  /** '' for a value, NULL for NULL (a format of literal text only). */
  empty(value: string): string;
}

/** FORMAT_*: runs of specifiers in one engine call, joined with the fields the engine has none for. */
export function formatValue(format: string, fn: 'format_timestamp' | 'format_datetime' | 'format_date', v: FormatValue, s: TimeFormatSpelling): string {
  const parts: string[] = [];
  let run = '';
  const flush = () => {
    if (run) parts.push(s.call(v.value, run));
    run = '';
  };
  for (const p of formatPieces(format, fn)) {
    if (p.kind === 'text') {
      run += p.text.replaceAll('%', '%%');
      continue;
    }
    if (p.kind === 'seconds') {
      const native = p.digits === '*' ? undefined : s.secondsWith(p.digits);
      if (native !== undefined) {
        run += native;
        continue;
      }
      run += p.digits === '*' ? '%S' : '%S.';
      flush();
      parts.push(p.digits === '*' ? s.trimmedFraction(v.value) : s.fraction(v.value, p.digits));
      continue;
    }
    const spec = s.fields[p.field];
    if (typeof spec === 'string') run += spec;
    else {
      flush();
      parts.push(spec(v));
    }
  }
  flush();
  if (parts.length === 0) return s.empty(v.value);
  return parts.length === 1 ? parts[0]! : s.concat(parts);
}

/** How an engine spells the pieces of a parse. Integers are BIGINT/Int64; texts are strings. */
export interface ParseSpelling {
  string(text: string): string;
  /** Whether `x` matches the pattern (a string literal). */
  matches(x: string, pattern: string): string;
  /** Group `i` of the pattern (which has `count` groups) in `x`; '' when the group took no part. */
  group(x: string, pattern: string, i: number, count: number): string;
  /** A digits text as an integer, 0 for ''. */
  int(text: string): string;
  /** The number of days in month `m` of year `y` (both valid). */
  daysInMonth(y: string, m: string): string;
  /** A UTC timestamp from civil fields and micros past the minute (a DATETIME's value when `zone` is absent). */
  make(y: string, m: string, d: string, h: string, mi: string, micros: string, zone?: string): string;
  /** The timestamp `micros` after `ts`. */
  addMicros(ts: string, micros: string): string;
  /** A timestamp from seconds since the epoch. */
  fromEpoch(seconds: string): string;
  /** `value` when `ok`, else the query fails with `message`. */
  guard(ok: string, value: string, message: string): string;
}

/**
 * PARSE_*'s value as a UTC timestamp (the DATETIME's digits for PARSE_DATETIME, midnight for
 * PARSE_DATE), NULL for a NULL text; a text the format does not read fails the query.
 */
export function parseValue(plan: ParsePlan, x: string, fn: 'parse_timestamp' | 'parse_datetime' | 'parse_date', s: ParseSpelling, zone?: string): string {
  const p = s.string(plan.pattern);
  const g = (i: number) => s.group(x, p, i, plan.groups);
  const n = (i: number | undefined, fallback: number) => (i === undefined ? String(fallback) : s.int(g(i)));
  const checks: string[] = [];
  if (plan.epoch !== undefined) {
    const value = s.fromEpoch(n(plan.epoch, 0));
    return guarded(x, s, s.matches(x, p), value, fn);
  }
  let year = n(plan.year?.group, 1970);
  if (plan.year?.twoDigit) year = `(CASE WHEN ${year} < 69 THEN 2000 + ${year} ELSE 1900 + ${year} END)`;
  else checks.push(`${year} BETWEEN 1 AND 9999`);
  let month = n(plan.month?.group, 1);
  if (plan.month?.named) {
    const names = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
    month = `(CASE lower(substring(${g(plan.month.group)}, 1, 3)) ${names.map((m, i) => `WHEN '${m}' THEN ${i + 1}`).join(' ')} ELSE 0 END)`;
  }
  checks.push(`${month} BETWEEN 1 AND 12`);
  const day = n(plan.day, 1);
  const safeMonth = `(CASE WHEN ${month} BETWEEN 1 AND 12 THEN ${month} ELSE 1 END)`;
  const safeYear = `(CASE WHEN ${year} BETWEEN 1 AND 9999 THEN ${year} ELSE 2000 END)`;
  checks.push(`${day} BETWEEN 1 AND ${s.daysInMonth(safeYear, safeMonth)}`);
  let hour = n(plan.hour?.group, 0);
  if (plan.hour?.twelve) {
    checks.push(`${hour} BETWEEN 1 AND 12`);
    const pm = plan.ampm === undefined ? 'FALSE' : `lower(${g(plan.ampm)}) = 'pm'`;
    hour = `(${hour} % 12 + CASE WHEN ${pm} THEN 12 ELSE 0 END)`;
  } else {
    checks.push(`${hour} <= 23`);
  }
  const minute = n(plan.minute, 0);
  checks.push(`${minute} <= 59`);
  const second = n(plan.second, 0);
  checks.push(`${second} <= 60`);
  // Fraction digits past the sixth are ignored; fewer are scaled up (.5 is 500000 µs).
  const fraction = plan.fraction === undefined ? '0' : s.int(`substring(${g(plan.fraction)} || '000000', 1, 6)`);
  const micros = `(${second} * 1000000 + ${fraction})`;
  let value: string;
  if (plan.offset) {
    const o = plan.offset;
    const hours = s.int(g(o.hours));
    const minutes = s.int(g(o.minutes));
    checks.push(`${hours} <= 23`, `${minutes} <= 59`, `${hours} * 60 + ${minutes} <= 840`);
    const sign = `(CASE WHEN ${g(o.sign)} = '-' THEN -1 ELSE 1 END)`;
    // Civil fields at that offset: the instant is that much earlier (east) or later (west).
    const shift = `(${micros} - ${sign} * (${hours} * 60 + ${minutes}) * 60000000)`;
    value = s.addMicros(s.make(year, month, day, hour, minute, '0'), shift);
  } else {
    value = s.make(year, month, day, hour, minute, micros, fn === 'parse_timestamp' ? zone : undefined);
  }
  return guarded(x, s, `(${s.matches(x, p)} AND ${checks.map((c) => `(${c})`).join(' AND ')})`, value, fn);
}

function guarded(x: string, s: ParseSpelling, ok: string, value: string, fn: TimeFormatFunction): string {
  const message = `${fn.toUpperCase()} could not read a value with its format`;
  return `(CASE WHEN ${x} IS NULL THEN NULL ELSE ${s.guard(`(${x} IS NULL OR ${ok})`, value, message)} END)`;
}
