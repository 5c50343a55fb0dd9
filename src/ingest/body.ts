/**
 * Request body → events. Accepted shapes (docs/API.md §3): one JSON object, a JSON array of objects,
 * `{"batch": [objects]}`, or NDJSON (one object per line, blank lines ignored). All or nothing: the
 * first thing that is not an event rejects the whole body with a message naming it.
 */
import { QuarryError } from '../errors.ts';
import { isSourceKey } from './body-source.ts';

export type RawEvent = { [key: string]: unknown };
export type BodyFormat = 'json' | 'ndjson';

const NDJSON_TYPES = ['application/x-ndjson', 'application/ndjson', 'application/jsonlines', 'application/x-jsonlines', 'application/json-seq'];

/** The body format a Content-Type names; anything that is not NDJSON is read as JSON. */
export function bodyFormat(contentType: string | undefined): BodyFormat {
  const type = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  return NDJSON_TYPES.includes(type) ? 'ndjson' : 'json';
}

/** A parsed body: its events, and the JSON text of an array holding exactly those events. */
export interface ParsedBody {
  events: RawEvent[];
  /**
   * `[event, ...]` as received (the body itself when it is an array), for storage to read; absent
   * when the batch sits beside keys that name the source.
   */
  arrayText?: string;
}

export function parseEvents(text: string, format: BodyFormat): RawEvent[] {
  return parseBody(text, format).events;
}

export function parseBody(text: string, format: BodyFormat): ParsedBody {
  return format === 'ndjson' ? parseNdjson(text) : parseJson(text);
}

function parseJson(text: string): ParsedBody {
  if (text.trim() === '') throw bad('The request body is empty: send a JSON object, an array of objects or {"batch": [...]}.');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    // A JSON body that is really NDJSON (Content-Type left at application/json) is still read.
    if (text.includes('\n')) {
      try {
        return parseNdjson(text);
      } catch {
        // report the JSON error below
      }
    }
    throw bad(`The request body is not valid JSON: ${(e as Error).message}.`);
  }
  if (Array.isArray(value)) return { events: checkEvents(value, 'event'), arrayText: text };
  if (isObject(value)) {
    const batch = value.batch;
    const keys = Object.keys(value);
    if (batch !== undefined && keys.length === 1) {
      if (!Array.isArray(batch)) throw bad(`"batch" must be an array of event objects, got ${describe(batch)}.`);
      // The only key is "batch" (its spelling holds no bracket), so its array runs from the first
      // '[' to the last ']'.
      return { events: checkEvents(batch, 'batch event'), arrayText: text.slice(text.indexOf('['), text.lastIndexOf(']') + 1) };
    }
    // `{"source_name": "app", "batch": [...]}`: the other keys name the source (body-source.ts), as
    // Logflare reads them; storage serialises the events itself (no array text to slice).
    if (Array.isArray(batch) && keys.every((k) => k === 'batch' || isSourceKey(k, value[k]))) {
      return { events: checkEvents(batch, 'batch event') };
    }
    return { events: [value], arrayText: `[${text}]` };
  }
  throw bad(`The request body must be an event object, an array of event objects or {"batch": [...]}; got ${describe(value)}.`);
}

function parseNdjson(text: string): ParsedBody {
  const events: RawEvent[] = [];
  const kept: string[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] as string).trim();
    if (line === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (e) {
      throw bad(`Line ${i + 1} of the NDJSON body is not valid JSON: ${(e as Error).message}.`);
    }
    if (!isObject(value)) throw bad(`Line ${i + 1} of the NDJSON body is not an event object: got ${describe(value)}.`);
    events.push(value);
    kept.push(line);
  }
  if (events.length === 0) throw bad('The NDJSON body holds no events.');
  return { events, arrayText: `[${kept.join(',')}]` };
}

function checkEvents(values: unknown[], what: string): RawEvent[] {
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (!isObject(v)) throw bad(`The ${what} at index ${i} is not a JSON object: got ${describe(v)}. Nothing was stored.`);
  }
  return values as RawEvent[];
}

function isObject(value: unknown): value is RawEvent {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return `a string (${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)})`;
  return `a ${typeof value}`;
}

function bad(message: string): QuarryError {
  return new QuarryError('BAD_REQUEST', message);
}
