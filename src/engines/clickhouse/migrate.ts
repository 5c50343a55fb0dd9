/**
 * Moves the events of the embedded DuckDB store into ClickHouse (docs/SCALING.md): every source
 * table of DATA_DIR/quarry.duckdb, with its schema, into the ClickHouse database the configuration
 * names. Sources, tokens and endpoints stay in DATA_DIR's metadata store, which both engines use,
 * so the service started with QUARRY_ENGINE=clickhouse on the same DATA_DIR finds everything.
 *
 * Run with the service stopped. A source whose ClickHouse table already holds events is refused
 * (nothing is written twice); the DuckDB file is only read.
 */
import { type Config, chdbPath, databasePath } from '../../config.ts';
import { claimDataFolders } from '../../data-dir/claim.ts';
import type { JsonObject, StoredEvent } from '../../storage/event.ts';
import { allColumns } from '../../storage/overflow.ts';
import { withoutBase } from '../../storage/schema.ts';
import { openDuckDb } from '../duckdb/database.ts';
import { DuckDbCatalogRepository } from '../duckdb/storage-catalog.ts';
import { quoteIdent as duckIdent, OVERFLOW_COLUMN } from '../duckdb/types.ts';
import { openClickHouseEngine } from './index.ts';

export interface MigrationReport {
  /** Source name → events copied. */
  copied: Record<string, number>;
}

const BATCH = 10_000;

export async function migrateToClickHouse(config: Config, log: (line: string) => void = () => undefined): Promise<MigrationReport> {
  const ch = config.clickhouse;
  if (!ch) throw new Error('Set QUARRY_ENGINE=clickhouse and CLICKHOUSE_URL: they name where the events go');
  // The service must not run meanwhile: its folders are claimed as it would claim them.
  const folders = await claimDataFolders(config, 'npm run migrate-to-clickhouse');
  try {
    return await migrate(config, ch, log);
  } finally {
    folders.release();
  }
}

async function migrate(config: Config, ch: NonNullable<Config['clickhouse']>, log: (line: string) => void): Promise<MigrationReport> {
  const duck = await openDuckDb({ path: databasePath(config) });
  const embedded = chdbPath(config);
  const target = await openClickHouseEngine({
    database: ch.database,
    ...(embedded ? { chdbPath: embedded } : { url: ch.url }),
    ...(ch.user ? { user: ch.user } : {}),
    ...(ch.password ? { password: ch.password } : {}),
  });
  const report: MigrationReport = { copied: {} };
  const conn = await duck.connect();
  const catalog = await DuckDbCatalogRepository.open(duck);
  try {
    for (const entry of await catalog.loadAll()) {
      const created = await target.sources.ensure({ id: entry.id, name: entry.name, table: entry.table });
      const before = await target.storage.countRows?.([created.table]);
      if ((before?.get(created.table) ?? 0) > 0) {
        throw new Error(`ClickHouse already holds events of source ${entry.name}: nothing was copied for it (empty the table first)`);
      }
      // Every field, typed or kept in DuckDB's overflow column (src/storage/overflow.ts).
      const { entry: grown } = await target.sources.evolve(entry.id, withoutBase(allColumns(entry.schema)));
      const fields = Object.keys(withoutBase(entry.schema.columns));
      let packed = fields.length === 0 ? "'{}'" : `CAST(to_json(struct_pack(${fields.map((f) => `${duckIdent(f)} := ${duckIdent(f)}`).join(', ')})) AS VARCHAR)`;
      if (entry.schema.overflow !== undefined) packed = `CAST(json_merge_patch(${packed}, COALESCE(${duckIdent(OVERFLOW_COLUMN)}, '{}')) AS VARCHAR)`;
      let copied = 0;
      for (let offset = 0; ; offset += BATCH) {
        const reader = await conn.runAndReadAll(
          `SELECT id, epoch_us(timestamp) AS ts, event_message, ${packed} AS fields FROM ${duckIdent(entry.table)} ORDER BY rowid LIMIT ${BATCH} OFFSET ${offset}`,
        );
        const rows = reader.getRows();
        if (rows.length === 0) break;
        const events: StoredEvent[] = rows.map(([id, ts, message, json]): StoredEvent => ({
          id: String(id),
          timestamp: BigInt(ts as bigint),
          event_message: message === null ? null : String(message),
          fields: JSON.parse(String(json)) as JsonObject,
        }));
        await target.storage.append([{ table: grown.table, schema: grown.schema, events }]);
        copied += events.length;
      }
      report.copied[entry.name] = copied;
      log(`${entry.name}: ${copied} event(s)`);
    }
  } finally {
    catalog.close();
    await target.close();
    duck.close();
  }
  return report;
}
