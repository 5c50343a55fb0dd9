/**
 * The runner and the management service over the real query side (SQL layer, LQL, DuckDB engine,
 * storage and ingest pipeline), without HTTP, with a test clock driving the result cache.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../src/endpoints/clock.ts';
import { type EndpointsModule, openEndpoints } from '../../src/endpoints/index.ts';
import type { Endpoint } from '../../src/endpoints/model.ts';
import type { RunRequest } from '../../src/endpoints/runner.ts';
import { createSqlBackend } from '../../src/endpoints/sql-backend.ts';
import { type DuckDb, openDuckDb } from '../../src/embedded-db/database.ts';
import { DuckDbQueryRunner } from '../../src/engines/duckdb/runner.ts';
import { openDuckDbSourceStorage } from '../../src/engines/duckdb/storage-open.ts';
import { isQuarryError } from '../../src/errors.ts';
import { IngestService } from '../../src/ingest/pipeline.ts';
import { openEmbeddedMetadata } from '../../src/metadata/embedded/records.ts';
import { type MetadataStore, openMetadataStore } from '../../src/metadata/store.ts';
import type { SourceRef } from '../../src/storage/sources.ts';

const SOURCE: SourceRef = { id: randomUUID(), name: 'runner.events' };
const ITEMS = `with items as (
  select t.id, t.timestamp, t.event_message from \`runner.events\` as t where t.project = @project
)
select id, event_message from items order by timestamp desc`;

describe('EndpointRunner with the real query side', () => {
  let db: DuckDb;
  let metadata: MetadataStore;
  let ingest: IngestService;
  let engine: DuckDbQueryRunner;
  let closeStorage: () => Promise<void>;
  let endpoints: EndpointsModule;
  const clock = new ManualClock(Date.now());

  const add = (events: Record<string, unknown>[]) => ingest.ingest(SOURCE, events);
  const run = async (e: Endpoint, request: RunRequest) => {
    const out = await endpoints.runner.run(e, request);
    return { ...out, rows: (JSON.parse(out.body.json) as { result: Record<string, unknown>[] }).result };
  };

  before(async () => {
    db = await openDuckDb({ path: ':memory:' });
    const opened = await openDuckDbSourceStorage(db);
    closeStorage = opened.close;
    await opened.sources.ensure(SOURCE);
    ingest = new IngestService({ sources: opened.sources, storage: opened.storage });
    engine = new DuckDbQueryRunner({ connect: () => db.connect() });
    metadata = await openMetadataStore(await openEmbeddedMetadata({ path: ':memory:' }));
    endpoints = await openEndpoints({
      repository: metadata.endpoints,
      backend: createSqlBackend({ catalog: opened.sources.catalog, engine }),
      queryTimeoutMs: 30_000,
      clock,
      seed: false,
    });
    await add([
      { id: 'a', timestamp: '2026-11-21T10:00:01Z', project: 'p', event_message: 'from 10.0.0.1' },
      { id: 'b', timestamp: '2026-11-21T10:00:02Z', project: 'p', event_message: 'plain' },
      { id: 'c', timestamp: '2026-11-21T10:00:03Z', project: 'q', event_message: 'other' },
    ]);
  });
  after(async () => {
    endpoints.close();
    engine.close();
    await closeStorage();
    db.close();
    await metadata.close();
  });

  it('resolves by name, by id in any UUID spelling, and not at all for unknown ones', async () => {
    const e = await endpoints.service.create({ name: 'runner.items', query: ITEMS });
    assert.equal(endpoints.runner.resolve('runner.items')?.id, e.id);
    assert.equal(endpoints.runner.resolve(e.id.toUpperCase())?.id, e.id);
    assert.equal(endpoints.runner.resolve(e.id.replaceAll('-', ''))?.id, e.id);
    assert.equal(endpoints.runner.resolve('runner.nope'), undefined);
    assert.equal(endpoints.runner.resolve(randomUUID()), undefined);
  });

  it('binds parameters and caps rows at max_limit', async () => {
    const e = await endpoints.service.create({ name: 'runner.capped', query: ITEMS, max_limit: 1, sandboxable: true });
    const r = await run(e, { params: { project: 'p' } });
    assert.deepEqual(r.rows, [{ id: 'b', event_message: 'plain' }]);
    const viaSql = await run(e, { params: { project: 'p', sql: 'select id from items limit 50' } });
    assert.equal(viaSql.rows.length, 1);
    assert.deepEqual((await run(e, { params: {} })).rows, []);
  });

  it('refuses sql and lql on an endpoint that is not sandboxable', async () => {
    const e = await endpoints.service.create({ name: 'runner.closed', query: ITEMS });
    await assert.rejects(
      run(e, { params: { project: 'p', lql: 'plain' } }),
      (err: unknown) => isQuarryError(err) && err.status === 400 && err.code === 'QUERY_NOT_ALLOWED',
    );
  });

  it('caches per key with the test clock: hit, age, expiry, redaction kept apart', async () => {
    const e = await endpoints.service.create({
      name: 'runner.cached',
      query: ITEMS,
      cache_duration_seconds: 60,
      proactive_requerying_seconds: 0,
    });
    const first = await run(e, { params: { project: 'p' } });
    assert.equal(first.cache, 'MISS');
    await add([{ id: 'd', timestamp: '2026-11-21T10:00:04Z', project: 'p', event_message: 'new' }]);
    await clock.advance(30_000);
    const hit = await run(e, { params: { project: 'p', unrelated: 'x' } });
    assert.deepEqual([hit.cache, hit.ageSeconds, hit.rows.length], ['HIT', 30, 2]);

    const redacted = await run(e, { params: { project: 'p' }, redactHeader: 'true' });
    assert.equal(redacted.cache, 'MISS');
    assert.equal(redacted.rows.find((r) => r.id === 'a')?.event_message, 'from REDACTED');
    const raw = await run(e, { params: { project: 'p' }, redactHeader: 'false' });
    assert.equal(raw.cache, 'HIT');
    assert.equal(raw.rows.find((r) => r.id === 'a')?.event_message, 'from 10.0.0.1');

    await clock.advance(30_000);
    const expired = await run(e, { params: { project: 'p' } });
    assert.deepEqual([expired.cache, expired.rows.length], ['MISS', 3]);
  });

  it('warms a live entry in the background and a change to the endpoint drops it', async () => {
    const e = await endpoints.service.create({
      name: 'runner.warm',
      query: ITEMS,
      cache_duration_seconds: 900,
      proactive_requerying_seconds: 300,
    });
    const before = await run(e, { params: { project: 'q' } });
    assert.equal(before.rows.length, 1);
    await add([{ id: 'e', timestamp: '2026-11-21T10:00:05Z', project: 'q', event_message: 'late' }]);
    await clock.advance(300_000);
    // The refresh runs on the real engine: give it a moment to finish.
    for (let i = 0; i < 100 && (await run(e, { params: { project: 'q' } })).rows.length < 2; i += 1) {
      await new Promise((r) => setTimeout(r, 10));
    }
    const warmed = await run(e, { params: { project: 'q' } });
    assert.deepEqual([warmed.cache, warmed.rows.length], ['HIT', 2]);

    await add([{ id: 'f', timestamp: '2026-11-21T10:00:06Z', project: 'q', event_message: 'later' }]);
    const updated = await endpoints.service.update(e.id, { description: 'changed' });
    const after = await run(updated, { params: { project: 'q' } });
    assert.deepEqual([after.cache, after.rows.length], ['MISS', 3]);
  });

  it('validates the query at save time with a message on the query field', async () => {
    await assert.rejects(
      endpoints.service.create({ name: 'runner.bad', query: 'select * from `runner.events`' }),
      (err: unknown) => isQuarryError(err) && err.status === 422 && (err.fields?.query?.length ?? 0) > 0,
    );
    await assert.rejects(
      endpoints.service.create({ name: 'runner.bad', query: 'select id from `no.such.source`' }),
      (err: unknown) => isQuarryError(err) && err.status === 422 && /no\.such\.source/.test(err.fields?.query?.[0] ?? ''),
    );
  });
});
