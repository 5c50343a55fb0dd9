// @ts-check
/**
 * The time chart (uPlot): drawn whenever a result has a timestamp column. Numeric columns become
 * lines over that time; a result with no numeric column (raw log rows) becomes bars counting its
 * rows per time bucket. The time axis is in the viewer's time zone (uPlot's default).
 */
import { formatTimestamp } from './values.js';
import uPlot from './vendor/uPlot.esm.js';

/** @typedef {import('./values.js').Column} Column */
/** @typedef {{ label: string, values: (number | null)[] }} Series */
/** @typedef {{ time: string, x: number[], series: Series[], bars: boolean, step: number, title: string }} ChartPlan */

const COLORS = ['#2457c5', '#d9480f', '#2b8a3e', '#862e9c', '#c92a2a', '#0b7285', '#e67700', '#495057'];
const MAX_SERIES = COLORS.length;

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
  const time = columns.find((c) => c.kind === 'timestamp')?.name;
  if (time === undefined) return undefined;
  const timed = rows
    .filter((r) => typeof r[time] === 'number')
    .sort((a, b) => /** @type {number} */ (a[time]) - /** @type {number} */ (b[time]));
  if (timed.length === 0) return undefined;
  const numeric = columns.filter((c) => c.kind === 'number').slice(0, MAX_SERIES);
  if (numeric.length > 0) {
    return {
      time,
      x: timed.map((r) => /** @type {number} */ (r[time]) / 1e6),
      series: numeric.map((c) => ({
        label: c.name,
        values: timed.map((r) => (typeof r[c.name] === 'number' ? /** @type {number} */ (r[c.name]) : null)),
      })),
      bars: false,
      step: 0,
      title: `${numeric.map((c) => c.name).join(', ')} by ${time}`,
    };
  }
  const secs = timed.map((r) => /** @type {number} */ (r[time]) / 1e6);
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
  const width = () => Math.max(320, el.clientWidth);
  /** @type {uPlot.Options} */
  const opts = {
    title: `${plan.title} · ${days}`,
    width: width(),
    height: 260,
    cursor: { drag: { x: true, y: false } },
    // Bars count from zero; lines keep uPlot's own range around the data.
    scales: plan.bars
      ? {
          x: { time: true, range: (_u, min, max) => [min - half, max + half] },
          y: { range: (_u, _min, max) => [0, Math.max(1, max) * 1.1] },
        }
      : { x: { time: true } },
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
    // Counts tick at whole numbers.
    axes: [{ values: timeLabels, space: 70, size: 56 }, plan.bars ? { size: 60, incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 1e4, 2e4, 5e4, 1e5, 1e6] } : { size: 60 }],
  };
  const plot = new uPlot(opts, [plan.x, ...plan.series.map((s) => s.values)], el);
  const observer = new ResizeObserver(() => plot.setSize({ width: width(), height: 260 }));
  observer.observe(el);
  current = { plot, observer };
}
