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
  /**
   * Set when the fields are to be read from received JSON text instead (then `fields` is empty).
   * All `raw.count` events of `raw` are in the same batch, one after the other, in array order.
   */
  raw?: RawEventArray;
}

/**
 * The JSON text of an array of events as received, whose fields storage may read directly: every
 * element's keys that name a field of the table's schema hold values of exactly that field's type
 * (or an integer for a float field), spelt as in the schema; other keys (`id`, `timestamp`,
 * `event_message`, ...) are ignored. The ingest pipeline checks this (src/ingest/prepare.ts).
 */
export interface RawEventArray {
  text: string;
  count: number;
  /**
   * The same events as parsed from `text` (the ingest pipeline parses each request once), for a
   * storage that writes rows from objects rather than text.
   */
  elements?: readonly JsonObject[];
  /** The top-level fields its events carry (spelt as in the schema); storage writes only those. */
  keys?: readonly string[];
  /**
   * Set when some number in it is ±2^63 or beyond (or overflows to infinity): ClickHouse refuses
   * an integer past 64 bits as written, so its engine serialises such events instead.
   */
  wideNumbers?: boolean;
}
