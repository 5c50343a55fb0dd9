/**
 * The connection to ClickHouse: the official client over HTTP for a server, or the same client on
 * an in-process chDB connection (`CLICKHOUSE_URL=chdb:`). Start-up checks that the server answers
 * and that the user holds every right Quarry needs, and says which one is missing.
 */
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { type ClickHouseClient, createClient } from '@clickhouse/client';

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
}

/** Inserts rows given as JSONEachRow text (embedded chDB: the bytes go to chDB as they are). */
export type RawInsert = (table: string, rows: Buffer, settings: Record<string, string | number>) => Promise<void>;

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
  /**
   * Embedded chDB: inserts through chDB's byte pass-through on the storage session, which skips the
   * client's stream and the statement text it would build (about a quarter of the insert's CPU).
   */
  readonly rawInsert?: RawInsert;
  close(): Promise<void>;
}

interface ChdbRawInsert {
  chdb: { rawInsert(p: { table: string; values: Buffer; format: 'JSONEachRow'; settings: Record<string, string | number> }): Promise<unknown> };
}

export const CHDB_INSTALL_HINT =
  'CLICKHOUSE_URL=chdb: runs ClickHouse inside Quarry and needs the chdb package (about 550 MB): run `npm install --save-exact chdb@3.4.0`, or point CLICKHOUSE_URL at a ClickHouse server (http://host:8123)';

/** A chDB connection for the client, or an error saying how to install chDB. */
function chdbConnection(path: string): ChdbRawInsert {
  const require = createRequire(import.meta.url);
  let mod: { createChdbConnection(options: { path: string }): ChdbRawInsert };
  try {
    mod = require('chdb/connection') as typeof mod;
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === 'MODULE_NOT_FOUND' || code === 'ERR_MODULE_NOT_FOUND') throw new Error(CHDB_INSTALL_HINT, { cause: e });
    throw e;
  }
  return mod.createChdbConnection({ path });
}

/** Backquoted ClickHouse identifier. */
export function quoteIdent(name: string): string {
  if (name.includes('\u0000')) throw new Error('Names may not contain NUL characters');
  return `\`${name.replaceAll('\\', '\\\\').replaceAll('`', '\\`')}\``;
}

/** ClickHouse string literal (backslash is an escape character in ClickHouse strings). */
export function quoteString(text: string): string {
  return `'${text.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
}

export async function connectClickHouse(options: ClickHouseConnectOptions): Promise<ClickHouseConnection> {
  const embedded = options.chdbPath !== undefined;
  let client: ClickHouseClient;
  let rawInsert: RawInsert | undefined;
  const chdbClient = (connection = chdbConnection(options.chdbPath as string)) =>
    createClient({ connection } as unknown as Parameters<typeof createClient>[0]);
  if (embedded) {
    const { mkdir } = await import('node:fs/promises');
    await mkdir(options.chdbPath as string, { recursive: true });
    const connection = chdbConnection(options.chdbPath as string);
    client = chdbClient(connection);
    rawInsert = async (table, rows, settings) => {
      await connection.chdb.rawInsert({ table, values: rows, format: 'JSONEachRow', settings });
    };
  } else {
    client = createClient({
      url: options.url ?? 'http://localhost:8123',
      ...(options.user ? { username: options.user } : {}),
      ...(options.password ? { password: options.password } : {}),
      request_timeout: 300_000,
      clickhouse_settings: { date_time_input_format: 'basic' },
    });
  }
  const where = embedded ? `embedded chDB in ${options.chdbPath}` : `ClickHouse at ${options.url}`;
  const ping = await client.ping();
  if (!ping.success) {
    await client.close().catch(() => undefined);
    const reason = ping.error instanceof Error ? ping.error.message : String(ping.error);
    throw new Error(`Cannot reach ${where}: ${reason}. Check CLICKHOUSE_URL and that the server is running.`);
  }
  try {
    await checkRights(client, options.database);
  } catch (e) {
    await client.close().catch(() => undefined);
    throw e;
  }
  const readers = embedded ? Array.from({ length: options.readers ?? 4 }, () => chdbClient()) : [client];
  return {
    client,
    reader: readers[0] as ClickHouseClient,
    readers,
    database: options.database,
    embedded,
    ...(rawInsert ? { rawInsert } : {}),
    async close() {
      for (const r of readers) if (r !== client) await r.close();
      await client.close();
    },
  };
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
      const message = e instanceof Error ? e.message : String(e);
      const grant = /necessary to have the grant ([^.]+)/.exec(message)?.[1];
      if ((e as { type?: string }).type === 'ACCESS_DENIED' || grant) {
        throw new Error(
          `The ClickHouse user lacks a right Quarry needs: ${grant ?? what} (for ${what} in database ${database}). Grant it, or use another CLICKHOUSE_USER.`,
          { cause: e },
        );
      }
      throw new Error(`ClickHouse refused ${what} in database ${database}: ${message}`, { cause: e });
    }
  }
}
