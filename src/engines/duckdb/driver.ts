/**
 * DuckDB's part of the run sequence (src/query/run.ts): pooled connections, translations (a value
 * error of a query over CTEs asked again with the CTEs materialised), the second check with
 * DuckDB's own parser, prepared statements kept per connection while the data they read is
 * unchanged, binds (strings as VARCHAR, typed values with their type: params.ts), the interrupt at
 * the deadline, streamed chunks encoded a few rows at a time, and DuckDB's errors.
 */
import type { DuckDBConnection, DuckDBDataChunk, DuckDBMaterializedResult, DuckDBPreparedStatement, DuckDBResult } from '@duckdb/node-api';
import type { QuarryError } from '../../errors.ts';
import type { DriverRun, QueryDriver, ResultRow, RowStream, StatementLimits } from '../../query/driver.ts';
import { type RunParams, type Translation, TranslationCache } from '../../query/translation-cache.ts';
import type { PreparedQuery } from '../../sql/index.ts';
import { Lru } from '../../sql/lru.ts';
import { type ChunkEncoder, chunkEncoder } from './encode.ts';
import { isValueError, mapDuckDbError } from './errors.ts';
import { generateDuckDb } from './generator.ts';
import { checkTranslatedSql } from './lockdown.ts';
import { bindValues } from './params.ts';

export interface DuckDbDriverOptions {
  /** Opens a connection (on a locked-down database). Connections are pooled and reused. */
  connect(): Promise<DuckDBConnection>;
  /** Second check of translated SQL with json_serialize_sql (default true). */
  verifyTranslation?: boolean;
  /** Closes a connection the pool does not keep (default: closeSync). */
  disconnect?(conn: DuckDBConnection): void;
  /** Connections kept idle for reuse (default 4). */
  idleConnections?: number;
  /** Prepared statements kept per pooled connection, by SQL text (default 64; 0 turns it off). */
  statementsPerConnection?: number;
  /**
   * The version of the data in these tables (DuckDbStorage.dataVersion): a kept statement is reused
   * only while the tables it reads are at the version it was prepared at, because DuckDB keeps a
   * plan optimised with the statistics of that time (a literal filter outside a column's min/max
   * then stays empty after the rows arrive). Without it no statement is reused.
   */
  dataVersion?(tables: readonly string[]): number;
}

/** A kept prepared statement and the data version of its tables when it was prepared. */
interface KeptStatement {
  readonly prepared: DuckDBPreparedStatement;
  readonly version: number;
}

/** A translation cache; `materialiseCtes` prints every CTE `AS MATERIALIZED`. */
function translationCache(materialiseCtes: boolean): TranslationCache {
  return new TranslationCache((ast, catalog, maxRows, paramTypes) =>
    generateDuckDb(ast, { catalog, paramTypes, materialiseCtes, ...(maxRows === undefined ? {} : { maxRows }) }),
  );
}

/** Every driver shares one cache: the translation depends only on the query, the catalogue, the row cap and the parameters' types. */
const translations = translationCache(false);

/** The same queries with every CTE materialised first: asked again after a value error (retry()). */
const fencedTranslations = translationCache(true);

/** Interrupts repeat this often until the run gives up: one that arrives before DuckDB has registered the statement is lost. */
const INTERRUPT_REPEAT_MS = 50;

export class DuckDbDriver implements QueryDriver {
  readonly #options: DuckDbDriverOptions;
  readonly #idle: DuckDBConnection[] = [];
  /** Prepared statements of each pooled connection, by SQL text. */
  readonly #statements = new WeakMap<DuckDBConnection, Lru<string, KeptStatement>>();

  constructor(options: DuckDbDriverOptions) {
    this.#options = options;
  }

  get verifying(): boolean {
    return this.#options.verifyTranslation !== false;
  }

  translate(query: PreparedQuery, maxRows: number, params: RunParams): Translation {
    return translations.get(query, maxRows, params);
  }

  /**
   * DuckDB may evaluate a caller's expression on rows the saved query's filters remove (a CAST over
   * a struct field of a vector the scan filtered): its error would tell the caller something of
   * another project's rows. So a value error of a query reading CTEs is asked again with every CTE
   * computed first, where only the caller's own rows can raise.
   */
  retry(error: unknown, failed: Translation, query: PreparedQuery, maxRows: number, params: RunParams): Translation | undefined {
    if (failed.ctes.length === 0 || !isValueError(error)) return undefined;
    return fencedTranslations.get(query, maxRows, params);
  }

  begin(_query: PreparedQuery, params: RunParams): DriverRun | Promise<DriverRun> {
    const idle = this.#idle.pop();
    if (idle !== undefined) return new DuckDbRun(this, idle, params);
    return this.#options.connect().then((conn) => new DuckDbRun(this, conn, params));
  }

  mapError(error: unknown): QuarryError {
    return mapDuckDbError(error);
  }

  async acquire(): Promise<DuckDBConnection> {
    return this.#idle.pop() ?? (await this.#options.connect());
  }

