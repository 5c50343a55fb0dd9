/**
 * The connection to ClickHouse: the official client over HTTP for a server, or the same client on
 * an in-process chDB connection (`CLICKHOUSE_URL=chdb:`). Start-up checks that the server answers
 * and that the user holds every right Quarry needs, and says which one is missing.
 */
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { type ClickHouseClient, ClickHouseLogLevel, createClient } from '@clickhouse/client';
import { QuarryError } from '../../errors.ts';
import { type ChdbModule, type ChdbWriter, openChdbWriter, releaseScratchFolder, type RowFormat, scratchFolder } from './chdb-writer.ts';
import { StartupError } from '../../data-dir/startup-error.ts';
import { quoteIdent, quoteString } from './quote.ts';

export { quoteIdent, quoteString };

export interface ClickHouseConnectOptions {
  /** `http(s)://host:port` of a server. */
  url?: string;
  /** Embedded chDB data directory (instead of `url`). */
  chdbPath?: string;
  user?: string;
  password?: string;
  database: string;
  /** chDB sessions for caller queries (default 4: QUERY_MAX_CONCURRENCY's default). */
  readers?: number;
  /** chDB sessions for event inserts, each running one insert at a time (default `INSERT_WRITERS`). */
  writers?: number;
}

/**
 * Inserts running at once on embedded chDB. A chDB session runs one statement at a time, and one
 * insert keeps about one core busy (parsing, then writing the part); two sessions let inserts into
 * different tables use both cores of a small machine while the service's own JavaScript runs.
 */
export const INSERT_WRITERS = 2;

/** Inserts rows given as JSONEachRow text or RowBinary (embedded chDB: the bytes go to chDB as they are). */
export type RawInsert = (table: string, rows: Buffer, format: RowFormat, settings: Record<string, string | number>) => Promise<void>;

export interface ClickHouseConnection {
  /** Storage and catalogue statements. */
  readonly client: ClickHouseClient;
  /**
   * Caller queries. On chDB sessions of their own (settings given to the client become session
   * settings there, so queries and ingest never share them, and a session runs one statement at a
   * time, so each running query gets one); on a server the same client.
   */
  readonly reader: ClickHouseClient;
  readonly readers: readonly ClickHouseClient[];
  readonly database: string;
  /** True on embedded chDB (one process, no users or profiles). */
  readonly embedded: boolean;
  /** Why ClickHouse cannot be used right now (for /health), or undefined when it answers. */
  problem(): Promise<string | undefined>;
  /**
   * Embedded chDB: inserts through chDB's byte pass-through on the storage session, which skips the
   * client's stream and the statement text it would build (about a quarter of the insert's CPU).
   */
  readonly rawInsert?: RawInsert;
  close(): Promise<void>;
}

/** How long /health waits for ClickHouse to answer. */
const PROBLEM_TIMEOUT_MS = 2000;

/** Failures of the connection itself (nothing reached ClickHouse, or its answer was lost). */
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EPIPE',
]);

/** The error code of a failure to reach ClickHouse (`ECONNREFUSED`, `timeout`, …), or undefined. */
export function unreachableCode(e: unknown): string | undefined {
  for (let cause: unknown = e, depth = 0; cause !== null && typeof cause === 'object' && depth < 4; depth++) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === 'string' && UNREACHABLE_CODES.has(code)) return code;
    const message = (cause as { message?: unknown }).message;
    if (typeof message === 'string' && /^(socket hang up|Timeout error)/i.test(message)) return 'timeout';
    cause = (cause as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * The client, with failures to reach ClickHouse turned into `503 UNAVAILABLE` (+ Retry-After): a
 * request that needs ClickHouse while it is away is answered "try again", never acknowledged and
 * never a 500. Everything else ClickHouse says passes through unchanged.
 */
function withUnavailable(client: ClickHouseClient): ClickHouseClient {
  const calls = new Set<PropertyKey>(['query', 'insert', 'command', 'exec']);
  return new Proxy(client, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== 'function') return value;
      const method = value as (...args: unknown[]) => unknown;
      if (!calls.has(prop)) return method.bind(target);
      return async (...args: unknown[]) => {
        try {
          return await method.apply(target, args);
        } catch (e) {
          const code = unreachableCode(e);
          if (code === undefined) throw e;
          throw new QuarryError('UNAVAILABLE', `The event store (ClickHouse) cannot be reached right now (${code}); nothing was acknowledged. Retry shortly.`, {
            retryAfter: 5,
            cause: e,
          });
        }
      };
    },
  });
}

