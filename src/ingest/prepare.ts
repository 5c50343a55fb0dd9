/**
 * One pass over a request's events: the three standard columns (src/ingest/normalise.ts), the
 * field types the request brings (src/storage/infer.ts), and whether storage may read the fields
 * straight from the request's own JSON text instead of re-serialising every event.
 *
 * Reading the received text is only allowed when it yields exactly what the sanitise → conform →
 * JSON.stringify path would store. That holds for an event when:
 * - every key at every depth is already column-safe under the source's key rule and unique
 *   ignoring case (sanitising changes nothing), and no top-level key is a case variant of `id`,
 *   `timestamp` or `event_message`;
 * - no value needs converting: within the request no field met values of two kinds (that would make
 *   it a `string` column holding JSON text), and no array or object value is typeless (`[]`, `{}`,
 *   `[null]`: DuckDB reads `[]` as a record of NULLs where conform stores NULL);
 * and, checked at commit time against the schema the group was written with (`rawFor`):
 * - every field exists with this exact spelling and a type the values need no conversion for
 *   (`int` values may go to a `float` field);
 * - a `message` that became the event message (no `event_message`) is not also read as a field.
 *
 * The text itself must hold no `\uD800`–`\uDFFF` escape: DuckDB's reader refuses a lone surrogate
 * anywhere in it, even in a key it does not read (the event message, say), where the appender would
 * have stored U+FFFD.
 *
 * Anything else falls back to the sanitised fields (computed only then). Two differences remain, both
 * in the reader's favour or unspecified: integers beyond 2^53 keep every digit (JavaScript rounds
 * them), and a key repeated within one JSON object keeps its first value rather than its last
 * (RFC 8259 leaves duplicate names unspecified).
 */
import type { JsonObject, JsonValue, RawEventArray } from '../storage/event.ts';
import { copyFields, emptyFields, own, setOwn } from '../storage/fields.ts';
import { BOOL, findName, inferFields, numberType, STRING } from '../storage/infer.ts';
import { defaultSchemaLimits } from '../storage/limits.ts';
import type { FieldType } from '../storage/schema.ts';
import type { RawEvent } from './body.ts';
import { DEFAULT_KEY_RULE, type KeyLimits, type KeyRule, safeKey } from './keys.ts';
import { eventFields, eventId, eventMessage, messageMoved, parseTimestamp } from './normalise.ts';

const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

export interface PreparedRequest {
  events: readonly RawEvent[];
  ids: string[];
  timestamps: bigint[];
  messages: (string | null)[];
  /** Sanitised fields per event; filled only for events that needed them (see `fieldsOf`). */
  fields: (JsonObject | undefined)[];
  /** Types the request's fields bring, or undefined when none carried a type. */
  observed: Record<string, FieldType> | undefined;
  /** The received text, while every event may be read from it (subject to `rawFor`). */
  raw: RawEventArray | undefined;
  /** Some event's `message` became its event message (then `message` must not be a column). */
  messageMoved: boolean;
  limits: KeyLimits;
  /** The source's key rule (src/ingest/keys.ts). */
  rule: KeyRule;
}

interface WalkState {
  ok: boolean;
  limits: KeyLimits;
  rule: KeyRule;
  /** A number of magnitude 2^63 or more was seen (`RawEventArray.wideNumbers`). */
  wide: boolean;
}

/** 2^63: numbers from here on do not fit a 64-bit integer as written. */
const WIDE_NUMBER = 2 ** 63;

/**
 * The standard columns and field types of a request's events. `rawText`, when given, is the JSON
 * text of an array holding exactly `events`; `raw` keeps it when storage may read fields from it.
 * `rule` is the source's key rule.
 */
