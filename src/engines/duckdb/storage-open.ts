/** Wires the DuckDB storage, its catalogue repository and the source tables together. */
import { SchemaCatalog } from '../../storage/catalog.ts';
import { SourceTables } from '../../storage/sources.ts';
import type { DuckDb } from './database.ts';
import { DuckDbStorage } from './storage.ts';
import { DuckDbCatalogRepository } from './storage-catalog.ts';

export interface DuckDbSourceStorage {
  storage: DuckDbStorage;
  sources: SourceTables;
  close(): Promise<void>;
}

/** Opens storage on `db`, loads the catalogue and reconciles it with the stored tables. */
export async function openDuckDbSourceStorage(db: DuckDb): Promise<DuckDbSourceStorage> {
  const repository = await DuckDbCatalogRepository.open(db);
  const storage = await DuckDbStorage.open(db);
  // Tables written before presence markers existed get them (src/storage/presence.ts).
  await storage.addPresenceMarkers();
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
