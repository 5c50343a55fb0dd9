/**
 * The ingest pipeline: requests queue their normalised events; one writer takes everything queued,
 * grows the schemas, and appends it all in one transaction (group commit), so durability costs one
 * WAL fsync per group instead of one per request. `ingest` resolves only after that commit.
 *
 * A request is all-or-nothing. If a group's transaction fails, each of its requests is retried on
 * its own so one bad request cannot fail its neighbours. The queue is bounded: past
 * `maxQueuedEvents` a request is refused with OVERLOADED (503 + Retry-After) instead of growing
 * memory without limit.
 */
import type { StorageEngine, TableBatch } from '../engines/storage-engine.ts';
import { QuarryError } from '../errors.ts';
import type { StoredEvent } from '../storage/event.ts';
import { findName, inferFields, mergeTypes } from '../storage/infer.ts';
import type { FieldType } from '../storage/schema.ts';
import type { SourceRef, SourceTables } from '../storage/sources.ts';
import type { RawEvent } from './body.ts';
import { normaliseEvent, nowMicros } from './normalise.ts';

export interface IngestOptions {
  sources: SourceTables;
  storage: StorageEngine;
  /** Events waiting or being written before new requests are refused (default 200 000). */
  maxQueuedEvents?: number;
  /** Events per transaction; a larger group is split (default 100 000). */
  maxGroupEvents?: number;
  /** Sent as Retry-After when refusing (default 1 s). */
  retryAfterSeconds?: number;
  /** Called with a person-readable line when a write fails. */
  log?: (message: string) => void;
}

interface Pending {
  source: SourceRef;
  events: StoredEvent[];
  observed: Record<string, FieldType> | undefined;
  resolve: () => void;
  reject: (e: unknown) => void;
}

export class IngestService {
  private readonly sources: SourceTables;
  private readonly storage: StorageEngine;
  private readonly maxQueued: number;
  private readonly maxGroup: number;
  private readonly retryAfter: number;
  private readonly log: (message: string) => void;
  private queue: Pending[] = [];
  private queued = 0;
  private writing: Promise<void> | undefined;
  private closed = false;
  private groups = 0;

  constructor(options: IngestOptions) {
    this.sources = options.sources;
    this.storage = options.storage;
    this.maxQueued = options.maxQueuedEvents ?? 200_000;
    this.maxGroup = options.maxGroupEvents ?? 100_000;
    this.retryAfter = options.retryAfterSeconds ?? 1;
    this.log = options.log ?? (() => undefined);
  }

  /** Events accepted but not yet committed. */
  get queuedEvents(): number {
    return this.queued;
  }

  /** Transactions committed so far (to observe group commit). */
  get committedGroups(): number {
    return this.groups;
  }

  /** Stores the events of one request; resolves once they are durable. */
  ingest(source: SourceRef, events: readonly RawEvent[]): Promise<void> {
    if (this.closed) {
      return Promise.reject(
        new QuarryError('OVERLOADED', 'The service is shutting down and accepts no more events; retry shortly.', {
          retryAfter: this.retryAfter,
        }),
      );
    }
    if (events.length === 0) return Promise.resolve();
    // A request larger than the whole queue is still taken when the queue is empty.
    if (this.queued > 0 && this.queued + events.length > this.maxQueued) {
      return Promise.reject(
        new QuarryError(
          'OVERLOADED',
          `Ingest is saturated (${this.queued} events waiting to be written); retry after ${this.retryAfter} s.`,
          { retryAfter: this.retryAfter },
        ),
      );
    }
    const now = nowMicros();
    const normalised = events.map((e) => normaliseEvent(e, now));
    let observed: Record<string, FieldType> | undefined;
    for (const e of normalised) observed = inferFields(e.fields, observed);
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ source, events: normalised, observed, resolve, reject });
      this.queued += normalised.length;
      this.pump();
    });
  }

  /** Resolves once everything queued so far is written (or failed). */
  async flush(): Promise<void> {
    while (this.writing !== undefined) await this.writing;
  }

  /** Refuses new events and waits for the queued ones. */
  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
  }

  private pump(): void {
    if (this.writing !== undefined) return;
    this.writing = this.drain().finally(() => {
      this.writing = undefined;
      if (this.queue.length > 0) this.pump();
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const group = this.takeGroup();
      await this.writeGroup(group);
    }
  }

  private takeGroup(): Pending[] {
    let n = 0;
    let take = 0;
    while (take < this.queue.length && (take === 0 || n + (this.queue[take] as Pending).events.length <= this.maxGroup)) {
      n += (this.queue[take] as Pending).events.length;
      take++;
    }
    return this.queue.splice(0, take);
  }

  private async writeGroup(group: Pending[]): Promise<void> {
    try {
      await this.commit(group);
      for (const p of group) this.settle(p);
      return;
    } catch (e) {
      if (group.length === 1) {
        this.fail(group[0] as Pending, e);
        return;
      }
    }
    for (const p of group) {
      try {
        await this.commit([p]);
        this.settle(p);
      } catch (e) {
        this.fail(p, e);
      }
    }
  }

  private fail(p: Pending, e: unknown): void {
    this.log(
      `Could not store ${p.events.length} event(s) for source ${p.source.name} (${p.source.id}): ${e instanceof Error ? e.message : String(e)}`,
    );
    this.settle(p, e);
  }

  private settle(p: Pending, error?: unknown): void {
    this.queued -= p.events.length;
    if (error === undefined) p.resolve();
    else p.reject(error);
  }

  private async commit(group: Pending[]): Promise<void> {
    const bySource = new Map<string, { source: SourceRef; events: StoredEvent[]; observed: Record<string, FieldType> }>();
    for (const p of group) {
      let entry = bySource.get(p.source.id);
      if (entry === undefined) {
        entry = { source: p.source, events: [], observed: {} };
        bySource.set(p.source.id, entry);
      }
      for (const e of p.events) entry.events.push(e);
      if (p.observed !== undefined) {
        for (const [k, t] of Object.entries(p.observed)) {
          const name = findName(entry.observed, k) ?? k;
          const known = entry.observed[name];
          entry.observed[name] = known === undefined ? t : mergeTypes(known, t);
        }
      }
    }
    const batches: TableBatch[] = [];
    for (const { source, events, observed } of bySource.values()) {
      await this.sources.ensure(source);
      const { entry } = await this.sources.evolve(source.id, observed);
      batches.push({ table: entry.table, schema: entry.schema, events });
    }
    await this.storage.append(batches);
    this.groups++;
  }
}
