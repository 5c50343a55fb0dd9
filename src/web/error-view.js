// @ts-check
/** Showing an API error: its code and message, and where in the query it points. */
import { ApiError } from './api.js';
import { h, replace } from './dom.js';

/**
 * The API's message and code; when the message names a line and column of `source.text`, that
 * line with a caret under the column, and the caret put there in the editor.
 * @param {HTMLElement} box
 * @param {unknown} e
 * @param {{ text: string, target: HTMLTextAreaElement }} [source]
 */
export function showError(box, e, source) {
  const message = e instanceof Error ? e.message : String(e);
  const code = e instanceof ApiError ? `${e.status || ''} ${e.code}`.trim() : 'ERROR';
  const parts = [h('div', { class: 'error-head' }, h('span', { class: 'code' }, code), h('span', { class: 'message' }, message))];
  if (e instanceof ApiError && e.fields) {
    parts.push(
      h(
        'ul',
        { class: 'field-errors' },
        Object.entries(e.fields).map(([f, msgs]) => h('li', {}, h('code', {}, f), `: ${msgs.join('; ')}`)),
      ),
    );
  }
  const at = /line (\d+), column (\d+)/i.exec(message);
  if (at && source) {
    const line = Number(at[1]);
    const column = Number(at[2]);
    const lines = source.text.split('\n');
    const lineText = lines[line - 1];
    if (lineText !== undefined) {
      const gutter = `${line} | `;
      const caret = `${' '.repeat(gutter.length + Math.max(0, column - 1))}^`;
      parts.push(h('pre', { class: 'excerpt' }, `${gutter}${lineText}\n${caret}`));
      const offset = lines.slice(0, line - 1).reduce((n, l) => n + l.length + 1, 0) + Math.max(0, column - 1);
      source.target.focus();
      source.target.setSelectionRange(offset, Math.min(offset + 1, source.text.length));
    }
  }
  replace(box, ...parts);
  box.hidden = false;
}

/** @param {HTMLElement} box */
export function hideError(box) {
  box.hidden = true;
  replace(box);
}
