/**
 * The schema catalogue's repository in ClickHouse itself (table `_quarry_catalog`), so every
 * service node pointed at the same ClickHouse reads the same schemas. A ReplacingMergeTree keyed
 * by source id: each save is a new version row, a removal a version with `deleted = 1`; reads take
 * the latest version per source (`FINAL`).
 */
import { randomUUID } from 'node:crypto';
import type { ClickHouseClient } from '@clickhouse/client';
import type { CatalogRepository } from '../../storage/catalog.ts';
import type { SourceTable, TableSchema } from '../../storage/schema.ts';
import { quoteIdent } from './client.ts';
import { CATALOG_TABLE, createCatalogTable } from './ddl.ts';

interface Row {
  source_id: string;
  source_name: string;
  table_name: string;
  schema_json: string;
}

export class ClickHouseCatalogRepository implements CatalogRepository {
  private readonly client: ClickHouseClient;
  private readonly table: string;
  private lastVersion = 0n;

  private constructor(client: ClickHouseClient, database: string) {
    this.client = client;
    this.table = `${quoteIdent(database)}.${quoteIdent(CATALOG_TABLE)}`;
  }

  /** Opens the catalogue in `database`, creating its table (on every node of `cluster`) when missing. */
  static async open(client: ClickHouseClient, database: string, cluster?: string): Promise<ClickHouseCatalogRepository> {
    const repo = new ClickHouseCatalogRepository(client, database);
    await client.command({ query: createCatalogTable(cluster === undefined ? { database } : { database, cluster }) });
    return repo;
  }

  async loadAll(): Promise<SourceTable[]> {
    const rows = await this.latest('');
    return rows.map((r) => ({ id: r.source_id, name: r.source_name, table: r.table_name, schema: JSON.parse(r.schema_json) as TableSchema }));
  }

  /** The schema last saved for a physical table. */
  async schemaOf(table: string): Promise<TableSchema | undefined> {
    const rows = await this.latest(' WHERE table_name = {table:String}', { table });
    const row = rows[0];
    return row === undefined ? undefined : (JSON.parse(row.schema_json) as TableSchema);
  }

  async save(entry: SourceTable): Promise<void> {
    await this.write({ source_id: entry.id, source_name: entry.name, table_name: entry.table, schema_json: JSON.stringify(entry.schema) }, 0);
  }

  async remove(sourceId: string): Promise<void> {
    await this.write({ source_id: sourceId, source_name: '', table_name: '', schema_json: '{}' }, 1);
  }

  private async latest(where: string, params: Record<string, string> = {}): Promise<Row[]> {
    const result = await this.client.query({
      query: `SELECT source_id, source_name, table_name, schema_json FROM ${this.table} FINAL${where ? `${where} AND` : ' WHERE'} deleted = 0 ORDER BY source_name`,
      query_params: params,
      format: 'JSONEachRow',
    });
    return (await result.json()) as Row[];
  }

  private async write(row: Row, deleted: number): Promise<void> {
    // Versions grow with the clock (µs), and strictly within this process.
    let version = BigInt(Date.now()) * 1000n;
    if (version <= this.lastVersion) version = this.lastVersion + 1n;
    this.lastVersion = version;
    await this.client.insert({
      table: this.table,
      values: [{ ...row, deleted, version: version.toString() }],
      format: 'JSONEachRow',
      clickhouse_settings: { insert_deduplication_token: randomUUID(), async_insert: 0 },
    });
  }
}
