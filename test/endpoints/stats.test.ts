import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '../../src/endpoints/clock.ts';
import type { QueryObservation } from '../../src/endpoints/observation.ts';
import { EndpointStats } from '../../src/endpoints/stats.ts';

const ok = (durationMs: number, cache: 'HIT' | 'MISS' = 'MISS', rows = 1): QueryObservation => ({
  endpointId: 'e',
  endpointName: 'e',
  durationMs,
  cache,
  rows,
});

test('percentiles stay within one slot (19%) of the exact ones, from 0.05 ms to minutes', () => {
  const clock = new ManualClock();
  const stats = new EndpointStats(clock);
  // A skewed distribution: most calls fast, a long tail.
  const durations: number[] = [];
  for (let i = 0; i < 10_000; i++) durations.push(0.05 + (i % 100) ** 3 / 100 + (i % 997 === 0 ? 120_000 : 0));
  for (const d of durations) stats.record(ok(d));
  const sorted = [...durations].sort((a, b) => a - b);
  const exact = (p: number) => sorted[Math.ceil(p * sorted.length) - 1]!;
  const v = stats.view('e').last_hour;
  for (const [p, got] of [
    [0.5, v.duration_ms.p50!],
    [0.95, v.duration_ms.p95!],
  ] as const) {
    const want = exact(p);
    assert.ok(got >= want * 0.999 && got <= Math.max(want * 1.19, 0.1), `p${p * 100}: ${got} vs exact ${want}`);
  }
  assert.equal(v.duration_ms.max, Math.round(Math.max(...durations) * 1000) / 1000);
  assert.equal(v.calls, 10_000);
});

test('buckets are reused as time passes: a week of calls every minute leaves the windows exact', async () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 1, 0, 0, 0));
  const stats = new EndpointStats(clock);
  for (let minute = 0; minute < 7 * 24 * 60; minute++) {
    stats.record(ok(5, minute % 2 === 0 ? 'HIT' : 'MISS', 2));
    await clock.advance(60_000);
  }
  const v = stats.view('e');
  // The clock stands at the start of a fresh minute: the hour holds the 59 minutes before it.
  assert.equal(v.last_hour.calls, 59);
  // The day: the current hour (empty so far) and the 23 before it.
  assert.equal(v.last_day.calls, 23 * 60);
  assert.equal(v.last_day.rows_returned, 23 * 60 * 2);
  assert.equal(v.last_day.cache.hit_ratio, 0.5);
});

test('errors count by code and keep the last one; an unknown endpoint reads as zeros', () => {
  const clock = new ManualClock();
  const stats = new EndpointStats(clock);
  stats.record({ ...ok(3), cache: undefined, rows: 0, error: { code: 'QUERY_TIMEOUT', status: 504, message: 'slow' } });
  stats.record({ ...ok(3), cache: undefined, rows: 0, error: { code: 'INVALID_QUERY', status: 400, message: 'bad' } });
  stats.record({ ...ok(3), cache: undefined, rows: 0, error: { code: 'INVALID_QUERY', status: 400, message: 'worse' } });
  const v = stats.view('e');
  assert.deepEqual(v.last_hour.errors_by_code, { QUERY_TIMEOUT: 1, INVALID_QUERY: 2 });
  assert.equal(v.last_hour.cache.hit_ratio, null);
  assert.equal(v.last_error?.message, 'worse');
  assert.equal(stats.view('other').last_day.calls, 0);
  stats.forget('e');
  assert.equal(stats.view('e').last_hour.calls, 0);
});
