// @ts-check
/**
 * The time chart (uPlot): drawn whenever a result has a time column (TIMESTAMP, else DATETIME or
 * DATE). Numeric columns become lines over that time; a result with no numeric column (raw log
 * rows) becomes bars counting its rows per time bucket. TIMESTAMPs are placed in the viewer's
 * time zone; DATETIMEs, which have none, at the wall-clock time they name.
 */
import { civilSeconds, formatTimestamp } from './values.js';
import uPlot from './vendor/uPlot.esm.js';

/** @typedef {import('./values.js').Column} Column */
/** @typedef {{ label: string, values: (number | null)[] }} Series */
/** @typedef {{ time: string, x: number[], series: Series[], bars: boolean, step: number, integers: boolean, title: string }} ChartPlan */

const COLORS = ['#2457c5', '#d9480f', '#2b8a3e', '#862e9c', '#c92a2a', '#0b7285', '#e67700', '#495057'];
const MAX_SERIES = COLORS.length;

/** Tick spacings for an axis of whole numbers. */
const WHOLE_STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 2e5, 5e5, 1e6, 1e7, 1e8, 1e9];

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
  const timed = rows
    .map((r) => ({ r, t: seconds(r[time]) }))
    .filter((x) => Number.isFinite(x.t))
    .sort((a, b) => a.t - b.t);
  if (timed.length === 0) return undefined;
  const numeric = columns.filter((c) => c.kind === 'number').slice(0, MAX_SERIES);
  if (numeric.length > 0) {
    const pivoted = pivot(timed, columns, numeric);
    const series =
      pivoted?.series ??
      numeric.map((c) => ({
        label: c.name,
        values: timed.map(({ r }) => (typeof r[c.name] === 'number' ? /** @type {number} */ (r[c.name]) : null)),
      }));
    return {
      time,
      x: pivoted?.x ?? timed.map(({ t }) => t),
      series,
      bars: false,
      step: 0,
      integers: series.every((s) => s.values.every((v) => v === null || Number.isInteger(v))),
      title: `${numeric.map((c) => c.name).join(', ')}${pivoted ? ` by ${pivoted.by}` : ''} over ${time}`,
    };
  }
  const secs = timed.map(({ t }) => t);
  const first = secs[0] ?? 0;
  const last = secs.at(-1) ?? first;
  const [step, stepName] = STEPS.find(([s]) => (last - first) / s <= 60) ?? STEPS[STEPS.length - 1];
  const start = Math.floor(first / step) * step;
  const counts = new Array(Math.floor((last - start) / step) + 1).fill(0);
  for (const s of secs) counts[Math.floor((s - start) / step)]++;
  return {
    time,
    x: counts.map((_, i) => start + i * step),
    series: [{ label: 'rows', values: counts }],
    bars: true,
    step,
    integers: true,
    title: `rows of this result per ${stepName} of ${time}`,
  };
}

/**
 * Time-axis labels in the viewer's zone, 24-hour, as the table writes them: the time of day
 * (with seconds when ticks are closer than a minute), with the date under it wherever the day
 * changes; only dates when ticks are a day or more apart.
 * @param {uPlot} _u
 * @param {number[]} splits seconds since the epoch
 * @param {number} _axis
 * @param {number} _space
 * @param {number} incr seconds between ticks
 * @returns {string[]}
 */
function timeLabels(_u, splits, _axis, _space, incr) {
  let day = '';
  return splits.map((s) => {
    const full = formatTimestamp(s * 1e6); // YYYY-MM-DD HH:mm:ss.SSS
    if (incr >= 86400) return full.slice(0, 10);
    const time = incr < 60 ? full.slice(11, 19) : full.slice(11, 16);
    const date = full.slice(0, 10);
    const label = date === day ? time : `${time}\n${date}`;
    day = date;
    return label;
  });
}

