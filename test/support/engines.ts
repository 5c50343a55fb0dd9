/**
 * The engines every engine-neutral suite runs against (the way Kysely runs each test for each
 * dialect): DuckDB always, ClickHouse through embedded chDB when the `chdb` dev dependency is
 * installed. `QUARRY_TEST_ENGINES=duckdb` (or `clickhouse`) narrows the list.
 *
 * chDB binds one data directory per process, so a process holds one chDB at a time: every
 * ClickHouse query engine of a test file shares one directory, each in a database of its own.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type ClickHouseConnection, connectClickHouse } from '../../src/engines/clickhouse/client.ts';
import { ClickHouseQueryRunner } from '../../src/engines/clickhouse/runner.ts';
import { ClickHouseStorage } from '../../src/engines/clickhouse/storage.ts';
import { ClickHouseCatalogRepository } from '../../src/engines/clickhouse/storage-catalog.ts';
import { DuckDbQueryRunner } from '../../src/engines/duckdb/runner.ts';
import type { QueryEngine } from '../../src/query/port.ts';
import type { Env } from '../../src/config.ts';
import { engineDefinition, engineDefinitions } from '../../src/engines/registry.ts';
import type { JsonObject, StoredEvent } from '../../src/storage/event.ts';
import type { Catalog, SourceTable } from '../../src/storage/schema.ts';
import { makeCatalog, openTestDb } from '../sql/support.ts';

export type EngineName = 'duckdb' | 'clickhouse';

const wanted = process.env.QUARRY_TEST_ENGINES?.split(',').map((s) => s.trim());

/** The registry's engines that run self-contained here, narrowed by QUARRY_TEST_ENGINES. */
export const engines: EngineName[] = engineDefinitions
  .filter((d) => (wanted === undefined || wanted.includes(d.name)) && d.selfContained.available())
  .map((d) => d.name as EngineName);

/** Environment that starts the service on `engine`, self-contained (chDB under DATA_DIR for ClickHouse). */
export function engineEnv(engine: EngineName): Env {
  return { ...engineDefinition(engine)?.selfContained.env };
}

export interface QueryTestEngine {
  name: EngineName;
  query: QueryEngine;
  catalog: Catalog;
  /** ClickHouse: the engine's connection (raw statements in engine tests). */
  connection?: ClickHouseConnection;
  close(): Promise<void>;
}

/** A query engine over `sources` filled with `data` (plain events, timestamps as ISO text). */
export async function openQueryTestEngine(name: EngineName, sources: SourceTable[], data: Record<string, object[]>): Promise<QueryTestEngine> {
  if (name === 'duckdb') {
    const t = await openTestDb(sources, data);
    const query = new DuckDbQueryRunner({ connect: () => t.db.connect() });
    return {
      name,
      query,
      catalog: t.catalog,
      async close() {
        query.close();
        t.db.close();
      },
    };
  }
  const dir = await mkdtemp(path.join(tmpdir(), 'quarry-chdb-'));
  const database = 'quarry_test';
  const conn = await connectClickHouse({ chdbPath: dir, database });
  const repository = await ClickHouseCatalogRepository.open(conn.client, database);
  const storage = new ClickHouseStorage({ client: conn.client, database, catalog: repository });
  for (const s of sources) {
    await storage.createSourceTable(s.table, { name: s.name });
    await repository.save(s);
    const events = (data[s.name] ?? []).map(storedEvent);
    if (events.length > 0) await storage.append([{ table: s.table, schema: s.schema, events }]);
  }
  const query = new ClickHouseQueryRunner({ readers: conn.readers, killer: conn.client, database });
  await query.warm();
  return {
    name,
    query,
    catalog: makeCatalog(sources),
    connection: conn,
    async close() {
      await query.stopAll();
      await conn.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A fixture event as storage receives it. */
export function storedEvent(event: object): StoredEvent {
  const { id, timestamp, event_message, ...fields } = event as Record<string, unknown>;
  return {
    id: String(id),
    timestamp: BigInt(Date.parse(String(timestamp))) * 1000n,
    event_message: event_message === null || event_message === undefined ? null : String(event_message),
    fields: fields as JsonObject,
  };
}
