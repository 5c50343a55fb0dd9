/**
 * The one run sequence of every engine (QueryEngine.run): translate → verify the translated SQL
 * with the engine's own parser → bind and start the statement → read its rows under the deadline,
 * the row cap, the byte cap and the result memory → the column list and warnings; failures become
 * QuarryErrors. The engine's part is a QueryDriver (./driver.ts); everything a caller can observe
 * is decided here, so both engines answer alike:
 *
 * - the deadline counts the whole run (the check and the preparation too); the run's `interrupt`
 *   is called when it passes, and any run that fails after it, or ends after it with rows
 *   (ClickHouse stops at its own limit with what it had), is QUERY_TIMEOUT, worded the same;
 * - at most `maxRows` rows come back, whatever the statement produces;
 * - rows are measured every SIZE_CHECK_ROWS rows (ResultMeter): past `maxBytes` RESULT_TOO_LARGE,
 *   refused by the result memory pool OVERLOADED; the statement is stopped either way;
 * - a run that fails holds no result memory;
 * - the column list is the generated query's, empty result or not.
 */
import { isQuarryError, QuarryError } from '../errors.ts';
import type { PreparedQuery } from '../sql/index.ts';
import type { DriverRun, QueryDriver, ResultRow } from './driver.ts';
import type { QueryResult, RunOptions } from './port.ts';
import { ResultMeter } from './result-size.ts';
import type { RunParams } from './translation-cache.ts';

/** Rows read between checks of the result's size (a row can be several MB: string_agg, array_agg). */
export const SIZE_CHECK_ROWS = 16;

export function queryTimeout(timeoutMs: number): QuarryError {
  return new QuarryError('QUERY_TIMEOUT', `The query ran longer than ${timeoutMs} ms and was stopped`);
}

/**
 * A query that needed more memory than the engine may use (a driver's mapping of its engine's
 * out-of-memory error); `setting` is the engine's setting of that limit.
 */
export function queryOutOfMemory(setting: string, cause: unknown): QuarryError {
  return new QuarryError(
    'OVERLOADED',
    `The query needed more memory than the engine's limit (MEMORY_BUDGET / ${setting}); simplify it or retry when fewer queries run`,
    { cause, retryAfter: 5 },
  );
}

/**
 * Any failure of a run (its time limit `timeoutMs`), or of a driver's other work without one
 * (QueryEngine.check), as a QuarryError.
 */
export function queryError(driver: Pick<QueryDriver, 'mapError'>, e: unknown, timeoutMs?: number): QuarryError {
  const mapped = isQuarryError(e) ? e : driver.mapError(e);
  return mapped.code === 'QUERY_TIMEOUT' && timeoutMs !== undefined ? queryTimeout(timeoutMs) : mapped;
}

export async function runQuery(driver: QueryDriver, query: PreparedQuery, params: RunParams, options: RunOptions): Promise<QueryResult> {
  const { timeoutMs, maxRows } = options;
  const deadline = Date.now() + timeoutMs;
  let interrupted = false;
  let run: DriverRun | undefined;
  const timer = setTimeout(() => {
    interrupted = true;
    run?.interrupt();
  }, timeoutMs);
  try {
    let translation = driver.translate(query, maxRows, params);
    const begun = driver.begin(query, params);
    run = begun instanceof Promise ? await begun : begun;
    for (let retried = false; ; retried = true) {
      try {
        const verified = run.verify(translation);
        if (verified !== undefined) await verified;
        // An interrupt that lands between statements is lost: look at the deadline before starting
        // one (at the clock too: the timer may not have had its turn in the event loop yet).
        if (interrupted || Date.now() >= deadline) throw queryTimeout(timeoutMs);
        const stream = await run.open(translation, { remainingMs: Math.max(1, deadline - Date.now()), maxRows, retried });
        const rows: ResultRow[] = [];
        try {
          // Up to maxRows rows, measured every SIZE_CHECK_ROWS rows when there is a cap or a claim.
          const meter = new ResultMeter(options);
          const batch = meter.counting ? SIZE_CHECK_ROWS : maxRows;
          for (let more = true; more && rows.length < maxRows; ) {
            const before = rows.length;
            const read = stream.read(rows, Math.min(maxRows - before, batch));
            more = read === true || read === false ? read : await read;
            // Throws past the cap or when other results hold the rest of the pool; the statement is stopped.
            if (meter.counting && rows.length > before) meter.count(rows, before);
          }
        } finally {
          stream.close();
        }
        // Stopped at the engine's own limit with what it had, or finished past the deadline.
        if (interrupted || Date.now() >= deadline) throw queryTimeout(timeoutMs);
        const generated = translation.generated;
        return { rows, columns: generated.columns.map((c) => c.name), warnings: generated.warnings };
      } catch (e) {
        const again = retried || interrupted || Date.now() >= deadline ? undefined : driver.retry?.(e, translation, query, maxRows, params);
        if (again === undefined) throw e;
        // The first attempt's rows are gone: the second counts from nothing.
        options.memory?.release();
        translation = again;
      }
    }
  } catch (e) {
    // A run that fails holds no rows: their result memory goes back at once.
    options.memory?.release();
    throw interrupted || Date.now() >= deadline ? queryTimeout(timeoutMs) : queryError(driver, e, timeoutMs);
  } finally {
    clearTimeout(timer);
    run?.end();
  }
}
