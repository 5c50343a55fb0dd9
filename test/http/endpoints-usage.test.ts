/**
 * usage.api-counts: request counts of one project per bucket over a window ending now. Expected
 * buckets are computed here from the events' own timestamps.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Row, ingest, iso, query, rows } from '../endpoints/http-support.ts';
import { type TestServer, startTestServer } from '../support/server.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

interface Request {
  ms: number;
  path: string;
  host?: string;
}

function edgeEvent({ ms, path, host = 'proj-abc' }: Request): Row {
  return {
    timestamp: iso(ms),
    project: 'default',
    event_message: `GET ${path}`,
    metadata: { request: { method: 'GET', path, url: `https://${host}.supabase.co${path}` } },
  };
}

/** `YYYY-MM-DDTHH:MM:SS` of the bucket start (a UTC DATETIME, as the endpoint returns it). */
function bucketStart(ms: number, size: number): string {
  return new Date(Math.floor(ms / size) * size).toISOString().slice(0, 19);
}

function expected(requests: readonly Request[], size: number, from: number) {
  const buckets = new Map<string, { rest: number; storage: number; auth: number; realtime: number }>();
  for (const r of requests) {
    if (r.ms < from || (r.host ?? 'proj-abc') !== 'proj-abc') continue;
    const key = bucketStart(r.ms, size);
    const b = buckets.get(key) ?? { rest: 0, storage: 0, auth: 0, realtime: 0 };
    if (r.path.includes('/rest')) b.rest += 1;
    if (r.path.includes('/storage')) b.storage += 1;
    if (r.path.includes('/auth')) b.auth += 1;
    if (r.path.includes('/realtime')) b.realtime += 1;
    buckets.set(key, b);
  }
  return [...buckets.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([timestamp, b]) => ({
      timestamp,
      total_rest_requests: b.rest,
      total_storage_requests: b.storage,
      total_auth_requests: b.auth,
      total_realtime_requests: b.realtime,
    }));
}

describe('usage.api-counts', () => {
  let s: TestServer;
  const now = Date.now();
  const requests: Request[] = [
    // inside the last hour (minutely and hourly windows, and the daily one)
    { ms: now - 5 * MINUTE, path: '/rest/v1/todos' },
    { ms: now - 5 * MINUTE + 10_000, path: '/rest/v1/storage_items' },
    { ms: now - 5 * MINUTE + 20_000, path: '/auth/v1/token' },
    { ms: now - 12 * MINUTE, path: '/storage/v1/object/x' },
    { ms: now - 30 * MINUTE, path: '/realtime/v1/websocket' },
    { ms: now - 30 * MINUTE, path: '/rest/v1/todos', host: 'someone-else' },
    // older than an hour: only the daily window
    { ms: now - 90 * MINUTE, path: '/rest/v1/a' },
    { ms: now - 1 * DAY, path: '/auth/v1/user' },
    { ms: now - 3 * DAY, path: '/rest/v1/b' },
    { ms: now - 3 * DAY + HOUR, path: '/storage/v1/c' },
    // older than a week: never counted
    { ms: now - 8 * DAY, path: '/rest/v1/old' },
  ];

  before(async () => {
    s = await startTestServer();
    await ingest(s, 'cloudflare.logs.prod', requests.map(edgeEvent));
  });
  after(() => s.close());

  // Windows end at the moment of the query; events sit well inside them, so `now` here will do.
  const windows: [string, number, number][] = [
    ['minutely', MINUTE, now - 60 * MINUTE],
    ['hourly', HOUR, now - HOUR],
    ['daily', DAY, now - 7 * DAY],
  ];
  for (const [interval, size, from] of windows) {
    test(`${interval}: one row per bucket with a match, ascending, counts by path`, async () => {
      const got = await rows(s, 'usage.api-counts', { project: 'proj-abc', interval });
      assert.deepEqual(got, expected(requests, size, from));
    });
  }

  test('the project is a regular expression matched against the request URL', async () => {
    const got = await rows(s, 'usage.api-counts', { project: 'someone-.+', interval: 'minutely' });
    assert.deepEqual(got, [
      {
        timestamp: bucketStart(now - 30 * MINUTE, MINUTE),
        total_rest_requests: 1,
        total_storage_requests: 0,
        total_auth_requests: 0,
        total_realtime_requests: 0,
      },
    ]);
    assert.deepEqual(await rows(s, 'usage.api-counts', { project: 'no-such-project', interval: 'daily' }), []);
  });

  test('an interval outside the known values returns no rows', async () => {
    assert.deepEqual(await rows(s, 'usage.api-counts', { project: 'proj-abc', interval: 'fortnightly' }), []);
    assert.deepEqual(await rows(s, 'usage.api-counts', { project: 'proj-abc' }), []);
  });

  test('Studio interval aliases: 1hr is the last 60 minutes by minute', async () => {
    const got = await rows(s, 'usage.api-counts', { project: 'proj-abc', interval: '1hr' });
    assert.deepEqual(got, expected(requests, MINUTE, now - 60 * MINUTE));
  });

  test('results are cached: a repeat is a HIT, and callers may read the dates and chart_counts CTEs', async () => {
    const first = await query(s, 'usage.api-counts', { project: 'proj-abc', interval: 'hourly' });
    assert.equal(first.headers.get('x-cache'), 'HIT', 'computed by the earlier hourly test');
    const [dates] = await rows(s, 'usage.api-counts', {
      project: 'proj-abc',
      interval: 'hourly',
      sql: 'select start from dates',
    });
    assert.equal(typeof dates?.start, 'number');
    assert.ok(Math.abs((dates?.start as number) / 1000 - (Date.now() - HOUR)) < 120_000);
    const chart = await rows(s, 'usage.api-counts', {
      project: 'proj-abc',
      interval: 'minutely',
      sql: 'select sum(total_rest_requests) as rest from chart_counts',
    });
    assert.deepEqual(chart, [{ rest: 2 }]);
  });
});
