// @ts-check
/**
 * The explorer page: sign-in, the endpoint and source lists, the query editor, results, saving.
 * Every value shown comes from the API; DOM is built with h() (no HTML strings).
 */
import { ApiError, api, forgetToken, storeToken, storedToken } from './api.js';
import { clearChart, drawChart, planChart } from './chart.js';
import { byId, h, replace } from './dom.js';
import { hideError, showError } from './error-view.js';
import { lqlExamples, withSource } from './lql-help.js';
import { paramSpecs, readParams, rememberParams, renderParams } from './params.js';
import { closeRow, openRow } from './record-panel.js';
import { cteNames, declaredParams, finalSelect, mergeForSave } from './sql-text.js';
import { renderTable } from './table.js';
import { applyTimeRange, renderTimeRange } from './time-range.js';
import { fieldList } from './tree.js';
import { renderUsage } from './usage.js';
import { analyse, formatTimestamp, timeZone } from './values.js';

/**
 * @typedef {import('./params.js').ParamSpec} ParamSpec
 * @typedef {{ id: string, name: string, description: string | null, query: string, sandboxable: boolean,
 *   max_limit: number, cache_duration_seconds: number, proactive_requerying_seconds: number,
 *   enable_auth: boolean, redact_pii: boolean, labels: string | null, updated_at: string, params?: ParamSpec[] }} Endpoint
 * @typedef {{ id: string, name: string, retention_days: number | null }} Source
 * @typedef {'sql' | 'lql'} Language
 */

const DRAFT_PREFIX = 'quarry.draft.';

