/**
 * A batch's rows as ClickHouse JSONEachRow text: `{"id":…,"timestamp":…,"event_message":…,"fields":{…}}`
 * per line.
 *
 * Events that storage may read from the request's received text (`StoredEvent.raw`, checked by
 * src/ingest/prepare.ts) get their `fields` cut out of that text: each array element's members as
 * received, minus `id`, `timestamp`, `event_message` and a `message` that became the event message.
 * That skips parsing the request a second time and serialising every event again, which cost more
 * CPU than the rest of the service's ingest path. The cut is a scan for the element and member
 * boundaries (strings, brackets and commas); values are copied as they are, so ClickHouse reads the
 * same values JavaScript would have written, with two differences ClickHouse is told about or
 * that change nothing read back: a key repeated within an object keeps its first value
 * (`type_json_skip_duplicated_paths`, ddl.ts; as on DuckDB's fast path), and a number keeps its
 * spelling (`1.0` is stored as a Float64 rather than the integer `1`; every read casts a path to
 * the catalogue's type). A key holding a backslash escape, or a number beyond ±2^63 (ClickHouse
 * refuses integers past 64 bits, JavaScript would have rounded them), sends the whole array the
 * other way: parsed, shaped to the schema and serialised.
 */
import { conformObject } from '../../storage/conform.ts';
import type { JsonValue, StoredEvent } from '../../storage/event.ts';
import { PRESENCE_KEY, withPresence } from '../../storage/presence.ts';
import type { TableSchema } from '../../storage/schema.ts';
import { withoutBase } from '../../storage/schema.ts';
import { formatUnixSeconds } from '../../time.ts';

/** The rows of one batch as JSONEachRow text, fields shaped to the batch's schema. */
export function rowsText(events: readonly StoredEvent[], schema: TableSchema): string {
  let fields: TableSchema['columns'] | undefined;
  let text = '';
  for (let i = 0; i < events.length; ) {
    const event = events[i] as StoredEvent;
    const raw = event.raw;
    if (raw === undefined) {
      fields ??= withoutBase(schema.columns);
      text += row(event, clickHouseJson(withPresence(conformObject(event.fields, fields))));
      i++;
      continue;
    }
    const cut = raw.wideNumbers === true ? undefined : cutFields(raw.text, raw.count);
    if (cut !== undefined) {
      for (let k = 0; k < raw.count; k++) text += row(events[i + k] as StoredEvent, cut[k] as string);
    } else {
      fields ??= withoutBase(schema.columns);
      const parsed = JSON.parse(raw.text) as JsonValue[];
      for (let k = 0; k < raw.count; k++) {
        const element = parsed[k];
        const own = element !== null && typeof element === 'object' && !Array.isArray(element) ? element : {};
        text += row(events[i + k] as StoredEvent, clickHouseJson(withPresence(conformObject(own, fields))));
      }
    }
    i += raw.count;
  }
  return text;
}

function row(event: StoredEvent, fieldsText: string): string {
  // Strings only (made well-formed at ingest, src/ingest/normalise.ts): plain JSON text.
  const message = event.event_message === null ? 'null' : JSON.stringify(event.event_message);
  return `{"id":${JSON.stringify(event.id)},"timestamp":"${formatUnixSeconds(event.timestamp)}","event_message":${message},"fields":${fieldsText}}\n`;
}

/** A token no value can contain (a NUL and this process's own random digits). */
const WIDE = `\u0000${Math.random().toString(36).slice(2)}:`;
const WIDE_TOKEN = new RegExp(`"${JSON.stringify(WIDE).slice(1, -1).replaceAll('\\', '\\\\')}(-?\\d+)"`, 'g');

/**
 * JSON text ClickHouse accepts for fields JavaScript holds (their strings are well-formed since
 * ingest, src/ingest/keys.ts): an integral number of magnitude 2^63 or more, which JavaScript
 * writes as digits ClickHouse refuses as a 64-bit integer, is written as a float (`…000.0`), the
 * type the catalogue gives it (src/storage/infer.ts).
 */
