/**
 * A batch's rows in ClickHouse's RowBinary format, for the embedded chDB's inserts.
 *
 * Why: parsing JSON text into the `JSON` column's paths is most of an insert's cost (about 23 µs
 * of an edge event's 45 µs in chDB; the paths, not the bytes, cost: skipping `metadata` makes it
 * 3 µs), while the same column read from RowBinary costs about 5 µs. The service already holds
 * every event parsed (the ingest pipeline parses each request once), so writing the binary form
 * is a walk over objects it has, cheaper than the text parse it saves. docs/PERFORMANCE.md has the
 * figures.
 *
 * Each row: `id` String, `timestamp` DateTime64(6) (Int64 µs), `event_message` Nullable(String),
 * and `fields` as the JSON type's binary form: the number of paths, then each path (`a.b.c`) with
 * its value as a Dynamic (a type byte and the value). The values are typed the way ClickHouse types
 * them when it reads the same JSON text (ddl.ts `insertSettings`): a string is a String, an integer
 * an Int64, any other number a Float64, a boolean a Bool, an object its leaf paths, a null (and an
 * object with no leaf but nulls) nothing at all. What ClickHouse would read differently from
 * JavaScript's view of the value, or what this writer does not handle, makes the whole batch go as
 * text instead (`undefined`): an array (typed per element by ClickHouse), an integral number beyond
 * 2^53 (JavaScript holds it rounded where the text keeps every digit, or it was written as a float),
 * -0, a number that is not finite, an empty key.
 * test/engines/clickhouse/rows-binary.test.ts checks that both forms store the same paths, types
 * and values.
 */
import { conformObject } from '../../storage/conform.ts';
import type { JsonObject, JsonValue, StoredEvent } from '../../storage/event.ts';
import { PRESENCE_KEY } from '../../storage/presence.ts';
import type { TableSchema } from '../../storage/schema.ts';
import { withoutBase } from '../../storage/schema.ts';

/** ClickHouse's binary encoding of the data types written here. */
const INT64 = 0x0a;
const FLOAT64 = 0x0e;
const STRING = 0x15;
const BOOL = 0x2d;

/** Paths one event may hold in this form (the count is written as a varint of at most two bytes). */
const MAX_PATHS = 0x3fff;

/** A growable byte buffer with the few writes RowBinary needs. */
class Writer {
  buf: Buffer;
  pos = 0;

  constructor(size: number) {
    this.buf = Buffer.allocUnsafe(Math.max(256, size));
  }

  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  byte(b: number): void {
    this.ensure(1);
    this.buf[this.pos++] = b;
  }

  /** A String: its UTF-8 length as a varint, then the bytes. */
  string(s: string): void {
    const most = s.length * 3;
    if (most < 0x80) {
      this.ensure(most + 1);
      const n = this.buf.write(s, this.pos + 1);
      this.buf[this.pos] = n;
      this.pos += n + 1;
      return;
    }
    const n = Buffer.byteLength(s, 'utf8');
    this.ensure(n + 5);
    this.varint(n);
    this.pos += this.buf.write(s, this.pos);
  }

