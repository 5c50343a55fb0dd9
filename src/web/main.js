// @ts-check
/**
 * The explorer page: sign-in, the endpoint and source lists, the query editor, results, saving.
 * Every value shown comes from the API; DOM is built with h() (no HTML strings).
 */
import { ApiError, api, forgetToken, storeToken, storedToken } from './api.js';
import { clearChart, drawChart, planChart } from './chart.js';
import { byId, h, replace } from './dom.js';
import { declaredParams, finalSelect, mergeForSave } from './sql-text.js';
import { renderTable } from './table.js';
import { fieldList } from './tree.js';
import { analyse, formatTimestamp, timeZone } from './values.js';

/**
 * @typedef {{ name: string, type?: string, default?: unknown, required?: boolean, description?: string | null, values?: string[] }} ParamSpec
 * @typedef {{ id: string, name: string, description: string | null, query: string, sandboxable: boolean,
 *   max_limit: number, cache_duration_seconds: number, proactive_requerying_seconds: number,
 *   enable_auth: boolean, redact_pii: boolean, labels: string | null, updated_at: string, params?: ParamSpec[] }} Endpoint
 * @typedef {{ id: string, name: string, retention_days: number | null }} Source
 * @typedef {'sql' | 'lql'} Language
 */

const state = {
  /** @type {string | undefined} */
  token: undefined,
  /** @type {Endpoint[]} */
  endpoints: [],
  /** @type {Endpoint | undefined} */
  current: undefined,
  /** @type {Language} */
  language: 'sql',
  /** Editor text per endpoint and language, kept while the page lives. @type {Map<string, string>} */
  drafts: new Map(),
};

const el = {
  signIn: byId('sign-in'),
  signInForm: /** @type {HTMLFormElement} */ (byId('sign-in-form')),
  tokenInput: /** @type {HTMLInputElement} */ (byId('token-input')),
  remember: /** @type {HTMLInputElement} */ (byId('remember')),
  signInError: byId('sign-in-error'),
  signOut: byId('sign-out'),
  workspace: byId('workspace'),
  endpointList: byId('endpoint-list'),
  sourceList: byId('source-list'),
  notice: byId('notice'),
  emptyView: byId('empty-view'),
  endpointView: byId('endpoint-view'),
  endpointName: byId('endpoint-name'),
  endpointDescription: byId('endpoint-description'),
  endpointConfig: byId('endpoint-config'),
  endpointQuery: byId('endpoint-query'),
  endpointUsage: byId('endpoint-usage'),
  queryForm: /** @type {HTMLFormElement} */ (byId('query-form')),
  editor: /** @type {HTMLTextAreaElement} */ (byId('editor')),
  sandboxNote: byId('sandbox-note'),
  params: byId('params'),
  paramFields: byId('param-fields'),
  run: /** @type {HTMLButtonElement} */ (byId('run')),
  saveOpen: /** @type {HTMLButtonElement} */ (byId('save-open')),
  error: byId('error'),
  results: byId('results'),
  resultMeta: byId('result-meta'),
  chart: byId('chart'),
  table: /** @type {HTMLTableElement} */ (byId('result-table')),
  saveDialog: /** @type {HTMLDialogElement} */ (byId('save-dialog')),
  saveForm: /** @type {HTMLFormElement} */ (byId('save-form')),
  saveName: /** @type {HTMLInputElement} */ (byId('save-name')),
  saveDescription: /** @type {HTMLInputElement} */ (byId('save-description')),
  saveCache: /** @type {HTMLInputElement} */ (byId('save-cache')),
  saveQuery: /** @type {HTMLTextAreaElement} */ (byId('save-query')),
  saveError: byId('save-error'),
  saveCancel: byId('save-cancel'),
  tzNote: byId('tz-note'),
};

// ------------------------------------------------------------------------------------------
// Signing in

/** @param {string} [message] */
function showSignIn(message) {
  state.token = undefined;
  el.workspace.hidden = true;
  el.signOut.hidden = true;
  el.signIn.hidden = false;
  el.signInError.hidden = message === undefined;
  el.signInError.textContent = message ?? '';
  el.tokenInput.focus();
}

