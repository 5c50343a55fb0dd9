import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createEndpoint, createSource, ingest, query } from '../endpoints/http-support.ts';
import { PUBLIC_TOKEN, type TestServer, startTestServer } from '../support/server.ts';

const METRICS_TOKEN = 'scraper-secret-0123456789';
const SOURCE = 'metrics.events';

/** The value of the sample `name{labels}` (labels matched exactly, in any order); undefined when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const want = Object.entries(labels)
    .map(([k, v]) => `${k}="${v}"`)
    .sort()
    .join(',');
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (.+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = (m[2] ?? '')
      .split(/,(?=[a-zA-Z_]+=")/)
      .filter((x) => x !== '')
      .sort()
      .join(',');
    if (have === want) return Number(m[3]);
  }
  return undefined;
}

describe('GET /metrics', () => {
  let s: TestServer;

  before(async () => {
    s = await startTestServer({ METRICS_TOKEN, QUERY_MAX_CONCURRENCY: '1', QUERY_MAX_QUEUE: '4' }, undefined, { storageMetricsMaxAgeMs: 0 });
    await createSource(s, SOURCE);
  });
  after(() => s.close());

  async function scrape(): Promise<string> {
    const r = await s.fetch('/metrics', {}, METRICS_TOKEN);
    const text = await r.text();
    assert.equal(r.status, 200, text);
    return text;
  }

  test('needs the private scope or METRICS_TOKEN, in any token transport', async () => {
    assert.equal((await s.fetch('/metrics', {}, null)).status, 401);
    assert.equal((await s.fetch('/metrics', {}, 'not-a-token')).status, 401);
    const pub = await s.fetch('/metrics', {}, PUBLIC_TOKEN);
    assert.equal(pub.status, 403);
    assert.equal(((await pub.json()) as { error: { code: string } }).error.code, 'FORBIDDEN');
    assert.equal((await s.fetch('/metrics')).status, 200, 'private token');
    assert.equal((await s.fetch('/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } }, null)).status, 200);
    assert.equal((await s.fetch(`/metrics?api_key=${METRICS_TOKEN}`, {}, null)).status, 200);
    const r = await s.fetch('/metrics', {}, METRICS_TOKEN);
    assert.match(r.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  });

  test('every family is there, process metrics included', async () => {
    const text = await scrape();
    for (const family of [
      'quarry_ingest_requests_total',
      'quarry_ingest_events_total',
      'quarry_ingest_bytes_total',
      'quarry_query_duration_seconds',
      'quarry_query_errors_total',
      'quarry_admission_queue_depth',
      'quarry_admission_running',
      'quarry_admission_rejections_total',
      'quarry_cache_entries',
      'quarry_cache_bytes',
      'quarry_storage_bytes',
      'quarry_source_rows',
      'process_cpu_user_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_heap_size_used_bytes',
      'nodejs_eventloop_lag_seconds',
    ]) {
      assert.match(text, new RegExp(`^# TYPE ${family} `, 'm'), family);
    }
    assert.ok((sample(text, 'quarry_storage_bytes') ?? 0) > 0, 'the database file has a size');
  });

  test('ingest counters move by source and status, and rows per source follow', async () => {
    const before = await scrape();
    const ok = { source: SOURCE, status: '200' };
    const requests0 = sample(before, 'quarry_ingest_requests_total', ok) ?? 0;
    const events0 = sample(before, 'quarry_ingest_events_total', ok) ?? 0;
    const bytes0 = sample(before, 'quarry_ingest_bytes_total', ok) ?? 0;
    const rows0 = sample(before, 'quarry_source_rows', { source: SOURCE }) ?? 0;

    const events = [{ event_message: 'a' }, { event_message: 'b' }, { event_message: 'c' }];
    await ingest(s, SOURCE, events);
    const bad = await s.fetch(`/api/logs?source_name=${SOURCE}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"event_message": ',
    });
    assert.equal(bad.status, 400);
    assert.equal((await s.fetch('/api/logs?source_name=no.such.source', { method: 'POST', body: '{}' })).status, 404);

    const text = await scrape();
    assert.equal(sample(text, 'quarry_ingest_requests_total', ok), requests0 + 1);
    assert.equal(sample(text, 'quarry_ingest_events_total', ok), events0 + 3);
    assert.equal(sample(text, 'quarry_ingest_bytes_total', ok), bytes0 + Buffer.byteLength(JSON.stringify(events)));
    assert.equal(sample(text, 'quarry_ingest_requests_total', { source: SOURCE, status: '400' }), 1);
    assert.equal(sample(text, 'quarry_ingest_bytes_total', { source: SOURCE, status: '400' }), 18);
    assert.equal(sample(text, 'quarry_ingest_requests_total', { source: 'unknown', status: '404' }), 1);
    assert.equal(sample(text, 'quarry_source_rows', { source: SOURCE }), rows0 + 3);
    assert.equal(sample(text, 'quarry_source_rows', { source: 'no.such.source' }), undefined);
  });

  test('query durations by endpoint and cache outcome, errors by code, cache size', async () => {
    await createEndpoint(s, {
      name: 'metrics.cached',
      query: `select count(*) as n from \`${SOURCE}\` where event_message != @skip`,
      cache_duration_seconds: 600,
    });
    const count = (text: string, cache: string) => sample(text, 'quarry_query_duration_seconds_count', { endpoint: 'metrics.cached', cache }) ?? 0;
    const before = await scrape();
    assert.equal((await query(s, 'metrics.cached', { skip: 'x' })).headers.get('x-cache'), 'MISS');
    assert.equal((await query(s, 'metrics.cached', { skip: 'x' })).headers.get('x-cache'), 'HIT');
    assert.equal((await query(s, 'metrics.cached', { skip: 'x' })).headers.get('x-cache'), 'HIT');
    const sandboxed = await query(s, 'metrics.cached', { sql: 'select 1 as one' });
    assert.equal(sandboxed.status, 400);
    const text = await scrape();
    assert.equal(count(text, 'miss'), count(before, 'miss') + 1);
    assert.equal(count(text, 'hit'), count(before, 'hit') + 2);
    assert.equal(count(text, 'error'), count(before, 'error') + 1);
    assert.equal(sample(text, 'quarry_query_errors_total', { endpoint: 'metrics.cached', code: sandboxed.error!.code }), 1);
    assert.ok((sample(text, 'quarry_cache_entries') ?? 0) >= 1);
    assert.ok((sample(text, 'quarry_cache_bytes') ?? 0) > 0);
    const sum = sample(text, 'quarry_query_duration_seconds_sum', { endpoint: 'metrics.cached', cache: 'miss' }) ?? 0;
    assert.ok(sum > 0 && sum < 30, `${sum}`);
  });

  test('admission: the queue depth shows during a burst, refusals are counted', async () => {
    await ingest(
      s,
      'cloudflare.logs.prod',
      Array.from({ length: 4000 }, (_, i) => ({ project: 'p', event_message: `message ${i} ${'x'.repeat(i % 50)}` })),
    );
    const sql = "select count(*) as n, max(length(t.event_message)) as m from edge_logs t where regexp_contains(t.event_message, 'message [0-9]+ x')";
    let done = false;
    const burst = Promise.all(Array.from({ length: 16 }, () => query(s, 'logs.all', { project: 'p', sql }))).finally(() => {
      done = true;
    });
    let deepest = 0;
    while (!done) {
      deepest = Math.max(deepest, sample(await scrape(), 'quarry_admission_queue_depth') ?? 0);
    }
    const statuses = (await burst).map((r) => r.status);
    const refused = statuses.filter((x) => x === 503).length;
    assert.ok(refused > 0, `with 1 running and 4 waiting, some of 16 are refused: ${statuses}`);
    assert.ok(deepest > 0, 'a scrape during the burst saw queries waiting');
    const text = await scrape();
    assert.equal(sample(text, 'quarry_admission_rejections_total', { endpoint: 'logs.all' }), refused);
    assert.equal(sample(text, 'quarry_query_errors_total', { endpoint: 'logs.all', code: 'OVERLOADED' }), refused);
    assert.equal(sample(text, 'quarry_admission_queue_depth'), 0);
  });

  test('series of a deleted endpoint and a deleted source go away', async () => {
    const e = await createEndpoint(s, { name: 'metrics.gone', query: `select count(*) as n from \`${SOURCE}\`` });
    await query(s, 'metrics.gone');
    const gone = await createSource(s, 'metrics.gone.source');
    await ingest(s, 'metrics.gone.source', [{ event_message: 'x' }]);
    let text = await scrape();
    assert.equal(sample(text, 'quarry_query_duration_seconds_count', { endpoint: 'metrics.gone', cache: 'miss' }), 1);
    assert.equal(sample(text, 'quarry_ingest_requests_total', { source: 'metrics.gone.source', status: '200' }), 1);
    assert.equal((await s.fetch(`/api/endpoints/${e.id}`, { method: 'DELETE' })).status, 204);
    assert.equal((await s.fetch(`/api/sources/${gone}`, { method: 'DELETE' })).status, 204);
    text = await scrape();
    assert.doesNotMatch(text, /metrics\.gone/);
  });
});
