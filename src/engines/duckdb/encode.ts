/**
 * DuckDB values → the JSON Supabase Studio reads (CONTRACT §4): TIMESTAMP as integer unix
 * microseconds, DATETIME as `2026-11-21T10:00:00`, DATE as `2026-11-21`, a record (STRUCT) as a
 * one-element array holding the object at every level, lists as arrays, 64-bit integers as numbers.
 *
 * DuckDB has one TIMESTAMP type for BigQuery's TIMESTAMP and DATETIME; the generator's column
 * types tell them apart.
 */
import {
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
import type { JsonValue } from '../query-engine.ts';

export function encodeValue(value: DuckDBValue, type?: VType): JsonValue {
  if (value === null || value === undefined) return null;
  if (type?.k === 'scalar' && type.t === 'datetime' && value instanceof DuckDBTimestampValue) return datetimeString(value.micros);
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
  if (value instanceof DuckDBDateValue) return value.toString();
  if (value instanceof DuckDBDecimalValue) return Number(value.toString());
  if (value instanceof DuckDBStructValue) {
    const obj: { [key: string]: JsonValue } = {};
    for (const [k, v] of Object.entries(value.entries)) obj[k] = encode(v, false);
    // A record nested in an event is BigQuery's REPEATED RECORD of one element.
    return inList ? obj : [obj];
  }
  if (value instanceof DuckDBListValue || value instanceof DuckDBArrayValue) return value.items.map((v) => encode(v, true));
  if (value instanceof DuckDBMapValue) {
    const obj: { [key: string]: JsonValue } = {};
    for (const e of value.entries) obj[String(e.key)] = encode(e.value, false);
    return obj;
  }
  if (value instanceof DuckDBBlobValue) return Buffer.from(value.bytes).toString('base64');
  return String(value);
}

/** `2026-11-21T10:00:00`, with `.ffffff` only when there are fractional seconds. */
export function datetimeString(micros: bigint): string {
  const ms = micros / 1000n;
  const iso = new Date(Number(ms)).toISOString();
  const frac = ((micros % 1_000_000n) + 1_000_000n) % 1_000_000n;
  const base = iso.slice(0, 19);
  return frac === 0n ? base : `${base}.${frac.toString().padStart(6, '0')}`;
}
