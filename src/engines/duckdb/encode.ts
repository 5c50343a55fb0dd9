/**
 * DuckDB values → the JSON Supabase Studio reads (docs/API.md §4): TIMESTAMP as integer unix
 * microseconds, DATETIME as `2026-11-21T10:00:00`, DATE as `2026-11-21`, a record (STRUCT) as a
 * one-element array holding the object at every level, lists as arrays, 64-bit integers as numbers.
 *
 * A record member that is NULL is left out: ingest never stores a null, so a NULL member is a
 * field this event did not carry (the STRUCT type is shared by every event of the source, other
 * projects' included). The object then looks as the event did, as on Logflare's Postgres backend.
 *
 * DuckDB has one TIMESTAMP type for BigQuery's TIMESTAMP and DATETIME; the generator's column
 * types tell them apart.
 */
import {
  type DuckDBDataChunk,
  DuckDBListVector,
  DuckDBStructVector,
  type DuckDBType,
  DuckDBTypeId,
  type DuckDBVector,
  DuckDBArrayValue,
  DuckDBBlobValue,
  DuckDBDateValue,
  DuckDBDecimalValue,
  DuckDBListValue,
  DuckDBMapValue,
  DuckDBStructValue,
  DuckDBTimestampMillisecondsValue,
  DuckDBTimestampNanosecondsValue,
  DuckDBTimestampSecondsValue,
  DuckDBTimestampTZValue,
  DuckDBTimestampValue,
  type DuckDBValue,
} from '@duckdb/node-api';
import type { VType } from '../../sql/types.ts';
import { PRESENCE_KEY } from '../../storage/presence.ts';
import { formatDate, formatDatetime } from '../../time.ts';
import type { JsonValue } from '../../query/port.ts';

/** One DuckDB value, encoded (the column-wise encoder's reference and its fallback). */
export function encodeValue(value: DuckDBValue, type?: VType): JsonValue {
  if (value === null || value === undefined) return null;
  if (type?.k === 'scalar' && type.t === 'datetime' && value instanceof DuckDBTimestampValue) return formatDatetime(value.micros);
  return encode(value, false);
}

function encode(value: DuckDBValue, inList: boolean): JsonValue {
  if (value === null || value === undefined) return null;
  switch (typeof value) {
    case 'boolean':
    case 'string':
      return value;
    case 'number':
      return Number.isFinite(value) ? value : String(value);
    case 'bigint':
      return Number(value);
  }
  if (value instanceof DuckDBTimestampValue || value instanceof DuckDBTimestampTZValue) return Number(value.micros);
  if (value instanceof DuckDBTimestampMillisecondsValue) return Number(value.millis) * 1000;
  if (value instanceof DuckDBTimestampSecondsValue) return Number(value.seconds) * 1_000_000;
  if (value instanceof DuckDBTimestampNanosecondsValue) return Number(value.nanos / 1000n);
  if (value instanceof DuckDBDateValue) return value.isFinite ? formatDate(value.days) : value.toString();
  if (value instanceof DuckDBDecimalValue) return Number(value.toString());
  if (value instanceof DuckDBStructValue) {
    // fromEntries defines every member as an own key, `__proto__` included (names are user input).
    const obj: { [key: string]: JsonValue } = Object.fromEntries(
      Object.entries(value.entries)
        .filter(([k]) => k !== PRESENCE_KEY)
        .map(([k, v]) => [k, encode(v, false)] as const)
        .filter(([, member]) => member !== null),
    );
    // A record nested in an event is BigQuery's REPEATED RECORD of one element.
    return inList ? obj : [obj];
  }
  if (value instanceof DuckDBListValue || value instanceof DuckDBArrayValue) return value.items.map((v) => encode(v, true));
  if (value instanceof DuckDBMapValue) {
    return Object.fromEntries(value.entries.map((e) => [String(e.key), encode(e.value, false)]));
  }
  if (value instanceof DuckDBBlobValue) return Buffer.from(value.bytes).toString('base64');
  return String(value);
}

/** Reads one value of a vector, encoded. Types without a case here go through the value encoder. */
type Encoder = (vector: DuckDBVector, index: number) => JsonValue;

/**
 * Encodes whole result chunks column by column: one encoder per column, built once from the
 * DuckDB column type, reads each vector directly. Gives exactly what `encodeValue` gives on the
 * row values, without building an intermediate DuckDB value object per cell (records are the
 * costly case: a struct value per row and level, then its entries copied again).
 */
export function encodeChunks(
  chunks: readonly DuckDBDataChunk[],
  names: readonly string[],
  duckTypes: readonly DuckDBType[],
  types: readonly (VType | undefined)[],
): Record<string, JsonValue>[] {
  const encode = chunkEncoder(names, duckTypes, types);
  const rows: Record<string, JsonValue>[] = [];
  for (const chunk of chunks) encode(chunk, 0, chunk.rowCount, rows);
  return rows;
}

