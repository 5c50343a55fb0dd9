/**
 * What the endpoints module needs from the query side (SQL layer, LQL compiler, engine), as one
 * small interface. sql-backend.ts implements it over the real parts; keeping it narrow lets the
 * runner and the management service stay free of SQL details.
 */
import type { ResultClaim } from '../query/result-memory.ts';
import type { BoundParams, CallerQuery } from './params.ts';

export type ResultRow = Record<string, unknown>;

/** What a saved query declares, found by parsing and validating it. */
export interface SavedQueryInfo {
  /** `@name` parameters, de-duplicated, in order of appearance. */
  params: readonly string[];
  /** Top-level CTE names a caller's `sql`/`lql` may read. */
  ctes: readonly string[];
}

export interface ExecuteRequest {
  saved: string;
  info: SavedQueryInfo;
  sandboxable: boolean;
  /** Already checked: non-null only on a sandboxable endpoint. */
  caller: CallerQuery;
  params: BoundParams;
  maxRows: number;
  timeoutMs: number;
  /** Results beyond about this many JSON bytes fail with RESULT_TOO_LARGE. */
  maxBytes?: number;
  /** The run's claim on the result memory (QUERY_RESULT_MEMORY): the engine holds the rows' bytes on it. */
  memory?: ResultClaim;
}

export interface ExecuteResult {
  rows: ResultRow[];
  /** Result column names in order, when the engine says (else the first row's keys are used). */
  columns?: readonly string[];
  /** Nested field paths read as NULL because no event ever carried them (X-Query-Warnings). */
  warnings: string[];
}

export interface QueryBackend {
  /**
   * Parses and validates a saved query against the current sources. Throws QuarryError
   * (PARSE_ERROR, QUERY_NOT_ALLOWED, INVALID_QUERY) when it cannot be saved.
   */
  inspect(saved: string): Promise<SavedQueryInfo>;
  /**
   * Saving: `inspect`, then the engine checks that the query could run as written (columns,
   * types). Stricter than running: a source that already has fields must have the top-level columns
   * the query names, so a misspelling is caught when saved.
   */
  validate(saved: string): Promise<SavedQueryInfo>;
  /** Merges the caller's query (if any), binds the parameters and runs, within the limits given. */
  execute(request: ExecuteRequest): Promise<ExecuteResult>;
}