/** @param {unknown} e */
function signInProblem(e) {
  if (e instanceof ApiError && e.status === 401) return 'That token is unknown or has been revoked.';
  if (e instanceof ApiError && e.status === 403) {
    return 'That token is valid but lacks the "private" scope, which the explorer needs to list sources and endpoints.';
  }
  return e instanceof Error ? e.message : String(e);
}

/**
 * Loads the workspace with `token`. When that fails it shows the sign-in form and resolves
 * 'rejected' (the API refused the token) or 'failed' (anything else: the token may be fine).
 * @param {string} token
 * @returns {Promise<'ok' | 'rejected' | 'failed'>}
 */
async function enter(token) {
  try {
    const [endpoints, sources] = await Promise.all([api(token, 'GET', '/api/endpoints'), api(token, 'GET', '/api/sources')]);
    state.token = token;
    state.endpoints = sortByName(endpoints.body);
    renderSources(sortByName(sources.body));
    renderEndpointList();
    el.signIn.hidden = true;
    el.workspace.hidden = false;
    el.signOut.hidden = false;
    const wanted = new URLSearchParams(location.hash.slice(1)).get('endpoint');
    const initial =
      state.endpoints.find((x) => x.id === wanted) ?? state.endpoints.find((x) => x.name === 'logs.all') ?? state.endpoints[0];
    if (initial) selectEndpoint(initial);
    return 'ok';
  } catch (e) {
    showSignIn(signInProblem(e));
    return e instanceof ApiError && (e.status === 401 || e.status === 403) ? 'rejected' : 'failed';
  }
}

el.signInForm.addEventListener('submit', async (event) => {
  event.preventDefault();
  const token = el.tokenInput.value.trim();
  if (token === '') return;
  if ((await enter(token)) === 'ok') {
    storeToken(token, el.remember.checked);
    el.tokenInput.value = '';
  }
});

el.signOut.addEventListener('click', () => {
  forgetToken();
  state.current = undefined;
  state.drafts.clear();
  clearChart();
  showSignIn();
});

// ------------------------------------------------------------------------------------------
// The lists

/**
 * @template {{ name: string }} T
 * @param {T[]} items
 * @returns {T[]}
 */
function sortByName(items) {
  return [...items].sort((a, b) => a.name.localeCompare(b.name));
}

function renderEndpointList() {
  replace(
    el.endpointList,
    state.endpoints.map((ep) =>
      h(
        'li',
        {},
        h(
          'button',
          {
            type: 'button',
            class: ep.id === state.current?.id ? 'nav-item active' : 'nav-item',
            'data-endpoint': ep.name,
            onclick: () => selectEndpoint(ep),
          },
          h('span', { class: 'nav-name' }, ep.name),
          ep.sandboxable ? h('span', { class: 'tag', title: 'Accepts your own sql / lql' }, 'sandbox') : null,
        ),
      ),
    ),
  );
}

/** @param {Source[]} sources */
function renderSources(sources) {
  replace(
    el.sourceList,
    sources.map((src) => {
      const body = h('div', { class: 'source-body' }, h('span', { class: 'hint' }, 'Loading fields…'));
      const details = h(
        'details',
        { class: 'source', 'data-source': src.name },
        h('summary', {}, h('span', { class: 'nav-name' }, src.name)),
        body,
      );
      let loaded = false;
      details.addEventListener('toggle', async () => {
        if (!(/** @type {HTMLDetailsElement} */ (details).open) || loaded || !state.token) return;
        loaded = true;
        try {
          const { body: schema } = await api(state.token, 'GET', `/api/sources/${encodeURIComponent(src.id)}/schema`);
          const retention = src.retention_days === null ? 'kept forever' : `kept ${src.retention_days} days`;
          replace(body, h('p', { class: 'hint' }, retention), fieldList(schema.columns));
        } catch (e) {
          loaded = false;
          replace(body, h('p', { class: 'form-error' }, e instanceof Error ? e.message : String(e)));
        }
      });
      return h('li', {}, details);
    }),
  );
}

