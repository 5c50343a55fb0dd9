/**
 * Reads a caller query's result as it is produced, a batch of JSONEachRow lines at a time, so the
 * runner can stop (and the engine stop the statement) as soon as the result passes the row or byte
 * cap: nothing holds the whole result first.
 *
 * On a server the client's own HTTP stream is read. On embedded chDB the client's connection
 * materialises every result before handing it over, so a result is streamed instead through a chDB
 * session of the runner's own on the same data directory (`Session.queryStreamBind`: values are
 * bound by the engine, never printed into the statement).
 */
import { createRequire } from 'node:module';
import { type ClickHouseClient, parseError } from '@clickhouse/client';
import { MAX_STATEMENT_BYTES } from './errors.ts';

/** One statement's result, read in batches of JSON lines (one row each). */
export interface ResultStream {
  /**
   * The next batch, or undefined at the end; its lines are decoded as they are read, so a reader
   * that stops early never decodes the rest. Rejects at once (AbortError) when the run's signal aborts.
   */
  next(): Promise<Iterable<string> | undefined>;
  /** Stops reading; the statement is cancelled. */
  cancel(): void;
  /** Settles once nothing of this statement runs on its session any more. */
  settled(): Promise<void>;
}

/** Opens result streams on one session. */
export interface ResultSource {
  open(sql: string, params: Record<string, string | null>, signal: AbortSignal): Promise<ResultStream>;
  /** Runs a first statement (a chDB session's first one is slow). */
  warm(): Promise<void>;
  close(): Promise<void>;
}

/** The source for `client`: its HTTP stream on a server, a streaming chDB session on embedded chDB. */
export function resultSource(client: ClickHouseClient): ResultSource {
  const path = chdbPath(client);
  return path === undefined ? clientSource(client) : chdbSource(path);
}

/** The data directory when `client` runs on an embedded chDB connection. */
function chdbPath(client: ClickHouseClient): string | undefined {
  // The client keeps its connection in a field its typings call private.
  const connection = (client as unknown as { connection?: { connectionName?: string; chdb?: { session?: { path?: unknown } } } }).connection;
  if (connection?.connectionName !== 'chdb') return undefined;
  const path = connection.chdb?.session?.path;
  return typeof path === 'string' ? path : undefined;
}

function clientSource(client: ClickHouseClient): ResultSource {
  return {
    async open(sql, params, signal) {
      const result = await client.query({
        query: sql,
        query_params: params,
        format: 'JSONEachRow',
        abort_signal: signal,
        // A read-only statement whose client went away (cancel below) stops at once.
        clickhouse_settings: { max_query_size: String(MAX_STATEMENT_BYTES), cancel_http_readonly_queries_on_client_close: 1 },
      });
      const rows = result.stream()[Symbol.asyncIterator]();
      let pending: Promise<unknown> = Promise.resolve();
      return {
        next() {
          const step = rows.next();
          pending = step.catch(() => undefined);
          return step.then((r) => (r.done ? undefined : (r.value as { text: string }[]).map((row) => row.text)));
        },
        cancel() {
          // Closing the response makes the server stop the statement.
          result.close();
        },
        settled: () => pending.then(() => undefined),
      };
    },
    async warm() {},
    async close() {},
  };
}

/** What this module uses of chDB's native session. */
interface ChdbStreamChunk {
  raw(): Uint8Array;
}
interface ChdbQueryStream extends AsyncIterable<ChdbStreamChunk> {
  cancel(): void;
}
interface ChdbStreamSession {
  queryStreamBind(sql: string, params: object, opts: { format: string }): ChdbQueryStream;
  queryAsync(sql: string, opts: { format: string }): Promise<unknown>;
  close(): void;
}

function chdbSource(path: string): ResultSource {
  const { Session } = createRequire(import.meta.url)('chdb') as { Session: new (path: string) => ChdbStreamSession };
  let session: Promise<ChdbStreamSession> | undefined;
  const open = (): Promise<ChdbStreamSession> => {
    session ??= (async () => {
      const opened = new Session(path);
      // A session setting: the statement's own SETTINGS clause comes too late for its parser.
      await opened.queryAsync(`SET max_query_size = ${MAX_STATEMENT_BYTES}`, { format: 'JSONEachRow' });
      return opened;
    })();
    return session;
  };
  return {
    async open(sql, params, signal) {
      const bound: Record<string, string | null> = {};
      for (const [name, value] of Object.entries(params)) bound[name] = value;
      const opened = await open();
      let chunks: AsyncIterator<ChdbStreamChunk>;
      let stream: ChdbQueryStream;
      try {
        stream = opened.queryStreamBind(sql, bound, { format: 'JSONEachRow' });
        chunks = stream[Symbol.asyncIterator]();
      } catch (e) {
        throw clickHouseError(e);
      }
      // The fetch on chDB's thread, which cancel() waits for before releasing the stream.
      let pending: Promise<unknown> = Promise.resolve();
      const aborted = new Promise<never>((_, reject) => {
        const fail = () => reject(Object.assign(new Error('The query was aborted'), { name: 'AbortError' }));
        if (signal.aborted) fail();
        else signal.addEventListener('abort', fail, { once: true });
      });
      aborted.catch(() => undefined);
      return {
        async next() {
          const step = chunks.next();
          pending = step.catch(() => undefined);
          let r: IteratorResult<ChdbStreamChunk>;
          try {
            r = await Promise.race([step, aborted]);
          } catch (e) {
            if (signal.aborted) throw e;
            throw clickHouseError(e);
          }
          if (r.done) return undefined;
          return lines(r.value.raw());
        },
        cancel() {
          stream.cancel();
        },
        settled: () => pending.then(() => undefined),
      };
    },
    async warm() {
      await (await open()).queryAsync('SELECT 1', { format: 'JSONEachRow' });
    },
    async close() {
      const closing = session;
      session = undefined;
      (await closing)?.close();
    },
  };
}

const utf8 = new TextDecoder();

/** The non-empty lines of JSONEachRow bytes, each decoded when reached. */
function* lines(bytes: Uint8Array): Generator<string> {
  for (let from = 0; from < bytes.length; ) {
    let end = bytes.indexOf(0x0a, from);
    if (end < 0) end = bytes.length;
    if (end > from) yield utf8.decode(bytes.subarray(from, end));
    from = end + 1;
  }
}

/** chDB's stream errors carry ClickHouse's message (`Code: N. DB::Exception: … (TYPE)`): the typed error the client gives elsewhere. */
function clickHouseError(e: unknown): unknown {
  const message = e instanceof Error ? e.message : String(e);
  if (!/Code: \d+/.test(message)) return e;
  const parsed = parseError(message);
  if (parsed !== e) (parsed as { cause?: unknown }).cause = e;
  return parsed;
}
