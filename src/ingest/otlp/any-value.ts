/**
 * OTLP values as JSON, as events store them: a kvlist is an object (a key given twice keeps its
 * last value, as Logflare's map does), an array a list, bytes their base64 text (proto3's JSON
 * spelling), an integer a number when JavaScript holds it exactly (|n| < 2^53) and its decimal text
 * otherwise, a double that is not finite its proto3 JSON text (`NaN`, `Infinity`, `-Infinity`), and
 * an unset value null (which ingest leaves out).
 */
import type { JsonObject, JsonValue } from '../../storage/event.ts';
import { emptyFields, setOwn } from '../../storage/fields.ts';
import type { AnyValue, KeyValue } from './model.ts';

const MAX_EXACT = BigInt(Number.MAX_SAFE_INTEGER);

export function jsonOf(value: AnyValue): JsonValue {
  switch (value.kind) {
    case 'string':
    case 'bool':
      return value.value;
    case 'int':
      return value.value >= -MAX_EXACT && value.value <= MAX_EXACT ? Number(value.value) : value.value.toString();
    case 'double':
      return Number.isFinite(value.value) ? value.value : String(value.value);
    case 'bytes':
      return Buffer.from(value.value.buffer, value.value.byteOffset, value.value.byteLength).toString('base64');
    case 'array':
      return value.values.map(jsonOf);
    case 'kvlist':
      return objectOf(value.values);
    case 'empty':
      return null;
  }
}

/** Attributes (or a kvlist) as one object, keyed as sent. */
export function objectOf(pairs: readonly KeyValue[]): JsonObject {
  const out = emptyFields<JsonValue>();
  for (const { key, value } of pairs) setOwn(out, key, jsonOf(value));
  return out;
}
