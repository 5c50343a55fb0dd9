/**
 * An event as storage receives it: the three standard columns already extracted and every other
 * top-level key, sanitised, in `fields`.
 */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

export type JsonObject = { [key: string]: JsonValue };

export interface StoredEvent {
  id: string;
  /** Unix microseconds, UTC. */
  timestamp: bigint;
  event_message: string | null;
  /** Top-level keys other than id, timestamp and event_message; names are already column-safe. */
  fields: JsonObject;
}
