import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { DuckDb } from '../../src/embedded-db/database.ts';
import { openDuckDb } from '../../src/embedded-db/database.ts';
import type { DuckDbSourceStorage } from '../../src/engines/duckdb/storage-open.ts';
import { openDuckDbSourceStorage } from '../../src/engines/duckdb/storage-open.ts';
import type { StorageEngine, TableBatch } from '../../src/storage/port.ts';
import { QuarryError } from '../../src/errors.ts';
import { parseEvents } from '../../src/ingest/body.ts';
import { IngestService } from '../../src/ingest/pipeline.ts';
import { RetentionTask } from '../../src/storage/retention.ts';
import { edgeEvent } from './fixtures.ts';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface Stack {
  dir: string;
  db: DuckDb;
  stack: DuckDbSourceStorage;
  ingest: IngestService;
  close(): Promise<void>;
}

interface OpenOptions {
  maxQueuedEvents?: number;
  maxGroupEvents?: number;
  /** Wraps the real storage (to inject failures). */
  storage?: (real: StorageEngine) => StorageEngine;
}

async function open(dir = mkdtempSync(join(tmpdir(), 'quarry-ingest-')), options: OpenOptions = {}): Promise<Stack> {
  if (!dirs.includes(dir)) dirs.push(dir);
  const db = await openDuckDb({ path: join(dir, 'quarry.duckdb') });
  const stack = await openDuckDbSourceStorage(db);
  const { storage: wrap, ...limits } = options;
  const storage = wrap === undefined ? stack.storage : wrap(stack.storage);
  const ingest = new IngestService({ sources: stack.sources, storage, ...limits });
  return {
    dir,
    db,
    stack,
    ingest,
    async close() {
      await ingest.close();
      await stack.close();
      db.close();
    },
  };
}

let n = 0;
function source(name = `test.source.${++n}`): { id: string; name: string } {
  return { id: `00000000-0000-4000-8000-${String(++n).padStart(12, '0')}`, name };
}

/** Storage passing every call through to `real` (a test replaces the calls it watches). */
function wrapped(real: StorageEngine): StorageEngine {
  return {
    capabilities: real.capabilities,
    createSourceTable: (t) => real.createSourceTable(t),
    dropSourceTable: (t) => real.dropSourceTable(t),
    applySchemaChanges: (t, b, a, c) => real.applySchemaChanges(t, b, a, c),
    describeTable: (t) => real.describeTable(t),
    deleteOlderThan: (t, c) => real.deleteOlderThan(t, c),
    append: (batches) => real.append(batches),
  };
}

/** Resolves once `done()` holds (checked every millisecond, for at most 5 s). */
async function until(done: () => boolean): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!done()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 1));
  }
}

/** Rows of a source as plain JSON (nested values through to_json), oldest first. */
async function rows(s: Stack, name: string, columns = '*'): Promise<Record<string, unknown>[]> {
  const entry = s.stack.sources.catalog.sourceByName(name);
  assert.ok(entry, `source ${name} is in the catalogue`);
  const conn = await s.db.connect();
  try {
    const reader = await conn.runAndReadAll(`SELECT ${columns} FROM ${entry.table} ORDER BY timestamp, id`);
    return reader.getRowObjectsJson() as Record<string, unknown>[];
  } finally {
    conn.closeSync();
  }
}

