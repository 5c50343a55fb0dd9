/**
 * Claiming the folders a configuration names, before anything in them is opened: DATA_DIR's lock,
 * DATA_DIR's format marker, then the embedded chDB folder's lock (when `CLICKHOUSE_URL=chdb:`).
 * The service, the migration tool and the benchmark's direct reads all start here.
 */
import { chdbPath, type Config } from '../config.ts';
import { checkDataFormat } from './format.ts';
import { type FolderLock, lockFolder } from './lock.ts';

export interface ClaimedFolders {
  /** Drops the locks (idempotent). */
  release(): void;
}

/** Throws a StartupError (nothing changed) when a folder is held by another process, read-only, full or too new. */
export async function claimDataFolders(config: Pick<Config, 'dataDir' | 'clickhouse'>, purpose = 'the Quarry service'): Promise<ClaimedFolders> {
  const held: FolderLock[] = [lockFolder(config.dataDir, { what: 'DATA_DIR', purpose })];
  const release = () => {
    for (const lock of held.splice(0).reverse()) lock.release();
  };
  try {
    await checkDataFormat(config.dataDir);
    const chdb = chdbPath(config);
    if (chdb !== undefined) {
      // chDB binds one folder per process, so nodes of one process (tests) share it; other processes are refused.
      held.push(lockFolder(chdb, { what: 'the chDB folder', purpose, shared: true, instead: 'another DATA_DIR (or CLICKHOUSE_URL=chdb:///another-folder)' }));
    }
  } catch (e) {
    release();
    throw e;
  }
  return { release };
}
