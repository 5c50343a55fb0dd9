// @ts-check
/**
 * The result table. It keeps its shape whatever the rows hold: a nested record shows as a short
 * summary that opens the row in the side panel (record-panel.js) rather than in place, long text
 * wraps within a bounded column, and columns can be resized by dragging their header's edge.
 * Timestamps show in the viewer's time zone with the exact instant as a tooltip.
 */
import { h, replace } from './dom.js';
import { describeTimestamp, formatNumber, formatTimestamp, isRecordValue, isTimestampValue } from './values.js';

/** @typedef {import('./values.js').Column} Column */
/** @typedef {(row: Record<string, unknown>, index: number, column: string | undefined) => void} OpenRow */

/** Names of nested fields that hold instants (nested values have no column kind to go by). */
const TIME_NAME = /(^|_)(time|timestamp|ts|at|date)$|timestamp/i;

/** A text column whose values run longer than this gets room to wrap (and a bound). */
const LONG_TEXT = 48;

/**
 * A value as a node. In the table (`open` given) a record is a button that opens the row in the
 * panel; in the panel (`open` undefined) it is a nested table that opens in place (already open,
 * all the way down, with `expand`).
 * @param {unknown} v
 * @param {boolean} asTime
 * @param {(() => void) | undefined} open
 * @param {boolean} [expand]
 * @returns {Node}
 */
export function valueNode(v, asTime, open, expand = false) {
  if (v === null || v === undefined) return h('span', { class: 'null' }, 'null');
  if (asTime && isTimestampValue(v)) {
    const us = /** @type {number} */ (v);
    return h('time', { class: 'ts', datetime: new Date(Math.floor(us / 1000)).toISOString(), title: describeTimestamp(us) }, formatTimestamp(us));
  }
  if (typeof v === 'number') return h('span', { class: 'num' }, formatNumber(v));
  if (typeof v === 'boolean') return h('span', { class: 'bool' }, String(v));
  // Short strings without spaces (ids, paths, codes) read better unbroken.
  if (typeof v === 'string') return v.length <= 40 && !/\s/.test(v) ? h('span', { class: 'nowrap', title: v }, v) : document.createTextNode(v);
  const items = isRecordValue(v) ? /** @type {Record<string, unknown>[]} */ (v) : Array.isArray(v) ? undefined : [/** @type {Record<string, unknown>} */ (v)];
  if (items === undefined) return list(/** @type {unknown[]} */ (v), open, expand);
  if (open) {
    return h('button', { type: 'button', class: 'record-open', title: 'Open this row’s record in the side panel', onclick: open }, summary(items));
  }
  return record(items, expand);
}

/** @param {Record<string, unknown>[]} items */
function summary(items) {
  if (items.length !== 1) return `[${items.length} records]`;
  const keys = Object.keys(items[0] ?? {});
  const shown = keys.slice(0, 3).join(', ');
  return `{ ${shown}${keys.length > 3 ? `, … +${keys.length - 3}` : ''} }`;
}

/**
 * A record in the panel: open with its fields when `expand`; else closed, its fields built the
 * first time it opens (deep records would otherwise build every nested table up front).
 * @param {Record<string, unknown>[]} items
 * @param {boolean} expand
 */
function record(items, expand) {
  const details = /** @type {HTMLDetailsElement} */ (h('details', { class: 'record' }, h('summary', {}, summary(items))));
  let built = false;
  const build = () => {
    if (built) return;
    built = true;
    for (const obj of items) details.append(fieldsTable(obj, expand));
  };
  details.addEventListener('toggle', () => {
    if (details.open) build();
  });
  if (expand) {
    build();
    details.open = true;
  }
  return details;
}

/**
 * Field names and values, one row each.
 * @param {Record<string, unknown>} obj
 * @param {boolean | ((name: string) => boolean)} expand which fields' records start open, all the way down
 */
export function fieldsTable(obj, expand) {
  return h(
    'table',
    { class: 'nested' },
    h(
      'tbody',
      {},
      Object.entries(obj).map(([k, v]) =>
        h('tr', {}, h('th', { scope: 'row' }, k), h('td', {}, valueNode(v, TIME_NAME.test(k), undefined, typeof expand === 'function' ? expand(k) : expand))),
      ),
    ),
  );
}

