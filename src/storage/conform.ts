/**
 * Shapes a value to the stored type of its column, after the schema has absorbed the value's own
 * type (so every value fits): record keys take the stored spelling, values of a `string` field that
 * are not strings become their JSON text, null values and keys the type does not know (only keys
 * whose values carried no type, such as `[]`) are dropped. The result can be cast by DuckDB's strict
 * JSON-to-STRUCT conversion.
 *
 * Returns the input itself when it already fits, which is the common case: ingest then allocates
 * nothing here. Keys are user input (`__proto__`, ...): see src/storage/fields.ts.
 */
import type { JsonObject, JsonValue } from './event.ts';
import { emptyFields, own, setOwn } from './fields.ts';
import { jsonText } from './json-text.ts';
import type { FieldType } from './schema.ts';

const nameMaps = new WeakMap<Record<string, FieldType>, Map<string, string>>();

export function conform(value: JsonValue | undefined, type: FieldType): JsonValue {
  if (value === null || value === undefined) return null;
  switch (type.kind) {
    case 'scalar':
      if (type.type === 'string') return typeof value === 'string' ? value : jsonText(value);
      if (type.type === 'float' || type.type === 'int') return typeof value === 'number' ? value : null;
      if (type.type === 'bool') return typeof value === 'boolean' ? value : null;
      return typeof value === 'string' ? value : null;
    case 'list': {
      if (!Array.isArray(value)) return null;
      let out: JsonValue[] | undefined;
      for (let i = 0; i < value.length; i++) {
        const item = value[i] as JsonValue;
        const c = conform(item, type.element);
        if (c !== item && out === undefined) out = value.slice(0, i);
        out?.push(c);
      }
      return out ?? value;
    }
    case 'record':
      if (typeof value !== 'object' || Array.isArray(value)) return null;
      return conformObject(value, type.fields);
  }
}

/** `conform` for an object against a record's fields (also used for a whole event's fields). */
export function conformObject(value: JsonObject, fields: Record<string, FieldType>): JsonObject {
  let out: JsonObject | undefined;
  for (const key in value) {
    const v = value[key] as JsonValue;
    const type = own(fields, key);
    if (type !== undefined && v !== null) {
      const c = conform(v, type);
      if (c === v) {
        if (out !== undefined) setOwn(out, key, v);
        continue;
      }
      out ??= copyUntil(value, key);
      setOwn(out, key, c);
      continue;
    }
    out ??= copyUntil(value, key);
    if (v === null) continue;
    const name = storedNames(fields).get(key.toLowerCase());
    if (name === undefined) continue;
    setOwn(out, name, conform(v, fields[name] as FieldType));
  }
  return out ?? value;
}

function copyUntil(value: JsonObject, stop: string): JsonObject {
  const out: JsonObject = emptyFields();
  for (const key in value) {
    if (key === stop) break;
    setOwn(out, key, value[key] as JsonValue);
  }
  return out;
}

function storedNames(fields: Record<string, FieldType>): Map<string, string> {
  let map = nameMaps.get(fields);
  if (map === undefined) {
    map = new Map();
    for (const name of Object.keys(fields)) if (!map.has(name.toLowerCase())) map.set(name.toLowerCase(), name);
    nameMaps.set(fields, map);
  }
  return map;
}
