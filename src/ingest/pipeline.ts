/**
 * The ingest pipeline: requests queue their normalised events; one writer takes everything queued,
 * grows the schemas, and appends it all in one transaction (group commit), so durability costs one
 * WAL fsync per group instead of one per request. `ingest` resolves only after that commit.
 *
 * Schema growth runs beside the group commit, per source: a request whose events do not fit its
 * source's current schema stays queued while that source's schema grows (one change for every
 * request of the source waiting at that moment), after the groups already holding that source have
 * committed; meanwhile requests for other sources keep being grouped and committed. So a large or
 * slow schema change in one source (thousands of new keys, a column rewritten by a type conflict)
 * holds up only that source.
 *
 * A request is all-or-nothing. If a group's transaction fails, each of its requests is retried on
 * its own so one bad request cannot fail its neighbours. The queue is bounded: past
 * `maxQueuedEvents` a request is refused with OVERLOADED (503 + Retry-After) instead of growing
 * memory without limit.
 */
import type { StorageEngine, TableBatch } from '../storage/port.ts';
import { QuarryError, isQuarryError } from '../errors.ts';
import { diskFullError, isDiskFull } from '../storage/disk-full.ts';
import { wholeThenEach } from '../storage/whole-then-each.ts';
import type { JsonObject, StoredEvent } from '../storage/event.ts';
import { mergeTypes } from '../storage/infer.ts';
import { growSchema } from '../storage/overflow.ts';
import { defaultSchemaLimits, type SchemaLimits } from '../storage/limits.ts';
import { carriedByAll, keysOnceEach } from '../storage/carried.ts';
import type { FieldType, RecordPath } from '../storage/schema.ts';
import type { GrowthLimits, SourceRef, SourceTables } from '../storage/sources.ts';
import type { RawEvent } from './body.ts';
import { nowMicros } from './normalise.ts';
import type { PreparedRequest } from './prepare.ts';
import { fieldsOf, fitsSchema, prepareRequest, rawFor, storedShapes } from './prepare.ts';

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
  /** Its source's schema has grown for it: it is grouped even if the schema moved on since. */
  grown?: boolean;
  resolve: () => void;
  reject: (e: unknown) => void;
}

