/**
 * The DuckDB engine, assembled: one embedded database file holding the source tables and their
 * schema catalogue. (The embedded metadata store has its own file: metadata/records.ts.)
 */
import type { Engine } from '../engine.ts';
import { openDuckDb } from './database.ts';
import { lockDownDuckDb } from './lockdown.ts';
import { DuckDbQueryRunner } from './runner.ts';
import { openDuckDbSourceStorage } from './storage-open.ts';

export interface DuckDbEngineOptions {
  /** Database file, or ':memory:'. */
  path: string;
  /** Applied at lock-down, e.g. '4GB'. */
  memoryLimit?: string;
}

export interface DuckDbEngine extends Engine {
  readonly name: 'duckdb';
}

export async function openDuckDbEngine(options: DuckDbEngineOptions): Promise<DuckDbEngine> {
  const db = await openDuckDb({ path: options.path });
  const stored = await openDuckDbSourceStorage(db);
  const query = new DuckDbQueryRunner({ connect: () => db.connect(), disconnect: (c) => db.disconnect(c) });
  return {
    name: 'duckdb',
    storage: stored.storage,
    query,
    sources: stored.sources,
    async lockDown() {
      const conn = await db.connect();
      try {
        await lockDownDuckDb(conn, options.memoryLimit ? { memoryLimit: options.memoryLimit } : {});
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