/** Encodes rows `from` to `to` (exclusive) of a chunk into `out`, column by column. */
export type ChunkEncoder = (chunk: DuckDBDataChunk, from: number, to: number, out: Record<string, JsonValue>[]) => void;

/** The column encoders of a result, built once, for `encodeChunks` or row slices of chunks. */
export function chunkEncoder(names: readonly string[], duckTypes: readonly DuckDBType[], types: readonly (VType | undefined)[]): ChunkEncoder {
  const encoders = duckTypes.map((t, i) => columnEncoder(t, types[i]));
  const newRow = objectsFor(names);
  return (chunk, from, to, rows) => {
    if (to <= from) return;
    const start = rows.length;
    for (let r = from; r < to; r++) rows.push(newRow());
    for (let c = 0; c < names.length; c++) {
      const vector = chunk.getColumnVector(c);
      const encode = encoders[c]!;
      const name = names[c]!;
      for (let r = from; r < to; r++) rows[start + r - from]![name] = encode(vector, r);
    }
  };
}

/**
 * A new object for members named `names`. Field names are user input: a `__proto__` member needs
 * an object without a prototype (else assigning it would replace the prototype and the field would
 * vanish); ordinary names keep V8's fast plain objects.
 */
function objectsFor(names: readonly string[]): () => { [key: string]: JsonValue } {
  return names.includes('__proto__') ? () => Object.create(null) : () => ({});
}

function columnEncoder(type: DuckDBType, vtype: VType | undefined): Encoder {
  if (vtype?.k === 'scalar' && vtype.t === 'datetime' && type.typeId === DuckDBTypeId.TIMESTAMP) {
    return (v, i) => encodeValue(v.getItem(i), vtype);
  }
  // A STRUCT the query built is an object; an event's record a one-element array.
  if (vtype?.k === 'record' && vtype.value === true) return encoderFor(type, true);
  return encoderFor(type, false);
}

function encoderFor(type: DuckDBType, inList: boolean): Encoder {
  switch (type.typeId) {
    case DuckDBTypeId.TIMESTAMP:
    case DuckDBTypeId.TIMESTAMP_TZ:
      return (v, i) => {
        const value = v.getItem(i) as DuckDBTimestampValue | DuckDBTimestampTZValue | null;
        return value === null ? null : Number(value.micros);
      };
    case DuckDBTypeId.STRUCT: {
      const struct = type as Extract<DuckDBType, { typeId: DuckDBTypeId.STRUCT }>;
      const names = struct.entryNames;
      const entries = struct.entryTypes.map((t) => encoderFor(t, false));
      const newObject = objectsFor(names);
      // Storage's presence marker (src/storage/presence.ts) is never shown.
      const marker = names.indexOf(PRESENCE_KEY);
      return (v, i) => {
        if (!(v instanceof DuckDBStructVector)) return encode(v.getItem(i), inList);
        if (!v.isItemValid(i)) return null;
        const obj: { [key: string]: JsonValue } = newObject();
        for (let e = 0; e < names.length; e++) {
          if (e === marker) continue;
          const member = entries[e]!(v.entryVectorAt(e), i);
          if (member !== null) obj[names[e]!] = member;
        }
        // A record nested in an event is BigQuery's REPEATED RECORD of one element.
        return inList ? obj : [obj];
      };
    }
    case DuckDBTypeId.LIST: {
      const list = type as Extract<DuckDBType, { typeId: DuckDBTypeId.LIST }>;
      const element = encoderFor(list.valueType, true);
      return (v, i) => {
        if (!(v instanceof DuckDBListVector)) return encode(v.getItem(i), inList);
        if (!listItemValid(v, i)) return null;
        const child = v.childVector;
        const offset = v.getEntryOffset(i);
        const length = v.getEntryLength(i);
        const out: JsonValue[] = new Array(length);
        for (let k = 0; k < length; k++) out[k] = element(child, offset + k);
        return out;
      };
    }
    default:
      return (v, i) => encode(v.getItem(i), inList);
  }
}

/** Whether row `i` of a list vector is non-NULL, without slicing out its elements. */
function listItemValid(v: DuckDBListVector, i: number): boolean {
  const validity = (v as unknown as { validity?: { itemValid?: (index: number) => boolean } }).validity;
  return typeof validity?.itemValid === 'function' ? validity.itemValid(i) : v.getItemVector(i) !== null;
}

/** `2026-11-21T10:00:00`, with `.ffffff` only when there are fractional seconds (src/time.ts). */
export const datetimeString: (micros: bigint) => string = formatDatetime;
