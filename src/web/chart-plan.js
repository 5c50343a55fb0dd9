// @ts-check
/**
 * What to chart for a result with a time column (TIMESTAMP, else DATETIME or DATE): pure, so the
 * choices can be tested without a browser.
 *
 * - Columns are measures (drawn as values) or categories (split the rows into series). Text and
 *   booleans are categories; so are integer columns with few distinct values that name something
 *   rather than count it: a code-like name (`status_code`, `level`), or, in a long-form result
 *   (several rows per instant), a column that tells those rows apart and comes before the last
 *   numeric column (`minute, status_code, count`).
 * - Measures over time are lines; a long-form result has one line per category value, the
 *   largest MAX_SERIES - 1 by total and the rest summed as "other".
 * - A result without measures (raw log rows) is bars of rows per time bucket, stacked per value
 *   of a code-like or boolean column when it has one.
 */
import { civilSeconds } from './values.js';

/** @typedef {import('./values.js').Column} Column */
/** @typedef {{ label: string, values: (number | null)[] }} Series */
/**
 * @typedef {{ time: string, x: number[], series: Series[], bars: boolean, stacked: boolean, step: number,
 *   integers: boolean, title: string, note: string | undefined }} ChartPlan
 */

export const MAX_SERIES = 8;
/** An integer column with more distinct values than this is a measure whatever its name. */
const MAX_CATEGORY_VALUES = 40;
/** Integer columns named like this hold codes, not amounts. */
const CODE_NAME = /(^|_)(status|code|status_code|level|severity|priority|http_status|log_level)$/i;

/** Bucket widths for row counts, in seconds, with their names. */
const STEPS = /** @type {const} */ ([
  [1, '1 s'],
  [5, '5 s'],
  [15, '15 s'],
  [60, '1 min'],
  [300, '5 min'],
  [900, '15 min'],
  [3600, '1 h'],
  [3 * 3600, '3 h'],
  [6 * 3600, '6 h'],
  [86400, '1 day'],
  [7 * 86400, '1 week'],
]);

/** @typedef {{ r: Record<string, unknown>, t: number }} Timed */

/**
 * What to draw for these rows, or undefined when they have no time column.
 * @param {Record<string, unknown>[]} rows
 * @param {Column[]} columns
 * @returns {ChartPlan | undefined}
 */
export function planChart(rows, columns) {
  const timeColumn = columns.find((c) => c.kind === 'timestamp') ?? columns.find((c) => c.kind === 'datetime');
  if (timeColumn === undefined) return undefined;
  const time = timeColumn.name;
  /** @param {unknown} v seconds since the epoch, or NaN */
  const seconds = (v) => (typeof v === 'number' ? v / 1e6 : typeof v === 'string' ? civilSeconds(v) : Number.NaN);
  /** @type {Timed[]} */
  const timed = rows
    .map((r) => ({ r, t: seconds(r[time]) }))
    .filter((x) => Number.isFinite(x.t))
    .sort((a, b) => a.t - b.t);
  if (timed.length === 0) return undefined;
  const longForm = new Set(timed.map(({ t }) => t)).size < timed.length;
  const numeric = columns.filter((c) => c.kind === 'number');
  const lastNumeric = numeric.at(-1);
  const isCategory = (/** @type {Column} */ c) =>
    c.kind === 'string' ||
    c.kind === 'bool' ||
    (c.kind === 'number' && integerCodes(timed, c.name) && (CODE_NAME.test(c.name) || (longForm && c !== lastNumeric && separatesRows(timed, c.name))));
  const categories = columns.filter((c) => c.name !== time && isCategory(c));
  const measures = numeric.filter((c) => !categories.includes(c)).slice(0, MAX_SERIES);
  if (measures.length > 0) return linePlan(timed, time, measures, longForm ? categories : []);
  return barPlan(timed, time, categories);
}

/**
 * Integers only, and few distinct ones.
 * @param {Timed[]} timed
 * @param {string} name
 */
function integerCodes(timed, name) {
  const seen = new Set();
  for (const { r } of timed) {
    const v = r[name];
    if (v === null || v === undefined) continue;
    if (typeof v !== 'number' || !Number.isInteger(v)) return false;
    seen.add(v);
    if (seen.size > MAX_CATEGORY_VALUES) return false;
  }
  return true;
}

/**
 * Whether the column's values tell apart the rows that share an instant (time and it form a key).
 * @param {Timed[]} timed
 * @param {string} name
 */
function separatesRows(timed, name) {
  const keys = new Set(timed.map(({ r, t }) => `${t}\u0000${String(r[name])}`));
  return keys.size === timed.length;
}

/**
 * @param {Timed[]} timed
 * @param {string} time
 * @param {Column[]} measures
 * @param {Column[]} categories
 * @returns {ChartPlan}
 */