  varint(n: number): void {
    this.ensure(5);
    let v = n;
    while (v >= 0x80) {
      this.buf[this.pos++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.buf[this.pos++] = v;
  }

  int64(v: bigint): void {
    this.ensure(8);
    this.buf.writeBigInt64LE(v, this.pos);
    this.pos += 8;
  }

  /** A safe integer as an Int64, without a BigInt. */
  int53(v: number): void {
    this.ensure(8);
    const high = Math.floor(v / 0x1_0000_0000);
    this.buf.writeUInt32LE(v - high * 0x1_0000_0000, this.pos);
    this.buf.writeInt32LE(high, this.pos + 4);
    this.pos += 8;
  }

  double(v: number): void {
    this.ensure(8);
    this.buf.writeDoubleLE(v, this.pos);
    this.pos += 8;
  }

  /** Bytes already encoded. */
  copy(bytes: Uint8Array): void {
    this.ensure(bytes.length);
    this.buf.set(bytes, this.pos);
    this.pos += bytes.length;
  }

  bytes(): Buffer {
    return this.buf.subarray(0, this.pos);
  }
}

/**
 * A path met in this batch, with its String encoding made once: a batch's events mostly share
 * their paths, and building and encoding each path's text again for every event cost a third of
 * the encoding time. One tree per batch, so unusual keys do not accumulate.
 */
interface PathNode {
  path: string;
  encoded: Buffer | undefined;
  children: Map<string, PathNode> | undefined;
}

function child(node: PathNode, key: string): PathNode {
  node.children ??= new Map();
  let next = node.children.get(key);
  if (next === undefined) {
    next = { path: node.path === '' ? key : `${node.path}.${key}`, encoded: undefined, children: undefined };
    node.children.set(key, next);
  }
  return next;
}

function encodedPath(node: PathNode): Buffer {
  if (node.encoded === undefined) {
    const w = new Writer(node.path.length * 3 + 5);
    w.string(node.path);
    node.encoded = w.bytes();
  }
  return node.encoded;
}

/**
 * The rows of one batch as RowBinary, fields shaped to the batch's schema, or undefined when some
 * value is better written as text (see the module comment).
 */
export function rowsBinary(events: readonly StoredEvent[], schema: TableSchema): Buffer | undefined {
  let fields: TableSchema['columns'] | undefined;
  const w = new Writer(estimate(events));
  const root: PathNode = { path: '', encoded: undefined, children: undefined };
  for (let i = 0; i < events.length; ) {
    const event = events[i] as StoredEvent;
    const elements = event.raw?.elements;
    if (event.raw === undefined || elements === undefined) {
      fields ??= withoutBase(schema.columns);
      if (!row(w, root, event, conformObject(event.fields, fields), false)) return undefined;
      i++;
      continue;
    }
    for (let k = 0; k < event.raw.count; k++) {
      if (!row(w, root, events[i + k] as StoredEvent, elements[k] as JsonObject, true)) return undefined;
    }
    i += event.raw.count;
  }
  return w.bytes();
}

function estimate(events: readonly StoredEvent[]): number {
  let n = 0;
  for (const e of events) n += e.raw === undefined ? 512 : Math.ceil((e.raw.text.length / e.raw.count) * 1.5);
  return n;
}

/** One row; `received` when `obj` is the event as received (its base keys are skipped here). */
function row(w: Writer, root: PathNode, event: StoredEvent, obj: JsonObject, received: boolean): boolean {
  w.string(event.id);
  w.int64(event.timestamp);
  if (event.event_message === null) w.byte(1);
  else {
    w.byte(0);
    w.string(event.event_message);
  }
  // The path count goes first: one byte reserved (fewer than 128 paths), the paths moved along
  // by one more byte in the rare event of more.
  w.ensure(1);
  const countAt = w.pos;
  w.pos += 1;
  const skipMessage = received && (obj.event_message === undefined || obj.event_message === null);
  const paths = writeObject(w, obj, root, received, skipMessage);
  if (paths < 0 || paths > MAX_PATHS) return false;
  if (paths < 0x80) w.buf[countAt] = paths;
  else {
    w.ensure(1);
    w.buf.copyWithin(countAt + 2, countAt + 1, w.pos);
    w.pos += 1;
    w.buf[countAt] = (paths & 0x7f) | 0x80;
    w.buf[countAt + 1] = paths >>> 7;
  }
  return true;
}

/** Writes `obj`'s leaf paths under `parent`; returns how many, or -1 when the batch must go as text. */
function writeObject(w: Writer, obj: JsonObject, parent: PathNode, top: boolean, skipMessage: boolean): number {
  let paths = 0;
  for (const key in obj) {
    if (top && (key === 'id' || key === 'timestamp' || key === 'event_message' || (skipMessage && key === 'message'))) continue;
    const v = obj[key] as JsonValue | undefined;
    if (v === null || v === undefined) continue;
    if (key === '') return -1;
    const node = child(parent, key);
    switch (typeof v) {
      case 'string':
        w.copy(encodedPath(node));
        w.byte(STRING);
        w.string(v);
        break;
      case 'number':
        if (!Number.isFinite(v) || Object.is(v, -0)) return -1;
        w.copy(encodedPath(node));
        if (Number.isInteger(v)) {
          if (!Number.isSafeInteger(v)) return -1;
          w.byte(INT64);
          w.int53(v);
        } else {
          w.byte(FLOAT64);
          w.double(v);
        }
        break;
      case 'boolean':
        w.copy(encodedPath(node));
        w.byte(BOOL);
        w.byte(v ? 1 : 0);
        break;
      default: {
        if (Array.isArray(v)) return -1;
        const inner = writeObject(w, v, node, false, false);
        if (inner < 0) return -1;
        // The record's presence marker (src/storage/presence.ts).
        w.copy(encodedPath(child(node, PRESENCE_KEY)));
        w.byte(BOOL);
        w.byte(1);
        paths += inner + 1;
        continue;
      }
    }
    paths++;
  }
  return paths;
}