// ------------------------------------------------------------------------------------------
// One endpoint

/** @param {Endpoint} ep */
function paramSpecs(ep) {
  if (Array.isArray(ep.params) && ep.params.length > 0) return ep.params;
  return declaredParams(ep.query).map((name) => /** @type {ParamSpec} */ ({ name }));
}

/** @param {Endpoint} ep */
function rememberedParams(ep) {
  try {
    return JSON.parse(localStorage.getItem(`quarry.params.${ep.id}`) ?? '{}') ?? {};
  } catch {
    return {};
  }
}

/**
 * The starting value of a parameter: what was last sent, else its default; `project` starts as
 * "default", the project Supabase's self-hosted stack (and the demo) logs under.
 * @param {ParamSpec} p
 * @param {Record<string, string>} remembered
 */
function initialValue(p, remembered) {
  if (typeof remembered[p.name] === 'string') return remembered[p.name];
  if (p.default !== undefined && p.default !== null) return String(p.default);
  return p.name === 'project' ? 'default' : '';
}

/** @param {Endpoint} ep */
function renderParams(ep) {
  const specs = paramSpecs(ep);
  const remembered = rememberedParams(ep);
  el.params.hidden = specs.length === 0;
  replace(
    el.paramFields,
    specs.map((p) => {
      const id = `param-${p.name}`;
      const input = h('input', {
        id,
        name: p.name,
        'data-param': p.name,
        spellcheck: 'false',
        value: initialValue(p, remembered),
        placeholder: p.type ? `${p.type}${p.required ? ', required' : ''}` : 'empty = NULL',
        required: p.required === true,
      });
      return h(
        'div',
        { class: 'param' },
        h('label', { for: id }, `@${p.name}`),
        input,
        p.description ? h('span', { class: 'hint' }, p.description) : null,
      );
    }),
  );
}

/** @param {Endpoint} ep */
function renderConfig(ep) {
  const cache =
    ep.cache_duration_seconds > 0
      ? `${ep.cache_duration_seconds} s${ep.proactive_requerying_seconds > 0 ? `, refreshed every ${ep.proactive_requerying_seconds} s` : ''}`
      : 'off';
  /** @type {[string, string][]} */
  const items = [
    ['id', ep.id],
    ['sandboxable', ep.sandboxable ? 'yes (sql / lql)' : 'no'],
    ['max rows', String(ep.max_limit)],
    ['cache', cache],
    ['auth', ep.enable_auth ? 'token required' : 'open to anyone'],
    ['redact IPs', ep.redact_pii ? 'yes' : 'no'],
    ['labels', ep.labels || '—'],
    ['updated', formatTimestamp(Date.parse(ep.updated_at) * 1000).slice(0, 19)],
  ];
  replace(
    el.endpointConfig,
    items.map(([k, v]) => h('div', {}, h('dt', {}, k), h('dd', { title: v }, v))),
  );
}

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
 * The endpoint's usage on this node (`GET /api/endpoints/:id/stats`); hidden when the service
 * has no such route or the request fails: it is a convenience, not part of querying.
 * @param {Endpoint} ep
 */
async function renderUsage(ep) {
  const token = state.token;
  if (!token) return;
  try {
    const { body } = await api(token, 'GET', `/api/endpoints/${encodeURIComponent(ep.id)}/stats`);
    const usage = /** @type {Usage} */ (body);
    if (state.current?.id !== ep.id) return;
    const last = usage.last_error;
    replace(
      el.endpointUsage,
      h('span', {}, h('strong', {}, 'Last hour: '), describeWindow(usage.last_hour, ep.cache_duration_seconds > 0)),
      h('span', {}, h('strong', {}, 'Last day: '), describeWindow(usage.last_day, ep.cache_duration_seconds > 0)),
      last
        ? h(
            'span',
            { title: last.message },
            h('strong', {}, 'Last error: '),
            `${last.code} at ${formatTimestamp(Date.parse(last.at) * 1000).slice(11, 19)}`,
          )
        : null,
    );
    el.endpointUsage.hidden = false;
  } catch {
    el.endpointUsage.hidden = true;
  }
}

