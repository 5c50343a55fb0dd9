/**
 * What a `t:` value means: ISO dates and datetimes (with brace ranges), unix 10/13/16-digit
 * numbers, and the shorthands `now`, `today`, `yesterday`, `this@<unit>`, `last@<n><unit>`.
 *
 * Datetimes without an offset are read as UTC (the service has no user time zone). Results are
 * `timestamp` values in UTC with microseconds, or `date` values for whole days. Hours, minutes,
 * seconds (60 a leap second), offsets and calendar dates are checked by src/time.ts's rules.
 */
import type { QuarryError } from '../errors.ts';
import { civilDays, civilMicros, formatDate, formatSqlTimestamp, MICROS_PER_DAY, millisToMicros, parseDate } from '../time.ts';
import type { FilterValue } from './rules.ts';
import { type ClauseSource, clauseError, type RawPart, type RawTimestampPoint, type RawTimestampValue } from './syntax.ts';

export type TimestampMeaning =
  | { kind: 'point'; value: FilterValue; shorthand?: string }
  | { kind: 'range'; from: FilterValue; to: FilterValue; shorthand?: string };

type Unit = 'second' | 'minute' | 'hour' | 'day' | 'week' | 'month' | 'year';

const unitNames: Record<string, Unit> = {
  s: 'second',
  second: 'second',
  seconds: 'second',
  m: 'minute',
  minute: 'minute',
  minutes: 'minute',
  h: 'hour',
  hour: 'hour',
  hours: 'hour',
  d: 'day',
  day: 'day',
  days: 'day',
  w: 'week',
  week: 'week',
  weeks: 'week',
  mm: 'month',
  month: 'month',
  months: 'month',
  y: 'year',
  year: 'year',
  years: 'year',
};

const rangeShorthands = new Set(['today', 'yesterday', 'this', 'last']);

export function timestampMeaning(raw: RawTimestampValue, operator: string, now: Date, source: ClauseSource): TimestampMeaning {
  const shorthandKind = raw.type === 'shorthand' ? raw.name : raw.type;
  if (operator !== '' && rangeShorthands.has(shorthandKind)) {
    throw clauseError(
      source,
      `Error while parsing timestamp filter value: \`${source.text.replace(/^-?[a-z]+:[<>=]*/, '')}\` is a time range and cannot follow ${operator}; write it without an operator`,
    );
  }
  switch (raw.type) {
    case 'invalid':
      throw invalidValue(source, raw.text);
    case 'shorthand':
      return shorthand(raw.name, now);
    case 'this': {
      const unit = unitNames[raw.unit];
      if (unit === undefined || unit === 'second') throw unknownUnit(source, raw.unit, 'minute, hour, day, week, month or year');
      return { kind: 'range', from: ts(startOf(now, unit)), to: ts(truncateSeconds(now)), shorthand: `this@${unit}` };
    }
    case 'last': {
      const unit = unitNames[raw.unit];
      if (unit === undefined) throw unknownUnit(source, raw.unit, 's, m, h, d, w, mm, y (or second, minute, hour, day, week, month, year)');
      const amount = Number(raw.amount);
      const end = truncateSeconds(now);
      // As Logflare: minutes/hours count from the start of the current minute/hour, longer units
      // from the start of today.
      const base = unit === 'second' ? end : startOf(end, unit === 'minute' || unit === 'hour' ? unit : 'day');
      return { kind: 'range', from: ts(shift(base, unit, -amount)), to: ts(end), shorthand: `last@${amount}${unit}` };
    }
    case 'point': {
      const point = resolvePoint(raw.point, source);
      if (point.from === point.to) return { kind: 'point', value: point.from.value };
      if (operator !== '') throw clauseError(source, `Error while parsing timestamp filter value: a brace range cannot follow ${operator}`);
      return { kind: 'range', from: point.from.value, to: point.to.value };
    }
    case 'range': {
      if (operator !== '') throw clauseError(source, `Error while parsing timestamp filter value: a range (a..b) cannot follow ${operator}`);
      const from = resolvePoint(raw.from, source);
      const to = resolvePoint(raw.to, source);
      if (from.from !== from.to || to.from !== to.to) {
        throw clauseError(source, 'Error while parsing timestamp filter value: use either a..b or brace ranges, not both');
      }
      if (from.from.offset !== to.from.offset) {
        throw clauseError(source, 'Timestamp range cannot mix timestamps with and without timezone offsets');
      }
      return { kind: 'range', from: from.from.value, to: to.from.value };
    }
  }
}

interface ResolvedValue {
  value: FilterValue;
  /** Had an explicit offset (or was unix time). */
  offset: boolean;
}

/** A point, or the two ends of a brace range (the same object when there are no braces). */
function resolvePoint(point: RawTimestampPoint, source: ClauseSource): { from: ResolvedValue; to: ResolvedValue } {
  if (point.type === 'unix') {
    const value = { value: ts(unixToDate(point.digits, source)), offset: true };
    return { from: value, to: value };
  }
  const parts = [point.year, point.month, point.day];
  const time = point.time;
  if (time) parts.push(time.hour, time.minute, time.second, ...(time.fraction ? [time.fraction] : []));
  if (!parts.some((p) => p.braced)) {
    const value = templateValue(point, (p) => p.from, source);
    return { from: value, to: value };
  }
  return { from: templateValue(point, (p) => p.from, source), to: templateValue(point, (p) => p.to, source) };
}

