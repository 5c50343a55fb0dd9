// @ts-check
/**
 * An endpoint's parameters in the query form: which there are (typed declarations, else the
 * query's `@names`), a control for each, and the values last sent, remembered per endpoint (they
 * are not secrets; the token is never among them).
 */
import { h, replace } from './dom.js';
import { paramHint } from './param-hints.js';
import { declaredParams } from './sql-text.js';
import { instantOfLocalInput, localInputValue } from './values.js';

/**
 * @typedef {{ name: string, type?: string, default?: unknown, required?: boolean, description?: string | null,
 *   values?: string[], hint?: boolean }} ParamSpec
 * @typedef {{ query: string, id: string, name: string, params?: ParamSpec[] }} Endpoint
 */

/**
 * The endpoint's parameters: its typed declarations first, then every other `@name` of its query
 * (those bind as strings; the explorer may offer a better control for them, param-hints.js).
 * @param {Endpoint} ep
 * @returns {ParamSpec[]}
 */
export function paramSpecs(ep) {
  const typed = Array.isArray(ep.params) ? ep.params : [];
  const described = new Set(typed.map((p) => p.name));
  const plain = declaredParams(ep.query)
    .filter((name) => !described.has(name))
    .map((name) => paramHint(ep.name, name) ?? /** @type {ParamSpec} */ ({ name }));
  return [...typed, ...plain];
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

/**
 * The control for one parameter: a choice for bool and enum parameters (when the endpoint lists
 * the values), a date picker for dates, text otherwise. Empty means "not sent": the server then
 * uses the default, binds NULL, or answers 400 for a required one.
 * @param {ParamSpec} p
 * @param {string} id
 * @param {string} value
 * @returns {HTMLElement}
 */
function paramControl(p, id, value) {
  // No `required` attribute: the API's own 400 names a missing parameter, in the error box.
  const common = { id, name: p.name, 'data-param': p.name, 'aria-required': p.required ? 'true' : undefined };
  const choices = p.type === 'bool' ? ['true', 'false'] : p.type === 'enum' && Array.isArray(p.values) ? p.values.map(String) : undefined;
  if (choices) {
    return h(
      'select',
      common,
      h('option', { value: '' }, p.required ? 'choose…' : '(not sent)'),
      choices.map((c) => h('option', { value: c, selected: c === value }, c)),
    );
  }
  // A hinted time bound: a date-time control in the viewer's zone, sent as an ISO instant.
  if (p.hint && p.type === 'timestamp') {
    const ms = Date.parse(value);
    return h('input', { ...common, type: 'datetime-local', step: '1', 'data-local-time': 'true', value: Number.isFinite(ms) ? localInputValue(ms) : '' });
  }
  const placeholders = /** @type {Record<string, string>} */ ({
    int: 'a whole number',
    float: 'a number',
    timestamp: '2026-11-21T10:00:00Z',
    string: 'text',
  });
  const hint = p.type ? (placeholders[p.type] ?? p.type) : 'empty = NULL';
  return h('input', {
    ...common,
    type: p.type === 'date' ? 'date' : 'text',
    inputmode: p.type === 'int' || p.type === 'float' ? 'decimal' : undefined,
    spellcheck: 'false',
    value,
    placeholder: hint,
  });
}

/**
 * Fills `container` with a control per parameter; false when the endpoint has none.
 * @param {HTMLElement} container
 * @param {Endpoint} ep
 */
export function renderParams(container, ep) {
  const specs = paramSpecs(ep);
  const remembered = rememberedParams(ep);
  replace(
    container,
    specs.map((p) => {
      const id = `param-${p.name}`;
      return h(
        'div',
        { class: 'param' },
        h(
          'label',
          { for: id, title: p.hint ? 'sent as text, as the API takes it' : p.type ? `type ${p.type}` : 'bound as a string' },
          `@${p.name}`,
          p.type ? h('span', { class: 'type' }, ` ${p.type}`) : null,
          p.required ? h('span', { class: 'type required' }, ' · required') : null,
        ),
        paramControl(p, id, initialValue(p, remembered)),
        p.description ? h('span', { class: 'hint' }, p.description) : null,
      );
    }),
  );
  return specs.length > 0;
}

/**
 * The values in `container`'s controls, by parameter name ('' for empty).
 * @param {HTMLElement} container
 * @returns {Record<string, string>}
 */
export function readParams(container) {
  /** @type {Record<string, string>} */
  const values = {};
  for (const control of container.querySelectorAll('[data-param]')) {
    const c = /** @type {HTMLInputElement | HTMLSelectElement} */ (control);
    values[c.name] = c.dataset.localTime ? instantOfLocalInput(c.value) : c.value;
  }
  return values;
}

/**
 * @param {Endpoint} ep
 * @param {Record<string, string>} values
 */
export function rememberParams(ep, values) {
  localStorage.setItem(`quarry.params.${ep.id}`, JSON.stringify(values));
}