interface ChdbClientConnection {
  close(): Promise<void>;
}

/** Sessions handed out one statement at a time, waiting callers served in arrival order. */
class SessionPool<T> {
  private readonly idle: T[];
  private readonly waiting: ((session: T) => void)[] = [];

  constructor(sessions: readonly T[]) {
    this.idle = [...sessions];
  }

  acquire(): Promise<T> {
    const session = this.idle.pop();
    if (session !== undefined) return Promise.resolve(session);
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  release(session: T): void {
    const next = this.waiting.shift();
    if (next === undefined) this.idle.push(session);
    else next(session);
  }
}

export const CHDB_INSTALL_HINT =
  'CLICKHOUSE_URL=chdb: runs ClickHouse inside Quarry and needs the chdb package (about 550 MB): run `npm install --save-exact chdb@3.4.0`, or point CLICKHOUSE_URL at a ClickHouse server (http://host:8123)';

/** A chDB connection for the client, or an error saying how to install chDB. */
function chdbConnection(path: string): ChdbClientConnection {
  const require = createRequire(import.meta.url);
  let mod: { createChdbConnection(options: { path: string }): ChdbClientConnection };
  try {
    mod = require('chdb/connection') as typeof mod;
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === 'MODULE_NOT_FOUND' || code === 'ERR_MODULE_NOT_FOUND') throw new Error(CHDB_INSTALL_HINT, { cause: e });
    throw e;
  }
  return mod.createChdbConnection({ path });
}

export async function connectClickHouse(options: ClickHouseConnectOptions): Promise<ClickHouseConnection> {
  const embedded = options.chdbPath !== undefined;
  let client: ClickHouseClient;
  let rawInsert: RawInsert | undefined;
  let writers: ChdbWriter[] = [];
  let scratch: string | undefined;
  const chdbClient = (connection = chdbConnection(options.chdbPath as string)) => createClient({ connection } as unknown as Parameters<typeof createClient>[0]);
  if (embedded) {
    const { mkdir } = await import('node:fs/promises');
    await mkdir(options.chdbPath as string, { recursive: true });
    await assertRoomToStart(options.chdbPath as string);
    client = chdbClient(chdbConnection(options.chdbPath as string));
  } else {
    client = createClient({
      url: options.url ?? 'http://localhost:8123',
      ...(options.user ? { username: options.user } : {}),
      ...(options.password ? { password: options.password } : {}),
      request_timeout: 300_000,
      clickhouse_settings: { date_time_input_format: 'basic' },
      // The client would print every failed request to the console; Quarry answers them (503,
      // /health, its own request log) instead.
      log: { level: ClickHouseLogLevel.OFF },
    });
  }
  client = withUnavailable(client);
  const where = embedded ? `embedded chDB in ${options.chdbPath}` : `ClickHouse at ${options.url}`;
  const ping = await client.ping();
  const closeWriters = async () => {
    for (const w of writers) w.close();
    if (scratch !== undefined) await releaseScratchFolder(scratch);
  };
  if (!ping.success) {
    await closeWriters();
    await client.close().catch(() => undefined);
    const reason = ping.error instanceof Error ? ping.error.message : String(ping.error);
    throw new Error(`Cannot reach ${where}: ${reason}. Check CLICKHOUSE_URL and that the server is running.`);
  }
  try {
    await checkRights(client, options.database);
  } catch (e) {
    await closeWriters();
    await client.close().catch(() => undefined);
    throw e;
  }
  if (embedded) {
    // Only once the database is known to be usable: a start that stops earlier leaves the folder
    // as it found it (scratch folders of a crashed process included).
    const require = createRequire(import.meta.url);
    const chdb = require('chdb') as ChdbModule;
    scratch = scratchFolder(options.chdbPath as string);
    const folder = scratch;
    writers = Array.from({ length: Math.max(1, options.writers ?? INSERT_WRITERS) }, () => openChdbWriter(options.chdbPath as string, folder, chdb));
    const pool = new SessionPool(writers);
    rawInsert = async (table, rows, format, settings) => {
      const writer = await pool.acquire();
      try {
        await writer.insert(table, rows, format, settings);
      } finally {
        pool.release(writer);
      }
    };
  }
  const readers = embedded ? Array.from({ length: options.readers ?? 4 }, () => chdbClient()) : [client];
  return {
    client,
    reader: readers[0] as ClickHouseClient,
    readers,
    database: options.database,
    embedded,
    async problem() {
      // In-process chDB has no connection to lose (and its ping would wait behind an insert).
      if (embedded) return undefined;
      const answer = await client.ping({ select: false, abort_signal: AbortSignal.timeout(PROBLEM_TIMEOUT_MS) });
      if (answer.success) return undefined;
      const code = unreachableCode(answer.error) ?? 'no answer';
      // The reason names what failed, never where (no host, port or credentials).
      return `the event store (ClickHouse) is unreachable (${code})`;
    },
    ...(rawInsert ? { rawInsert } : {}),
    async close() {
      for (const r of readers) if (r !== client) await r.close();
      await closeWriters();
      await client.close();
    },
  };
}

