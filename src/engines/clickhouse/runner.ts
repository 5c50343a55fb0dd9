/**
 * Runs prepared queries on ClickHouse: generate SQL, double-check it against ClickHouse's own parse
 * tree, bind parameters as `{name:Type}` query parameters (the type the run's value has: printer.ts;
 * the value as the text ClickHouse parses into it: `paramText`), enforce the row cap (by the
 * generated LIMIT, and `max_result_rows`), the time limit (`max_execution_time`, plus a client
 * abort a little later) and the byte cap (while the result streams: result-stream.ts), run
 * read-only, and encode the rows as the DuckDB engine does.
 */
import { clickHouseCapabilities } from './definition.ts';
import { randomUUID } from 'node:crypto';
import type { ClickHouseClient } from '@clickhouse/client';
import { QuarryError } from '../../errors.ts';
import type { Query } from '../../sql/ast.ts';
import type { PreparedQuery } from '../../sql/index.ts';
import type { ParamBinding } from '../../sql/resolve.ts';
import { boundValue, type JsonValue, type ParamValue, paramBinding, paramText, type QueryEngine, type QueryResult, type RunOptions } from '../../query/port.ts';
import { ResultMeter } from '../../query/result-size.ts';
import { paramNames, TranslationCache } from '../../query/translation-cache.ts';
import { encodeRow } from './encode.ts';
import { MAX_STATEMENT_BYTES, mapClickHouseError } from './errors.ts';
import { generateClickHouse } from './printer.ts';
import { checkTranslatedSql, needsNullForEmpty, querySettings } from './lockdown.ts';
import { type ResultSource, type ResultStream, resultSource } from './result-stream.ts';

export interface ClickHouseQueryRunnerOptions {
  /** Clients caller queries run on; each runs one query at a time here (one chDB session each). */
  readers: readonly ClickHouseClient[];
  /**
   * Stops queries that outlived their time limit (`KILL QUERY`). On chDB a query that reported its
   * timeout may still run on in the background, so another session stops it.
   */
  killer?: ClickHouseClient;
  database: string;
  /** Per-query memory limit in bytes (0: the server's). */
  maxMemoryBytes?: number;
  /** Second check of translated SQL with EXPLAIN AST (default true). */
  verifyTranslation?: boolean;
}

/** A reader client, the source its results stream from, and its release. */
interface Reader {
  client: ClickHouseClient;
  source: ResultSource;
  done(): void;
}

/** Time a server gets past max_execution_time to report the timeout itself before the client gives up. */
const ABORT_GRACE_MS = 2000;

export class ClickHouseQueryRunner implements QueryEngine {
  readonly capabilities = clickHouseCapabilities;
  /** Queries running on each reader. */
  private readonly busy: number[];
  /** Translations for this runner's database. */
  private readonly translations: TranslationCache;
  /** `needsNullForEmpty` per query tree. */
  private readonly nullForEmptyByAst = new WeakMap<Query, boolean>();
  /** Where each reader's results are streamed from. */
  private readonly sources: ResultSource[];

  constructor(private readonly options: ClickHouseQueryRunnerOptions) {
    this.busy = options.readers.map(() => 0);
    this.sources = options.readers.map(resultSource);
    const { database } = options;
    this.translations = new TranslationCache((ast, catalog, maxRows, paramTypes) =>
      generateClickHouse(ast, maxRows === undefined ? { catalog, database, paramTypes } : { catalog, database, maxRows, paramTypes }),
    );
  }

  /** The least busy reader; it stays counted until `done` (a timed-out query until it has stopped). */
  private acquire(): Reader {
    let best = 0;
    for (let i = 1; i < this.busy.length; i++) if ((this.busy[i] as number) < (this.busy[best] as number)) best = i;
    this.busy[best] = (this.busy[best] as number) + 1;
    let released = false;
    return {
      client: this.options.readers[best] as ClickHouseClient,
      source: this.sources[best] as ResultSource,
      done: () => {
        if (released) return;
        released = true;
        this.busy[best] = (this.busy[best] as number) - 1;
      },
    };
  }

