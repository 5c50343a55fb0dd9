/**
 * ClickHouse's part of the run sequence (src/query/run.ts): the least busy reader, translations,
 * the second check with ClickHouse's own parse tree, parameters as `{name:Type}` query parameters
 * (the type the run's value has: printer.ts; the value as the text ClickHouse parses into it:
 * `paramText`), the per-query settings (read-only, `max_execution_time` at the run's remaining
 * time, `max_result_rows`: lockdown.ts), the result streamed (result-stream.ts), and at the
 * deadline a client abort a little later (ABORT_GRACE_MS) with a KILL QUERY of what the server
 * did not stop.
 */
import { randomUUID } from 'node:crypto';
import type { ClickHouseClient } from '@clickhouse/client';
import { QuarryError } from '../../errors.ts';
import type { DriverRun, QueryDriver, ResultRow, RowStream, StatementLimits } from '../../query/driver.ts';
import { boundValue, type JsonValue, type ParamValue, paramBinding, paramText } from '../../query/port.ts';
import { type RunParams, type Translation, TranslationCache } from '../../query/translation-cache.ts';
import type { Query } from '../../sql/ast.ts';
import type { PreparedQuery } from '../../sql/index.ts';
import type { ParamBinding } from '../../sql/resolve.ts';
import type { VType } from '../../sql/types.ts';
import { encodeRow } from './encode.ts';
import { mapClickHouseError } from './errors.ts';
import { checkTranslatedSql, needsNullForEmpty, querySettings } from './lockdown.ts';
import { generateClickHouse } from './printer.ts';
import { type ResultSource, type ResultStream, resultSource } from './result-stream.ts';

export interface ClickHouseDriverOptions {
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

/** Time a server gets past the deadline (its max_execution_time) to report the timeout itself before the client gives up. */
const ABORT_GRACE_MS = 2000;

export class ClickHouseDriver implements QueryDriver {
  readonly options: ClickHouseDriverOptions;
  /** Queries running on each reader. */
  readonly #busy: number[];
  /** Where each reader's results are streamed from. */
  readonly #sources: ResultSource[];
  /** Translations for this driver's database. */
  readonly #translations: TranslationCache;
  /** `needsNullForEmpty` per query tree. */
  readonly #nullForEmptyByAst = new WeakMap<Query, boolean>();

  constructor(options: ClickHouseDriverOptions) {
    this.options = options;
    this.#busy = options.readers.map(() => 0);
    this.#sources = options.readers.map(resultSource);
    const { database } = options;
    this.#translations = new TranslationCache((ast, catalog, maxRows, paramTypes) =>
      generateClickHouse(ast, maxRows === undefined ? { catalog, database, paramTypes } : { catalog, database, maxRows, paramTypes }),
    );
  }

  translate(query: PreparedQuery, maxRows: number, params: RunParams): Translation {
    return this.#translations.get(query, maxRows, params);
  }

  /** The least busy reader; it stays counted until the run's end (a stream cancelled, or a timed-out query, until it has stopped). */
  begin(query: PreparedQuery, params: RunParams): DriverRun {
    const busy = this.#busy;
    let best = 0;
    for (let i = 1; i < busy.length; i++) if ((busy[i] as number) < (busy[best] as number)) best = i;
    busy[best] = (busy[best] as number) + 1;
    return new ClickHouseRun(this, best, query, params);
  }

  mapError(error: unknown): QuarryError {
    return mapClickHouseError(error);
  }

  client(reader: number): ClickHouseClient {
    return this.options.readers[reader] as ClickHouseClient;
  }

  source(reader: number): ResultSource {
    return this.#sources[reader] as ResultSource;
  }

  /** `begin`'s count of the reader given back. */
  release(reader: number): void {
    this.#busy[reader] = (this.#busy[reader] as number) - 1;
  }

  /** Counts `reader` busy once more; returns the release (call it once). */
  hold(reader: number): () => void {
    this.#busy[reader] = (this.#busy[reader] as number) + 1;
    return () => {
      this.#busy[reader] = (this.#busy[reader] as number) - 1;
    };
  }

  /** `needsNullForEmpty` of a query tree, worked out once per tree. */
  nullForEmpty(ast: Query): boolean {
    let needs = this.#nullForEmptyByAst.get(ast);
    if (needs === undefined) {
      needs = needsNullForEmpty(ast);
      this.#nullForEmptyByAst.set(ast, needs);
    }
    return needs;
  }

  /** ASYNC: on chDB a query that reported its timeout can stay listed, and SYNC would wait for it forever. */
  async killWhere(condition: string): Promise<void> {
    const killer = this.options.killer;
    if (!killer) return;
    await killer.command({ query: `KILL QUERY WHERE Settings['log_comment'] ${condition} ASYNC` }).catch(() => undefined);
  }