const state = {
  /** @type {string | undefined} */
  token: undefined,
  /** @type {Endpoint[]} */
  endpoints: [],
  /** @type {Endpoint | undefined} */
  current: undefined,
  /** @type {Language} */
  language: 'sql',
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
  lqlExamples: byId('lql-examples'),
  chartNote: byId('chart-note'),
  language: byId('language'),
  runHint: byId('run-hint'),
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
  saveSandboxable: /** @type {HTMLInputElement} */ (byId('save-sandboxable')),
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
    const initial = state.endpoints.find((x) => x.id === wanted) ?? state.endpoints.find((x) => x.name === 'logs.all') ?? state.endpoints[0];
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

/**
 * A token revoked while the page is open: back to the sign-in form, saying why.
 * @param {unknown} e
 */
function signedOut(e) {
  if (!(e instanceof ApiError && e.status === 401)) return false;
  forgetToken();
  forgetDrafts();
  state.current = undefined;
  clearChart();
  showSignIn(`Signed out: ${e.message}`);
  return true;
}

el.signOut.addEventListener('click', () => {
  forgetToken();
  state.current = undefined;
  forgetDrafts();
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
      const details = h('details', { class: 'source', 'data-source': src.name }, h('summary', {}, h('span', { class: 'nav-name' }, src.name)), body);
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

/** @param {Endpoint} ep */
function showUsage(ep) {
  if (state.token) void renderUsage(el.endpointUsage, state.token, ep, () => state.current?.id === ep.id);
}

/** @param {Endpoint} ep */
function defaultText(ep) {
  return state.language === 'sql' && ep.sandboxable ? finalSelect(ep.query) : '';
}

/**
 * Editor text is kept per endpoint and language for the tab's life (a reload keeps it).
 * @param {Endpoint} ep
 */
function draftKey(ep) {
  return `${DRAFT_PREFIX}${ep.id}:${state.language}`;
}

function forgetDrafts() {
  for (const key of Object.keys(sessionStorage)) if (key.startsWith(DRAFT_PREFIX)) sessionStorage.removeItem(key);
}

function loadDraft() {
  const ep = state.current;
  if (!ep) return;
  el.editor.value = sessionStorage.getItem(draftKey(ep)) ?? defaultText(ep);
}

function keepDraft() {
  const ep = state.current;
  if (ep?.sandboxable) sessionStorage.setItem(draftKey(ep), el.editor.value);
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
  showUsage(ep);
  el.params.hidden = !renderParams(el.paramFields, ep);
  renderTimeRange(el.paramFields, ep.id);
  // Only a sandboxable endpoint takes a query of the caller's; the others take parameters.
  el.editor.hidden = !ep.sandboxable;
  el.language.hidden = !ep.sandboxable;
  el.runHint.hidden = !ep.sandboxable;
  el.sandboxNote.textContent = ep.sandboxable
    ? 'Replaces the final SELECT; reads the saved query’s CTEs. Empty: run the saved query.'
    : 'Not sandboxable: runs its saved query; only the parameters apply.';
  loadDraft();
  updateSaveButton();
  updateLqlHelp();
  hideError(el.error);
  el.results.hidden = true;
  closeRow();
  clearChart();
  renderEndpointList();
}

/** In LQL mode: a placeholder and examples that run as typed on this endpoint. */
function updateLqlHelp() {
  const ep = state.current;
  const lql = state.language === 'lql' && ep?.sandboxable === true;
  const examples = ep ? lqlExamples(cteNames(ep.query)) : [];
  el.editor.placeholder = lql ? `e.g. ${examples[0] ?? ''}` : '';
  el.lqlExamples.hidden = !lql;
  replace(
    el.lqlExamples,
    h('span', { class: 'hint' }, 'Examples:'),
    examples.map((x) =>
      h(
        'button',
        {
          type: 'button',
          class: 'example',
          title: 'Put this in the editor',
          onclick: () => {
            el.editor.value = x;
            keepDraft();
            el.editor.focus();
          },
        },
        x,
      ),
    ),
  );
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
    loadDraft();
    updateSaveButton();
    updateLqlHelp();
  });
}

// ------------------------------------------------------------------------------------------
// Running

async function run() {
  const ep = state.current;
  const token = state.token;
  if (!ep || !token) return;
  applyTimeRange(el.paramFields);
  const params = readParams(el.paramFields);
  rememberParams(ep, params);
  /** @type {Record<string, string>} */
  const body = {};
  for (const [k, v] of Object.entries(params)) if (v !== '') body[k] = v;
  const text = el.editor.value;
  const language = state.language;
  /** @type {string | undefined} */
  let note;
  if (ep.sandboxable && text.trim() !== '') {
    if (language === 'lql') {
      const chosen = withSource(text, cteNames(ep.query));
      body.lql = chosen.text;
      note = chosen.note;
    } else {
      body.sql = text;
    }
  }
  el.run.disabled = true;
  el.run.textContent = 'Running…';
  el.queryForm.setAttribute('aria-busy', 'true');
  try {
    const answer = await api(token, 'POST', `/api/endpoints/query/${encodeURIComponent(ep.id)}`, body);
    hideError(el.error);
    showResults(ep, answer, params, note);
  } catch (e) {
    if (signedOut(e)) return;
    el.results.hidden = true;
    clearChart();
    // An error's position is in the text sent, which starts with the added f: when there is one.
    showError(el.error, e, body[language] === text ? { text, target: el.editor } : undefined);
  } finally {
    el.run.disabled = false;
    el.run.textContent = 'Run';
    el.queryForm.setAttribute('aria-busy', 'false');
    showUsage(ep);
  }
}

/**
 * @param {Endpoint} ep
 * @param {import('./api.js').ApiAnswer} answer
 * @param {Record<string, string>} params the values sent ('' for not sent)
 * @param {string | undefined} note what the explorer did to the query, if anything
 */
function showResults(ep, answer, params, note) {
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
  if (note) el.resultMeta.append(h('div', { class: 'lql-note', id: 'lql-note' }, note));
  el.results.hidden = false;
  closeRow();
  const plan = planChart(rows, columns);
  el.chart.hidden = plan === undefined;
  if (plan) drawChart(el.chart, plan);
  else clearChart();
  const notes = [plan && rows.length >= ep.max_limit ? capNote(ep, plan, columns) : undefined, plan?.note].filter((x) => x !== undefined);
  el.chartNote.hidden = notes.length === 0;
  el.chartNote.textContent = notes.join(' ');
  el.chartNote.classList.toggle('warn', plan !== undefined && rows.length >= ep.max_limit);
  if (rows.length === 0) replace(el.table, h('caption', {}, 'No rows.', ...emptyHints(ep, params)));
  else renderTable(el.table, rows, columns, openRow);
}

/**
 * The chart of a result the row cap cut covers only part of what was asked: say which part.
 * @param {Endpoint} ep
 * @param {import('./chart.js').ChartPlan} plan
 * @param {import('./values.js').Column[]} columns
 */
function capNote(ep, plan, columns) {
  const zoneless = !columns.some((c) => c.name === plan.time && c.kind === 'timestamp');
  const at = (/** @type {number | undefined} */ s) => (s === undefined ? '?' : formatTimestamp(s * 1e6).slice(0, 16));
  return (
    `Cut at the row cap: the query returned max_limit = ${ep.max_limit} rows, so the chart covers only ` +
    `${at(plan.x[0])} to ${at(plan.x.at(-1))}${zoneless ? '' : ` (${timeZone()})`}, not everything the query matched. ` +
    'Narrow the time range, or aggregate (group by minute) to see all of it.'
  );
}

/**
 * Why a result may be empty: a parameter with a list of values not sent, or not one of them.
 * @param {Endpoint} ep
 * @param {Record<string, string>} params
 */
function emptyHints(ep, params) {
  return paramSpecs(ep).flatMap((p) => {
    const value = params[p.name] ?? '';
    if (Array.isArray(p.values) && !p.values.includes(value)) {
      const given = value === '' ? 'was not sent' : `is “${value}”`;
      return [h('span', { class: 'empty-hint' }, ` @${p.name} ${given}: choose one of ${p.values.join(', ')}.`)];
    }
    return [];
  });
}

el.queryForm.addEventListener('submit', (event) => {
  event.preventDefault();
  void run();
});

el.editor.addEventListener('input', keepDraft);

el.editor.addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
    event.preventDefault();
    void run();
  }
});

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
  el.saveSandboxable.checked = false;
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
  if (el.saveSandboxable.checked) body.sandboxable = true;
  if (el.saveDescription.value.trim() !== '') body.description = el.saveDescription.value.trim();
  // The typed parameters the new query still uses keep their types.
  const used = new Set(declaredParams(el.saveQuery.value));
  const typed = (state.current?.params ?? []).filter((p) => used.has(p.name));
  if (typed.length > 0) body.params = typed;
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
    if (signedOut(e)) {
      el.saveDialog.close();
      return;
    }
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