/**
 * @param {unknown[]} items
 * @param {(() => void) | undefined} open
 * @param {boolean} expand
 */
function list(items, open, expand) {
  if (items.length === 0) return h('span', { class: 'null' }, '[]');
  return h(
    'span',
    { class: 'list' },
    '[',
    items.flatMap((x, i) => (i === 0 ? [valueNode(x, false, open, expand)] : [', ', valueNode(x, false, open, expand)])),
    ']',
  );
}

/**
 * @param {Record<string, unknown>[]} rows
 * @param {string} name
 */
function isLongText(rows, name) {
  return rows.some((r) => typeof r[name] === 'string' && /** @type {string} */ (r[name]).length > LONG_TEXT);
}

/**
 * @param {HTMLTableElement} table
 * @param {Record<string, unknown>[]} rows
 * @param {Column[]} columns
 * @param {OpenRow} openRow
 */
export function renderTable(table, rows, columns, openRow) {
  table.style.tableLayout = '';
  table.style.width = '';
  const long = new Set(columns.filter((c) => c.kind === 'string' && isLongText(rows, c.name)).map((c) => c.name));
  const head = h(
    'thead',
    {},
    h(
      'tr',
      {},
      h('th', { scope: 'col', class: 'row-actions' }, h('span', { class: 'visually-hidden' }, 'Open')),
      columns.map((c) =>
        h(
          'th',
          { scope: 'col', class: c.kind === 'number' ? 'num' : undefined, title: c.kind, 'data-column': c.name },
          h('span', { class: 'col-name' }, c.name),
          h('span', { class: 'col-resize', title: 'Drag to resize', 'aria-hidden': 'true' }),
        ),
      ),
    ),
  );
  const body = h(
    'tbody',
    {},
    rows.map((row, i) =>
      h(
        'tr',
        {},
        h(
          'th',
          { scope: 'row', class: 'row-actions' },
          h('button', { type: 'button', class: 'row-open', title: 'Open this row (fields, copy as JSON)', onclick: () => openRow(row, i, undefined) }, '⋯'),
        ),
        columns.map((c) =>
          h(
            'td',
            { class: `k-${c.kind}${long.has(c.name) ? ' long' : ''}` },
            valueNode(row[c.name], c.kind === 'timestamp', () => openRow(row, i, c.name)),
          ),
        ),
      ),
    ),
  );
  replace(table, head, body);
  for (const handle of table.querySelectorAll('.col-resize')) {
    handle.addEventListener('pointerdown', (e) => startResize(table, /** @type {PointerEvent} */ (e)));
  }
}

/**
 * Dragging a header's right edge: the first drag fixes every column at its current width (a fixed
 * layout), then only the dragged one changes; the table grows or shrinks with it and scrolls
 * inside its frame, never the page.
 * @param {HTMLTableElement} table
 * @param {PointerEvent} event
 */
function startResize(table, event) {
  const handle = /** @type {HTMLElement} */ (event.target);
  const th = /** @type {HTMLTableCellElement} */ (handle.parentElement);
  event.preventDefault();
  const heads = /** @type {HTMLTableCellElement[]} */ ([...table.querySelectorAll('thead th')]);
  if (table.style.tableLayout !== 'fixed') {
    const widths = heads.map((x) => x.getBoundingClientRect().width);
    heads.forEach((x, i) => {
      x.style.width = `${widths[i]}px`;
    });
    table.style.width = `${widths.reduce((a, b) => a + b, 0)}px`;
    table.style.tableLayout = 'fixed';
  }
  const startX = event.clientX;
  const startWidth = th.getBoundingClientRect().width;
  const startTable = table.getBoundingClientRect().width;
  handle.setPointerCapture(event.pointerId);
  table.classList.add('resizing');
  /** @param {PointerEvent} e */
  const move = (e) => {
    const width = Math.max(48, startWidth + e.clientX - startX);
    th.style.width = `${width}px`;
    table.style.width = `${startTable + width - startWidth}px`;
  };
  const end = () => {
    handle.removeEventListener('pointermove', /** @type {EventListener} */ (move));
    table.classList.remove('resizing');
  };
  handle.addEventListener('pointermove', /** @type {EventListener} */ (move));
  handle.addEventListener('pointerup', end, { once: true });
  handle.addEventListener('pointercancel', end, { once: true });
}