function templateValue(point: Extract<RawTimestampPoint, { type: 'template' }>, pick: (p: RawPart) => string, source: ClauseSource): ResolvedValue {
  const invalid = (): QuarryError => invalidValue(source, source.text.replace(/^-?[a-z]+:[<>=]*/, ''));
  const year = Number(pick(point.year));
  const month = Number(pick(point.month));
  const day = Number(pick(point.day));
  const days = pick(point.year).length === 4 ? civilDays(year, month, day) : undefined;
  if (days === undefined) throw invalid();
  if (!point.time) return { value: { type: 'date', value: formatDate(days) }, offset: false };
  const hour = Number(pick(point.time.hour));
  const minute = Number(pick(point.time.minute));
  const second = Number(pick(point.time.second));
  const fraction = point.time.fraction ? pick(point.time.fraction) : '';
  if (fraction.length > 9) throw invalid();
  const offset = point.time.offset;
  let offsetMinutes = 0;
  if (offset && offset.toUpperCase() !== 'Z') {
    const digits = offset.slice(1).replace(':', '');
    const [oh, om] = [Number(digits.slice(0, 2)), Number(digits.slice(2, 4))];
    if (oh > 23 || om > 59) throw invalid();
    offsetMinutes = (offset.startsWith('-') ? -1 : 1) * (oh * 60 + om);
  }
  const micros = civilMicros(year, month, day, hour, minute, second, fraction, offsetMinutes);
  if (micros === undefined) throw invalid();
  return { value: { type: 'timestamp', value: formatSqlTimestamp(micros) }, offset: offset !== null };
}

function unixToDate(digits: string, source: ClauseSource): Date {
  switch (digits.length) {
    case 10:
      return new Date(Number(digits) * 1000);
    case 13:
      return new Date(Number(digits));
    case 16:
      // Microseconds are truncated to milliseconds, as Logflare does.
      return new Date(Number(digits.slice(0, 13)));
    case 14:
    case 15:
      throw invalidValue(source, digits);
    default:
      throw clauseError(source, `Error while parsing timestamp: '${digits}' is not a valid Unix timestamp (expected 10, 13, or 16 digits)`);
  }
}

function shorthand(name: 'now' | 'today' | 'yesterday', now: Date): TimestampMeaning {
  if (name === 'now') return { kind: 'point', value: ts(truncateSeconds(now)), shorthand: 'now' };
  const day = startOf(now, 'day');
  const value = { type: 'date', value: formatDate(Math.floor((name === 'today' ? day : shift(day, 'day', -1)).getTime() / 86_400_000)) } as const;
  return { kind: 'range', from: value, to: value, shorthand: name };
}

function invalidValue(source: ClauseSource, text: string): QuarryError {
  return clauseError(source, `Error while parsing timestamp filter value: expected ISO8601 string, Unix timestamp, range or shorthand, got '${text}'`);
}

function unknownUnit(source: ClauseSource, unit: string, expected: string): QuarryError {
  return clauseError(source, `Error while parsing timestamp filter value: unknown time unit '${unit}', expected ${expected}`);
}

function ts(date: Date): FilterValue {
  return { type: 'timestamp', value: formatSqlTimestamp(millisToMicros(date.getTime())) };
}

function truncateSeconds(d: Date): Date {
  return new Date(Math.floor(d.getTime() / 1000) * 1000);
}

/** Start of the minute/hour/day/week (Monday)/month/year containing `d`, in UTC. */
function startOf(d: Date, unit: Unit): Date {
  const y = d.getUTCFullYear();
  const mo = d.getUTCMonth();
  const day = d.getUTCDate();
  switch (unit) {
    case 'second':
      return truncateSeconds(d);
    case 'minute':
      return new Date(Date.UTC(y, mo, day, d.getUTCHours(), d.getUTCMinutes()));
    case 'hour':
      return new Date(Date.UTC(y, mo, day, d.getUTCHours()));
    case 'day':
      return new Date(Date.UTC(y, mo, day));
    case 'week':
      return new Date(Date.UTC(y, mo, day - ((d.getUTCDay() + 6) % 7)));
    case 'month':
      return new Date(Date.UTC(y, mo, 1));
    case 'year':
      return new Date(Date.UTC(y, 0, 1));
  }
}

function shift(d: Date, unit: Unit, amount: number): Date {
  const r = new Date(d.getTime());
  switch (unit) {
    case 'second':
      return new Date(d.getTime() + amount * 1000);
    case 'minute':
      return new Date(d.getTime() + amount * 60_000);
    case 'hour':
      return new Date(d.getTime() + amount * 3_600_000);
    case 'day':
      r.setUTCDate(r.getUTCDate() + amount);
      return r;
    case 'week':
      r.setUTCDate(r.getUTCDate() + amount * 7);
      return r;
    case 'month':
      r.setUTCMonth(r.getUTCMonth() + amount);
      return r;
    case 'year':
      r.setUTCFullYear(r.getUTCFullYear() + amount);
      return r;
  }
}

/** The UTC day after `date` (`YYYY-MM-DD`), as a timestamp string at midnight. */
export function nextDayStart(date: string): string {
  return formatSqlTimestamp(BigInt((parseDate(date) as number) + 1) * MICROS_PER_DAY);
}

export function dayStart(date: string): string {
  return formatSqlTimestamp(BigInt(parseDate(date) as number) * MICROS_PER_DAY);
}
