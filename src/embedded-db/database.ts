/**
 * Opens the embedded DuckDB database that holds everything the service stores: one table per
 * source and the metadata tables. One instance per process; connections are cheap.
 */
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { ATTACHED_CATALOG, createInstance, type OpenLog } from './recovery.ts';

export interface DuckDbOptions {
  /** Database file, or ':memory:' (tests). */
  path: string;
  /** Worker threads for queries (default: DuckDB's choice, the core count). */
  threads?: number;
  /** e.g. '4GB': DuckDB's buffer manager stays under it (queries beyond it spill or fail). */
  memoryLimit?: string;
  /** Spill space in the temp directory (beside the database file), e.g. '4GiB'. */
  maxTempSize?: string;
  /** WAL size that triggers a checkpoint (default 64MiB). */
  checkpointThreshold?: string;
  /**
   * Rows per row group of the rows this process writes (DuckDB's default: 122,880); opens the file
   * by ATTACH (src/embedded-db/recovery.ts). Each checkpoint writes the newest, partly filled row
   * group of every table again, so smaller groups make checkpoints under a steady stream of small
   * appends cheaper (docs/PERFORMANCE.md, "Row groups").
   */
  rowGroupSize?: number;
  /** Where start-up recovery reports what it did (default: stderr). */
  log?: OpenLog;
}

export interface DuckDb {
  readonly instance: DuckDBInstance;
  /** The database file, or ':memory:'. */
  readonly path: string;
  connect(): Promise<DuckDBConnection>;
  /** Closes a connection before the database closes (close() closes any left open). */
  disconnect(conn: DuckDBConnection): void;
  /** Closes every open connection, then the database (which checkpoints its WAL). */
  close(): void;
}

export async function openDuckDb(options: DuckDbOptions): Promise<DuckDb> {
  // Checkpoint when the WAL reaches 64 MiB rather than DuckDB's 16 MiB: every checkpoint rewrites
  // the partly filled row groups of each table, so frequent ones cost ingest far more CPU in total
  // (measured with the benchmark's events: 11.2 s CPU per 200k events at 16 MiB, 7.8 s at 64 MiB
  // including the final checkpoint). Set here because the configuration is locked after start-up.
  const settings: Record<string, string> = { checkpoint_threshold: options.checkpointThreshold ?? '64MiB' };
  if (options.threads !== undefined) settings.threads = String(options.threads);
  if (options.memoryLimit !== undefined) settings.memory_limit = options.memoryLimit;
  if (options.maxTempSize !== undefined) settings.max_temp_directory_size = options.maxTempSize;
  const attach = options.rowGroupSize !== undefined && options.path !== ':memory:' ? { rowGroupSize: options.rowGroupSize } : undefined;
  const instance = await createInstance(options.path, settings, options.log ?? ((m) => console.error(m)), attach);
  // USE is the connection's own: every connection is opened here.
  const use = attach === undefined ? undefined : `USE ${ATTACHED_CATALOG}`;
  const connections = new Set<DuckDBConnection>();
  // TimeZone cannot be passed at creation (ICU loads after); set it globally so every later
  // connection, including those opened after the configuration is locked, works in UTC.
  const setup = await instance.connect();
  await setup.run("SET GLOBAL TimeZone = 'UTC'");
  setup.closeSync();
  return {
    instance,
    path: options.path,
    async connect() {
      const conn = await instance.connect();
      if (use !== undefined) await conn.run(use);
      connections.add(conn);
      return conn;
    },
    disconnect(conn) {
      if (connections.delete(conn)) conn.closeSync();
    },
    close() {
      for (const c of connections) c.closeSync();
      connections.clear();
      instance.closeSync();
    },
  };
}
