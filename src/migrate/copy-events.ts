/**
 * Copies the events of one engine's store into the configured engine's (docs/SCALING.md): every
 * source table, with its schema, from the engine named by `from` (by default the embedded DuckDB
 * store in DATA_DIR) into the one QUARRY_ENGINE and its settings name. Sources, tokens and
 * endpoints stay in DATA_DIR's metadata store, which every engine uses, so the service started on
 * the new engine with the same DATA_DIR finds everything.
 *
 * Run with the service stopped (the folders are claimed as the service claims them). A source whose
 * table in the target already holds events is refused: nothing is written twice.
 */
import { intersect } from '../storage/carried.ts';
import { type Config, loadConfig } from '../config.ts';
import { claimDataFolders } from '../data-dir/claim.ts';
import type { Engine } from '../engines/engine.ts';
import { engineDefinition, engineNames } from '../engines/registry.ts';
import type { Env } from '../settings.ts';
import { allColumns } from '../storage/overflow.ts';
import { withoutBase } from '../storage/schema.ts';

export interface MigrationReport {
  /** Source name → events copied. */
  copied: Record<string, number>;
}

export interface MigrationOptions {
  /** The engine whose store in DATA_DIR is copied (default: the registry's first, DuckDB). */
  from?: string;
  /** Events per batch (default 10,000). */
  batchSize?: number;
  log?: (line: string) => void;
}

export async function copyEvents(env: Env, options: MigrationOptions = {}): Promise<MigrationReport> {
  const config = loadConfig(env);
  const from = options.from ?? (engineNames[0] as string);
  const source = engineDefinition(from);
  if (source === undefined) throw new Error(`There is no engine "${from}" to copy from: ${engineNames.join(' or ')}`);
  if (from === config.engine.name) {
    throw new Error(`QUARRY_ENGINE names the engine the events are in (${from}): set it (and its settings) to the engine they go to`);
  }
  const sourceEngine = source.configure(env, { dataDir: config.dataDir, memoryBudgetBytes: config.memoryBudgetBytes });
  // The service must not run meanwhile: its folders are claimed as it would claim them.
  const folders = await claimDataFolders(
    { dataDir: config.dataDir, engine: { ...config.engine, folders: [...config.engine.folders, ...sourceEngine.folders] } },
    'npm run migrate-events',
  );
  try {
    const origin = await sourceEngine.open();
    try {
      const target = await config.engine.open();
      try {
        return await copy(origin, target, config, options);
      } finally {
        await target.close();
      }
    } finally {
      await origin.close();
    }
  } finally {
    folders.release();
  }
}

async function copy(origin: Engine, target: Engine, config: Config, options: MigrationOptions): Promise<MigrationReport> {
  const exportEvents = origin.storage.exportEvents?.bind(origin.storage);
  if (exportEvents === undefined) throw new Error(`The ${origin.name} engine cannot hand its events over`);
  const report: MigrationReport = { copied: {} };
  for (const entry of origin.sources.catalog.list()) {
    const created = await target.sources.ensure({ id: entry.id, name: entry.name, table: entry.table });
    const before = await target.storage.countRows?.([created.table]);
    if ((before?.get(created.table) ?? 0) > 0) {
      throw new Error(`The ${config.engine.name} engine already holds events of source ${entry.name}: nothing was copied for it (empty the table first)`);
    }
    // Every field, typed or kept in an overflow column (src/storage/overflow.ts).
    // The events copied are the origin's, so they carry what the origin's carried.
    const carried = entry.schema.carried ?? [];
    const { entry: grown } = await target.sources.evolve(entry.id, withoutBase(allColumns(entry.schema)), {}, (paths) => intersect(paths, carried));
    let copied = 0;
    for await (const events of exportEvents(entry.table, entry.schema, options.batchSize ?? 10_000)) {
      await target.storage.append([{ table: grown.table, schema: grown.schema, events }]);
      copied += events.length;
    }
    report.copied[entry.name] = copied;
    options.log?.(`${entry.name}: ${copied} event(s)`);
  }
  return report;
}