function linePlan(timed, time, measures, categories) {
  const x = [...new Set(timed.map(({ t }) => t))];
  const at = new Map(x.map((t, i) => [t, i]));
  const names = measures.map((c) => c.name).join(', ');
  const by = categories[0];
  /** @type {Series[]} */
  let series;
  let title;
  let note;
  if (by !== undefined) {
    const split = splitByCategory(timed, by.name, measures, at, x.length);
    series = split.series;
    title = `${names} by ${by.name} over ${time}`;
    if (split.others > 0) {
      note = `${by.name} has ${split.keys} values: the ${split.shown} largest are drawn, the other ${split.others} summed as “other”.`;
    }
  } else {
    // Several rows per instant and nothing to tell them apart: their sum, rather than a zig-zag.
    series = measures.map((m) => ({ label: m.name, values: sumPerInstant(timed, m.name, at, x.length) }));
    title = `${names} over ${time}`;
    if (x.length < timed.length) note = `Several rows share an instant: their ${names} are summed.`;
  }
  return {
    time,
    x,
    series,
    bars: false,
    stacked: false,
    step: 0,
    integers: series.every((s) => s.values.every((v) => v === null || Number.isInteger(v))),
    title,
    note,
  };
}

/**
 * One series per value of `by` (and measure), the largest first; past MAX_SERIES the rest are
 * summed as "other".
 * @param {Timed[]} timed
 * @param {string} by
 * @param {Column[]} measures
 * @param {Map<number, number>} at index of each instant
 * @param {number} size
 */
function splitByCategory(timed, by, measures, at, size) {
  /** @type {Map<string, number>} */
  const totals = new Map();
  for (const { r } of timed) {
    const key = String(r[by]);
    let sum = totals.get(key) ?? 0;
    for (const m of measures) sum += Math.abs(typeof r[m.name] === 'number' ? /** @type {number} */ (r[m.name]) : 0);
    totals.set(key, sum);
  }
  const byTotal = [...totals].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0], undefined, { numeric: true })).map(([k]) => k);
  const room = Math.max(1, Math.floor(MAX_SERIES / measures.length));
  const shown = byTotal.length <= room ? byTotal : byTotal.slice(0, room - 1);
  const kept = new Set(shown);
  // Few values read best in their natural order (200 before 500); many, largest first.
  const ordered = byTotal.length <= room ? [...shown].sort((a, b) => a.localeCompare(b, undefined, { numeric: true })) : shown;
  const keys = [...ordered, ...(shown.length < byTotal.length ? [OTHER] : [])];
  /** @type {Series[]} */
  const series = [];
  for (const key of keys) {
    for (const m of measures) {
      const values = /** @type {(number | null)[]} */ (new Array(size).fill(null));
      for (const { r, t } of timed) {
        const own = String(r[by]);
        if (key === OTHER ? kept.has(own) : own !== key) continue;
        const v = r[m.name];
        if (typeof v !== 'number') continue;
        const i = /** @type {number} */ (at.get(t));
        values[i] = (values[i] ?? 0) + v;
      }
      series.push({ label: measures.length === 1 ? key : `${key} ${m.name}`, values });
    }
  }
  return { series, keys: byTotal.length, shown: shown.length, others: byTotal.length - shown.length };
}

const OTHER = 'other';

/**
 * @param {Timed[]} timed
 * @param {string} name
 * @param {Map<number, number>} at
 * @param {number} size
 */
function sumPerInstant(timed, name, at, size) {
  const values = /** @type {(number | null)[]} */ (new Array(size).fill(null));
  for (const { r, t } of timed) {
    const v = r[name];
    if (typeof v !== 'number') continue;
    const i = /** @type {number} */ (at.get(t));
    values[i] = (values[i] ?? 0) + v;
  }
  return values;
}

/**
 * Rows per time bucket, stacked per value of the first code-like or boolean column with 2 or more
 * values (past MAX_SERIES, the rest as "other").
 * @param {Timed[]} timed
 * @param {string} time
 * @param {Column[]} categories
 * @returns {ChartPlan}
 */
function barPlan(timed, time, categories) {
  const first = timed[0]?.t ?? 0;
  const last = timed.at(-1)?.t ?? first;
  const [step, stepName] = STEPS.find(([s]) => (last - first) / s <= 60) ?? STEPS[STEPS.length - 1];
  const start = Math.floor(first / step) * step;
  const size = Math.floor((last - start) / step) + 1;
  const x = Array.from({ length: size }, (_, i) => start + i * step);
  const bucket = (/** @type {number} */ t) => Math.floor((t - start) / step);
  // Raw rows: only a column that names a kind of row (a code, a level, a flag), not ids or messages.
  const by = categories.find((c) => {
    if (c.kind !== 'bool' && !CODE_NAME.test(c.name)) return false;
    const n = new Set(timed.map(({ r }) => String(r[c.name]))).size;
    return n >= 2 && n <= MAX_CATEGORY_VALUES;
  });
  const title = `rows of this result per ${stepName} of ${time}`;
  if (by === undefined) {
    const counts = new Array(size).fill(0);
    for (const { t } of timed) counts[bucket(t)]++;
    return { time, x, series: [{ label: 'rows', values: counts }], bars: true, stacked: false, step, integers: true, title, note: undefined };
  }
  const withOne = timed.map(({ r, t }) => ({ r: { ...r, __rows: 1 }, t: start + bucket(t) * step }));
  const at = new Map(x.map((t, i) => [t, i]));
  const split = splitByCategory(withOne, by.name, [{ name: '__rows', kind: 'number' }], at, size);
  for (const s of split.series) s.values = s.values.map((v) => v ?? 0);
  const note =
    split.others > 0 ? `${by.name} has ${split.keys} values: the ${split.shown} commonest are drawn, the other ${split.others} counted as “other”.` : undefined;
  return { time, x, series: split.series, bars: true, stacked: true, step, integers: true, title: `${title}, by ${by.name}`, note };
}
