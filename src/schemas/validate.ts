/**
 * Checking a value against a vocabulary's TypeBox schema (src/schemas/*.ts) and telling the client
 * what is wrong, field by field, in the schema's own words.
 *
 * A schema says what a client is told with the `errorMessage` annotation (ajv-errors' spelling):
 * a string for any way the value breaks the schema, or one message per JSON Schema keyword
 * (`{"pattern": "…", "not": "…"}`), with `default` for the others. A property that is missing is
 * "is required" unless its schema gives a `required` message. `{value}` in a message is the JSON of
 * the value at fault. A keyword without a message at its own level takes the nearest enclosing
 * schema's `default` (or string) message, and is reported at that schema's field: a non-string
 * element of `values` is reported as `params[0].values`, "an enum needs a non-empty list…". A
 * failure no schema words gets TypeBox's own message.
 *
 * Fields are named as the client wrote them: `max_limit`, `params[2].type`.
 */
import type { TSchema } from 'typebox';
import { Compile, type Validator } from 'typebox/compile';
import type { TLocalizedValidationError } from 'typebox/error';
import { Settings } from 'typebox/system';
import { QuarryError } from '../errors.ts';

/** Messages per field, each field named by its path (`params[0].type`); empty when valid. */
export type FieldErrors = Record<string, string[]>;

/** The `errorMessage` annotation (see above). */
export type ErrorMessages = string | Readonly<Record<string, string>>;

/**
 * Errors gathered for one value at most. TypeBox stops at 8 by default (a guard against huge
 * values); a 422 should name every bad field of a body the size limit let in, so checks gather up
 * to this many, still bounded.
 */
const MAX_ERRORS = 1000;

export interface SchemaCheck {
  /** The schema checked against. */
  readonly schema: TSchema;
  /** True when the value fits the schema. */
  check(value: unknown): boolean;
  /**
   * What is wrong with `value`, per field, in the schema's words; empty when it fits. `root` is the
   * value's own name, the prefix of every field (`params` → `params[0].type`); by default none, so
   * a body's fields are its property names and a body wrong as a whole is `body`.
   */
  errors(value: unknown, root?: string): FieldErrors;
}

/** A compiled check of `schema`, with errors worded by its `errorMessage` annotations. */
export function schemaCheck(schema: TSchema): SchemaCheck {
  let validator: Validator | undefined;
  const compiled = () => {
    validator ??= Compile(schema);
    return validator;
  };
  return {
    schema,
    check: (value) => compiled().Check(value),
    errors(value, root = '') {
      const v = compiled();
      if (v.Check(value)) return {};
      const previous = Settings.Get().maxErrors;
      let found: TLocalizedValidationError[];
      Settings.Set({ maxErrors: MAX_ERRORS });
      try {
        found = v.Errors(value);
      } finally {
        Settings.Set({ maxErrors: previous });
      }
      return worded(schema, value, found, root);
    },
  };
}

/** Adds `message` to `field` unless it is already there. */
export function addError(fields: FieldErrors, field: string, message: string): void {
  const list = fields[field] ?? [];
  fields[field] = list;
  if (!list.includes(message)) list.push(message);
}

/**
 * The 422 for per-field messages (docs/API.md §4: `fields` names each one), its message a one-line
 * summary: `The source is not valid: name must be ….`
 */
export function validationFailed(subject: string, fields: FieldErrors): QuarryError {
  const summary = Object.entries(fields)
    .map(([f, msgs]) => `${f} ${msgs.join('; ')}`)
    .join('. ');
  return new QuarryError('VALIDATION_FAILED', `The ${subject} is not valid: ${summary}.`, { fields });
}

/** `a` with every message of `b` added. */
export function mergeErrors(a: FieldErrors, b: FieldErrors): FieldErrors {
  for (const [field, messages] of Object.entries(b)) for (const m of messages) addError(a, field, m);
  return a;
}

/** The value with only the properties `schema` lists (anything else an object carries is dropped). */
export function onlyProperties<T>(schema: { readonly properties: Readonly<Record<string, unknown>> }, value: T): T {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(schema.properties)) out[key] = (value as Record<string, unknown>)[key];
  return out as T;
}

/** `{"a": 1}.x[0]`-style name of the field at `path` under `root`. */
function fieldName(root: string, path: readonly string[]): string {
  let name = root;
  for (const segment of path) name = /^\d+$/.test(segment) ? `${name}[${segment}]` : name === '' ? segment : `${name}.${segment}`;
  return name === '' ? 'body' : name;
}

