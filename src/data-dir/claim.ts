/**
 * Claiming the folders a configuration names, before anything in them is opened: DATA_DIR's lock,
 * DATA_DIR's format marker, then the locks of the engine's own folders (embedded chDB's, say).
 * The service, the migration tool and the benchmark's direct reads all start here.
 */
import type { Config } from '../config.ts';
import { checkDataFormat } from './format.ts';
import { type FolderLock, lockFolder } from './lock.ts';

export interface ClaimedFolders {
  /** Drops the locks (idempotent). */
  release(): void;
}

/** Throws a StartupError (nothing changed) when a folder is held by another process, read-only, full or too new. */
export async function claimDataFolders(config: Pick<Config, 'dataDir' | 'engine'>, purpose = 'the Quarry service'): Promise<ClaimedFolders> {
  const held: FolderLock[] = [lockFolder(config.dataDir, { what: 'DATA_DIR', purpose })];
  const release = () => {
    for (const lock of held.splice(0).reverse()) lock.release();
  };
  try {
    await checkDataFormat(config.dataDir);
    for (const folder of config.engine.folders) {
      held.push(lockFolder(folder.path, { what: folder.what, purpose, shared: folder.shared, instead: folder.instead }));
    }
  } catch (e) {
    release();
    throw e;
  }
  return { release };
}
