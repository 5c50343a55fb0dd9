/**
 * ClickHouse JSONEachRow values → the same JSON the DuckDB engine gives (CONTRACT §4), guided by
 * the generator's column types: TIMESTAMP as integer unix microseconds, DATETIME as
 * `2026-11-21T10:00:00` (fraction only when there is one), DATE as `2026-11-21`, a record as a
 * one-element array holding the object at every level (an absent record, an empty sub-object here,
 * is NULL), lists as arrays, booleans as booleans (ClickHouse comparisons give 0/1), values of a
 * string field that were stored with another type as their text.
 */
import type { VType } from '../../sql/types.ts';
import { emptyFields, setOwn } from '../../storage/fields.ts';
import { PRESENCE_KEY } from '../../storage/presence.ts';
import type { JsonValue } from '../../query/port.ts';
import { formatDatetime, parseTime } from '../../time.ts';

type Raw = JsonValue | undefined;

export function encodeRows(rows: Record<string, Raw>[], names: readonly string[], types: readonly VType[]): Record<string, JsonValue>[] {
  return rows.map((row) => encodeRow(row, names, types));
}

/** One row; `names` and `types` are the generator's result columns. */
export function encodeRow(row: Record<string, Raw>, names: readonly string[], types: readonly VType[]): Record<string, JsonValue> {
  const out: Record<string, JsonValue> = {};
  const keys = Object.keys(row);
  keys.forEach((key, i) => {
    const index = names.indexOf(key);
    out[key] = encodeValue(row[key], types[index >= 0 ? index : i] ?? { k: 'unknown' }, false);
  });
  return out;
}

export function encodeValue(value: Raw, type: VType, inList: boolean): JsonValue {
  if (value === null || value === undefined) return null;
  switch (type.k) {
    case 'scalar':
      return scalar(value, type.t);
    case 'list':
      if (!Array.isArray(value)) return typeof value === 'string' ? value : null;
      return value.map((v) => encodeValue(v, type.element, true));
    case 'record': {
      if (typeof value !== 'object' || Array.isArray(value)) return value;
      const obj = emptyFields<JsonValue>();
      let any = false;
      // The members in the record type's order (the catalogue's, which is the events' order, as
      // DuckDB's STRUCTs keep it): ClickHouse's JSON type gives them sorted by name.
      let matched = 0;
      for (const k in type.fields) {
        if (!Object.hasOwn(value, k)) continue;
        matched += 1;
        const member = encodeValue(value[k], type.fields[k] as VType, false);
        if (member === null) continue;
        setOwn(obj, k, member);
        any = true;
      }
      // Members the type does not list (a row stored after the catalogue the query was typed by)
      // follow, in ClickHouse's order. Storage's presence marker (src/storage/presence.ts) is never shown.
      let members = 0;
      for (const k in value) if (k !== PRESENCE_KEY) members += 1;
      if (members > matched) {
        for (const k in value) {
          if (k === PRESENCE_KEY || Object.hasOwn(type.fields, k)) continue;
          const member = encodeValue(value[k], { k: 'unknown' }, false);
          if (member === null) continue;
          setOwn(obj, k, member);
          any = true;
        }
      }
      // A STRUCT value is an object; a record nested in an event is BigQuery's one-element
      // REPEATED RECORD, an array (an absent one, an empty sub-object here, is NULL).
      if (type.value) return obj;
      if (!any && !(PRESENCE_KEY in value)) return null;
      return inList ? obj : [obj];
    }
    case 'missing':
    case 'unknown':
      return value;
  }
}

function scalar(value: JsonValue, t: string): JsonValue {
  switch (t) {
    case 'timestamp':
      return typeof value === 'string' ? timestampMicros(value) : value;
    case 'datetime':
      return typeof value === 'string' ? datetimeText(value) : value;
    case 'bool':
      if (typeof value === 'boolean') return value;
      if (typeof value === 'number') return value !== 0;
      if (value === 'true' || value === 'false') return value === 'true';
      return value;
    case 'int':
    case 'numeric':
      if (typeof value === 'string' && /^-?\d+(\.\d+)?$/.test(value)) return Number(value);
      return typeof value === 'string' ? float(value) : value;
    case 'float':
      return typeof value === 'string' ? float(value) : value;
    case 'string':
    case 'bytes':
      if (typeof value === 'string') return value;
      if (typeof value === 'object') return JSON.stringify(value);
      return String(value);
    default:
      return value;
  }
}

function float(text: string): JsonValue {
  switch (text) {
    case 'nan':
    case '-nan':
      return 'NaN';
    case 'inf':
    case '+inf':
      return 'Infinity';
    case '-inf':
      return '-Infinity';
    default: {
      const n = Number(text);
      return Number.isNaN(n) ? text : n;
    }
  }
}

/** `2026-11-21 10:00:00.123456` (UTC) or `2026-11-21` → unix microseconds (src/time.ts); other text as it is. */
export function timestampMicros(text: string): JsonValue {
  const t = parseTime(text);
  return t === undefined ? text : Number(t.micros);
}

/** `2026-11-21 10:00:00.000000` → `2026-11-21T10:00:00` (the fraction kept only when not zero). */
function datetimeText(text: string): JsonValue {
  const t = parseTime(text);
  return t === undefined ? text : formatDatetime(t.micros);
}
