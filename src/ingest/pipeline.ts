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
import { QuarryError, isQuarryError } from '../errors.ts';
import { diskFullError, isDiskFull } from '../storage/disk-full.ts';
import type { JsonObject, StoredEvent } from '../storage/event.ts';
import { mergeTypes } from '../storage/infer.ts';
import { defaultSchemaLimits, type SchemaLimits } from '../storage/limits.ts';
import type { FieldType } from '../storage/schema.ts';
import type { SourceRef, SourceTables } from '../storage/sources.ts';
import type { RawEvent } from './body.ts';
import { nowMicros } from './normalise.ts';
import type { PreparedRequest } from './prepare.ts';
import { fieldsOf, prepareRequest, rawFor } from './prepare.ts';

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
  /** Bounds on schema growth per source (src/storage/limits.ts). */
  limits?: SchemaLimits;
}

interface Pending {
  source: SourceRef;
  count: number;
  prepared: PreparedRequest;
  resolve: () => void;
  reject: (e: unknown) => void;
}

/** Groups in flight at once: one inserting while the previous one commits. */
const PIPELINE_DEPTH = 2;

const NO_FIELDS: JsonObject = Object.freeze({}) as JsonObject;

export class IngestService {
  private readonly sources: SourceTables;
  private readonly storage: StorageEngine;
  private readonly maxQueued: number;
  private readonly maxGroup: number;
  private readonly retryAfter: number;
  private readonly log: (message: string) => void;
  private readonly limits: SchemaLimits;
  private queue: Pending[] = [];
  private queued = 0;
  private writing: Promise<void> | undefined;
  private closed = false;
  private groups = 0;
  /** Settles when the last group handed to `store` is queued in storage. */
  private storing: Promise<unknown> = Promise.resolve();

  constructor(options: IngestOptions) {
    this.sources = options.sources;
    this.storage = options.storage;
    this.maxQueued = options.maxQueuedEvents ?? 200_000;
    this.maxGroup = options.maxGroupEvents ?? 100_000;
    this.retryAfter = options.retryAfterSeconds ?? 1;
    this.log = options.log ?? (() => undefined);
    this.limits = options.limits ?? defaultSchemaLimits;
  }

  /** Events accepted but not yet committed. */
  get queuedEvents(): number {
    return this.queued;
  }

  /** Transactions committed so far (to observe group commit). */
  get committedGroups(): number {
    return this.groups;
  }

