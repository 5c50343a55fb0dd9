// @ts-check
/**
 * The side panel that shows one result row: every column, nested records as trees of fields (the
 * one clicked open all the way down), and "Copy row as JSON". It lies over the right of the page,
 * so opening a record never changes the table's shape; Escape or Close shuts it.
 */
import { byId, h, replace } from './dom.js';
import { fieldsTable } from './table.js';

const panel = byId('record-panel');
const title = byId('record-title');
const body = byId('record-body');
const status = byId('record-status');
const copyButton = /** @type {HTMLButtonElement} */ (byId('record-copy'));
const closeButton = /** @type {HTMLButtonElement} */ (byId('record-close'));

/** @type {Record<string, unknown> | undefined} */
let shown;

/**
 * @param {Record<string, unknown>} row
 * @param {number} index
 * @param {string | undefined} column the column whose record was clicked, opened first
 */
export function openRow(row, index, column) {
  shown = row;
  title.textContent = `Row ${index + 1}`;
  status.textContent = '';
  // The record clicked opens all the way down; from the row's own button, every record one level.
  replace(
    body,
    fieldsTable(row, (name) => name === column),
  );
  if (column === undefined) {
    for (const details of body.querySelectorAll(':scope > table > tbody > tr > td > details.record')) {
      /** @type {HTMLDetailsElement} */ (details).open = true;
    }
  }
  panel.hidden = false;
  panel.setAttribute('data-row', String(index));
  closeButton.focus();
}

export function closeRow() {
  panel.hidden = true;
  shown = undefined;
}

/**
 * The clipboard API, else a selected textarea and the copy command (a page served over plain
 * HTTP from another host is no secure context, and has no clipboard API).
 * @param {string} text
 */
async function copyText(text) {
  if (navigator.clipboard) {
    try {
      await navigator.clipboard.writeText(text);
      return true;
    } catch {
      // fall through to the older way
    }
  }
  const area = /** @type {HTMLTextAreaElement} */ (h('textarea', { class: 'visually-hidden', readonly: true }));
  area.value = text;
  document.body.append(area);
  area.select();
  const ok = document.execCommand('copy');
  area.remove();
  return ok;
}

copyButton.addEventListener('click', async () => {
  if (!shown) return;
  const ok = await copyText(JSON.stringify(shown, null, 2));
  status.textContent = ok ? 'Copied as JSON.' : 'The browser refused to copy; select the fields and copy them by hand.';
});
closeButton.addEventListener('click', closeRow);
document.addEventListener('keydown', (e) => {
  if (e.key === 'Escape' && !panel.hidden) closeRow();
});