/** @param {Endpoint} ep */
function defaultText(ep) {
  return state.language === 'sql' && ep.sandboxable ? finalSelect(ep.query) : '';
}

function loadDraft() {
  const ep = state.current;
  if (!ep) return;
  el.editor.value = state.drafts.get(`${ep.id}:${state.language}`) ?? defaultText(ep);
}

function keepDraft() {
  const ep = state.current;
  if (ep) state.drafts.set(`${ep.id}:${state.language}`, el.editor.value);
}

/** @param {Endpoint} ep */
function selectEndpoint(ep) {
  keepDraft();
  state.current = ep;
  history.replaceState(null, '', `#endpoint=${encodeURIComponent(ep.id)}`);
  el.emptyView.hidden = true;
  el.endpointView.hidden = false;
  el.endpointName.textContent = ep.name;
  el.endpointDescription.textContent = ep.description ?? '';
  el.endpointQuery.textContent = ep.query;
  renderConfig(ep);
  el.endpointUsage.hidden = true;
  void renderUsage(ep);
  renderParams(ep);
  el.editor.disabled = !ep.sandboxable;
  for (const radio of el.queryForm.querySelectorAll('input[name=language]')) {
    /** @type {HTMLInputElement} */ (radio).disabled = !ep.sandboxable;
  }
  el.sandboxNote.textContent = ep.sandboxable
    ? 'Replaces the final SELECT; reads the saved query’s CTEs. Empty: run the saved query.'
    : 'Not sandboxable: runs its saved query; only the parameters apply.';
  loadDraft();
  updateSaveButton();
  hideError();
  el.results.hidden = true;
  clearChart();
  renderEndpointList();
}

function updateSaveButton() {
  const lql = state.language === 'lql' && state.current?.sandboxable;
  el.saveOpen.disabled = lql === true;
  el.saveOpen.title = lql ? 'Endpoints store SQL: switch to SQL to save.' : '';
}

for (const radio of el.queryForm.querySelectorAll('input[name=language]')) {
  radio.addEventListener('change', () => {
    keepDraft();
    state.language = /** @type {Language} */ (/** @type {HTMLInputElement} */ (radio).value);
    el.editor.placeholder = state.language === 'lql' ? 'e.g. f:edge_logs c:count(*) c:group_by(t::minute)' : '';
    loadDraft();
    updateSaveButton();
  });
}

// ------------------------------------------------------------------------------------------
// Running

function paramValues() {
  /** @type {Record<string, string>} */
  const values = {};
  for (const input of el.paramFields.querySelectorAll('input[data-param]')) {
    const i = /** @type {HTMLInputElement} */ (input);
    values[i.name] = i.value;
  }
  return values;
}

async function run() {
  const ep = state.current;
  const token = state.token;
  if (!ep || !token) return;
  const params = paramValues();
  localStorage.setItem(`quarry.params.${ep.id}`, JSON.stringify(params));
  /** @type {Record<string, string>} */
  const body = {};
  for (const [k, v] of Object.entries(params)) if (v !== '') body[k] = v;
  const text = el.editor.value;
  const language = state.language;
  if (ep.sandboxable && text.trim() !== '') body[language] = text;
  el.run.disabled = true;
  el.run.textContent = 'Running…';
  try {
    const answer = await api(token, 'POST', `/api/endpoints/query/${encodeURIComponent(ep.id)}`, body);
    hideError();
    showResults(ep, answer);
  } catch (e) {
    el.results.hidden = true;
    clearChart();
    showError(el.error, e, body[language] !== undefined ? { text, target: el.editor } : undefined);
  } finally {
    el.run.disabled = false;
    el.run.textContent = 'Run';
    void renderUsage(ep);
  }
}