  release(conn: DuckDBConnection): void {
    if (this.#idle.length < (this.#options.idleConnections ?? 4)) this.#idle.push(conn);
    else this.discard(conn);
  }

  discard(conn: DuckDBConnection): void {
    // Closing the connection destroys its prepared statements.
    this.#statements.delete(conn);
    if (this.#options.disconnect) this.#options.disconnect(conn);
    else conn.closeSync();
  }

  /** Closes pooled connections. */
  close(): void {
    for (const c of this.#idle.splice(0)) this.discard(c);
  }

  /**
   * The connection's prepared statement for `sql`, which reads `tables`: the kept one while no
   * write to them has committed since it was prepared, else prepared now (and kept); undefined
   * when statements are not kept.
   */
  statement(conn: DuckDBConnection, sql: string, tables: readonly string[]): DuckDBPreparedStatement | Promise<DuckDBPreparedStatement> | undefined {
    const keep = this.#options.statementsPerConnection ?? 64;
    const dataVersion = this.#options.dataVersion;
    if (keep <= 0 || dataVersion === undefined) return undefined;
    let cache = this.#statements.get(conn);
    if (!cache) {
      cache = new Lru(keep, (_sql, evicted) => evicted.prepared.destroySync());
      this.#statements.set(conn, cache);
    }
    // Read before preparing: a write committing meanwhile then fails the next comparison.
    const version = dataVersion(tables);
    const known = cache.get(sql);
    if (known?.version === version) return known.prepared;
    if (known) {
      cache.delete(sql);
      known.prepared.destroySync();
    }
    return conn.prepare(sql).then((prepared) => {
      cache.set(sql, { prepared, version });
      return prepared;
    });
  }
}

/** Rows in one of DuckDB's chunks (its vector size). */
const ONE_CHUNK = 2048;

/** One run on one pooled connection. */
class DuckDbRun implements DriverRun {
  #interrupted = false;
  #repeat: NodeJS.Timeout | undefined;

  constructor(
    private readonly driver: DuckDbDriver,
    private readonly conn: DuckDBConnection,
    private readonly params: RunParams,
  ) {}

  verify(translation: Translation): Promise<void> | undefined {
    // Runs DuckDB's parser once per distinct SQL text (and allowed tables); repeats reuse the verdict.
    if (!this.driver.verifying) return undefined;
    return checkTranslatedSql(this.conn, translation.generated.sql, { tables: translation.tables, ctes: translation.ctes });
  }

  async open(translation: Translation, limits: StatementLimits): Promise<RowStream> {
    const generated = translation.generated;
    // A second attempt's statement (CTEs materialised) is not kept.
    const keeping = limits.retried ? undefined : this.driver.statement(this.conn, generated.sql, translation.tables);
    const kept = keeping instanceof Promise ? await keeping : keeping;
    const prepared = kept ?? (await this.conn.prepare(generated.sql));
    const own = kept === undefined ? prepared : undefined;
    try {
      // Every parameter is bound on every run (absent → NULL), so nothing carries over from a previous run.
      if (generated.params.length > 0) {
        const bound = bindValues(generated.params, this.params);
        prepared.bind(bound.values, bound.types);
      }
      // An interrupt that lands between statements is lost, so look before starting this one.
      if (this.#interrupted) throw new Error('Interrupt Error: the deadline passed');
      // Streamed, so a result past a cap is never built whole in the engine; unless the cap is
      // within one chunk, which is all a stream holds at once too: then one call runs the
      // statement and its rows are read without another trip to DuckDB's threads.
      const whole = limits.maxRows <= ONE_CHUNK ? await prepared.run() : undefined;
      const result = whole ?? (await prepared.stream());
      // Rows are keyed by the generated names: the statement's own, as it aliases every column.
      const columns = generated.columns;
      const encode = chunkEncoder(
        columns.map((c) => c.name),
        result.columnTypes(),
        columns.map((c) => c.type),
      );
      return new DuckDbRows(result, encode, own, whole);
    } catch (e) {
      own?.destroySync();
      throw e;
    }
  }

  interrupt(): void {
    this.#interrupted = true;
    const conn = this.conn;
    conn.interrupt();
    this.#repeat = setInterval(() => conn.interrupt(), INTERRUPT_REPEAT_MS);
  }

  end(): void {
    clearInterval(this.#repeat);
    // A connection the deadline interrupted is not reused: the interrupt may land after the query.
    if (this.#interrupted) this.driver.discard(this.conn);
    else this.driver.release(this.conn);
  }
}

/** A streamed result, encoded column by column from DuckDB's chunks, as many rows at a time as asked. */
class DuckDbRows implements RowStream {
  #chunk: DuckDBDataChunk | undefined;
  #at = 0;
  #count = 0;

  /** The next chunk of a materialised result. */
  #next = 0;

  /** `own`: a statement prepared for this run alone, destroyed with the stream; `whole`: the result, when materialised. */
  constructor(
    private readonly result: DuckDBResult,
    private readonly encode: ChunkEncoder,
    private readonly own: DuckDBPreparedStatement | undefined,
    private readonly whole: DuckDBMaterializedResult | undefined,
  ) {}

  read(rows: ResultRow[], max: number): boolean | Promise<boolean> {
    if (this.#at >= this.#count) return this.whole === undefined ? this.#fetch(rows, max) : this.#take(this.whole, rows, max);
    const to = Math.min(this.#count, this.#at + max);
    this.encode(this.#chunk as DuckDBDataChunk, this.#at, to, rows);
    this.#at = to;
    return true;
  }

  async #fetch(rows: ResultRow[], max: number): Promise<boolean> {
    return this.#start(await this.result.fetchChunk(), rows, max);
  }

  #take(whole: DuckDBMaterializedResult, rows: ResultRow[], max: number): boolean {
    return this.#start(this.#next < whole.chunkCount ? whole.getChunk(this.#next++) : null, rows, max);
  }

  #start(chunk: DuckDBDataChunk | null, rows: ResultRow[], max: number): boolean {
    if (chunk === null || chunk.rowCount === 0) return false;
    this.#chunk = chunk;
    this.#at = 0;
    this.#count = chunk.rowCount;
    return this.read(rows, max) as boolean;
  }

  close(): void {
    this.own?.destroySync();
  }
}
