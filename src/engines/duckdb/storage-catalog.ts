/** The schema catalogue's repository in the embedded DuckDB database (table `_quarry_schema`). */
import type { DuckDBConnection } from '@duckdb/node-api';
import type { CatalogRepository } from '../../storage/catalog.ts';
import type { SourceTable, TableSchema } from '../../storage/schema.ts';
import type { DuckDb } from '../../embedded-db/database.ts';
import { serialQueue } from '../../serial-queue.ts';

export class DuckDbCatalogRepository implements CatalogRepository {
  private readonly conn: DuckDBConnection;
  private readonly exclusive = serialQueue();

  private constructor(conn: DuckDBConnection) {
    this.conn = conn;
  }

  static async open(db: DuckDb): Promise<DuckDbCatalogRepository> {
    const conn = await db.connect();
    await conn.run(`CREATE TABLE IF NOT EXISTS _quarry_schema (
      source_id VARCHAR PRIMARY KEY,
      source_name VARCHAR NOT NULL,
      table_name VARCHAR NOT NULL,
      schema_json VARCHAR NOT NULL,
      updated_at TIMESTAMP NOT NULL
    )`);
    return new DuckDbCatalogRepository(conn);
  }

  loadAll(): Promise<SourceTable[]> {
    return this.exclusive(async () => {
      const reader = await this.conn.runAndReadAll('SELECT source_id, source_name, table_name, schema_json FROM _quarry_schema ORDER BY source_name');
      return reader.getRows().map(([id, name, table, json]) => ({
        id: String(id),
        name: String(name),
        table: String(table),
        schema: JSON.parse(String(json)) as TableSchema,
      }));
    });
  }

  save(entry: SourceTable): Promise<void> {
    return this.exclusive(async () => {
      await this.conn.run(
        `INSERT OR REPLACE INTO _quarry_schema (source_id, source_name, table_name, schema_json, updated_at)
         VALUES ($id, $name, $table, $schema, now()::TIMESTAMP)`,
        { id: entry.id, name: entry.name, table: entry.table, schema: JSON.stringify(entry.schema) },
      );
    });
  }

  remove(sourceId: string): Promise<void> {
    return this.exclusive(async () => {
      await this.conn.run('DELETE FROM _quarry_schema WHERE source_id = $id', { id: sourceId });
    });
  }

  close(): void {
    this.conn.closeSync();
  }
}
