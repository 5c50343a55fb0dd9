/**
 * The schema catalogue's repository in ClickHouse itself (table `_quarry_catalog`), so every
 * service node pointed at the same ClickHouse reads the same schemas.
 *
 * Every save appends a row with the whole schema as that node knew it; a removal appends a row
 * with `deleted = 1`. A source's entry is the **union** of its rows since its last removal (in
 * version order: the latest row's name and table, every row's fields merged by the conflict
 * rule; the records every event carried, those all rows list: src/storage/carried.ts). Schemas
 * only grow, so the union is the truth, and two nodes that grow the same source at once (each
 * writing its own view, neither seeing the other's field yet) both keep their fields: no lost
 * update, without a transaction ClickHouse does not have. Rows are never collapsed (`ORDER BY
 * (source_id, version)`), and there are few: one per schema change, and one when an event first
 * lacks a record every event before it carried.
 */
import { randomUUID } from 'node:crypto';
import type { ClickHouseClient } from '@clickhouse/client';
import { type CatalogRepository, mergeEntrySchemas } from '../../storage/catalog.ts';
import type { SourceTable, TableSchema } from '../../storage/schema.ts';
import { quoteIdent } from './client.ts';
import { CATALOG_TABLE, createCatalogTable } from './ddl.ts';

interface Row {
  source_id: string;
  source_name: string;
  table_name: string;
  schema_json: string;
  deleted: number;
}

/**
 * Set in every save's schema by versions that write presence markers (src/storage/presence.ts).
 * A table all of whose saves carry it holds markers in every row: saves precede the rows they
 * describe, and a table is saved when it is created.
 */
const MARKED = '$presenceMarkers';

/** The rows of each source, in version order, folded into its current entry. */
function fold(rows: readonly Row[]): SourceTable[] {
  const entries = new Map<string, SourceTable | undefined>();
  for (const r of rows) {
    if (Number(r.deleted) === 1) {
      entries.set(r.source_id, undefined);
      continue;
    }
    const { [MARKED]: marked, ...schema } = JSON.parse(r.schema_json) as TableSchema & { [MARKED]?: boolean };
    const before = entries.get(r.source_id);
    const unmarked = marked !== true || before?.unmarkedRecords === true;
    entries.set(r.source_id, {
      id: r.source_id,
      name: r.source_name,
      table: r.table_name,
      schema: before === undefined ? schema : mergeEntrySchemas(before.schema, schema),
      ...(unmarked ? { unmarkedRecords: true as const } : {}),
    });
  }
  return [...entries.values()].filter((e): e is SourceTable => e !== undefined).sort((a, b) => (a.name < b.name ? -1 : 1));
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
    return fold(await this.rows(''));
  }

  /** The schema of the source stored in a physical table. */
  async schemaOf(table: string): Promise<TableSchema | undefined> {
    const rows = await this.rows(` WHERE source_id IN (SELECT source_id FROM ${this.table} WHERE table_name = {table:String})`, { table });
    return fold(rows).find((e) => e.table === table)?.schema;
  }

  /** Changes whenever any node saved or removed an entry (a cheap check before a reload). */
  async version(): Promise<string> {
    const result = await this.client.query({
      query: `SELECT count() AS n, max(version) AS v FROM ${this.table}`,
      format: 'JSONEachRow',
    });
    const row = ((await result.json()) as { n: string | number; v: string | number }[])[0];
    return `${row?.n ?? 0}:${row?.v ?? 0}`;
  }

  async save(entry: SourceTable): Promise<void> {
    await this.write({
      source_id: entry.id,
      source_name: entry.name,
      table_name: entry.table,
      schema_json: JSON.stringify({ ...entry.schema, [MARKED]: true }),
      deleted: 0,
    });
  }

  async remove(sourceId: string): Promise<void> {
    await this.write({ source_id: sourceId, source_name: '', table_name: '', schema_json: '{}', deleted: 1 });
  }

  private async rows(where: string, params: Record<string, string> = {}): Promise<Row[]> {
    const result = await this.client.query({
      query: `SELECT source_id, source_name, table_name, schema_json, deleted FROM ${this.table}${where} ORDER BY source_id, version`,
      query_params: params,
      format: 'JSONEachRow',
    });
    return (await result.json()) as Row[];
  }

  private async write(row: Row): Promise<void> {
    // Versions grow with the clock (µs), and strictly within this process; two nodes writing in
    // the same microsecond keep both rows (nothing is collapsed).
    let version = BigInt(Date.now()) * 1000n;
    if (version <= this.lastVersion) version = this.lastVersion + 1n;
    this.lastVersion = version;
    await this.client.insert({
      table: this.table,
      values: [{ ...row, version: version.toString() }],
      format: 'JSONEachRow',
      clickhouse_settings: { insert_deduplication_token: randomUUID(), async_insert: 0 },
    });
  }
}
