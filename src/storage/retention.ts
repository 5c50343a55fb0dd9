/**
 * Per-source retention: every `intervalMs` (default hourly, RETENTION_SWEEP_SECONDS), events older
 * than the source's `retention_days` are deleted. Sources without retention keep everything. Each
 * sweep logs one line saying what it deleted, per source. Each source's delete is one statement
 * (one transaction), so a crash mid-sweep leaves every source either before or after its delete,
 * and never touches a row inside its retention. The timer never keeps the process alive, and
 * `stop()` waits for a sweep in progress.
 */
import type { StorageEngine } from './port.ts';
import type { SchemaCatalog } from './catalog.ts';

export interface RetentionOptions {
  storage: Pick<StorageEngine, 'deleteOlderThan'>;
  catalog: Pick<SchemaCatalog, 'sourceById'>;
  /** Current sources and their retention in days (undefined or null: keep forever). */
  policies: () => Iterable<{ sourceId: string; retentionDays: number | null | undefined }>;
  intervalMs?: number;
  now?: () => number;
  log?: (message: string) => void;
}

export class RetentionTask {
  private readonly options: RetentionOptions;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;

  constructor(options: RetentionOptions) {
    this.options = options;
  }

  start(): void {
    if (this.timer !== undefined) return;
    this.timer = setInterval(() => void this.sweep().catch(() => undefined), this.options.intervalMs ?? 3_600_000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => undefined);
  }

  /** One pass over every source; returns how many events were deleted. */
  sweep(): Promise<number> {
    this.running ??= this.runSweep().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async runSweep(): Promise<number> {
    const { storage, catalog, policies, log } = this.options;
    const now = (this.options.now ?? Date.now)();
    const started = Date.now();
    let deleted = 0;
    const parts: string[] = [];
    const due = [...policies()].filter(({ retentionDays }) => retentionDays !== null && retentionDays !== undefined && retentionDays > 0);
    if (due.length > 0) log?.(`Retention sweep started over ${due.length} source(s) with a retention period.`);
    for (const { sourceId, retentionDays } of due) {
      if (retentionDays === null || retentionDays === undefined) continue;
      const entry = catalog.sourceById(sourceId);
      if (entry === undefined) continue;
      const cutoff = BigInt(Math.floor(now - retentionDays * 86_400_000)) * 1000n;
      try {
        const n = await storage.deleteOlderThan(entry.table, cutoff);
        deleted += n;
        parts.push(`${entry.name}: ${n} older than ${retentionDays} day(s)`);
      } catch (e) {
        parts.push(`${entry.name}: failed (${e instanceof Error ? e.message : String(e)})`);
      }
    }
    const detail = parts.length === 0 ? 'no source has a retention period' : parts.join('; ');
    log?.(`Retention sweep deleted ${deleted} event(s) in ${Date.now() - started} ms: ${detail}.`);
    return deleted;
  }
}