/**
 * Groups in flight at once: one inserting while the previous one commits; or, when storage batches
 * appends itself (`capabilities.concurrentAppends`), as many as it takes.
 */
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
  /** The limits on schema growth, with the typed budget only when storage keeps an overflow. */
  private readonly growth: GrowthLimits;
  private queue: Pending[] = [];
  private queued = 0;
  private writing: Promise<void> | undefined;
  private closed = false;
  private groups = 0;
  /** Settles when the last group handed to `store` is queued in storage. */
  private storing: Promise<unknown> = Promise.resolve();
  /** Sources whose schema is growing now; their requests wait in the queue meanwhile. */
  private readonly growing = new Map<string, Promise<void>>();
  /** Per source, the groups holding its events that have not finished yet. */
  private readonly appending = new Map<string, Set<Promise<void>>>();
  /** Groups handed to storage before the first is stored. */
  private readonly depth: number;
  /** True when storage batches appends itself: each group is then one request. */
  private readonly eager: boolean;
  /** Wakes `drain` when a request arrives while it waits. */
  private arrived: (() => void) | undefined;

  constructor(options: IngestOptions) {
    this.sources = options.sources;
    this.storage = options.storage;
    this.maxQueued = options.maxQueuedEvents ?? 200_000;
    this.maxGroup = options.maxGroupEvents ?? 100_000;
    this.retryAfter = options.retryAfterSeconds ?? 1;
    this.log = options.log ?? (() => undefined);
    this.limits = options.limits ?? defaultSchemaLimits;
    this.eager = options.storage.capabilities.concurrentAppends !== undefined;
    this.depth = Math.max(1, options.storage.capabilities.concurrentAppends ?? PIPELINE_DEPTH);
    this.growth = {
      maxFields: this.limits.maxFields,
      maxTypedFields: options.storage.capabilities.keepsOverflow ? this.limits.maxTypedFields : Number.POSITIVE_INFINITY,
    };
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
        new QuarryError('OVERLOADED', `Ingest is saturated (${this.queued} events waiting to be written); retry after ${this.retryAfter} s.`, {
          retryAfter: this.retryAfter,
        }),
      );
    }
    const prepared = prepareRequest(events, nowMicros(), rawText, this.limits, source.key_rule);
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ source, count: events.length, prepared, resolve, reject });
      this.queued += events.length;
      this.pump();
    });
  }

  /** Resolves once everything queued so far is written (or failed). */
  async flush(): Promise<void> {
    while (this.writing !== undefined || this.growing.size > 0) {
      await Promise.all([this.writing, ...this.growing.values()]);
    }
  }

  /** Refuses new events and waits for the queued ones. */
  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
  }

  private pump(): void {
    if (this.writing !== undefined) {
      this.arrived?.();
      return;
    }
    this.writing = this.drain().finally(() => {
      this.writing = undefined;
      if (this.queue.some((p) => !this.growing.has(p.source.id))) this.pump();
    });
  }

  /**
   * Up to `depth` groups in flight: the next group is taken and handed to storage while the
   * previous one commits (storage overlaps its INSERTs with that COMMIT). Each request still
   * settles only after the transaction holding its events committed. A request arriving while
   * fewer than `depth` groups are in flight is taken at once, not after a group finished: waiting
   * for the COMMIT left the writer idle a third of the time under steady load, since a client's
   * next request arrives while its neighbours' group is still inserting (docs/PERFORMANCE.md,
   * "Taking a request when it arrives").
   */
  private async drain(): Promise<void> {
    const inflight = new Set<Promise<void>>();
    for (;;) {
      if (inflight.size >= this.depth) {
        await Promise.race(inflight);
        continue;
      }
      const group = this.queue.length === 0 ? [] : this.takeGroup();
      if (group.length === 0) {
        if (inflight.size === 0) return;
        await Promise.race([...inflight, this.arrival()]);
        continue;
      }
      let finish: () => void = () => undefined;
      const finished = new Promise<void>((resolve) => {
        finish = resolve;
      });
      this.markAppending(group, finished);
      const stored = this.store(group);
      // Wait until this group's append is queued in storage, so the next group's schema changes
      // come after it.
      await stored.queued.catch(() => undefined);
      const done: Promise<void> = this.writeGroup(group, stored.committed).finally(() => {
        inflight.delete(done);
        finish();
      });
      inflight.add(done);
    }
  }

  /** Settles when the next request arrives (or a source's schema finished growing). */
  private arrival(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.arrived = () => {
        this.arrived = undefined;
        resolve();
      };
    });
  }

  /**
   * The next group: queued requests in order, up to `maxGroup` events (one request for eager
   * storage), leaving in the queue those
   * of sources whose schema is growing, and starting the growth of any source a request does not
   * fit.
   */
  private takeGroup(): Pending[] {
    const take: Pending[] = [];
    const rest: Pending[] = [];
    let n = 0;
    let full = false;
    for (const p of this.queue) {
      if (full || this.growing.has(p.source.id)) {
        rest.push(p);
        continue;
      }
      if (this.needsGrowth(p)) {
        this.startGrowth(p.source);
        rest.push(p);
        continue;
      }
      // Eager storage batches requests itself: each group is one request, so a failed append is
      // that request's alone (ClickHouse has no transaction that could undo a neighbour's rows).
      if (take.length > 0 && (this.eager || n + p.count > this.maxGroup)) {
        full = true;
        rest.push(p);
        continue;
      }
      take.push(p);
      n += p.count;
    }
    this.queue = rest;
    return take;
  }

  /** True when the request's source has no table yet or its events bring a schema change. */
  private needsGrowth(p: Pending): boolean {
    if (p.grown === true) return false;
    const entry = this.sources.catalog.sourceById(p.source.id);
    if (entry === undefined || entry.name !== p.source.name) return true;
    const observed = p.prepared.observed;
    if (observed === undefined || fitsSchema(observed, entry.schema.columns)) return false;
    return growSchema(entry.schema, observed, this.growth.maxTypedFields ?? Number.POSITIVE_INFINITY).changes.length > 0;
  }

  private markAppending(group: readonly Pending[], finished: Promise<void>): void {
    for (const id of new Set(group.map((p) => p.source.id))) {
      let set = this.appending.get(id);
      if (set === undefined) {
        set = new Set();
        this.appending.set(id, set);
      }
      const s = set;
      s.add(finished);
      void finished.then(() => {
        s.delete(finished);
        if (s.size === 0 && this.appending.get(id) === s) this.appending.delete(id);
      });
    }
  }

  /**
   * Grows `source`'s schema for every request of it queued now, in one change, once the groups
   * already holding its events have finished. If that change fails, each request's own change is
   * tried alone, so one bad request fails alone.
   */
  private startGrowth(source: SourceRef): void {
    const run = (async () => {
      // A group taken in the same pass may hold this source: it is marked appending, and taken out
      // of the queue, only once `takeGroup` returns, so look after that.
      await Promise.resolve();
      const requests = this.queue.filter((p) => p.source.id === source.id);
      await Promise.all([...(this.appending.get(source.id) ?? [])]);
      await wholeThenEach(
        requests,
        this.grow(source, requests),
        (p) => this.grow(source, [p]),
        (p) => {
          p.grown = true;
        },
        (p, e) => this.drop(p, e),
      );
    })().finally(() => {
      this.growing.delete(source.id);
      this.pump();
    });
    this.growing.set(source.id, run);
  }

  private async grow(source: SourceRef, requests: readonly Pending[]): Promise<void> {
    let observed: FieldType | undefined;
    for (const p of requests) {
      if (p.prepared.observed === undefined) continue;
      const t: FieldType = { kind: 'record', fields: p.prepared.observed };
      observed = observed === undefined ? t : mergeTypes(observed, t);
    }
    await this.sources.ensure(source);
    await this.sources.evolve(source.id, observed?.kind === 'record' ? observed.fields : {}, this.growth, carriedBy(requests));
  }

  /** Takes a queued request out and fails it. */
  private drop(p: Pending, e: unknown): void {
    const i = this.queue.indexOf(p);
    if (i >= 0) this.queue.splice(i, 1);
    this.fail(p, e);
  }

  private writeGroup(group: Pending[], committed: Promise<void>): Promise<void> {
    return wholeThenEach(
      group,
      committed,
      (p) => this.store([p]).committed,
      (p) => this.settle(p),
      (p, e) => this.fail(p, e),
    );
  }

  private fail(p: Pending, e: unknown): void {
    this.log(`Could not store ${p.count} event(s) for source ${p.source.name} (${p.source.id}): ${e instanceof Error ? e.message : String(e)}`);
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
      const { entry } = await this.sources.evolve(source.id, observed?.kind === 'record' ? observed.fields : {}, this.growth, carriedBy(requests));
      const columns = entry.schema.columns;
      const events: StoredEvent[] = [];
      for (const p of requests) appendStored(events, p.prepared, columns);
      batches.push({ table: entry.table, schema: entry.schema, events });
    }
    return batches;
  }
}

/** Which of the given record paths every event of `requests` carries (src/storage/carried.ts). */
function carriedBy(requests: readonly Pending[]): (paths: readonly RecordPath[]) => RecordPath[] {
  return (paths) => {
    function* shapes(): Generator<JsonObject> {
      for (const p of requests) yield* storedShapes(p.prepared);
    }
    let judged = [...paths];
    for (const p of requests) {
      const raw = p.prepared.raw;
      if (raw !== undefined) judged = keysOnceEach(raw.text, raw.count, judged);
    }
    return carriedByAll(shapes(), judged);
  };
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
