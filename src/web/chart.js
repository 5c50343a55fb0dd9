// @ts-check
/**
 * The time chart (uPlot) of a plan from chart-plan.js: lines, bars, or stacked bars.
 * TIMESTAMPs are placed in the viewer's time zone; DATETIMEs, which have none, at the wall-clock
 * time they name.
 */
import { formatTimestamp } from './values.js';
import uPlot from './vendor/uPlot.esm.js';

export { planChart } from './chart-plan.js';

/** @typedef {import('./chart-plan.js').ChartPlan} ChartPlan */

const COLORS = ['#2457c5', '#d9480f', '#2b8a3e', '#862e9c', '#c92a2a', '#0b7285', '#e67700', '#5c7cfa'];
const OTHER_COLOR = '#868e96';

/** Tick spacings for an axis of whole numbers. */
const WHOLE_STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 2e5, 5e5, 1e6, 1e7, 1e8, 1e9];

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
 * "other" always grey, so it never passes for one of the values.
 * @param {string} label
 * @param {number} i
 */
function color(label, i) {
  return label === 'other' ? OTHER_COLOR : (COLORS[i % COLORS.length] ?? OTHER_COLOR);
}

/**
 * Running totals from each series to the last: the first series' bar is the whole stack, and each
 * later one is drawn over it, so every series shows as its own band.
 * @param {import('./chart-plan.js').Series[]} series
 */
function stack(series) {
  const sums = series.map((s) => s.values.map((v) => v ?? 0));
  for (let i = sums.length - 2; i >= 0; i--) {
    const below = /** @type {number[]} */ (sums[i + 1]);
    sums[i] = /** @type {number[]} */ (sums[i]).map((v, k) => v + (below[k] ?? 0));
  }
  return sums;
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
        stroke: color(s.label, i),
        width: plan.bars ? 1 : 2,
        fill: plan.bars ? `${color(s.label, i)}${plan.stacked ? 'dd' : '99'}` : undefined,
        paths: plan.bars ? uPlot.paths.bars?.({ size: [0.8, 40] }) : undefined,
        points: { show: !plan.bars && plan.x.length <= 60 },
        spanGaps: false,
        // Stacked bars are drawn as running totals; the legend names each series' own count.
        ...(plan.stacked
          ? {
              value: (/** @type {uPlot} */ _u, /** @type {number | null} */ v, /** @type {number} */ _si, /** @type {number | null} */ idx) =>
                idx === null || v === null ? '--' : String(s.values[idx] ?? '--'),
            }
          : {}),
      })),
    ],
    // Counts and other whole numbers tick at whole numbers.
    axes: [{ values: timeLabels, space: 70, size: 56 }, plan.integers ? { size: 60, incrs: WHOLE_STEPS } : { size: 60 }],
  };
  const plot = new uPlot(opts, [plan.x, ...(plan.stacked ? stack(plan.series) : plan.series.map((s) => s.values))], el);
  const observer = new ResizeObserver(() => plot.setSize({ width: width(), height: 260 }));
  observer.observe(el);
  current = { plot, observer };
}
