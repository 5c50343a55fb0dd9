/**
 * The DuckDB engine, assembled: one embedded database file holding the source tables and their
 * schema catalogue. (The embedded metadata store has its own file: metadata/records.ts.)
 */
import type { Engine } from '../engine.ts';
import { duckDbCapabilities } from './definition.ts';
import { openDuckDb } from '../../embedded-db/database.ts';
import { lockDownDuckDb } from './lockdown.ts';
import { moveLegacyMetadata } from './legacy-metadata.ts';
import { DuckDbQueryRunner } from './runner.ts';
import { openDuckDbSourceStorage } from './storage-open.ts';

export interface DuckDbEngineOptions {
  /** Database file, or ':memory:'. */
  path: string;
  /** DuckDB's memory limit, e.g. '1GiB' (set at open, frozen by the lock-down). */
  memoryLimit?: string;
  /** Worker threads (default: the core count). */
  threads?: number;
  /** Spill space in the temp directory beside the database file. */
  maxTempSize?: string;
  /** WAL size at which DuckDB checkpoints by itself (default 64MiB: src/embedded-db/database.ts). */
  checkpointThreshold?: string;
  /** Rows per row group of the rows written (src/embedded-db/database.ts); undefined: DuckDB's own. */
  rowGroupSize?: number;
  /** WAL size at which storage checkpoints once no append is under way (src/engines/duckdb/storage.ts); undefined: never. */
  idleCheckpointBytes?: number;
}

export interface DuckDbEngine extends Engine {
  readonly name: 'duckdb';
}

export async function openDuckDbEngine(options: DuckDbEngineOptions): Promise<DuckDbEngine> {
  const db = await openDuckDb({
    path: options.path,
    ...(options.memoryLimit !== undefined ? { memoryLimit: options.memoryLimit } : {}),
    ...(options.threads !== undefined ? { threads: options.threads } : {}),
    ...(options.maxTempSize !== undefined ? { maxTempSize: options.maxTempSize } : {}),
    ...(options.checkpointThreshold ? { checkpointThreshold: options.checkpointThreshold } : {}),
    ...(options.rowGroupSize !== undefined ? { rowGroupSize: options.rowGroupSize } : {}),
  });
  const stored = await openDuckDbSourceStorage(db, options.idleCheckpointBytes !== undefined ? { idleCheckpointBytes: options.idleCheckpointBytes } : {});
  const query = new DuckDbQueryRunner({
    connect: () => db.connect(),
    disconnect: (c) => db.disconnect(c),
    dataVersion: (tables) => stored.storage.dataVersion(tables),
  });
  return {
    name: 'duckdb',
    capabilities: duckDbCapabilities,
    storage: stored.storage,
    query,
    sources: stored.sources,
    adoptLegacyMetadata: (adopt) => moveLegacyMetadata(db, adopt),
    async lockDown() {
      const conn = await db.connect();
      try {
        await lockDownDuckDb(conn);
      } finally {
        db.disconnect(conn);
      }
    },
    async close() {
      query.close();
      await stored.close();
      db.close();
    },
  };
}
