/**
 * Runs prepared queries on DuckDB: the engine-neutral run sequence (src/query/run.ts) over
 * DuckDB's driver (driver.ts: pooled connections, kept statements, the CTE-materialised retry,
 * interrupts, streamed chunks, DuckDB's errors).
 */
import { duckDbCapabilities } from './definition.ts';
import type { ParamValue, QueryEngine, QueryResult, RunOptions } from '../../query/port.ts';
import { queryError, runQuery } from '../../query/run.ts';
import type { PreparedQuery } from '../../sql/index.ts';
import { DuckDbDriver, type DuckDbDriverOptions } from './driver.ts';
import { generateDuckDb } from './generator.ts';

export { mapDuckDbError, withoutRecordTypes } from './errors.ts';

export type DuckDbQueryRunnerOptions = DuckDbDriverOptions;

export class DuckDbQueryRunner implements QueryEngine {
  readonly capabilities = duckDbCapabilities;
  readonly #driver: DuckDbDriver;

  constructor(options: DuckDbQueryRunnerOptions) {
    this.#driver = new DuckDbDriver(options);
  }

  run(query: PreparedQuery, params: Record<string, ParamValue | null | undefined>, options: RunOptions): Promise<QueryResult> {
    return runQuery(this.#driver, query, params, options);
  }

  /**
   * Checks that a query can run, without running it: generation resolves every column against the
   * catalogue, and DuckDB's binder checks types while preparing.
   */
  async check(query: PreparedQuery): Promise<void> {
    const generated = generateDuckDb(query.ast, { catalog: query.catalog, strictSourceColumns: true });
    const conn = await this.#driver.acquire();
    try {
      const prepared = await conn.prepare(generated.sql);
      prepared.destroySync();
    } catch (e) {
      throw queryError(this.#driver, e);
    } finally {
      this.#driver.release(conn);
    }
  }

  /** Closes pooled connections. */
  close(): void {
    this.#driver.close();
  }
}
