/** The saved `usage.api-counts` query on DuckDB, with events placed relative to now. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { usageApiCountsSql } from '../../src/endpoints/supabase/index.ts';
import { DuckDbQueryRunner } from '../../src/engines/duckdb/runner.ts';
import { prepareEndpointQuery } from '../../src/sql/index.ts';
import { edgeSource } from './fixtures.ts';
import { openTestDb, type TestDb } from './support.ts';

const now = Date.now();
const min = 60_000;

function event(id: string, agoMs: number, path: string, project = 'project-a') {
  return {
    id,
    timestamp: new Date(now - agoMs).toISOString(),
    event_message: path,
    project: 'default',
    metadata: { request: { method: 'GET', path, url: `https://${project}.example.com${path}` }, response: { status_code: 200 } },
  };
}

const events = [
  event('A', 2 * min, '/rest/v1/todos'),
  event('B', 2 * min, '/storage/v1/object/a'),
  event('C', 30 * min, '/rest/v1/auth/x'),
  event('D', 30 * min, '/realtime/v1/websocket', 'project-b'),
  event('E', 90 * min, '/auth/v1/token'),
  event('F', 3 * 24 * 60 * min, '/rest/v1/old'),
  event('G', 8 * 24 * 60 * min, '/rest/v1/ancient'),
];

/** `2026-11-21T10:00:00` of the bucket start of `agoMs` before now. */
function bucket(agoMs: number, unit: 'minute' | 'hour' | 'day'): string {
  const d = new Date(now - agoMs);
  if (unit !== 'minute') d.setUTCMinutes(0);
  if (unit === 'day') d.setUTCHours(0);
  d.setUTCSeconds(0, 0);
  return d.toISOString().slice(0, 19);
}

type Counts = [rest: number, storage: number, auth: number, realtime: number];

/** Expected rows: per bucket, the counts of the given events, ascending. */
function expected(list: [agoMs: number, counts: Counts][], unit: 'minute' | 'hour' | 'day') {
  const byBucket = new Map<string, Counts>();
  for (const [ago, c] of list) {
    const key = bucket(ago, unit);
    const sum = byBucket.get(key) ?? [0, 0, 0, 0];
    byBucket.set(key, sum.map((v, i) => v + c[i]!) as Counts);
  }
  return [...byBucket.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([timestamp, c]) => ({
      timestamp,
      total_rest_requests: c[0],
      total_storage_requests: c[1],
      total_auth_requests: c[2],
      total_realtime_requests: c[3],
    }));
}

const A: [number, Counts] = [2 * min, [1, 0, 0, 0]];
const B: [number, Counts] = [2 * min, [0, 1, 0, 0]];
const C: [number, Counts] = [30 * min, [1, 0, 1, 0]];
const E: [number, Counts] = [90 * min, [0, 0, 1, 0]];
const F: [number, Counts] = [3 * 24 * 60 * min, [1, 0, 0, 0]];

let t: TestDb;
let runner: DuckDbQueryRunner;

before(async () => {
  t = await openTestDb([edgeSource], { [edgeSource.name]: events });
  runner = new DuckDbQueryRunner({ connect: () => t.db.connect() });
});

after(() => {
  runner.close();
  t.db.close();
});

async function usage(params: Record<string, string | null>, sql?: string) {
  const prepared = prepareEndpointQuery({ saved: usageApiCountsSql, caller: sql ? { sql } : undefined, catalog: t.catalog, sandboxable: true });
  return (await runner.run(prepared, params, { timeoutMs: 10_000, maxRows: 1000 })).rows;
}

describe('usage.api-counts', () => {
  test('declares interval and project', () => {
    const prepared = prepareEndpointQuery({ saved: usageApiCountsSql, catalog: t.catalog, sandboxable: true });
    assert.deepEqual([...prepared.params].sort(), ['interval', 'project']);
  });

  test('minutely: last 60 minutes in 1-minute buckets, ascending, a path counted in every matching area', async () => {
    assert.deepEqual(await usage({ interval: 'minutely', project: 'project-a' }), expected([A, B, C], 'minute'));
  });

  test('hourly: last hour in 1-hour buckets', async () => {
    assert.deepEqual(await usage({ interval: 'hourly', project: 'project-a' }), expected([A, B, C], 'hour'));
  });

  test('daily: last 7 days in 1-day buckets', async () => {
    assert.deepEqual(await usage({ interval: 'daily', project: 'project-a' }), expected([A, B, C, E, F], 'day'));
  });

  test("Studio's newer interval names are aliases", async () => {
    assert.deepEqual(await usage({ interval: '1hr', project: 'project-a' }), expected([A, B, C], 'minute'));
    assert.deepEqual(await usage({ interval: '1day', project: 'project-a' }), expected([A, B, C, E], 'hour'));
    assert.deepEqual(await usage({ interval: '7day', project: 'project-a' }), expected([A, B, C, E, F], 'day'));
    assert.deepEqual(await usage({ interval: '15min', project: 'project-a' }), expected([A, B], 'minute'));
  });

  test('the project is a regular expression on the request URL', async () => {
    const rowsB = await usage({ interval: 'minutely', project: 'project-b' });
    assert.deepEqual(rowsB, expected([[30 * min, [0, 0, 0, 1]]], 'minute'));
    const both = await usage({ interval: 'minutely', project: '^https://project-(a|b)\\.' });
    assert.deepEqual(both, expected([A, B, C, [30 * min, [0, 0, 0, 1]]], 'minute'));
  });

  test('counts are numbers, 0 rather than NULL', async () => {
    const rows = await usage({ interval: 'minutely', project: 'project-a' });
    for (const r of rows) for (const [k, v] of Object.entries(r)) if (k !== 'timestamp') assert.equal(typeof v, 'number');
  });

  test('an unknown interval or a missing parameter returns no rows', async () => {
    assert.deepEqual(await usage({ interval: 'fortnightly', project: 'project-a' }), []);
    assert.deepEqual(await usage({ project: 'project-a' }), []);
    assert.deepEqual(await usage({ interval: 'minutely' }), []);
  });

  test('callers may read the dates and chart_counts CTEs', async () => {
    const [d] = await usage({ interval: 'minutely', project: 'project-a' }, 'select start from dates');
    const start = (d as { start: number }).start;
    assert.ok(Math.abs(start / 1000 - (Date.now() - 60 * min)) < 60_000, `start ${start}`);
    const counts = await usage({ interval: 'daily', project: 'project-a' }, 'select sum(total_rest_requests) as rest, count(*) as buckets from chart_counts');
    assert.deepEqual(counts, [{ rest: 3, buckets: expected([A, B, C, E, F], 'day').length }]);
  });
});
