/**
 * npm run migrate-to-clickhouse: copies DATA_DIR's events from the embedded DuckDB store into the
 * ClickHouse that QUARRY_ENGINE=clickhouse / CLICKHOUSE_URL name (docs/SCALING.md). Stop the
 * service first; afterwards start it with the same DATA_DIR and the ClickHouse settings.
 */
import { loadConfig } from '../src/config.ts';
import { migrateToClickHouse } from '../src/engines/clickhouse/migrate.ts';

try {
  const config = loadConfig();
  const report = await migrateToClickHouse(config, (line) => console.log(line));
  const total = Object.values(report.copied).reduce((a, b) => a + b, 0);
  console.log(`Copied ${total} event(s) of ${Object.keys(report.copied).length} source(s) to ClickHouse.`);
} catch (e) {
  console.error(`Migration failed: ${e instanceof Error ? e.message : String(e)}`);
  process.exitCode = 1;
}
