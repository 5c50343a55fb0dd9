import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../../src/endpoints/clock.ts';
import type { EndpointStatsView } from '../../src/endpoints/stats.ts';
import { createEndpoint, createSource, ingest, manage, query } from '../endpoints/http-support.ts';
import { PUBLIC_TOKEN, type TestServer, startTestServer } from '../support/server.ts';

const SOURCE = 'stats.events';

describe('GET /api/endpoints/:id/stats', () => {
  let s: TestServer;
  const clock = new ManualClock(Date.UTC(2026, 10, 24, 9, 0, 30));

  before(async () => {
    s = await startTestServer({}, undefined, { clock });
    await createSource(s, SOURCE);
    await ingest(
      s,
      SOURCE,
      Array.from({ length: 30 }, (_, i) => ({ event_message: `m${i}`, kind: i % 3 === 0 ? 'a' : 'b' })),
    );
  });
  after(() => s.close());

  async function stats(id: string): Promise<EndpointStatsView> {
    const r = await manage(s, 'GET', `/api/endpoints/${id}/stats`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body as EndpointStatsView;
  }

  test('private scope only; 404 for an unknown endpoint', async () => {
    const e = await createEndpoint(s, { name: 'stats.auth', query: `select count(*) as n from \`${SOURCE}\`` });
    assert.equal((await manage(s, 'GET', `/api/endpoints/${e.id}/stats`, undefined, null)).status, 401);
    assert.equal((await manage(s, 'GET', `/api/endpoints/${e.id}/stats`, undefined, PUBLIC_TOKEN)).status, 403);
    const missing = await manage(s, 'GET', '/api/endpoints/00000000-0000-4000-8000-000000000000/stats');
    assert.equal(missing.status, 404);
    const fresh = await stats(e.id);
    assert.equal(fresh.scope, 'node');
    assert.equal(fresh.last_hour.calls, 0);
    assert.equal(fresh.last_hour.duration_ms.p50, null);
    assert.equal(fresh.last_hour.cache.hit_ratio, null);
    assert.equal(fresh.last_error, null);
  });

  test('calls, errors by code, cache hit ratio, rows, durations and the last error; windows roll over', async () => {
    const e = await createEndpoint(s, {
      name: 'stats.kinds',
      query: `select event_message from \`${SOURCE}\` where kind = @kind order by event_message`,
      cache_duration_seconds: 3600,
      sandboxable: true,
    });
    // 3 successful runs (1 miss + 2 hits of 10 rows), one miss of 20 rows, two failures.
    for (let i = 0; i < 3; i++) assert.equal((await query(s, 'stats.kinds', { kind: 'a' })).status, 200);
    assert.equal((await query(s, 'stats.kinds', { kind: 'b' })).rows.length, 20);
    const parse = await query(s, 'stats.kinds', { sql: 'select from' });
    assert.equal(parse.status, 400);
    const notAllowed = await query(s, 'stats.kinds', { sql: 'select x from elsewhere' });
    assert.equal(notAllowed.status, 400);
    // An unauthorised call counts too: the operator wants to see it.
    assert.equal((await query(s, 'stats.kinds', { kind: 'a' }, { token: null })).status, 401);

    let v = await stats(e.id);
    const hour = v.last_hour;
    assert.equal(hour.calls, 7);
    assert.equal(hour.errors, 3);
    assert.deepEqual(hour.errors_by_code, {
      [parse.error!.code]: parse.error!.code === notAllowed.error!.code ? 2 : 1,
      ...(parse.error!.code === notAllowed.error!.code ? {} : { [notAllowed.error!.code]: 1 }),
      UNAUTHORIZED: 1,
    });
    assert.deepEqual(hour.cache, { hits: 2, misses: 2, hit_ratio: 0.5 });
    assert.equal(hour.rows_returned, 10 * 3 + 20);
    assert.ok(hour.duration_ms.p50! > 0 && hour.duration_ms.p50! <= hour.duration_ms.p95!, JSON.stringify(hour.duration_ms));
    assert.ok(hour.duration_ms.p95! <= hour.duration_ms.max!, JSON.stringify(hour.duration_ms));
    assert.deepEqual(v.last_day, hour);
    assert.equal(v.last_error?.code, 'UNAUTHORIZED');
    assert.equal(v.last_error?.status, 401);
    assert.equal(v.last_error?.at, new Date(clock.now()).toISOString());

    // 61 minutes later the hour is empty, the day still has everything; a new call lands in both.
    await clock.advance(61 * 60_000);
    assert.equal((await query(s, 'stats.kinds', { kind: 'b' })).status, 200);
    v = await stats(e.id);
    assert.equal(v.last_hour.calls, 1);
    assert.equal(v.last_hour.errors, 0);
    assert.equal(v.last_day.calls, 8);
    assert.equal(v.last_error?.code, 'UNAUTHORIZED', 'the last error is kept');

    // A day and a bit later nothing is left in either window.
    await clock.advance(25 * 3_600_000);
    v = await stats(e.id);
    assert.equal(v.last_hour.calls, 0);
    assert.equal(v.last_day.calls, 0);
  });

  test('many calls keep percentiles in order and memory fixed; a deleted endpoint forgets its stats', async () => {
    const e = await createEndpoint(s, { name: 'stats.many', query: `select count(*) as n from \`${SOURCE}\`` });
    await Promise.all(Array.from({ length: 40 }, () => query(s, 'stats.many')));
    const v = await stats(e.id);
    assert.equal(v.last_hour.calls, 40);
    assert.equal(v.last_hour.rows_returned, 40);
    assert.equal((await manage(s, 'DELETE', `/api/endpoints/${e.id}`)).status, 204);
    assert.equal((await manage(s, 'GET', `/api/endpoints/${e.id}/stats`)).status, 404);
    const again = await createEndpoint(s, { name: 'stats.many', query: `select count(*) as n from \`${SOURCE}\`` });
    assert.equal((await stats(again.id)).last_hour.calls, 0);
  });
});
