/**
 * The ClickHouse engine, assembled: source tables and the schema catalogue in one ClickHouse
 * database (a server, or embedded chDB), caller queries on their own read-only path. The metadata
 * repositories (sources, tokens, endpoints) are not here: the composition root gives them a store
 * of their own.
 */
import { SchemaCatalog } from '../../storage/catalog.ts';
import { SourceTables } from '../../storage/sources.ts';
import type { Engine } from '../engine.ts';
import { clickHouseCapabilities } from './definition.ts';
import { type ClickHouseConnectOptions, connectClickHouse } from './client.ts';
import { createDatabase } from './ddl.ts';
import { ClickHouseQueryRunner } from './runner.ts';
import { ClickHouseStorage } from './storage.ts';
import { ClickHouseCatalogRepository } from './storage-catalog.ts';

export interface ClickHouseEngineOptions extends ClickHouseConnectOptions {
  /** Per-query memory limit in bytes (0 or absent: the server's). */
  maxMemoryBytes?: number;
  /** CLICKHOUSE_CLUSTER: the tables are created ON CLUSTER, replicated, behind Distributed tables (ddl.ts). */
  cluster?: string;
  /** Embedded chDB: inserts as RowBinary where they can (default), or always as text (storage.ts). */
  binaryRows?: boolean;
}

export interface ClickHouseEngine extends Engine {
  readonly name: 'clickhouse';
  readonly database: string;
}

export async function openClickHouseEngine(options: ClickHouseEngineOptions): Promise<ClickHouseEngine> {
  if (options.cluster !== undefined && options.chdbPath !== undefined) {
    throw new Error('CLICKHOUSE_CLUSTER needs a ClickHouse server (CLICKHOUSE_URL=http://…): embedded chDB is one machine');
  }
  const connection = await connectClickHouse(options);
  try {
    const { cluster } = options;
    if (cluster !== undefined) await connection.client.command({ query: createDatabase({ database: connection.database, cluster }) });
    const repository = await ClickHouseCatalogRepository.open(connection.client, connection.database, cluster);
    const storage = new ClickHouseStorage({
      client: connection.client,
      database: connection.database,
      catalog: repository,
      ...(cluster !== undefined ? { cluster } : {}),
      ...(connection.rawInsert ? { rawInsert: connection.rawInsert } : {}),
      ...(options.binaryRows === false ? { binaryRows: false } : {}),
    });
    const sources = new SourceTables(storage, await SchemaCatalog.load(repository));
    await sources.reconcile();
    const query = new ClickHouseQueryRunner({
      readers: connection.readers,
      killer: connection.client,
      database: connection.database,
      ...(options.maxMemoryBytes ? { maxMemoryBytes: options.maxMemoryBytes } : {}),
    });
    await query.warm();
    return {
      name: 'clickhouse',
      capabilities: clickHouseCapabilities,
      database: connection.database,
      storage,
      query,
      sources,
      // Caller queries carry their own read-only settings (lockdown.ts); nothing is global here.
      async lockDown() {},
      problem: () => connection.problem(),
      async close() {
        await query.stopAll();
        await connection.close();
      },
    };
  } catch (e) {
    await connection.close().catch(() => undefined);
    throw e;
  }
}