export function prepareRequest(
  events: readonly RawEvent[],
  nowMicros: bigint,
  rawText?: string,
  limits: KeyLimits = defaultSchemaLimits,
  rule: KeyRule = DEFAULT_KEY_RULE,
): PreparedRequest {
  const n = events.length;
  const out: PreparedRequest = {
    events,
    ids: new Array<string>(n),
    timestamps: new Array<bigint>(n),
    messages: new Array<string | null>(n),
    fields: new Array<JsonObject | undefined>(n),
    observed: undefined,
    raw: rawText !== undefined && textReadable(rawText) ? { text: rawText, count: n, elements: events as readonly JsonObject[] } : undefined,
    messageMoved: false,
    limits,
    rule,
  };
  const state: WalkState = { ok: true, limits, rule, wide: false };
  let observed: Record<string, FieldType> | undefined;
  for (let i = 0; i < n; i++) {
    const e = events[i] as RawEvent;
    out.ids[i] = eventId(e.id);
    out.timestamps[i] = parseTimestamp(e.timestamp) ?? nowMicros;
    out.messages[i] = eventMessage(e);
    if (out.raw !== undefined) {
      const skipMessage = messageMoved(e);
      if (skipMessage) out.messageMoved = true;
      observed = walkTop(e, observed, skipMessage, state);
      if (state.ok) continue;
      out.raw = undefined;
    }
    const fields = eventFields(e, limits, rule);
    out.fields[i] = fields;
    observed = inferFields(fields, observed);
  }
  out.observed = observed;
  if (out.raw !== undefined) {
    out.raw.keys = observed === undefined ? [] : Object.keys(observed);
    if (state.wide) out.raw.wideNumbers = true;
  }
  return out;
}

/** False when the text holds a surrogate escape (see the module comment); cheap when it holds no `\u`. */
function textReadable(text: string): boolean {
  return !text.includes('\\u') || !SURROGATE_ESCAPE.test(text);
}

/** The sanitised fields of event `i` (computed now when the fast pass did not need them). */
export function fieldsOf(prepared: PreparedRequest, i: number): JsonObject {
  let f = prepared.fields[i];
  if (f === undefined) {
    f = eventFields(prepared.events[i] as RawEvent, prepared.limits, prepared.rule);
    prepared.fields[i] = f;
  }
  return f;
}

/**
 * Each event's fields with the keys storage stores them under: the received objects when their
 * keys were column-safe as sent (the fast pass), else the sanitised fields (so a `message` that
 * became the event message is not among them).
 */
export function* storedShapes(prepared: PreparedRequest): Generator<JsonObject> {
  const n = prepared.ids.length;
  for (let i = 0; i < n; i++) {
    const e = prepared.events[i] as JsonObject;
    yield prepared.raw !== undefined && !messageMoved(e) ? e : fieldsOf(prepared, i);
  }
}

/**
 * The received text when storage may read the request's fields from it under a table with these
 * `columns`: they fit (`fitsSchema`), and a moved `message` would not be read into a `message`
 * column (DuckDB's JSON reader matches names exactly).
 */
export function rawFor(prepared: PreparedRequest, columns: Record<string, FieldType>): RawEventArray | undefined {
  if (prepared.raw === undefined || !fitsSchema(prepared.observed, columns)) return undefined;
  return prepared.messageMoved && Object.hasOwn(columns, 'message') ? undefined : prepared.raw;
}

/**
 * True when values of the `observed` types are stored unchanged under the schema's `fields`: every
 * field exists with this spelling, with the same type (or `float` for `int`).
 */
export function fitsSchema(observed: Record<string, FieldType> | undefined, fields: Record<string, FieldType>): boolean {
  if (observed === undefined) return true;
  for (const key in observed) {
    const stored = own(fields, key);
    if (stored === undefined || !fitsType(observed[key] as FieldType, stored)) return false;
  }
  return true;
}

function fitsType(o: FieldType, s: FieldType): boolean {
  if (o === s) return true;
  switch (o.kind) {
    case 'scalar':
      return s.kind === 'scalar' && (s.type === o.type || (o.type === 'int' && s.type === 'float'));
    case 'list':
      return s.kind === 'list' && fitsType(o.element, s.element);
    case 'record':
      return s.kind === 'record' && fitsSchema(o.fields, s.fields);
  }
}