/**
 * A result in long form (`minute, status, n`: several rows per instant, told apart by a text
 * column) becomes one series per value of that column, when it has few enough values to draw.
 * Undefined when every instant has one row, or no text column splits them.
 * @param {{ r: Record<string, unknown>, t: number }[]} timed rows sorted by time
 * @param {Column[]} columns
 * @param {Column[]} numeric
 * @returns {{ x: number[], series: Series[], by: string } | undefined}
 */
function pivot(timed, columns, numeric) {
  const x = [...new Set(timed.map(({ t }) => t))];
  if (x.length === timed.length) return undefined;
  for (const c of columns) {
    if (c.kind !== 'string' && c.kind !== 'bool') continue;
    const keys = [...new Set(timed.map(({ r }) => String(r[c.name])))].sort();
    if (keys.length < 2 || keys.length * numeric.length > MAX_SERIES) continue;
    const at = new Map(x.map((t, i) => [t, i]));
    /** @type {Series[]} */
    const series = [];
    for (const key of keys) {
      for (const n of numeric) {
        const values = /** @type {(number | null)[]} */ (new Array(x.length).fill(null));
        for (const { r, t } of timed) {
          const v = r[n.name];
          if (String(r[c.name]) === key && typeof v === 'number') {
            const i = /** @type {number} */ (at.get(t));
            values[i] = (values[i] ?? 0) + v;
          }
        }
        series.push({ label: numeric.length === 1 ? key : `${key} ${n.name}`, values });
      }
    }
    return { x, series, by: c.name };
  }
  return undefined;
}

/** @type {{ plot: uPlot, observer: ResizeObserver } | undefined} */
let current;

/** Removes the chart, if one is shown. */
export function clearChart() {
  current?.observer.disconnect();
  current?.plot.destroy();
  current = undefined;
}

/**
 * @param {HTMLElement} el
 * @param {ChartPlan} plan
 */
export function drawChart(el, plan) {
  clearChart();
  const first = formatTimestamp((plan.x[0] ?? 0) * 1e6).slice(0, 10);
  const last = formatTimestamp((plan.x.at(-1) ?? 0) * 1e6).slice(0, 10);
  const days = first === last ? first : `${first} – ${last}`;
  const half = plan.step / 2;
  const nonNegative = plan.series.every((s) => s.values.every((v) => v === null || v >= 0));
  const width = () => Math.max(320, el.clientWidth);
  /** @type {uPlot.Options} */
  const opts = {
    title: `${plan.title} · ${days}`,
    width: width(),
    height: 260,
    cursor: { drag: { x: true, y: false } },
    // Bars, and lines that never go below zero (counts, durations), start at zero.
    scales: {
      x: plan.bars ? { time: true, range: (_u, min, max) => [min - half, max + half] } : { time: true },
      y: nonNegative ? { range: (_u, _min, max) => [0, Math.max(1, max) * 1.1] } : {},
    },
    series: [
      { label: plan.time, value: (_u, v) => (v == null ? '--' : formatTimestamp(v * 1e6).slice(0, 19)) },
      ...plan.series.map((s, i) => ({
        label: s.label,
        stroke: COLORS[i % COLORS.length],
        width: 2,
        fill: plan.bars ? `${COLORS[i % COLORS.length]}99` : undefined,
        paths: plan.bars ? uPlot.paths.bars?.({ size: [0.8, 40] }) : undefined,
        points: { show: !plan.bars && plan.x.length <= 60 },
        spanGaps: false,
      })),
    ],
    // Counts and other whole numbers tick at whole numbers.
    axes: [{ values: timeLabels, space: 70, size: 56 }, plan.integers ? { size: 60, incrs: WHOLE_STEPS } : { size: 60 }],
  };
  const plot = new uPlot(opts, [plan.x, ...plan.series.map((s) => s.values)], el);
  const observer = new ResizeObserver(() => plot.setSize({ width: width(), height: 260 }));
  observer.observe(el);
  current = { plot, observer };
}
