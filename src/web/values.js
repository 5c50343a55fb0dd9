// @ts-check
/**
 * What the columns of a result hold, and how values read to a person.
 *
 * Results carry no types (docs/API.md §4: `{"result": [row, ...]}`), so the kind of a column is read
 * off its values. A TIMESTAMP arrives as integer unix microseconds: a column is a timestamp when
 * every value is an integer between 2000-01-01 and 2100-01-01 in microseconds (10^14.9 to
 * 10^15.6: no count, duration or id in a log result comes near that range by accident).
 */

const MIN_TS_US = 946_684_800_000_000; // 2000-01-01T00:00:00Z
const MAX_TS_US = 4_102_444_800_000_000; // 2100-01-01T00:00:00Z

/** @typedef {'timestamp' | 'datetime' | 'number' | 'bool' | 'string' | 'record' | 'list' | 'null' | 'mixed'} ColumnKind */

/** DATETIME and DATE values: ISO-8601 text without an offset (CONTRACT §4). */
const CIVIL = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}:\d{2}(\.\d{1,6})?)?$/;

/**
 * A DATETIME or DATE as seconds since the epoch such that the viewer's clock reads the same
 * wall-clock time: these values carry no zone, so the chart must not shift them into one.
 * @param {string} v
 */
export function civilSeconds(v) {
  return new Date(v.length === 10 ? `${v}T00:00:00` : v).getTime() / 1000;
}
/** @typedef {{ name: string, kind: ColumnKind }} Column */

/** @param {unknown} v */
export function isTimestampValue(v) {
  return typeof v === 'number' && Number.isInteger(v) && v >= MIN_TS_US && v < MAX_TS_US;
}

/** A record as the API encodes it: an array holding objects (BigQuery's REPEATED RECORD). @param {unknown} v */
export function isRecordValue(v) {
  return Array.isArray(v) && v.length > 0 && v.every((x) => x !== null && typeof x === 'object' && !Array.isArray(x));
}

/**
 * @param {unknown} v
 * @returns {ColumnKind}
 */
function kindOf(v) {
  if (v === null || v === undefined) return 'null';
  if (isTimestampValue(v)) return 'timestamp';
  if (typeof v === 'number') return 'number';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'string') return CIVIL.test(v) ? 'datetime' : 'string';
  if (isRecordValue(v)) return 'record';
  if (Array.isArray(v)) return 'list';
  return 'record';
}

/**
 * The columns of `rows` in first-seen order, each with the one kind all its non-null values
 * share (a column of timestamps and smaller numbers is `number`).
 * @param {Record<string, unknown>[]} rows
 * @returns {Column[]}
 */
export function analyse(rows) {
  /** @type {Map<string, ColumnKind>} */
  const kinds = new Map();
  for (const row of rows) {
    for (const [name, value] of Object.entries(row)) {
      const k = kindOf(value);
      const prev = kinds.get(name);
      if (prev === undefined || prev === 'null') kinds.set(name, k);
      else if (k === 'null' || k === prev) continue;
      else if ((prev === 'timestamp' && k === 'number') || (prev === 'number' && k === 'timestamp')) kinds.set(name, 'number');
      else if ((prev === 'datetime' && k === 'string') || (prev === 'string' && k === 'datetime')) kinds.set(name, 'string');
      else kinds.set(name, 'mixed');
    }
  }
  return [...kinds].map(([name, kind]) => ({ name, kind }));
}

const dateFormat = new Intl.DateTimeFormat(undefined, {
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  fractionalSecondDigits: 3,
  hourCycle: 'h23',
});

/** The viewer's time zone, as the browser reports it (e.g. `Europe/Berlin`). */
export function timeZone() {
  return Intl.DateTimeFormat().resolvedOptions().timeZone;
}

/**
 * Microseconds since the epoch as `2026-11-21 11:00:00.123` in the viewer's time zone.
 * @param {number} us
 */
export function formatTimestamp(us) {
  const parts = Object.fromEntries(dateFormat.formatToParts(new Date(Math.floor(us / 1000))).map((p) => [p.type, p.value]));
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}:${parts.second}.${parts.fractionalSecond}`;
}

/**
 * The exact instant, for a tooltip: UTC ISO with microseconds, and the raw value.
 * @param {number} us
 */
export function describeTimestamp(us) {
  const iso = new Date(Math.floor(us / 1000)).toISOString();
  const micros = String(((us % 1_000_000) + 1_000_000) % 1_000_000).padStart(6, '0');
  return `${iso.slice(0, 19)}.${micros}Z (${us} µs since 1970)`;
}

const numberFormat = new Intl.NumberFormat(undefined, { maximumFractionDigits: 6 });

/** @param {number} n */
export function formatNumber(n) {
  return Number.isInteger(n) && Math.abs(n) >= 1e15 ? String(n) : numberFormat.format(n);
}

/**
 * Milliseconds since the epoch as a `datetime-local` control's value, in the viewer's zone
 * (`2026-11-21T15:30:00`).
 * @param {number} ms
 */
export function localInputValue(ms) {
  const d = new Date(ms);
  const p = (/** @type {number} */ n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/**
 * A `datetime-local` value (the viewer's wall-clock time) as an ISO instant in UTC; '' stays ''.
 * @param {string} value
 */
export function instantOfLocalInput(value) {
  if (value === '') return '';
  const ms = new Date(value).getTime();
  return Number.isFinite(ms) ? new Date(ms).toISOString().replace('.000Z', 'Z') : value;
}
