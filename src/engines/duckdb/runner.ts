/**
 * Runs prepared queries on DuckDB: generate SQL, double-check it against DuckDB's own parse
 * tree, bind parameters (strings as VARCHAR, typed values with their type: params.ts), enforce the row cap (by the generated LIMIT) and the time
 * limit (by interrupting the connection), and encode the rows.
 */
import { duckDbCapabilities } from './definition.ts';
import type { DuckDBConnection, DuckDBPreparedStatement } from '@duckdb/node-api';
import { isQuarryError, QuarryError } from '../../errors.ts';
import type { PreparedQuery } from '../../sql/index.ts';
import { Lru } from '../../sql/lru.ts';
import type { JsonValue, ParamValue, QueryEngine, QueryResult, RunOptions } from '../../query/port.ts';
import { ResultMeter } from '../../query/result-size.ts';
import { type Translation, TranslationCache } from '../../query/translation-cache.ts';
import { chunkEncoder } from './encode.ts';
import { generateDuckDb } from './generator.ts';
import { checkTranslatedSql } from './lockdown.ts';
import { bindValues } from './params.ts';

export interface DuckDbQueryRunnerOptions {
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

/** Every runner shares one cache: the translation depends only on the query, the catalogue, the row cap and the parameters' types. */
const translations = translationCache(false);

/** The same queries with every CTE materialised first: asked again after a value error (run()). */
const fencedTranslations = translationCache(true);

/** An error raised by evaluating a value (a cast, a parse, an overflow, error()), as DuckDB words it. */
function isValueError(e: unknown): boolean {
  return e instanceof Error && /^(Conversion|Invalid Input|Out of Range) Error:/.test(e.message);
}

/** Rows encoded between checks of the result's size. */
const SIZE_CHECK_ROWS = 16;

export class DuckDbQueryRunner implements QueryEngine {
  readonly capabilities = duckDbCapabilities;
  private readonly idle: DuckDBConnection[] = [];
  /** Prepared statements of each pooled connection, by SQL text. */
  private readonly statements = new WeakMap<DuckDBConnection, Lru<string, KeptStatement>>();

  constructor(private readonly options: DuckDbQueryRunnerOptions) {}

  async run(query: PreparedQuery, params: Record<string, ParamValue | null | undefined>, options: RunOptions): Promise<QueryResult> {
    const translation = translations.get(query, options.maxRows, params);
    const conn = await this.acquire();
    let timedOut = false;
    let repeat: NodeJS.Timeout | undefined;
    const timer = setTimeout(() => {
      timedOut = true;
      conn.interrupt();
      // An interrupt that arrives before DuckDB has registered the statement is lost: keep
      // interrupting until the run gives up.
      repeat = setInterval(() => conn.interrupt(), 50);
    }, options.timeoutMs);
    try {
      try {
        return await this.execute(conn, translation, params, options, () => timedOut, true);
      } catch (e) {
        // DuckDB may evaluate a caller's expression on rows the saved query's filters remove (a
        // CAST over a struct field of a vector the scan filtered): its error would tell the caller
        // something of another project's rows. So a value error of a query reading CTEs is asked
        // again with every CTE computed first, where only the caller's own rows can raise.
        if (timedOut || translation.ctes.length === 0 || !isValueError(e)) throw e;
        const fenced = fencedTranslations.get(query, options.maxRows, params);
        // The first run's rows are gone: the second counts from nothing.
        options.memory?.release();
        return await this.execute(conn, fenced, params, options, () => timedOut, false);
      }
    } catch (e) {
      // A run that fails holds no rows: their result memory goes back at once.
      options.memory?.release();
      if (timedOut) throw new QuarryError('QUERY_TIMEOUT', `The query ran longer than ${options.timeoutMs} ms and was stopped`);
      throw mapDuckDbError(e);
    } finally {
      clearTimeout(timer);
      clearInterval(repeat);
      // A connection the timer interrupted is not reused: the interrupt may land after the query.
      if (timedOut) this.discard(conn);
      else this.release(conn);
    }
  }

