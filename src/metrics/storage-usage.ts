/**
 * Storage usage for the metrics: bytes on disk under DATA_DIR and rows per source. Computed when
 * Prometheus scrapes, and remembered for a few seconds so that frequent or concurrent scrapes cost
 * one directory walk and one count query.
 */
import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';

export interface StorageUsage {
  /** Sum of the sizes of the files under the data directory (database, WAL, tokens...). */
  bytesOnDisk: number;
  /** Rows per source name, for the sources that exist now. */
  rowsBySource: Map<string, number>;
}

export interface StorageUsageOptions {
  /** Undefined: no files to measure (e.g. a database that lives elsewhere). */
  dataDir?: string;
  /** The current sources with their physical tables. */
  sources: () => readonly { name: string; table: string }[];
  /** Rows per physical table; absent when the engine cannot say. */
  countRows?: (tables: readonly string[]) => Promise<Map<string, number>>;
  /** How long a measurement is reused (default 5 s). */
  maxAgeMs?: number;
  now?: () => number;
}

export class StorageUsageProbe {
  readonly #options: StorageUsageOptions;
  #last: { at: number; usage: Promise<StorageUsage> } | undefined;

  constructor(options: StorageUsageOptions) {
    this.#options = options;
  }

  get(): Promise<StorageUsage> {
    const now = (this.#options.now ?? Date.now)();
    const maxAge = this.#options.maxAgeMs ?? 5000;
    if (this.#last && now - this.#last.at < maxAge) return this.#last.usage;
    const usage = this.#measure();
    const entry = { at: now, usage };
    this.#last = entry;
    // A failed measurement is not reused.
    usage.catch(() => {
      if (this.#last === entry) this.#last = undefined;
    });
    return usage;
  }

  async #measure(): Promise<StorageUsage> {
    const sources = this.#options.sources();
    const [bytesOnDisk, byTable] = await Promise.all([
      this.#options.dataDir === undefined ? Promise.resolve(0) : directorySize(this.#options.dataDir),
      this.#options.countRows ? this.#options.countRows(sources.map((s) => s.table)) : Promise.resolve(new Map<string, number>()),
    ]);
    const rowsBySource = new Map<string, number>();
    for (const s of sources) {
      const n = byTable.get(s.table);
      if (n !== undefined) rowsBySource.set(s.name, n);
    }
    return { bytesOnDisk, rowsBySource };
  }
}

/** Total size of the regular files under `dir` (symbolic links are not followed). */
async function directorySize(dir: string, depth = 0): Promise<number> {
  let total = 0;
  let entries: import('node:fs').Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const entry of entries) {
    const full = path.join(dir, entry.name);
    if (entry.isFile()) {
      // A file may vanish between the listing and the stat (a WAL after a checkpoint).
      total += await lstat(full).then(
        (s) => s.size,
        () => 0,
      );
    } else if (entry.isDirectory() && depth < 8) {
      total += await directorySize(full, depth + 1);
    }
  }
  return total;
}
