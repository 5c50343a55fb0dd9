/**
 * One incoming event → a stored event (docs/API.md §3):
 * - `id`: kept when given (as text), else a new UUIDv7 (time-ordered; see event-id.ts);
 * - `timestamp`: ISO-8601 with an offset (`Z` or `±hh:mm`; src/time.ts's rules), or a unix number told apart by its
 *   digit count: up to 11 digits seconds, 12–14 milliseconds, 15–17 microseconds, 18 and more
 *   nanoseconds (10/13/16/19 for present-day values; a string of digits counts as a number).
 *   Missing or unparseable (including ISO without an offset) → the ingest time;
 * - `event_message`: `event_message`, else `message` (then `message` is not kept twice); text as
 *   is, anything else as its JSON text;
 * - every other top-level key is kept at any depth, names made column-safe by the source's key rule
 *   (src/ingest/keys.ts).
 */
import type { JsonObject, StoredEvent } from '../storage/event.ts';
import { jsonText, wellFormed } from '../storage/json-text.ts';
import { defaultSchemaLimits } from '../storage/limits.ts';
import { MICROS_PER_SECOND, millisToMicros, parseZonedTimestamp } from '../time.ts';
import { newEventId } from './event-id.ts';
import { DEFAULT_KEY_RULE, type KeyLimits, type KeyRule, sanitiseObject } from './keys.ts';

const RESERVED = new Set(['id', 'timestamp', 'event_message']);

export function normaliseEvent(
  event: { [key: string]: unknown },
  nowMicros: bigint,
  limits: KeyLimits = defaultSchemaLimits,
  rule: KeyRule = DEFAULT_KEY_RULE,
): StoredEvent {
  return {
    id: eventId(event.id),
    timestamp: parseTimestamp(event.timestamp) ?? nowMicros,
    event_message: eventMessage(event),
    fields: eventFields(event, limits, rule),
  };
}

/** The stored id: the given one as text, else a new UUID. */
export function eventId(id: unknown): string {
  return id === undefined || id === null || id === '' ? newEventId() : typeof id === 'string' ? wellFormed(id) : jsonText(id);
}

/** `event_message`, else `message`: text as is, anything else as its JSON text. */
export function eventMessage(event: { [key: string]: unknown }): string | null {
  const em = event.event_message;
  const text = em === undefined || em === null ? event.message : em;
  return text === undefined || text === null ? null : typeof text === 'string' ? wellFormed(text) : jsonText(text);
}

/** True when the event's `message` becomes its event message (and so is not also a field). */
export function messageMoved(event: { [key: string]: unknown }): boolean {
  return (event.event_message === undefined || event.event_message === null) && event.message !== undefined && event.message !== null;
}

/** Every key but id, timestamp and the event message, sanitised under the source's key `rule`. */
export function eventFields(event: { [key: string]: unknown }, limits: KeyLimits = defaultSchemaLimits, rule: KeyRule = DEFAULT_KEY_RULE): JsonObject {
  const { id, timestamp, event_message, message, ...rest } = event;
  if (event_message !== undefined && event_message !== null && message !== undefined && message !== null) rest.message = message;
  return sanitiseObject(rest, RESERVED, limits, rule);
}

export function nowMicros(): bigint {
  return millisToMicros(Date.now());
}

/** Unix microseconds, or undefined when the value is not a timestamp. */
export function parseTimestamp(value: unknown): bigint | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? fromUnixNumber(value) : undefined;
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  if (/^-?\d+$/.test(text)) return fromUnixDigits(text);
  if (/^-?\d+\.\d+$/.test(text)) return fromUnixNumber(Number(text));
  return parseZonedTimestamp(text);
}

function fromUnixDigits(text: string): bigint {
  const n = BigInt(text);
  const digits = text.replace('-', '').length;
  if (digits <= 11) return n * MICROS_PER_SECOND;
  if (digits <= 14) return n * 1000n;
  if (digits <= 17) return n;
  return n / 1000n;
}

function fromUnixNumber(value: number): bigint {
  const digits = Math.abs(Math.trunc(value)).toString().length;
  const scale = digits <= 11 ? 1e6 : digits <= 14 ? 1e3 : digits <= 17 ? 1 : 1e-3;
  return BigInt(Math.round(value * scale));
}
