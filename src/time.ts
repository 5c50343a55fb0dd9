/**
 * Time as text, once for the whole service: reading ISO-8601 / RFC 3339 text into unix
 * microseconds (a bigint, UTC), and writing microseconds (and days) back as text in the spellings
 * the service and its engines use. Every caller that reads or writes a time as text goes through
 * here, so ingest, LQL, typed parameters and the encoders agree on what a time is.
 *
 * What is read (one rule set; docs/API.md and docs/SQL.md repeat it):
 *
 *   date       YYYY-MM-DD                          a 4-digit year and a real calendar date
 *   date-time  date SEP hh:mm[:ss[FRAC]] [ZONE]
 *     SEP      `T`, `t` or one space
 *     hh       00-23          mm  00-59
 *     ss       00-60          (60, a leap second, reads as the next minute's 00)
 *     FRAC     `.` or `,` then one or more digits; kept to the microsecond, later digits dropped
 *              (never rounded)
 *     ZONE     `Z`, `z`, `±hh`, `±hhmm` or `±hh:mm`  (hh 00-23, mm 00-59)
 *
 *   Nothing else: no week or ordinal dates, no 2-digit years, no `24:00`, no white space around
 *   the text (callers trim where their input may carry it). A date-time without a zone is UTC.
 *
 * Which forms a caller takes is its own rule, on top of these: ingest's `timestamp` needs a
 * date-time with a zone (anything else is "unreadable", the event gets the ingest time); a typed
 * `timestamp` parameter takes all three (a date is midnight UTC), a `date` parameter a date; LQL's
 * grammar decides its own shapes (brace ranges, unix digits) and builds instants with `civilMicros`.
 *
 * What is written:
 *
 *   formatTimestamp(µs)     2026-11-21T10:00:00.000000Z   the instant, always 6 fraction digits
 *   formatSqlTimestamp(µs)  2026-11-21 10:00:00.000000    what engines parse as a UTC TIMESTAMP
 *                                                         (DuckDB's cast, ClickHouse's DateTime64(6))
 *   formatDatetime(µs)      2026-11-21T10:00:00[.ffffff]  a DATETIME in results (docs/API.md §4):
 *                                                         the fraction only when it is not zero
 *   formatDate(days)        2026-11-21                    a DATE
 *   formatUnixSeconds(µs)   1763719200.000000             seconds.micros, ClickHouse's exact input
 *
 * Years 0000-9999 print with 4 digits; others (engines hold a few) as ISO 8601's expanded form,
 * a sign and 6 digits (`+010000-01-01`), as JavaScript's Date does.
 */

export const MICROS_PER_SECOND = 1_000_000n;
export const MICROS_PER_DAY = 86_400_000_000n;

/** What `parseTime` read: the instant, and which form the text had. */
export interface ParsedTime {
  /** Unix microseconds (UTC). */
  readonly micros: bigint;
  /** `date`: YYYY-MM-DD alone (midnight UTC); `local`: a date-time without a zone (UTC); `zoned`: with one. */
  readonly form: 'date' | 'local' | 'zoned';
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)?$/;

/** Days from 1970-01-01 to a civil date (proleptic Gregorian; H. Hinnant's days_from_civil). */
export function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

/** The civil date of a day count (the inverse of `daysFromCivil`). */
export function civilFromDays(days: number): { year: number; month: number; day: number } {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  return { year: yoe + era * 400 + (month <= 2 ? 1 : 0), month, day };
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** Days since 1970-01-01 of a real calendar date, else undefined. */
export function civilDays(year: number, month: number, day: number): number | undefined {
  if (!Number.isInteger(year) || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  return daysFromCivil(year, month, day);
}

/**
 * Unix microseconds of a civil time in a zone `offsetMinutes` east of UTC, checked against the
 * rules above (hour 0-23, minute 0-59, second 0-60, a real date); `fraction` is the digits after
 * the decimal point ('' for none), kept to the microsecond. Undefined when out of range.
 */
export function civilMicros(
  year: number,
  month: number,
  day: number,
  hour: number,
  minute: number,
  second: number,
  fraction: string,
  offsetMinutes = 0,
): bigint | undefined {
  const days = civilDays(year, month, day);
  if (days === undefined || !(hour >= 0 && hour <= 23 && minute >= 0 && minute <= 59 && second >= 0 && second <= 60)) return undefined;
  const micros = fraction === '' ? 0 : Number(fraction.length === 6 ? fraction : fraction.slice(0, 6).padEnd(6, '0'));
  const seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offsetMinutes * 60;
  // Exact as a double while |seconds| < 9e9 (the year 2255): the common case, without BigInt arithmetic.
  if (Math.abs(seconds) < 9e9) return BigInt(seconds * 1_000_000 + micros);
  return BigInt(seconds) * MICROS_PER_SECOND + BigInt(micros);
}

/** Minutes east of UTC of a zone's sign, hours and minutes, or undefined past ±23:59. */
function offsetOf(sign: string, hours: string, minutes: string | undefined): number | undefined {
  const h = Number(hours);
  const m = minutes === undefined ? 0 : Number(minutes);
  if (h > 23 || m > 59) return undefined;
  return (sign === '-' ? -1 : 1) * (h * 60 + m);
}

/** Any text of the rule set above, with its form; undefined for anything else. */
export function parseTime(text: string): ParsedTime | undefined {
  if (text.length === 10) {
    const days = parseDate(text);
    return days === undefined ? undefined : { micros: BigInt(days) * MICROS_PER_DAY, form: 'date' };
  }
  const m = DATE_TIME.exec(text);
  if (m === null) return undefined;
  let offset = 0;
  const sign = m[9];
  if (sign !== undefined) {
    const o = offsetOf(sign, m[10] as string, m[11]);
    if (o === undefined) return undefined;
    offset = o;
  }
  const micros = civilMicros(Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4]), Number(m[5]), m[6] === undefined ? 0 : Number(m[6]), m[7] ?? '', offset);
  if (micros === undefined) return undefined;
  return { micros, form: m[8] !== undefined || sign !== undefined ? 'zoned' : 'local' };
}