describe('IngestService', () => {
  it('stores every body form with its fields typed', async () => {
    const s = await open();
    const src = source();
    await s.ingest.ingest(src, parseEvents('{"event_message":"one","timestamp":"2026-11-20T10:00:00Z","n":1}', 'json'));
    await s.ingest.ingest(src, parseEvents('[{"message":"two","timestamp":1795168800,"n":2}]', 'json'));
    await s.ingest.ingest(src, parseEvents('{"batch":[{"event_message":"three","timestamp":1795168800000000,"n":3}]}', 'json'));
    await s.ingest.ingest(
      src,
      parseEvents('{"event_message":"four","timestamp":1795168800000,"n":4}\n{"event_message":"five","timestamp":1795168800000000000,"n":5}\n', 'ndjson'),
    );
    const got = await rows(s, src.name, 'event_message, epoch_us(timestamp) AS ts, n');
    const T = '1795168800000000';
    assert.deepEqual(
      got.sort((a, b) => Number(a.n) - Number(b.n)),
      [
        { event_message: 'one', ts: T, n: '1' },
        { event_message: 'two', ts: T, n: '2' },
        { event_message: 'three', ts: T, n: '3' },
        { event_message: 'four', ts: T, n: '4' },
        { event_message: 'five', ts: T, n: '5' },
      ],
    );
    assert.deepEqual(s.stack.sources.catalog.sourceByName(src.name)?.schema.columns.n, { kind: 'scalar', type: 'int' });
    await s.close();
  });

  it('grows the schema when a nested field appears mid-stream, without touching old rows', async () => {
    const s = await open();
    const src = source();
    await s.ingest.ingest(src, [edgeEvent(0), edgeEvent(1)]);
    const grown = edgeEvent(2) as { metadata: { request: Record<string, unknown> } };
    grown.metadata.request.search = '?select=*';
    grown.metadata.request.sb = [{ jwt: { role: 'anon' } }];
    await s.ingest.ingest(src, [grown, edgeEvent(3)]);
    const got = await rows(s, src.name, 'metadata.request.search AS search, to_json(metadata.request.sb) AS sb, metadata.response.status_code AS status');
    assert.deepEqual(got, [
      { search: null, sb: null, status: '200' },
      { search: null, sb: null, status: '201' },
      { search: '?select=*', sb: '[{"jwt":{"role":"anon"}}]', status: '204' },
      { search: null, sb: null, status: '400' },
    ]);
    const request = s.stack.sources.catalog.sourceByName(src.name)?.schema.columns.metadata;
    assert.equal(request?.kind, 'record');
    await s.close();
  });

  it('keeps every event when field types conflict, and the values stay readable', async () => {
    const s = await open();
    const src = source();
    const t = (i: number) => `2026-11-20T10:00:0${i}Z`;
    await s.ingest.ingest(src, [{ timestamp: t(0), i: 1, b: true, r: { x: 1 }, l: [1, 2], m: { s: 5 } }]);
    await s.ingest.ingest(src, [{ timestamp: t(1), i: 2.5 }]); // int → float (stored 1 reads 1.0 from now on)
    await s.ingest.ingest(src, [{ timestamp: t(2), i: 'three', b: 7 }]); // float → string, bool → string
    await s.ingest.ingest(src, [{ timestamp: t(3), r: 'flat', l: { o: 1 } }]); // record → string, list → string
    await s.ingest.ingest(src, [{ timestamp: t(4), m: { s: { deep: [1] } } }]); // nested int → string
    await s.ingest.ingest(src, [{ timestamp: t(5), mixed: [1, 'a', { z: true }], empty: [], nothing: null }]);
    const got = await rows(s, src.name, 'i, b, r, l, m.s AS ms, mixed');
    assert.deepEqual(got, [
      { i: '1.0', b: 'true', r: '{"x":1}', l: '[1,2]', ms: '5', mixed: null },
      { i: '2.5', b: null, r: null, l: null, ms: null, mixed: null },
      { i: 'three', b: '7', r: null, l: null, ms: null, mixed: null },
      { i: null, b: null, r: 'flat', l: '{"o":1}', ms: null, mixed: null },
      { i: null, b: null, r: null, l: null, ms: '{"deep":[1]}', mixed: null },
      { i: null, b: null, r: null, l: null, ms: null, mixed: ['1', 'a', '{"z":true}'] },
    ]);
    const columns = s.stack.sources.catalog.sourceByName(src.name)?.schema.columns ?? {};
    assert.deepEqual(Object.keys(columns), ['id', 'timestamp', 'event_message', 'i', 'b', 'r', 'l', 'm', 'mixed']);
    await s.close();
  });

  it('groups concurrent requests into few transactions and resolves each once durable', async () => {
    const s = await open();
    const a = source();
    const b = source();
    const before = s.ingest.committedGroups;
    const requests = Array.from({ length: 40 }, (_, r) =>
      s.ingest.ingest(
        r % 2 === 0 ? a : b,
        Array.from({ length: 25 }, (_, i) => edgeEvent(r * 25 + i)),
      ),
    );
    await Promise.all(requests);
    const groups = s.ingest.committedGroups - before;
    assert.ok(groups < 10, `40 concurrent requests took ${groups} transactions`);
    assert.equal((await rows(s, a.name, 'id')).length, 500);
    assert.equal((await rows(s, b.name, 'id')).length, 500);
    assert.equal(s.ingest.queuedEvents, 0);
    await s.close();
  });

  it('hands a request arriving while a group is being written to storage before that group commits', async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const appended: string[] = [];
    const s = await open(undefined, {
      storage: (real) => ({
        ...wrapped(real),
        // The COMMIT of 'first' takes as long as the test says.
        async append(batches) {
          const message = String(batches[0]?.events[0]?.event_message);
          appended.push(message);
          const written = real.append(batches);
          if (message === 'first') await held;
          return written;
        },
      }),
    });
    const src = source();
    // The source's table exists first, so neither request below waits for a schema change.
    await s.ingest.ingest(src, [{ event_message: 'warm-up' }]);
    appended.length = 0;
    const first = s.ingest.ingest(src, [{ event_message: 'first' }]);
    await until(() => appended.length === 1);
    // Arrives while the first group's append has not finished: it does not wait for it.
    const second = s.ingest.ingest(src, [{ event_message: 'second' }]);
    await until(() => appended.length === 2);
    assert.deepEqual(appended, ['first', 'second']);
    await second;
    let firstSettled = false;
    void first.then(() => {
      firstSettled = true;
    });
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(firstSettled, false, 'the first request waits for its own COMMIT');
    release();
    await first;
    assert.deepEqual((await rows(s, src.name, 'event_message')).map((r) => r.event_message).sort(), ['first', 'second', 'warm-up']);
    await s.close();
  });

  it('refuses with OVERLOADED when the queue is full, and stores the rest', async () => {
    const s = await open(undefined, { maxQueuedEvents: 100 });
    const src = source();
    const first = s.ingest.ingest(
      src,
      Array.from({ length: 80 }, (_, i) => edgeEvent(i)),
    );
    await assert.rejects(
      s.ingest.ingest(
        src,
        Array.from({ length: 30 }, (_, i) => edgeEvent(i)),
      ),
      (e: unknown) => e instanceof QuarryError && e.code === 'OVERLOADED' && e.status === 503 && e.retryAfter === 1,
    );
    await first;
    await s.ingest.ingest(
      src,
      Array.from({ length: 30 }, (_, i) => edgeEvent(i)),
    );
    assert.equal((await rows(s, src.name, 'id')).length, 110);
    await s.close();
  });

  it('fails a request whose write fails without failing the others of its group', async () => {
    const s = await open();
    const good = source();
    const broken = source();
    await s.ingest.ingest(broken, [{ x: 1 }]);
    const table = s.stack.sources.catalog.sourceByName(broken.name)?.table ?? '';
    const conn = await s.db.connect();
    await conn.run(`DROP TABLE ${table}`);
    conn.closeSync();
    const results = await Promise.allSettled([
      s.ingest.ingest(good, [{ event_message: 'kept' }]),
      s.ingest.ingest(broken, [{ x: 2 }, { x: 3 }]),
      s.ingest.ingest(good, [{ event_message: 'kept too' }]),
    ]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', 'rejected', 'fulfilled'],
    );
    assert.deepEqual((await rows(s, good.name, 'event_message')).map((r) => r.event_message).sort(), ['kept', 'kept too']);
    await s.close();
  });

  it('fails only the bad requests of two pipelined groups failing at once, and the next group commits', async () => {
    let poisoned = 0;
    let mostPoisoned = 0;
    let release: () => void = () => undefined;
    const bothArrived = new Promise<void>((resolve) => {
      release = resolve;
    });
    const isPoisoned = (batches: readonly TableBatch[]) => batches.some((b) => b.events.some((e) => e.event_message === 'poison'));
    const s = await open(undefined, {
      maxGroupEvents: 2,
      storage: (real) => ({
        ...wrapped(real),
        // A poisoned transaction fails as a COMMIT would: after both in-flight groups reached storage.
        async append(batches) {
          if (!isPoisoned(batches)) return real.append(batches);
          poisoned++;
          mostPoisoned = Math.max(mostPoisoned, poisoned);
          if (poisoned === 2) release();
          let timer: NodeJS.Timeout | undefined;
          await Promise.race([bothArrived, new Promise((r) => (timer = setTimeout(r, 2000)))]);
          clearTimeout(timer);
          poisoned--;
          throw new Error('COMMIT failed');
        },
      }),
    });
    const src = source();
    const messages = ['first', 'poison', 'ok 1', 'ok 2', 'poison', 'next'];
    // One event each, at most two per group: [first] [poison, ok 1] [ok 2, poison] [next].
    const results = await Promise.allSettled(messages.map((m) => s.ingest.ingest(src, [{ event_message: m }])));
    assert.equal(mostPoisoned, 2, 'both failing groups were in storage at once');
    assert.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'rejected', 'fulfilled'],
    );
    assert.deepEqual((await rows(s, src.name, 'event_message')).map((r) => r.event_message).sort(), ['first', 'next', 'ok 1', 'ok 2']);
    assert.equal(s.ingest.queuedEvents, 0);
    await s.close();
  });

  it('rejects exactly the requests whose transaction fails on either writer, and the next group commits', async () => {
    const s = await open(undefined, { maxGroupEvents: 2 });
    const src = source();
    await s.ingest.ingest(src, [{ id: 'seed' }]);
    const table = s.stack.sources.catalog.sourceByName(src.name)?.table ?? '';
    const conn = await s.db.connect();
    // A repeated id now fails its transaction: at COMMIT when the other writer's transaction holding
    // it is still committing, else at INSERT.
    await conn.run(`ALTER TABLE ${table} ADD PRIMARY KEY (id)`);
    conn.closeSync();
    const ids = ['x', 'x', 'a', 'y', 'y', 'b'];
    // Groups: [x] [x, a] [y, y] [b]; the second repeats the first's id while it may be committing,
    // the third repeats an id within itself, and both are in flight together.
    // Which of two requests repeating an id wins depends on which commits first, so the test asks
    // for exactly one winner per repeated id and that the stored ids are exactly the accepted ones.
    const results = await Promise.allSettled(ids.map((id) => s.ingest.ingest(src, [{ id, event_message: id }])));
    const accepted = ids.filter((_, i) => results[i]?.status === 'fulfilled');
    assert.deepEqual([...accepted].sort(), ['a', 'b', 'x', 'y']);
    assert.deepEqual((await rows(s, src.name, 'id')).map((r) => r.id).sort(), ['a', 'b', 'seed', 'x', 'y']);
    assert.equal(s.ingest.queuedEvents, 0);
    await s.close();
  });

  it('keeps data and schema across a restart with the same data directory', async () => {
    let s = await open();
    const src = source();
    await s.ingest.ingest(src, [edgeEvent(0), { ...edgeEvent(1), extra: { flag: true } }]);
    const schema = s.stack.sources.catalog.sourceByName(src.name)?.schema;
    await s.close();
    s = await open(s.dir);
    assert.deepEqual(s.stack.sources.catalog.sourceByName(src.name)?.schema, schema);
    await s.ingest.ingest(src, [{ ...edgeEvent(2), extra: { flag: false, more: 'x' } }]);
    const got = await rows(s, src.name, 'project, extra.flag AS flag, extra.more AS more');
    assert.deepEqual(got, [
      { project: 'default', flag: null, more: null },
      { project: 'default', flag: true, more: null },
      { project: 'default', flag: false, more: 'x' },
    ]);
    await s.close();
  });

  it('reconciles the catalogue with the stored table after a crash between DDL and catalogue write', async () => {
    let s = await open();
    const src = source();
    await s.ingest.ingest(src, [{ a: 1 }]);
    const table = s.stack.sources.catalog.sourceByName(src.name)?.table ?? '';
    const conn = await s.db.connect();
    await conn.run(`ALTER TABLE ${table} ADD COLUMN b VARCHAR`);
    conn.closeSync();
    await s.close();
    s = await open(s.dir);
    assert.deepEqual(s.stack.sources.catalog.sourceByName(src.name)?.schema.columns.b, { kind: 'scalar', type: 'string' });
    await s.ingest.ingest(src, [{ a: 2, b: 'x' }]);
    assert.deepEqual(
      (await rows(s, src.name, 'a, b')).map((r) => r.b),
      [null, 'x'],
    );
    await s.close();
  });

  it('retention deletes events older than the source keeps', async () => {
    const s = await open();
    const keep = source();
    const forever = source();
    const now = Date.UTC(2026, 10, 21);
    const day = 86_400_000;
    const events = [10, 3, 1, 0].map((d) => ({ timestamp: (now - d * day - 1000) * 1000, event_message: `${d}d` }));
    await s.ingest.ingest(keep, events);
    await s.ingest.ingest(forever, events);
    const task = new RetentionTask({
      storage: s.stack.storage,
      catalog: s.stack.sources.catalog,
      policies: () => [
        { sourceId: keep.id, retentionDays: 2 },
        { sourceId: forever.id, retentionDays: null },
      ],
      now: () => now,
      log: (m) => logged.push(m),
    });
    const logged: string[] = [];
    assert.equal(await task.sweep(), 2);
    assert.equal(logged.length, 2);
    assert.equal(logged[0], 'Retention sweep started over 1 source(s) with a retention period.');
    assert.match(
      logged[1] as string,
      new RegExp(`^Retention sweep deleted 2 event\\(s\\) in \\d+ ms: ${keep.name.replaceAll('.', '\\.')}: 2 older than 2 day\\(s\\)\\.$`),
    );
    assert.deepEqual(
      (await rows(s, keep.name, 'event_message')).map((r) => r.event_message),
      ['1d', '0d'],
    );
    assert.equal((await rows(s, forever.name, 'event_message')).length, 4);
    task.start();
    await task.stop();
    await s.close();
  });
});
