// @ts-check
/**
 * The time range of an endpoint with `@iso_timestamp_start` / `@iso_timestamp_end` (logs.all and
 * Studio-like endpoints): a choice of the last 15 minutes, hour, day or week, a custom range, or
 * none (the parameters are not sent). A preset is computed again at every run, so "last 1 h"
 * stays the last hour. The choice is remembered per endpoint.
 */
import { h } from './dom.js';
import { localInputValue } from './values.js';

const START = 'iso_timestamp_start';
const END = 'iso_timestamp_end';

/** @type {[string, string, number][]} value, label, seconds */
const PRESETS = [
  ['15m', 'last 15 min', 15 * 60],
  ['1h', 'last 1 h', 3600],
  ['24h', 'last 24 h', 86400],
  ['7d', 'last 7 d', 7 * 86400],
];

/**
 * @param {HTMLElement} container the parameter fields
 * @param {string} name
 */
function field(container, name) {
  return /** @type {HTMLInputElement | null} */ (container.querySelector(`[data-param="${name}"]`));
}

/** @param {string} endpointId */
const storageKey = (endpointId) => `quarry.range.${endpointId}`;

/**
 * Adds the range control in front of the two time fields, when the endpoint has them.
 * @param {HTMLElement} container
 * @param {string} endpointId
 */
export function renderTimeRange(container, endpointId) {
  const start = field(container, START);
  const end = field(container, END);
  if (!start || !end) return;
  const remembered = localStorage.getItem(storageKey(endpointId)) ?? '';
  const select = /** @type {HTMLSelectElement} */ (
    h(
      'select',
      { id: 'time-range', 'aria-label': 'Time range' },
      h('option', { value: '', selected: remembered === '' }, 'any time (not sent)'),
      PRESETS.map(([value, label]) => h('option', { value, selected: remembered === value }, label)),
      h('option', { value: 'custom', selected: remembered === 'custom' }, 'custom'),
    )
  );
  const apply = () => {
    localStorage.setItem(storageKey(endpointId), select.value);
    applyTimeRange(container);
  };
  select.addEventListener('change', apply);
  for (const input of [start, end]) {
    input.addEventListener('input', () => {
      if (select.value === 'custom') return;
      select.value = 'custom';
      localStorage.setItem(storageKey(endpointId), 'custom');
    });
  }
  container.prepend(h('div', { class: 'param time-range' }, h('label', { for: 'time-range' }, 'Time range'), select));
  applyTimeRange(container);
}

/**
 * Sets the two time fields from the chosen preset (again: "last 1 h" ends now), or clears them
 * for "any time". A custom range is left as typed.
 * @param {HTMLElement} container
 */
export function applyTimeRange(container) {
  const select = /** @type {HTMLSelectElement | null} */ (container.querySelector('#time-range'));
  const start = field(container, START);
  const end = field(container, END);
  if (!select || !start || !end) return;
  const preset = PRESETS.find(([value]) => value === select.value);
  if (preset) {
    const now = Date.now();
    start.value = localInputValue(now - preset[2] * 1000);
    end.value = localInputValue(now);
  } else if (select.value === '') {
    start.value = '';
    end.value = '';
  }
}