/** A date-time with a zone (ingest's rule), as unix microseconds. */
export function parseZonedTimestamp(text: string): bigint | undefined {
  const t = parseTime(text);
  return t?.form === 'zoned' ? t.micros : undefined;
}

/** A date, or a date-time with or without a zone (a typed `timestamp` parameter's rule). */
export function parseTimestamp(text: string): bigint | undefined {
  return parseTime(text)?.micros;
}

/** Days since 1970-01-01 of `YYYY-MM-DD` naming a real calendar date. */
export function parseDate(text: string): number | undefined {
  const m = DATE.exec(text);
  return m === null ? undefined : civilDays(Number(m[1]), Number(m[2]), Number(m[3]));
}

// ---------------------------------------------------------------------------------------------
// Writing

function pad(n: number, width = 2): string {
  return String(n).padStart(width, '0');
}

function yearText(year: number): string {
  if (year >= 0 && year <= 9999) return pad(year, 4);
  return `${year < 0 ? '-' : '+'}${pad(Math.abs(year), 6)}`;
}

/** `2026-11-21` for days since 1970-01-01. */
export function formatDate(days: number): string {
  const { year, month, day } = civilFromDays(days);
  return `${yearText(year)}-${pad(month)}-${pad(day)}`;
}

/** The day, the time of day and the microseconds of an instant (floored: before 1970 too). */
function split(micros: bigint): { date: string; time: string; fraction: number } {
  let days: number;
  let inDay: number;
  if (micros >= -9_000_000_000_000_000n && micros <= 9_000_000_000_000_000n) {
    const n = Number(micros);
    days = Math.floor(n / 86_400_000_000);
    inDay = n - days * 86_400_000_000;
  } else {
    let d = micros / MICROS_PER_DAY;
    if (micros % MICROS_PER_DAY < 0n) d -= 1n;
    days = Number(d);
    inDay = Number(micros - d * MICROS_PER_DAY);
  }
  const seconds = Math.floor(inDay / 1_000_000);
  const fraction = inDay - seconds * 1_000_000;
  const time = `${pad(Math.floor(seconds / 3600))}:${pad(Math.floor(seconds / 60) % 60)}:${pad(seconds % 60)}`;
  return { date: formatDate(days), time, fraction };
}

/** `2026-11-21T10:00:00.000000Z`: the instant in UTC, always with 6 fraction digits. */
export function formatTimestamp(micros: bigint): string {
  const { date, time, fraction } = split(micros);
  return `${date}T${time}.${pad(fraction, 6)}Z`;
}

/** `2026-11-21 10:00:00.000000`: a UTC TIMESTAMP as engines parse it (no zone: they read it as UTC). */
export function formatSqlTimestamp(micros: bigint): string {
  const { date, time, fraction } = split(micros);
  return `${date} ${time}.${pad(fraction, 6)}`;
}

/** `2026-11-21T10:00:00`, with `.ffffff` only when there are fractional seconds (a DATETIME in results). */
export function formatDatetime(micros: bigint): string {
  const { date, time, fraction } = split(micros);
  return fraction === 0 ? `${date}T${time}` : `${date}T${time}.${pad(fraction, 6)}`;
}

/** `1763719200.000000`: unix seconds with the microseconds, which ClickHouse's DateTime64(6) reads exactly. */
export function formatUnixSeconds(micros: bigint): string {
  let seconds = micros / MICROS_PER_SECOND;
  let fraction = micros % MICROS_PER_SECOND;
  if (fraction < 0n) {
    fraction += MICROS_PER_SECOND;
    seconds -= 1n;
  }
  return `${seconds}.${fraction.toString().padStart(6, '0')}`;
}

/** Unix microseconds of a JavaScript time in milliseconds (whole milliseconds). */
export function millisToMicros(ms: number): bigint {
  return BigInt(Math.trunc(ms)) * 1000n;
}
