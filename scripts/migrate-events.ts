/**
 * npm run migrate-events [-- --from duckdb]: copies DATA_DIR's events from one engine's store (by
 * default the embedded DuckDB one) into the engine QUARRY_ENGINE and its settings name
 * (docs/SCALING.md). Stop the service first; afterwards start it with the same DATA_DIR and the new
 * engine's settings. `npm run migrate-to-clickhouse` is the same command.
 */
import { parseArgs } from 'node:util';
import { copyEvents } from '../src/migrate/copy-events.ts';

try {
  const { values } = parseArgs({ options: { from: { type: 'string' } } });
  const report = await copyEvents(process.env, { ...(values.from ? { from: values.from } : {}), log: (line) => console.log(line) });
  const total = Object.values(report.copied).reduce((a, b) => a + b, 0);
  console.log(`Copied ${total} event(s) of ${Object.keys(report.copied).length} source(s).`);
} catch (e) {
  console.error(`Migration failed: ${e instanceof Error ? e.message : String(e)}`);
  process.exitCode = 1;
}
