// @ts-check
/**
 * A source's field tree from the schema catalogue (`GET /api/sources/:id/schema`): records open
 * to their fields, lists show their element type, scalars their type.
 */
import { h } from './dom.js';

/**
 * @typedef {{ kind: 'scalar', type: string }
 *   | { kind: 'record', fields: Record<string, FieldType> }
 *   | { kind: 'list', element: FieldType }} FieldType
 */

/**
 * `string`, `record`, `list<int>`, `list<record>`.
 * @param {FieldType} t
 * @returns {string}
 */
export function typeName(t) {
  switch (t.kind) {
    case 'scalar':
      return t.type;
    case 'record':
      return 'record';
    case 'list':
      return `list<${typeName(t.element)}>`;
  }
}

/**
 * The fields a record (or a list of records) opens to.
 * @param {FieldType} t
 * @returns {Record<string, FieldType> | undefined}
 */
function children(t) {
  if (t.kind === 'record') return t.fields;
  if (t.kind === 'list') return children(t.element);
  return undefined;
}

/**
 * @param {string} name
 * @param {FieldType} t
 * @param {string} path
 * @returns {HTMLElement}
 */
function field(name, t, path) {
  const label = [h('span', { class: 'field-name' }, name), ' ', h('span', { class: `type type-${t.kind}` }, typeName(t))];
  const sub = children(t);
  if (!sub) return h('li', { title: path }, ...label);
  return h('li', {}, h('details', {}, h('summary', { title: path }, ...label), fieldList(sub, path)));
}

/**
 * @param {Record<string, FieldType>} fields
 * @param {string} [prefix]
 * @returns {HTMLElement}
 */
export function fieldList(fields, prefix = '') {
  return h(
    'ul',
    { class: 'field-tree' },
    Object.entries(fields).map(([name, t]) => field(name, t, prefix ? `${prefix}.${name}` : name)),
  );
}