/**
 * @param {Endpoint} ep
 * @param {import('./api.js').ApiAnswer} answer
 */
function showResults(ep, answer) {
  const rows = /** @type {Record<string, unknown>[]} */ (answer.body?.result ?? []);
  const columns = analyse(rows);
  const warnings = answer.headers.get('x-query-warnings');
  const meta = [
    h('strong', {}, `${rows.length} ${rows.length === 1 ? 'row' : 'rows'}`),
    rows.length >= ep.max_limit ? h('span', { class: 'tag warn' }, `capped at max_limit ${ep.max_limit}`) : null,
    h('span', {}, `${Math.round(answer.ms)} ms`),
    h('span', {}, `cache ${answer.headers.get('x-cache') ?? '—'}`),
    columns.some((c) => c.kind === 'timestamp') ? h('span', {}, `times in ${timeZone()}`) : null,
  ];
  replace(el.resultMeta, ...meta);
  if (warnings) el.resultMeta.append(h('div', { class: 'warning' }, `Warnings: ${warnings}`));
  el.results.hidden = false;
  const plan = planChart(rows, columns);
  el.chart.hidden = plan === undefined;
  if (plan) drawChart(el.chart, plan);
  else clearChart();
  if (rows.length === 0) replace(el.table, h('caption', {}, 'No rows.'));
  else renderTable(el.table, rows, columns);
}

el.queryForm.addEventListener('submit', (event) => {
  event.preventDefault();
  void run();
});

el.editor.addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
    event.preventDefault();
    void run();
  }
});

// ------------------------------------------------------------------------------------------
// Errors

function hideError() {
  el.error.hidden = true;
  replace(el.error);
}

/**
 * The API's message and code; when the message names a line and column of `source.text`, that
 * line with a caret under the column, and the caret put there in the editor.
 * @param {HTMLElement} box
 * @param {unknown} e
 * @param {{ text: string, target: HTMLTextAreaElement }} [source]
 */
function showError(box, e, source) {
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

// ------------------------------------------------------------------------------------------
// Saving as a new endpoint

el.saveOpen.addEventListener('click', () => {
  const ep = state.current;
  if (!ep) return;
  const text = el.editor.value;
  el.saveQuery.value = ep.sandboxable && text.trim() !== '' ? mergeForSave(ep.query, text) : ep.query;
  el.saveName.value = '';
  el.saveDescription.value = '';
  el.saveCache.value = '0';
  el.saveError.hidden = true;
  el.saveDialog.showModal();
  el.saveName.focus();
});

el.saveCancel.addEventListener('click', () => el.saveDialog.close());

el.saveForm.addEventListener('submit', async (event) => {
  event.preventDefault();
  const token = state.token;
  if (!token) return;
  const name = el.saveName.value.trim();
  /** @type {Record<string, unknown>} */
  const body = {
    name,
    query: el.saveQuery.value,
    cache_duration_seconds: Number(el.saveCache.value || 0),
  };
  if (el.saveDescription.value.trim() !== '') body.description = el.saveDescription.value.trim();
  try {
    const { body: created } = await api(token, 'POST', '/api/endpoints', body);
    el.saveDialog.close();
    const { body: all } = await api(token, 'GET', '/api/endpoints');
    state.endpoints = sortByName(all);
    selectEndpoint(state.endpoints.find((x) => x.id === created.id) ?? created);
    el.notice.textContent = `Saved endpoint “${created.name}”: GET /api/endpoints/query/${created.name}`;
    el.notice.hidden = false;
    setTimeout(() => {
      el.notice.hidden = true;
    }, 8000);
  } catch (e) {
    showError(el.saveError, e, { text: el.saveQuery.value, target: el.saveQuery });
  }
});

// ------------------------------------------------------------------------------------------

el.tzNote.textContent = `Times shown in ${timeZone()}`;
const saved = storedToken();
if (saved) {
  void enter(saved).then((outcome) => {
    if (outcome === 'rejected') forgetToken();
  });
} else {
  showSignIn();
}