function pointerSegments(pointer: string): string[] {
  if (pointer === '' || pointer === '#') return [];
  return pointer
    .replace(/^#?\//, '')
    .split('/')
    .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'));
}

type Json = Record<string, unknown>;

/** One schema on the way from the root to the one that failed, and how deep in the value it applies. */
interface Step {
  readonly schema: Json;
  readonly depth: number;
}

/** Keywords whose next segment is a property name (or an index) of the value: one level deeper. */
const KEYED_DEEPER = new Set(['properties', 'patternProperties', 'prefixItems', 'dependentSchemas']);
/** Keywords that are one subschema for a deeper level of the value. */
const DEEPER = new Set(['items', 'additionalProperties', 'additionalItems', 'contains', 'propertyNames', 'unevaluatedItems', 'unevaluatedProperties']);
/** Keywords whose next segment is an index into a list of subschemas for the same level. */
const LISTED = new Set(['anyOf', 'oneOf', 'allOf']);

/** The schemas along `schemaPath`, each with the depth of the value it applies to. */
function stepsTo(root: TSchema, schemaPath: string): Step[] {
  const steps: Step[] = [{ schema: root as unknown as Json, depth: 0 }];
  const segments = pointerSegments(schemaPath);
  let schema = root as unknown as Json;
  let depth = 0;
  for (let i = 0; i < segments.length; i++) {
    const key = segments[i] as string;
    let next: unknown;
    if (KEYED_DEEPER.has(key) || LISTED.has(key) || key === '$defs' || key === 'definitions') {
      const inner = segments[++i] as string;
      next = (schema[key] as Json | undefined)?.[inner];
      if (KEYED_DEEPER.has(key)) depth++;
    } else {
      next = schema[key];
      if (DEEPER.has(key)) depth++;
    }
    if (next === null || typeof next !== 'object') break;
    schema = next as Json;
    steps.push({ schema, depth });
  }
  return steps;
}

function messageOf(schema: Json, keyword: string, ownLevel: boolean): string | undefined {
  const messages = schema.errorMessage as ErrorMessages | undefined;
  if (messages === undefined) return undefined;
  if (typeof messages === 'string') return keyword === 'required' ? undefined : messages;
  if (ownLevel && messages[keyword] !== undefined) return messages[keyword];
  return keyword === 'required' ? undefined : messages.default;
}

function valueAt(value: unknown, path: readonly string[]): unknown {
  let v = value;
  for (const segment of path) v = v !== null && typeof v === 'object' ? (v as Json)[segment] : undefined;
  return v;
}

function fill(message: string, value: unknown): string {
  return message.includes('{value}') ? message.replaceAll('{value}', JSON.stringify(value) ?? 'nothing') : message;
}

function worded(schema: TSchema, value: unknown, errors: readonly TLocalizedValidationError[], root: string): FieldErrors {
  const fields: FieldErrors = {};
  for (const e of errors) {
    const path = pointerSegments(e.instancePath);
    // additionalProperties: false also fails each extra property's `false` schema; the
    // additionalProperties error itself names them.
    if (e.keyword === 'boolean' && e.schemaPath.endsWith('/additionalProperties')) continue;
    const steps = stepsTo(schema, e.schemaPath);
    const owner = steps[steps.length - 1] as Step;
    if (e.keyword === 'required' || e.keyword === 'additionalProperties') {
      const names =
        e.keyword === 'required'
          ? (e.params as { requiredProperties: string[] }).requiredProperties
          : (e.params as { additionalProperties: string[] }).additionalProperties;
      for (const name of names) {
        const message =
          e.keyword === 'required'
            ? (messageOf(((owner.schema.properties as Json | undefined)?.[name] ?? {}) as Json, 'required', true) ?? 'is required')
            : (steps
                .slice()
                .reverse()
                .filter((s) => s.depth === owner.depth)
                .map((s) => messageOf(s.schema, 'additionalProperties', true))
                .find((m) => m !== undefined) ?? 'is not a known field');
        addError(fields, fieldName(root, [...path, name]), fill(message, valueAt(value, [...path, name])));
      }
      continue;
    }
    let placed = false;
    for (let i = steps.length - 1; i >= 0 && !placed; i--) {
      const step = steps[i] as Step;
      const message = messageOf(step.schema, e.keyword, step.depth === owner.depth);
      if (message === undefined) continue;
      const at = path.slice(0, path.length - (owner.depth - step.depth));
      addError(fields, fieldName(root, at), fill(message, valueAt(value, at)));
      placed = true;
    }
    if (!placed) addError(fields, fieldName(root, path), e.message);
  }
  return fields;
}
