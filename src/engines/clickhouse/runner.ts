/**
 * Runs prepared queries on ClickHouse: the engine-neutral run sequence (src/query/run.ts) over
 * ClickHouse's driver (driver.ts: reader selection, `{name:Type}` parameters, per-query settings,
 * the streamed result, the abort and KILL QUERY past the deadline, ClickHouse's errors).
 */
import { clickHouseCapabilities } from './definition.ts';
import type { ParamValue, QueryEngine, QueryResult, RunOptions } from '../../query/port.ts';
import { queryError, runQuery } from '../../query/run.ts';
import { paramNames } from '../../query/translation-cache.ts';
import type { PreparedQuery } from '../../sql/index.ts';
import { ClickHouseDriver, type ClickHouseDriverOptions } from './driver.ts';
import { MAX_STATEMENT_BYTES } from './errors.ts';
import { generateClickHouse } from './printer.ts';

export type ClickHouseQueryRunnerOptions = ClickHouseDriverOptions;

export class ClickHouseQueryRunner implements QueryEngine {
  readonly capabilities = clickHouseCapabilities;
  readonly #driver: ClickHouseDriver;

  constructor(options: ClickHouseQueryRunnerOptions) {
    this.#driver = new ClickHouseDriver(options);
  }

  run(query: PreparedQuery, params: Record<string, ParamValue | null | undefined>, options: RunOptions): Promise<QueryResult> {
    return runQuery(this.#driver, query, params, options);
  }

  /** Shutdown: stops every query this runner started that is still running, and closes its streaming sessions. */
  stopAll(): Promise<void> {
    return this.#driver.stopAll();
  }

  /**
   * Runs a first statement on every reader: a chDB session's first query costs a few hundred
   * milliseconds, which would otherwise land on some caller's time limit.
   */
  warm(): Promise<void> {
    return this.#driver.warm();
  }

  /**
   * Checks that a query can run without running it: ClickHouse analyses it (types included) for
   * EXPLAIN. Every parameter is a NULL there (its value, and with a typed endpoint its type, come
   * with each run), as DuckDB prepares a statement with parameters of no type yet.
   */
  async check(query: PreparedQuery): Promise<void> {
    const { database } = this.#driver.options;
    const paramTypes = new Map(paramNames(query.ast).map((name) => [name, 'null' as const]));
    const generated = generateClickHouse(query.ast, { catalog: query.catalog, database, strictSourceColumns: true, paramTypes });
    const params: Record<string, null> = {};
    for (const name of generated.params) params[name] = null;
    try {
      const result = await this.#driver.client(0).query({
        query: `EXPLAIN PLAN ${generated.sql}`,
        query_params: params,
        format: 'JSONEachRow',
        clickhouse_settings: { max_query_size: String(MAX_STATEMENT_BYTES) },
      });
      await result.json();
    } catch (e) {
      throw queryError(this.#driver, e);
    }
  }
}