function clickHouseJson(value: unknown): string {
  let wide = false;
  const text = JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v === 'number' && Number.isInteger(v) && Math.abs(v) >= 2 ** 63 && Math.abs(v) < 1e21) {
      wide = true;
      return `${WIDE}${v.toFixed(0)}`;
    }
    return v;
  });
  return wide ? text.replace(WIDE_TOKEN, '$1.0') : text;
}

/** Unix µs → `seconds.micros`, which DateTime64(6) reads exactly (src/time.ts). */
export const timestampText: (micros: bigint) => string = formatUnixSeconds;

const QUOTE = 34;
const BACKSLASH = 92;
const COMMA = 44;
const COLON = 58;
const OPEN_OBJECT = 123;
const CLOSE_OBJECT = 125;
const OPEN_ARRAY = 91;
const CLOSE_ARRAY = 93;

/** The next `"`, `[`, `]`, `{`, `}` or `,` (anything else is skipped in one step). */
const STRUCTURAL = /["[\]{},]/g;

/** One member of an element: where it starts and ends in the text, and its key as written. */
interface Member {
  key: string;
  start: number;
  valueStart: number;
  end: number;
  isNull: boolean;
}

/**
 * Each of the `count` objects of the array `text` as object text without the members stored in
 * their own columns, or undefined when a key is escaped or the text is not such an array (the
 * caller then parses it).
 */
export function cutFields(text: string, count: number): string[] | undefined {
  const out: string[] = [];
  let pos = skipSpace(text, 0);
  if (text.charCodeAt(pos) !== OPEN_ARRAY) return undefined;
  pos = skipSpace(text, pos + 1);
  if (text.charCodeAt(pos) === CLOSE_ARRAY) return count === 0 ? out : undefined;
  const members: Member[] = [];
  for (;;) {
    if (text.charCodeAt(pos) !== OPEN_OBJECT) return undefined;
    members.length = 0;
    const end = readObject(text, pos, members);
    if (end < 0) return undefined;
    out.push(keptMembers(text, members));
    pos = skipSpace(text, end);
    const c = text.charCodeAt(pos);
    if (c === CLOSE_ARRAY) break;
    if (c !== COMMA) return undefined;
    pos = skipSpace(text, pos + 1);
  }
  return out.length === count ? out : undefined;
}

/** The object text of an element's members other than the base columns. */
function keptMembers(text: string, members: readonly Member[]): string {
  let eventMessage = false;
  for (const m of members) if (m.key === 'event_message' && !m.isNull) eventMessage = true;
  let out = '{';
  for (const m of members) {
    const k = m.key;
    if (k === 'id' || k === 'timestamp' || k === 'event_message' || (k === 'message' && !eventMessage)) continue;
    if (out.length > 1) out += ',';
    out +=
      text.charCodeAt(m.valueStart) === OPEN_OBJECT ? text.slice(m.start, m.valueStart) + markedObject(text, m.valueStart, m.end) : text.slice(m.start, m.end);
  }
  return `${out}}`;
}

const MARK = `"${PRESENCE_KEY}":true`;

/**
 * The object text in [start, end) with the presence marker (src/storage/presence.ts) first in
 * every object outside arrays, as `withPresence` gives for parsed fields.
 */
function markedObject(text: string, start: number, end: number): string {
  let out = '';
  let from = start;
  let arrays = 0;
  STRUCTURAL.lastIndex = start;
  for (;;) {
    const m = STRUCTURAL.exec(text);
    if (m === null || m.index >= end) break;
    const at = m.index;
    switch (text.charCodeAt(at)) {
      case QUOTE:
        STRUCTURAL.lastIndex = stringEnd(text, at);
        break;
      case OPEN_ARRAY:
        arrays++;
        break;
      case CLOSE_ARRAY:
        arrays--;
        break;
      case OPEN_OBJECT:
        if (arrays === 0) {
          out += text.slice(from, at + 1) + (text.charCodeAt(skipSpace(text, at + 1)) === CLOSE_OBJECT ? MARK : `${MARK},`);
          from = at + 1;
        }
        break;
      default:
        break;
    }
  }
  return out + text.slice(from, end);
}

/**
 * Reads the object starting at `start` (a `{`), recording its members; returns the position after
 * its `}`, or -1 when a key holds an escape or the text is malformed.
 */
function readObject(text: string, start: number, members: Member[]): number {
  let pos = skipSpace(text, start + 1);
  if (text.charCodeAt(pos) === CLOSE_OBJECT) return pos + 1;
  for (;;) {
    if (text.charCodeAt(pos) !== QUOTE) return -1;
    const keyEnd = stringEnd(text, pos);
    if (keyEnd < 0) return -1;
    const key = text.slice(pos + 1, keyEnd - 1);
    if (key.includes('\\')) return -1;
    const memberStart = pos;
    pos = skipSpace(text, keyEnd);
    if (text.charCodeAt(pos) !== COLON) return -1;
    const valueStart = skipSpace(text, pos + 1);
    const valueEnd = valueEndAt(text, valueStart);
    if (valueEnd < 0) return -1;
    members.push({ key, start: memberStart, valueStart, end: valueEnd, isNull: text.startsWith('null', valueStart) && valueEnd - valueStart === 4 });
    pos = skipSpace(text, valueEnd);
    const c = text.charCodeAt(pos);
    if (c === CLOSE_OBJECT) return pos + 1;
    if (c !== COMMA) return -1;
    pos = skipSpace(text, pos + 1);
  }
}

/** The position just after the value starting at `start`: a string, an object, an array or a bare literal. */
function valueEndAt(text: string, start: number): number {
  const c = text.charCodeAt(start);
  if (c === QUOTE) return stringEnd(text, start);
  if (c !== OPEN_OBJECT && c !== OPEN_ARRAY) {
    // A number, true, false or null: runs to the next structural character or space.
    let pos = start;
    for (;;) {
      const d = text.charCodeAt(pos);
      if (d === COMMA || d === CLOSE_OBJECT || d === CLOSE_ARRAY || d === 32 || d === 10 || d === 13 || d === 9 || Number.isNaN(d)) break;
      pos++;
    }
    return pos > start ? pos : -1;
  }
  let depth = 0;
  STRUCTURAL.lastIndex = start;
  for (;;) {
    const m = STRUCTURAL.exec(text);
    if (m === null) return -1;
    const at = m.index;
    switch (text.charCodeAt(at)) {
      case QUOTE: {
        const end = stringEnd(text, at);
        if (end < 0) return -1;
        STRUCTURAL.lastIndex = end;
        break;
      }
      case OPEN_OBJECT:
      case OPEN_ARRAY:
        depth++;
        break;
      case CLOSE_OBJECT:
      case CLOSE_ARRAY:
        depth--;
        if (depth === 0) return at + 1;
        break;
      default:
        break;
    }
  }
}

/** The position just after the string whose opening quote is at `start`, or -1. */
function stringEnd(text: string, start: number): number {
  let pos = start + 1;
  for (;;) {
    const q = text.indexOf('"', pos);
    if (q < 0) return -1;
    // Escaped when preceded by an odd number of backslashes.
    let b = q - 1;
    while (text.charCodeAt(b) === BACKSLASH) b--;
    if ((q - 1 - b) % 2 === 0) return q + 1;
    pos = q + 1;
  }
}

function skipSpace(text: string, start: number): number {
  let pos = start;
  for (;;) {
    const c = text.charCodeAt(pos);
    if (c !== 32 && c !== 10 && c !== 13 && c !== 9) return pos;
    pos++;
  }
}