  async run(query: PreparedQuery, params: Record<string, ParamValue | null | undefined>, options: RunOptions): Promise<QueryResult> {
    const reader = this.acquire();
    try {
      return await this.runOn(reader, query, params, options);
    } finally {
      reader.done();
    }
  }

  private async runOn(
    reader: Reader,
    query: PreparedQuery,
    params: Record<string, ParamValue | null | undefined>,
    options: RunOptions,
  ): Promise<QueryResult> {
    const { database } = this.options;
    const client = reader.client;
    const translation = this.translations.get(query, options.maxRows, params);
    const generated = translation.generated;
    if (this.options.verifyTranslation !== false) {
      const standIns: Record<string, string | null> = {};
      for (const name of generated.params) standIns[name] = standIn[paramBinding(boundValue(params, name))];
      await checkTranslatedSql(client, generated.sql, { database, tables: translation.tables, ctes: translation.ctes, params: standIns });
    }
    // The placeholders were printed from these same values (the translation's signature).
    const values: Record<string, string | null> = {};
    for (const name of generated.params) {
      const v = boundValue(params, name);
      values[name] = v === null || v === undefined ? null : boundText(name, v);
    }
    // The time limit is the statement's: the parse-tree check (once per SQL text) is not counted.
    const remaining = options.timeoutMs;
    const running = Date.now();
    const marker = `quarry:${randomUUID()}`;
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), remaining + ABORT_GRACE_MS);
    let stream: ResultStream | undefined;
    let finished = false;
    try {
      const settings = querySettings({
        timeoutMs: remaining,
        maxRows: options.maxRows,
        maxMemoryBytes: this.options.maxMemoryBytes ?? 0,
        marker,
        nullForEmpty: this.nullForEmpty(query.ast),
      });
      stream = await reader.source.open(generated.sql + settings, values, abort.signal);
      const names = generated.columns.map((c) => c.name);
      const types = generated.columns.map((c) => c.type);
      const meter = new ResultMeter(options);
      const rows: Record<string, JsonValue>[] = [];
      read: for (;;) {
        const lines = await stream.next();
        if (lines === undefined) {
          finished = true;
          break;
        }
        for (const line of lines) {
          if (rows.length >= options.maxRows) break read;
          const row = encodeRow(JSON.parse(line) as Record<string, JsonValue>, names, types);
          rows.push(row);
          // Past the cap or the pool it throws: the finally below cancels the statement.
          if (meter.counting) meter.count(rows, rows.length - 1);
        }
      }
      // The statement stopped at max_execution_time with what it had (timeout_overflow_mode
      // 'break'): that is a time-out, not an answer.
      if (Date.now() - running >= options.timeoutMs) {
        throw new QuarryError('QUERY_TIMEOUT', `The query ran longer than ${options.timeoutMs} ms and was stopped`);
      }
      return { rows, columns: names, warnings: generated.warnings };
    } catch (e) {
      // A run that fails holds no rows: their result memory goes back at once.
      options.memory?.release();
      const mapped = abort.signal.aborted
        ? new QuarryError('QUERY_TIMEOUT', `The query ran longer than ${options.timeoutMs} ms and was stopped`)
        : mapClickHouseError(e, options.timeoutMs);
      if (mapped.code === 'QUERY_TIMEOUT' && abort.signal.aborted) {
        // The client gave up waiting (the server did not stop it): it is killed, and its reader
        // counts as busy until the kill has been issued.
        const release = this.acquireSame(reader);
        void this.killWhere(`= '${marker}'`).finally(release);
      }
      throw mapped;
    } finally {
      clearTimeout(timer);
      if (stream && !finished) {
        stream.cancel();
        // The session is not handed to another run while a fetch of this one is still on it.
        void stream.settled().finally(this.acquireSame(reader));
      }
    }
  }

  /** Counts the reader of `reader` busy once more; returns the release. */
  private acquireSame(reader: { client: ClickHouseClient }): () => void {
    const i = this.options.readers.indexOf(reader.client);
    this.busy[i] = (this.busy[i] as number) + 1;
    return () => {
      this.busy[i] = (this.busy[i] as number) - 1;
    };
  }

  /** Shutdown: stops every query this runner started that is still running, and closes its streaming sessions. */
  async stopAll(): Promise<void> {
    await this.killWhere("LIKE 'quarry:%'");
    for (const source of this.sources) await source.close();
  }

  /** ASYNC: on chDB a query that reported its timeout can stay listed, and SYNC would wait for it forever. */
  private async killWhere(condition: string): Promise<void> {
    const killer = this.options.killer;
    if (!killer) return;
    await killer.command({ query: `KILL QUERY WHERE Settings['log_comment'] ${condition} ASYNC` }).catch(() => undefined);
  }

  /**
   * Runs a first statement on every reader: a chDB session's first query costs a few hundred
   * milliseconds, which would otherwise land on some caller's time limit.
   */
  async warm(): Promise<void> {
    for (const client of this.options.readers) {
      const r = await client.query({ query: 'SELECT explain FROM (EXPLAIN AST SELECT 1)', format: 'JSONEachRow' });
      await r.json();
      const q = await client.query({ query: `SELECT 1 AS one${querySettings({ timeoutMs: 10_000, maxRows: 1, maxMemoryBytes: 0 })}`, format: 'JSONEachRow' });
      await q.json();
    }
    for (const source of this.sources) await source.warm();
  }

  /** `needsNullForEmpty` of a query tree, worked out once per tree. */
  private nullForEmpty(ast: Query): boolean {
    let needs = this.nullForEmptyByAst.get(ast);
    if (needs === undefined) {
      needs = needsNullForEmpty(ast);
      this.nullForEmptyByAst.set(ast, needs);
    }
    return needs;
  }

  /**
   * Checks that a query can run without running it: ClickHouse analyses it (types included) for
   * EXPLAIN. Every parameter is a NULL there (its value, and with a typed endpoint its type, come
   * with each run), as DuckDB prepares a statement with parameters of no type yet.
   */
  async check(query: PreparedQuery): Promise<void> {
    const { database } = this.options;
    const client = this.options.readers[0] as ClickHouseClient;
    const paramTypes = new Map(paramNames(query.ast).map((name) => [name, 'null' as const]));
    const generated = generateClickHouse(query.ast, { catalog: query.catalog, database, strictSourceColumns: true, paramTypes });
    const params: Record<string, null> = {};
    for (const name of generated.params) params[name] = null;
    try {
      const result = await client.query({
        query: `EXPLAIN PLAN ${generated.sql}`,
        query_params: params,
        format: 'JSONEachRow',
        clickhouse_settings: { max_query_size: String(MAX_STATEMENT_BYTES) },
      });
      await result.json();
    } catch (e) {
      throw mapClickHouseError(e, 0);
    }
  }
}

/** A value of each placeholder type for the parse-tree check (which never sees the run's values). */
const standIn: Readonly<Record<ParamBinding, string | null>> = {
  null: null,
  string: '',
  int: '0',
  float: '0',
  bool: 'false',
  timestamp: '1970-01-01 00:00:00',
  date: '1970-01-01',
};

/** Date32's range in days since 1970-01-01 (1900-01-01 to 2299-12-31); ClickHouse clamps beyond it. */
const DATE32_MIN_DAYS = -25_567;
const DATE32_MAX_DAYS = 120_529;

/** A value as the text its `{name:Type}` placeholder parses; a DATE Date32 cannot hold is refused. */
function boundText(name: string, value: ParamValue): string {
  if (typeof value !== 'string' && value.type === 'date' && (value.days < DATE32_MIN_DAYS || value.days > DATE32_MAX_DAYS)) {
    throw new QuarryError('BAD_REQUEST', `Parameter "${name}": ${paramText(value)} is outside the dates the ClickHouse engine holds (1900-01-01 to 2299-12-31)`);
  }
  return paramText(value);
}
