/** The query half of the engine interface: run a prepared (validated, merged) query. */
import type { EngineCapabilities } from '../capabilities.ts';
import type { PreparedQuery } from '../sql/index.ts';
import type { ParamBinding } from '../sql/resolve.ts';
import type { ResultClaim } from './result-memory.ts';
import { formatDate, formatSqlTimestamp } from '../time.ts';

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/**
 * A bound parameter value: a string (what untyped endpoints bind), or a typed value of an
 * endpoint's typed parameter, which the engine binds with that type (BIGINT, DOUBLE, BOOLEAN,
 * TIMESTAMP, DATE) so SQL compares and computes with it as such.
 */
export type ParamValue =
  | string
  | { readonly type: 'int'; readonly value: bigint }
  | { readonly type: 'float'; readonly value: number }
  | { readonly type: 'bool'; readonly value: boolean }
  | { readonly type: 'timestamp'; readonly micros: bigint }
  | { readonly type: 'date'; readonly days: number };

/**
 * A parameter value as text, for engines whose client sends parameters as text and parses them
 * into the placeholder's type (ClickHouse's `{name:Type}`): ints and floats as numbers, booleans
 * as `true`/`false`, TIMESTAMP as `2026-11-21 10:00:00.000000` (UTC), DATE as `2026-11-21`.
 */
export function paramText(value: ParamValue): string {
  if (typeof value === 'string') return value;
  switch (value.type) {
    case 'int':
      return value.value.toString();
    case 'float':
      return Object.is(value.value, -0) ? '-0' : String(value.value);
    case 'bool':
      return value.value ? 'true' : 'false';
    case 'timestamp':
      return formatSqlTimestamp(value.micros);
    case 'date':
      return formatDate(value.days);
  }
}

/** The run's value of a parameter, never a member the params object inherits (absent: undefined). */
export function boundValue(params: Readonly<Record<string, ParamValue | null | undefined>>, name: string): ParamValue | null | undefined {
  return Object.hasOwn(params, name) ? params[name] : undefined;
}

/** What a run binds to a parameter, as the semantic pass types it (absent or null: NULL). */
export function paramBinding(value: ParamValue | null | undefined): ParamBinding {
  if (value === null || value === undefined) return 'null';
  return typeof value === 'string' ? 'string' : value.type;
}

export interface RunOptions {
  /** The query is interrupted after this long (QUERY_TIMEOUT). */
  timeoutMs: number;
  /** At most this many rows come back, whatever the query's own LIMIT says. */
  maxRows: number;
  /** Encoded rows beyond about this many JSON bytes fail with RESULT_TOO_LARGE (default: none). */
  maxBytes?: number;
  /**
   * The run's claim on the process's result memory (QUERY_RESULT_MEMORY): the engine holds the
   * rows' approximate JSON bytes on it as it reads them (counting them even without `maxBytes`),
   * stops the statement when the pool refuses (OVERLOADED), and releases it when the run fails.
   * A run that succeeds leaves the bytes held: the caller releases them once the rows are sent.
   */
  memory?: ResultClaim;
}

export interface QueryResult {
  /** Rows encoded per docs/API.md §4 (TIMESTAMP → unix µs, records → one-element arrays, ...). */
  rows: Record<string, JsonValue>[];
  /** Result column names in order (optional: engines that cannot say leave it out). */
  columns?: string[];
  /** Nested field paths no event ever carried (they read as NULL): the X-Query-Warnings header. */
  warnings: string[];
}

export interface QueryEngine {
  /** What the engine declares (its one record, src/capabilities.ts); the endpoints read `typedParams`. */
  readonly capabilities: Pick<EngineCapabilities, 'typedParams'>;
  /** Throws INVALID_QUERY when the query could not run (unknown column, type error); runs nothing. */
  check(query: PreparedQuery): Promise<void>;
  /** `params`: values for the query's declared parameters; absent or null → NULL. */
  run(query: PreparedQuery, params: Record<string, ParamValue | null | undefined>, options: RunOptions): Promise<QueryResult>;
}