  /** Shutdown: stops every query this driver started that is still running, and closes its streaming sessions. */
  async stopAll(): Promise<void> {
    await this.killWhere("LIKE 'quarry:%'");
    for (const source of this.#sources) await source.close();
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
    for (const source of this.#sources) await source.warm();
  }
}

/** One run on one reader. */
class ClickHouseRun implements DriverRun {
  /** Aborted ABORT_GRACE_MS past the deadline: the client gives up waiting. */
  readonly #abort = new AbortController();
  #grace: NodeJS.Timeout | undefined;
  /** `log_comment` of the statement, which finds it again to kill it. */
  #marker: string | undefined;

  constructor(
    private readonly driver: ClickHouseDriver,
    private readonly reader: number,
    private readonly query: PreparedQuery,
    private readonly params: RunParams,
  ) {}

  verify(translation: Translation): Promise<void> | undefined {
    const { options } = this.driver;
    if (options.verifyTranslation === false) return undefined;
    const generated = translation.generated;
    const standIns: Record<string, string | null> = {};
    for (const name of generated.params) standIns[name] = standIn[paramBinding(boundValue(this.params, name))];
    return checkTranslatedSql(this.driver.client(this.reader), generated.sql, {
      database: options.database,
      tables: translation.tables,
      ctes: translation.ctes,
      params: standIns,
    });
  }

  async open(translation: Translation, limits: StatementLimits): Promise<RowStream> {
    const generated = translation.generated;
    // The placeholders were printed from these same values (the translation's signature).
    const values: Record<string, string | null> = {};
    for (const name of generated.params) {
      const v = boundValue(this.params, name);
      values[name] = v === null || v === undefined ? null : boundText(name, v);
    }
    const marker = `quarry:${randomUUID()}`;
    this.#marker = marker;
    const settings = querySettings({
      timeoutMs: limits.remainingMs,
      maxRows: limits.maxRows,
      maxMemoryBytes: this.driver.options.maxMemoryBytes ?? 0,
      marker,
      nullForEmpty: this.driver.nullForEmpty(this.query.ast),
    });
    const stream = await this.driver.source(this.reader).open(generated.sql + settings, values, this.#abort.signal);
    return new ClickHouseRows(
      stream,
      generated.columns.map((c) => c.name),
      generated.columns.map((c) => c.type),
      () => this.driver.hold(this.reader),
    );
  }

  interrupt(): void {
    // The server stops the statement at max_execution_time; a client that heard nothing by then gives up.
    this.#grace = setTimeout(() => this.#abort.abort(), ABORT_GRACE_MS);
  }

  end(): void {
    clearTimeout(this.#grace);
    const marker = this.#marker;
    if (this.#abort.signal.aborted && marker !== undefined) {
      // The client gave up waiting (the server did not stop it): it is killed, and its reader
      // counts as busy until the kill has been issued.
      const release = this.driver.hold(this.reader);
      void this.driver.killWhere(`= '${marker}'`).finally(release);
    }
    this.driver.release(this.reader);
  }
}

/** A result read a batch of JSON lines at a time, each line encoded as it is reached. */
class ClickHouseRows implements RowStream {
  #lines: Iterator<string> | undefined;
  #finished = false;

  /** `hold`: counts the reader busy while a cancelled statement settles; returns the release. */
  constructor(
    private readonly stream: ResultStream,
    private readonly names: readonly string[],
    private readonly types: readonly VType[],
    private readonly hold: () => () => void,
  ) {}

  read(rows: ResultRow[], max: number): boolean | Promise<boolean> {
    const lines = this.#lines;
    if (lines !== undefined) {
      const before = rows.length;
      this.#take(lines, rows, max);
      if (rows.length > before) return true;
    }
    return this.#fetch(rows, max);
  }

  async #fetch(rows: ResultRow[], max: number): Promise<boolean> {
    for (;;) {
      const batch = await this.stream.next();
      if (batch === undefined) {
        this.#finished = true;
        return false;
      }
      const lines = batch[Symbol.iterator]();
      this.#lines = lines;
      const before = rows.length;
      this.#take(lines, rows, max);
      if (rows.length > before) return true;
    }
  }

  #take(lines: Iterator<string>, rows: ResultRow[], max: number): void {
    for (let n = 0; n < max; n++) {
      const line = lines.next();
      if (line.done) {
        this.#lines = undefined;
        return;
      }
      rows.push(encodeRow(JSON.parse(line.value) as Record<string, JsonValue>, this.names, this.types));
    }
  }

  close(): void {
    if (this.#finished) return;
    this.stream.cancel();
    // The session is not handed to another run while a fetch of this one is still on it.
    void this.stream.settled().finally(this.hold());
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
    throw new QuarryError(
      'BAD_REQUEST',
      `Parameter "${name}": ${paramText(value)} is outside the dates the ClickHouse engine holds (1900-01-01 to 2299-12-31)`,
    );
  }
  return paramText(value);
}