/** Below this much free space an embedded chDB start stops before it writes anything (an insert reserves 1 MiB). */
const MIN_FREE_BYTES = 8 * 1024 * 1024;

async function assertRoomToStart(dir: string): Promise<void> {
  const { statfs } = await import('node:fs/promises');
  const s = await statfs(dir);
  const free = s.bavail * s.bsize;
  if (free < MIN_FREE_BYTES) {
    throw new StartupError(
      'DISK_FULL',
      `The disk holding ${dir} is full (${Math.floor(free / 1024)} KiB free; embedded ClickHouse needs at least ${MIN_FREE_BYTES / 1024 / 1024} MiB to start). Free some space on that disk, then start again; nothing was changed.`,
    );
  }
}

/**
 * Exercises every statement kind Quarry runs (database and table creation, insert, select, the
 * retention delete, drop) on a probe table; an ACCESS_DENIED names the missing grant.
 */
async function checkRights(client: ClickHouseClient, database: string): Promise<void> {
  const db = quoteIdent(database);
  // A name of its own per start: nodes starting together on one database must not share a probe.
  const probe = `${db}.${quoteIdent(`_quarry_rights_probe_${randomBytes(6).toString('hex')}`)}`;
  const steps: [string, string][] = [
    ['CREATE DATABASE', `CREATE DATABASE IF NOT EXISTS ${db}`],
    ['DROP TABLE', `DROP TABLE IF EXISTS ${probe}`],
    ['CREATE TABLE', `CREATE TABLE ${probe} (t DateTime64(6, 'UTC'), j JSON) ENGINE = MergeTree PARTITION BY toYYYYMMDD(t) ORDER BY t`],
    ['INSERT', `INSERT INTO ${probe} VALUES ('2000-01-01 00:00:00', '{}')`],
    ['SELECT', `SELECT count() FROM ${probe}`],
    ['ALTER DROP PARTITION', `ALTER TABLE ${probe} DROP PARTITION 20000101`],
    ['ALTER DELETE', `DELETE FROM ${probe} WHERE t < '2000-01-01 00:00:00'`],
    ['DROP TABLE', `DROP TABLE ${probe}`],
  ];
  for (const [what, sql] of steps) {
    try {
      await client.command({ query: sql });
    } catch (e) {
      // The probe is not left behind by a start that stops here (a full disk fails its INSERT).
      await client.command({ query: `DROP TABLE IF EXISTS ${probe}` }).catch(() => undefined);
      const message = e instanceof Error ? e.message : String(e);
      const grant = /necessary to have the grant ([^.]+)/.exec(message)?.[1];
      if ((e as { type?: string }).type === 'ACCESS_DENIED' || grant) {
        throw new Error(
          `The ClickHouse user lacks a right Quarry needs: ${grant ?? what} (for ${what} in database ${database}). Grant it, or use another CLICKHOUSE_USER.`,
          { cause: e },
        );
      }
      const type = (e as { type?: string }).type;
      if (type === 'READONLY') {
        throw new Error(
          `The ClickHouse user lacks a right Quarry needs: it is read-only (its settings profile sets readonly), and Quarry needs ${what} and every other write in database ${database} (ClickHouse said: ${message}). Use a user whose profile allows writes.`,
          { cause: e },
        );
      }
      if (type === 'AUTHENTICATION_FAILED' || type === 'REQUIRED_PASSWORD' || type === 'WRONG_PASSWORD' || type === 'UNKNOWN_USER') {
        throw new Error(`ClickHouse did not accept CLICKHOUSE_USER / CLICKHOUSE_PASSWORD (${message.trim()}).`, { cause: e });
      }
      throw new Error(`ClickHouse refused ${what} in database ${database}: ${message}`, { cause: e });
    }
  }
}