  /**
   * Stores the events of one request; resolves once they are durable. `rawText`, when given, is the
   * JSON text of an array holding exactly `events` (src/ingest/body.ts `parseBody`): storage then
   * reads fields from it instead of re-serialising each event, where that stores the same values.
   */
  ingest(source: SourceRef, events: readonly RawEvent[], rawText?: string): Promise<void> {
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
    const prepared = prepareRequest(events, nowMicros(), rawText, this.limits);
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ source, count: events.length, prepared, resolve, reject });
      this.queued += events.length;
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

  /**
   * Up to `PIPELINE_DEPTH` groups in flight: the next group is taken and handed to storage while
   * the previous one commits (storage overlaps its INSERTs with that COMMIT). Each request still
   * settles only after the transaction holding its events committed.
   */
  private async drain(): Promise<void> {
    const inflight = new Set<Promise<void>>();
    for (;;) {
      if (inflight.size >= PIPELINE_DEPTH || (this.queue.length === 0 && inflight.size > 0)) {
        await Promise.race(inflight);
        continue;
      }
      if (this.queue.length === 0) return;
      const group = this.takeGroup();
      const stored = this.store(group);
      // Wait until this group's append is queued in storage, so the next group's schema changes
      // come after it.
      await stored.queued.catch(() => undefined);
      const done: Promise<void> = this.writeGroup(group, stored.committed).finally(() => inflight.delete(done));
      inflight.add(done);
    }
  }

  private takeGroup(): Pending[] {
    let n = 0;
    let take = 0;
    while (take < this.queue.length && (take === 0 || n + (this.queue[take] as Pending).count <= this.maxGroup)) {
      n += (this.queue[take] as Pending).count;
      take++;
    }
    return this.queue.splice(0, take);
  }

  private async writeGroup(group: Pending[], committed: Promise<void>): Promise<void> {
    try {
      await committed;
      for (const p of group) this.settle(p);
      return;
    } catch (e) {
      // Alone, or on a full disk (where every retry would fail too), the error is each request's.
      if (group.length === 1 || isDiskFull(e)) {
        for (const p of group) this.fail(p, e);
        return;
      }
    }
    for (const p of group) {
      try {
        await this.store([p]).committed;
        this.settle(p);
      } catch (e) {
        this.fail(p, e);
      }
    }
  }

  private fail(p: Pending, e: unknown): void {
    this.log(
      `Could not store ${p.count} event(s) for source ${p.source.name} (${p.source.id}): ${e instanceof Error ? e.message : String(e)}`,
    );
    this.settle(p, e);
  }

  private settle(p: Pending, error?: unknown): void {
    this.queued -= p.count;
    if (error === undefined) p.resolve();
    else p.reject(!isQuarryError(error) && isDiskFull(error) ? diskFullError(error) : error);
  }

  /**
   * Grows the schemas for `group` and hands its batches to storage, one group at a time: `queued`
   * settles once the append is queued in storage (or failed before that), `committed` once the
   * transaction committed. Storage queues an append when it is called, so a later group's schema
   * changes run after this group's append.
   */
  private store(group: Pending[]): { queued: Promise<void>; committed: Promise<void> } {
    const prepared = this.storing.then(() => this.batchesFor(group));
    const committed = prepared
      .then((batches) => this.storage.append(batches))
      .then(() => {
        this.groups++;
      });
    // Handled by the caller later; marked handled now so a quick failure is not reported unhandled.
    committed.catch(() => undefined);
    const queued = prepared.then(() => undefined);
    this.storing = queued.catch(() => undefined);
    return { queued, committed };
  }

  private async batchesFor(group: Pending[]): Promise<TableBatch[]> {
    const bySource = new Map<string, { source: SourceRef; requests: Pending[]; observed: FieldType | undefined }>();
    for (const p of group) {
      let entry = bySource.get(p.source.id);
      if (entry === undefined) {
        entry = { source: p.source, requests: [], observed: undefined };
        bySource.set(p.source.id, entry);
      }
      entry.requests.push(p);
      const observed = p.prepared.observed;
      if (observed !== undefined) {
        const t: FieldType = { kind: 'record', fields: observed };
        entry.observed = entry.observed === undefined ? t : mergeTypes(entry.observed, t);
      }
    }
    const batches: TableBatch[] = [];
    for (const { source, requests, observed } of bySource.values()) {
      await this.sources.ensure(source);
      const { entry } = await this.sources.evolve(source.id, observed?.kind === 'record' ? observed.fields : {}, this.limits.maxFields);
      const columns = entry.schema.columns;
      const events: StoredEvent[] = [];
      for (const p of requests) appendStored(events, p.prepared, columns);
      batches.push({ table: entry.table, schema: entry.schema, events });
    }
    return batches;
  }
}

/** The request's events as storage takes them: read from the received text when that is exact. */
function appendStored(out: StoredEvent[], prepared: PreparedRequest, columns: Record<string, FieldType>): void {
  const { ids, timestamps, messages } = prepared;
  const raw = rawFor(prepared, columns);
  for (let i = 0; i < ids.length; i++) {
    const event: StoredEvent = {
      id: ids[i] as string,
      timestamp: timestamps[i] as bigint,
      event_message: messages[i] as string | null,
      fields: raw === undefined ? fieldsOf(prepared, i) : NO_FIELDS,
    };
    if (raw !== undefined) event.raw = raw;
    out.push(event);
  }
}
