/** Wires the DuckDB storage, its catalogue repository and the source tables together. */
import { SchemaCatalog } from '../../storage/catalog.ts';
import { SourceTables } from '../../storage/sources.ts';
import type { DuckDb } from '../../embedded-db/database.ts';
import { DuckDbStorage, type DuckDbStorageOptions } from './storage.ts';
import { DuckDbCatalogRepository } from './storage-catalog.ts';

export interface DuckDbSourceStorage {
  storage: DuckDbStorage;
  sources: SourceTables;
  close(): Promise<void>;
}

/** Opens storage on `db`, loads the catalogue and reconciles it with the stored tables. */
export async function openDuckDbSourceStorage(db: DuckDb, options: DuckDbStorageOptions = {}): Promise<DuckDbSourceStorage> {
  const repository = await DuckDbCatalogRepository.open(db);
  const storage = await DuckDbStorage.open(db, options);
  // Tables written before presence markers existed get them (src/storage/presence.ts), once.
  const began = Date.now();
  const added = await storage.addPresenceMarkers((records, tables) =>
    console.error(
      `Adding presence markers to ${records} records in ${tables} tables written by an earlier Quarry (once; about a second per 3 million events) ...`,
    ),
  );
  if (added.length > 0) console.error(`Presence markers added in ${((Date.now() - began) / 1000).toFixed(1)} s.`);
  const sources = new SourceTables(storage, await SchemaCatalog.load(repository));
  await sources.reconcile();
  return {
    storage,
    sources,
    async close() {
      await storage.close();
      repository.close();
    },
  };
}
