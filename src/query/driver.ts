/**
 * What an engine gives the run sequence (./run.ts): the few steps that differ between engines.
 * The sequence owns everything else a run does (the deadline, the row and byte caps, result
 * memory, the column list, the warnings, and turning failures into QuarryErrors), so both engines
 * answer alike. Each engine implements it in its own folder (src/engines/<name>/driver.ts).
 *
 * A run is: `translate` → `begin` (a connection or reader held for the run) → per attempt
 * `verify` → `open` → `read` until the end, the row cap or a cap's error → `close`; `retry` may
 * give a second attempt; `end` last, whatever happened. At the deadline the sequence calls the
 * run's `interrupt`, once.
 */
import type { QuarryError } from '../errors.ts';
import type { PreparedQuery } from '../sql/index.ts';
import type { JsonValue } from './port.ts';
import type { RunParams, Translation } from './translation-cache.ts';

/** One result row, encoded per docs/API.md §4. */
export type ResultRow = Record<string, JsonValue>;

export interface QueryDriver {
  /** The run's SQL for the query, row cap and parameters (the engine's TranslationCache). */
  translate(query: PreparedQuery, maxRows: number, params: RunParams): Translation;
  /**
   * Another translation to run after the first attempt failed with `error` before the deadline
   * (its rows are dropped, its result memory given back), or undefined: the error stands.
   */
  retry?(error: unknown, failed: Translation, query: PreparedQuery, maxRows: number, params: RunParams): Translation | undefined;
  /** Takes what the run runs on (a pooled connection, the least busy reader) until its `end`. */
  begin(query: PreparedQuery, params: RunParams): DriverRun | Promise<DriverRun>;
  /**
   * The engine's own errors → QuarryErrors whose messages carry no SQL, internal name or row value:
   * its out-of-memory as `queryOutOfMemory`, its time-out as any QUERY_TIMEOUT (the sequence words
   * it), anything it does not know as INTERNAL. Never sees a QuarryError.
   */
  mapError(error: unknown): QuarryError;
}

/** What an attempt is opened with. */
export interface StatementLimits {
  /** Milliseconds left before the run's deadline (at least 1): the engine's own time limit, if it has one. */
  readonly remainingMs: number;
  /** Rows the run keeps: the engine need not produce more (the sequence stops reading there). */
  readonly maxRows: number;
  /** A second attempt (after `QueryDriver.retry`). */
  readonly retried: boolean;
}

/** One run on one connection or reader. */
export interface DriverRun {
  /** The engine's second check of the translated SQL with its own parser (remembered per SQL text). */
  verify(translation: Translation): Promise<void> | void;
  /** Binds the run's parameters and starts the statement. */
  open(translation: Translation, limits: StatementLimits): Promise<RowStream>;
  /** The deadline has passed: stop what runs now or soon (called at most once, at any point of the run). */
  interrupt(): void;
  /** The run is over, successful or not (after every stream was closed): gives back what `begin` took. */
  end(): void;
}

/** A statement's rows as they are produced. */
export interface RowStream {
  /**
   * Appends at most `max` (at least 1) encoded rows to `rows`, possibly none; false once the
   * statement has no more (after appending the last ones). Synchronous while rows are at hand.
   */
  read(rows: ResultRow[], max: number): boolean | Promise<boolean>;
  /** Reading is over, at the end or before it: a statement still producing rows is stopped. */
  close(): void;
}
