/** The query half of the engine interface: run a prepared (validated, merged) query. */
import type { PreparedQuery } from '../sql/index.ts';

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

export interface RunOptions {
  /** The query is interrupted after this long (QUERY_TIMEOUT). */
  timeoutMs: number;
  /** At most this many rows come back, whatever the query's own LIMIT says. */
  maxRows: number;
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
  /** Throws INVALID_QUERY when the query could not run (unknown column, type error); runs nothing. */
  check(query: PreparedQuery): Promise<void>;
  /** `params`: values for the query's declared parameters; absent or null → NULL. */
  run(query: PreparedQuery, params: Record<string, string | null | undefined>, options: RunOptions): Promise<QueryResult>;
}