  /** Checks, prepares (kept statements when `keep`), binds, runs and encodes one translation. */
  private async execute(
    conn: DuckDBConnection,
    translation: Translation,
    params: Record<string, ParamValue | null | undefined>,
    options: RunOptions,
    timedOut: () => boolean,
    keep: boolean,
  ): Promise<QueryResult> {
    const generated = translation.generated;
    if (this.options.verifyTranslation !== false) {
      // Runs DuckDB's parser once per distinct SQL text (and allowed tables); repeats reuse the verdict.
      await checkTranslatedSql(conn, generated.sql, { tables: translation.tables, ctes: translation.ctes });
    }
    // An interrupt that lands between statements is lost, so look at the clock before each.
    if (timedOut()) throw new Error('timed out');
    const prepared = keep ? await this.statement(conn, generated.sql, translation.tables) : await conn.prepare(generated.sql);
    try {
      // Every parameter is bound on every run (absent → NULL), so nothing carries over from a previous run.
      if (generated.params.length > 0) {
        const bound = bindValues(generated.params, params);
        prepared.bind(bound.values, bound.types);
      }
      if (timedOut()) throw new Error('timed out');
      // Streamed, not materialised: a result past a cap is never built whole in the engine.
      const result = await prepared.stream();
      const names = result.columnNames();
      const duckTypes = result.columnTypes();
      const types = generated.columns.map((c) => c.type);
      const encode = chunkEncoder(names, duckTypes, types);
      const meter = new ResultMeter(options);
      const rows: Record<string, JsonValue>[] = [];
      for (;;) {
        const chunk = await result.fetchChunk();
        if (chunk === null || chunk.rowCount === 0) break;
        if (!meter.counting) {
          encode(chunk, 0, chunk.rowCount, rows);
          continue;
        }
        // A few rows at a time, so a result past the byte limit (or the result memory others
        // leave) stops growing memory a few rows after it (rows of several MB each are possible:
        // string_agg, array_agg).
        for (let from = 0; from < chunk.rowCount; from += SIZE_CHECK_ROWS) {
          const before = rows.length;
          encode(chunk, from, Math.min(chunk.rowCount, from + SIZE_CHECK_ROWS), rows);
          // Throws past the cap or when other results hold the rest of the pool; run() releases.
          meter.count(rows, before);
        }
      }
      return { rows, columns: names, warnings: generated.warnings };
    } finally {
      if (!keep) prepared.destroySync();
    }
  }

  /**
   * Checks that a query can run, without running it: generation resolves every column against the
   * catalogue, and DuckDB's binder checks types while preparing.
   */
  async check(query: PreparedQuery): Promise<void> {
    const generated = generateDuckDb(query.ast, { catalog: query.catalog, strictSourceColumns: true });
    const conn = await this.acquire();
    try {
      const prepared = await conn.prepare(generated.sql);
      prepared.destroySync();
    } catch (e) {
      throw mapDuckDbError(e);
    } finally {
      this.release(conn);
    }
  }

  /** Closes pooled connections. */
  close(): void {
    for (const c of this.idle.splice(0)) this.discard(c);
  }

  /**
   * The connection's prepared statement for `sql`, which reads `tables`: the kept one while no
   * write to them has committed since it was prepared, else prepared now.
   */
  private async statement(conn: DuckDBConnection, sql: string, tables: readonly string[]): Promise<DuckDBPreparedStatement> {
    const keep = this.options.statementsPerConnection ?? 64;
    const dataVersion = this.options.dataVersion;
    if (keep <= 0 || dataVersion === undefined) return conn.prepare(sql);
    let cache = this.statements.get(conn);
    if (!cache) {
      cache = new Lru(keep, (_sql, evicted) => evicted.prepared.destroySync());
      this.statements.set(conn, cache);
    }
    // Read before preparing: a write committing meanwhile then fails the next comparison.
    const version = dataVersion(tables);
    const known = cache.get(sql);
    if (known?.version === version) return known.prepared;
    if (known) {
      cache.delete(sql);
      known.prepared.destroySync();
    }
    const prepared = await conn.prepare(sql);
    cache.set(sql, { prepared, version });
    return prepared;
  }

