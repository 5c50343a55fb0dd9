// @ts-check
/** An endpoint's usage on this node, one line under its settings. */
import { api } from './api.js';
import { h, replace } from './dom.js';
import { formatTimestamp } from './values.js';

/**
 * @typedef {{ calls: number, errors: number, duration_ms: { p50: number | null, p95: number | null },
 *   cache: { hit_ratio: number | null } }} UsageWindow
 * @typedef {{ last_hour: UsageWindow, last_day: UsageWindow,
 *   last_error: { code: string, message: string, at: string } | null }} Usage
 */

/**
 * @param {UsageWindow} w
 * @param {boolean} cached whether the endpoint caches at all
 */
function describeWindow(w, cached) {
  if (w.calls === 0) return 'no calls';
  const parts = [`${w.calls} ${w.calls === 1 ? 'call' : 'calls'}`];
  if (w.errors > 0) parts.push(`${w.errors} ${w.errors === 1 ? 'error' : 'errors'}`);
  if (w.duration_ms.p50 !== null) parts.push(`p50 ${Math.round(w.duration_ms.p50)} ms`);
  if (w.duration_ms.p95 !== null) parts.push(`p95 ${Math.round(w.duration_ms.p95)} ms`);
  if (cached && w.cache.hit_ratio !== null) parts.push(`cache hits ${Math.round(w.cache.hit_ratio * 100)}%`);
  return parts.join(' · ');
}

/**
 * Shows the endpoint's usage on this node (`GET /api/endpoints/:id/stats`) in `box`; hides it
 * when the service has no such route or the request fails: it is a convenience, not part of
 * querying. `stillWanted` says whether the endpoint is still the one on screen.
 * @param {HTMLElement} box
 * @param {string} token
 * @param {{ id: string, cache_duration_seconds: number }} ep
 * @param {() => boolean} stillWanted
 */
export async function renderUsage(box, token, ep, stillWanted) {
  try {
    const { body } = await api(token, 'GET', `/api/endpoints/${encodeURIComponent(ep.id)}/stats`);
    const usage = /** @type {Usage} */ (body);
    if (!stillWanted()) return;
    const last = usage.last_error;
    replace(
      box,
      h('span', {}, h('strong', {}, 'Last hour: '), describeWindow(usage.last_hour, ep.cache_duration_seconds > 0)),
      h('span', {}, h('strong', {}, 'Last day: '), describeWindow(usage.last_day, ep.cache_duration_seconds > 0)),
      last
        ? h('span', { title: last.message }, h('strong', {}, 'Last error: '), `${last.code} at ${formatTimestamp(Date.parse(last.at) * 1000).slice(11, 19)}`)
        : null,
    );
    box.hidden = false;
  } catch {
    box.hidden = true;
  }
}
