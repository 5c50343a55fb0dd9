/**
 * `/typecasts` (Logflare's Logs.IngestTypecasting): `{"batch": [{"body": {event}, "typecasts":
 * [{"path": ["metadata", "n"], "from": "string", "to": "float"}]}]}`. Each `body` is stored after
 * the string at each path is read as a number; casts other than string → float are ignored, as in
 * Logflare. A batch item without `body` and `typecasts` is stored as it is. Logflare answers 500
 * when a value is not a number's text; Quarry answers 400 naming the path.
 */
import { type IntegrationRequest, type RawEvent, bad, isObject } from './shared.ts';

export function typecastEvents(req: IntegrationRequest): RawEvent[] {
  let value: unknown;
  try {
    value = JSON.parse(req.text);
  } catch (e) {
    throw bad(`The request body is not valid JSON: ${(e as Error).message}.`);
  }
  const batch = isObject(value) ? value.batch : undefined;
  if (!Array.isArray(batch)) throw bad('The /typecasts body must be {"batch": [{"body": {...}, "typecasts": [...]}]}.');
  return batch.map((item, i) => {
    if (!isObject(item)) throw bad(`The batch item at index ${i} is not a JSON object.`);
    return castItem(item, i);
  });
}

function castItem(item: RawEvent, index: number): RawEvent {
  const { body, typecasts } = item;
  if (body === undefined || typecasts === undefined) return item;
  if (!isObject(body)) throw bad(`"body" of batch item ${index} is not a JSON object.`);
  if (!Array.isArray(typecasts)) throw bad(`"typecasts" of batch item ${index} is not an array.`);
  let out: RawEvent = body;
  for (const cast of typecasts) {
    if (!isObject(cast) || cast.from !== 'string' || cast.to !== 'float') continue;
    const path = cast.path;
    if (!Array.isArray(path) || !path.every((k) => typeof k === 'string')) throw bad(`A typecast of batch item ${index} has no "path" of key names.`);
    out = castAt(out, path as string[], index) as RawEvent;
  }
  return out;
}

function castAt(value: unknown, path: string[], index: number, depth = 0): unknown {
  if (depth === path.length) {
    const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : Number.NaN;
    if (!Number.isFinite(n)) throw bad(`Batch item ${index}: the value at ${path.join('.')} is not a number written as text, so it cannot be cast to float.`);
    return n;
  }
  const key = path[depth] as string;
  if (!isObject(value) || !(key in value)) return value;
  return { ...value, [key]: castAt(value[key], path, index, depth + 1) };
}