  private async acquire(): Promise<DuckDBConnection> {
    return this.idle.pop() ?? (await this.options.connect());
  }

  private release(conn: DuckDBConnection): void {
    if (this.idle.length < (this.options.idleConnections ?? 4)) this.idle.push(conn);
    else this.discard(conn);
  }

  private discard(conn: DuckDBConnection): void {
    // Closing the connection destroys its prepared statements.
    this.statements.delete(conn);
    if (this.options.disconnect) this.options.disconnect(conn);
    else conn.closeSync();
  }
}

/** The messages of the guards our printed SQL raises with error(): ours, holding only limits. */
const OWN_GUARD = /^\w+ would build a value larger than \d+ bytes|^generate_\w+ would make more than \d+ elements$|^the array would have more than \d+ elements$/;

/** `STRUCT(a VARCHAR, b STRUCT(c INT))` (and MAP, UNION) → `STRUCT(…)`, innermost first. */
export function withoutRecordTypes(text: string): string {
  let out = text;
  for (let previous = ''; previous !== out; ) {
    previous = out;
    out = out.replace(/\b(STRUCT|MAP|UNION)\([^()]*\)/g, '$1\u27e8\u27e9');
  }
  return out.replace(/\u27e8\u27e9/g, '(…)');
}

/** DuckDB errors → QuarryErrors whose messages carry no SQL text. */
export function mapDuckDbError(e: unknown): QuarryError {
  if (isQuarryError(e)) return e;
  const raw = e instanceof Error ? e.message : String(e);
  const first = raw.split('\n')[0] ?? '';
  const m = /^(Binder|Conversion|Invalid Input|Out of Range|Parser|Catalog|Permission|Interrupt|Out of Memory|Not implemented) Error:\s*(.*)$/.exec(first);
  const kind = m?.[1];
  // Internal aliases and physical table names are not the caller's vocabulary.
  let detail = (m?.[2] ?? '')
    .replace(/"__[a-z]\d+"\./g, '')
    .replace(/"?src_[0-9a-f]{32}"?/g, 'the source')
    .trim();
  // A record's type lists every field any project's events added: it is named, not spelt out.
  detail = withoutRecordTypes(detail);
  // What a value error quotes is a value that was being read (another project's, possibly), and a
  // parser error may quote generated SQL: neither is repeated.
  if ((kind === 'Conversion' || kind === 'Out of Range' || kind === 'Invalid Input' || kind === 'Parser') && !OWN_GUARD.test(detail)) {
    detail = detail.replace(/'(?:[^']|'')*'|"(?:[^"]|"")*"/g, '…').replace(/-?\b\d+(?:\.\d+)?(?:e[+-]?\d+)?\b/gi, '…');
  }
  if (kind === 'Interrupt') return new QuarryError('QUERY_TIMEOUT', 'The query was stopped before it finished', { cause: e });
  if (kind === 'Out of Memory') {
    return new QuarryError(
      'OVERLOADED',
      "The query needed more memory than the engine's limit (MEMORY_BUDGET / DUCKDB_MEMORY_LIMIT); simplify it or retry when fewer queries run",
      { cause: e, retryAfter: 5 },
    );
  }
  if (kind === 'Binder' || kind === 'Conversion' || kind === 'Invalid Input' || kind === 'Out of Range' || kind === 'Not implemented' || kind === 'Parser') {
    return new QuarryError('INVALID_QUERY', `The query is not valid: ${detail}`, { cause: e });
  }
  if (kind === 'Permission' || kind === 'Catalog') return new QuarryError('QUERY_NOT_ALLOWED', 'The query tried to use something that is not allowed', { cause: e });
  return new QuarryError('INTERNAL', 'The query failed', { cause: e });
}
