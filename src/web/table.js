// @ts-check
/**
 * The result table. Nested records (one-element arrays of objects in the API's encoding) open
 * in place with <details>; timestamps show in the viewer's time zone with the exact instant as a
 * tooltip.
 */
import { h, replace } from './dom.js';
import { describeTimestamp, formatNumber, formatTimestamp, isRecordValue, isTimestampValue } from './values.js';

/** @typedef {import('./values.js').Column} Column */

/** Names of nested fields that hold instants (nested values have no column kind to go by). */
const TIME_NAME = /(^|_)(time|timestamp|ts|at|date)$|timestamp/i;

/**
 * @param {unknown} v
 * @param {boolean} asTime
 * @returns {Node}
 */
function cell(v, asTime) {
  if (v === null || v === undefined) return h('span', { class: 'null' }, 'null');
  if (asTime && isTimestampValue(v)) {
    const us = /** @type {number} */ (v);
    return h('time', { class: 'ts', datetime: new Date(Math.floor(us / 1000)).toISOString(), title: describeTimestamp(us) }, formatTimestamp(us));
  }
  if (typeof v === 'number') return h('span', { class: 'num' }, formatNumber(v));
  if (typeof v === 'boolean') return h('span', { class: 'bool' }, String(v));
  // Short strings without spaces (ids, paths, codes) read better unbroken.
  if (typeof v === 'string') return v.length <= 40 && !/\s/.test(v) ? h('span', { class: 'nowrap' }, v) : document.createTextNode(v);
  if (isRecordValue(v)) return record(/** @type {Record<string, unknown>[]} */ (v));
  if (Array.isArray(v)) return list(v);
  return record([/** @type {Record<string, unknown>} */ (v)]);
}

/** @param {Record<string, unknown>} obj */
function preview(obj) {
  const keys = Object.keys(obj);
  const shown = keys.slice(0, 4).join(', ');
  return `{ ${shown}${keys.length > 4 ? `, … +${keys.length - 4}` : ''} }`;
}

/**
 * A record cell: closed, its fields built the first time it opens (a result of 10,000 rows with
 * deep records would otherwise build every nested table up front).
 * @param {Record<string, unknown>[]} items
 */
function record(items) {
  const first = items[0] ?? {};
  const summary = items.length === 1 ? preview(first) : `[${items.length} records]`;
  const details = /** @type {HTMLDetailsElement} */ (h('details', { class: 'record' }, h('summary', {}, summary)));
  let built = false;
  details.addEventListener('toggle', () => {
    if (built || !details.open) return;
    built = true;
    for (const obj of items) {
      details.append(
        h(
          'table',
          { class: 'nested' },
          h(
            'tbody',
            {},
            Object.entries(obj).map(([k, v]) => h('tr', {}, h('th', { scope: 'row' }, k), h('td', {}, cell(v, TIME_NAME.test(k))))),
          ),
        ),
      );
    }
  });
  return details;
}

/** @param {unknown[]} items */
function list(items) {
  if (items.length === 0) return h('span', { class: 'null' }, '[]');
  return h(
    'span',
    { class: 'list' },
    '[',
    items.flatMap((x, i) => (i === 0 ? [cell(x, false)] : [', ', cell(x, false)])),
    ']',
  );
}

/**
 * @param {HTMLTableElement} table
 * @param {Record<string, unknown>[]} rows
 * @param {Column[]} columns
 */
export function renderTable(table, rows, columns) {
  const head = h(
    'thead',
    {},
    h(
      'tr',
      {},
      columns.map((c) => h('th', { scope: 'col', class: c.kind === 'number' ? 'num' : undefined, title: c.kind }, c.name)),
    ),
  );
  const body = h(
    'tbody',
    {},
    rows.map((row) =>
      h(
        'tr',
        {},
        columns.map((c) => h('td', { class: `k-${c.kind}` }, cell(row[c.name], c.kind === 'timestamp'))),
      ),
    ),
  );
  replace(table, head, body);
}