/** Top-level keys of one event into `into`; clears `state.ok` when the event is not readable. */
function walkTop(event: RawEvent, into: Record<string, FieldType> | undefined, skipMessage: boolean, state: WalkState): Record<string, FieldType> | undefined {
  let fields = into;
  for (const key in event) {
    if (key === 'id' || key === 'timestamp' || key === 'event_message' || (skipMessage && key === 'message')) continue;
    const v = event[key];
    if (v === null || v === undefined) continue;
    const before = fields === undefined ? undefined : own(fields, key);
    if (before === undefined) {
      if (!newKeyOk(fields, key, state)) return fail(state, fields);
      const lower = key.toLowerCase();
      if (lower !== key && (lower === 'id' || lower === 'timestamp' || lower === 'event_message')) return fail(state, fields);
    }
    const after = walkValue(before, v, state, 1);
    if (!state.ok) return fields;
    if (after === before || after === undefined) continue;
    fields ??= emptyFields();
    setOwn(fields, key, after);
  }
  return fields;
}

/** A key not yet in `fields`: already column-safe, and no other spelling of it is there. */
function newKeyOk(fields: Record<string, FieldType> | undefined, key: string, state: WalkState): boolean {
  return safeKey(key, state.limits.maxKeyLength, state.rule) && (fields === undefined || findName(fields, key) === undefined);
}

function fail(state: WalkState, fields: Record<string, FieldType> | undefined): Record<string, FieldType> | undefined {
  state.ok = false;
  return fields;
}

/**
 * `widen` (src/storage/infer.ts) for a value that must need no conversion: clears `state.ok` on a
 * kind conflict, a typeless container or a key that is not column-safe.
 */
function walkValue(type: FieldType | undefined, value: unknown, state: WalkState, level: number): FieldType | undefined {
  switch (typeof value) {
    case 'string':
      if (type === undefined || type === STRING) return STRING;
      return type.kind === 'scalar' && type.type === 'string' ? type : conflict(state, type);
    case 'boolean':
      if (type === undefined || type === BOOL) return BOOL;
      return type.kind === 'scalar' && type.type === 'bool' ? type : conflict(state, type);
    case 'number': {
      if (!(Math.abs(value) < WIDE_NUMBER)) state.wide = true;
      const own = numberType(value);
      if (type === undefined) return own;
      if (type.kind !== 'scalar') return conflict(state, type);
      if (type.type === 'float') return type;
      if (type.type === 'int') return own;
      return conflict(state, type);
    }
    case 'object':
      break;
    default:
      return conflict(state, type);
  }
  if (value === null) return type;
  // Deeper than the limit: sanitising keeps it as JSON text.
  if (level > state.limits.maxDepth) return conflict(state, type);
  if (Array.isArray(value)) {
    if (type !== undefined && type.kind !== 'list') return conflict(state, type);
    let element = type?.element;
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (item === null) continue;
      element = walkValue(element, item, state, level + 1);
      if (!state.ok) return type;
    }
    if (element === undefined) return conflict(state, type);
    return type !== undefined && element === type.element ? type : { kind: 'list', element };
  }
  if (type !== undefined && type.kind !== 'record') return conflict(state, type);
  const object = value as { [key: string]: JsonValue };
  const known = type?.fields;
  let fields: Record<string, FieldType> | undefined;
  let typed = false;
  for (const key in object) {
    const v = object[key];
    if (v === null || v === undefined) continue;
    const current = fields ?? known;
    const before = current === undefined ? undefined : own(current, key);
    if (before === undefined && !newKeyOk(current, key, state)) return conflict(state, type);
    const after = walkValue(before, v, state, level + 1);
    if (!state.ok) return type;
    if (after === undefined) continue;
    typed = true;
    if (after === before) continue;
    fields ??= known === undefined ? emptyFields() : copyFields(known);
    setOwn(fields, key, after);
  }
  if (!typed) return conflict(state, type);
  if (fields === undefined) return type;
  return { kind: 'record', fields };
}

function conflict(state: WalkState, type: FieldType | undefined): FieldType | undefined {
  state.ok = false;
  return type;
}
