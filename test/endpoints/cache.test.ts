import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ResultCache, requestCacheKey } from '../../src/endpoints/cache.ts';
import { ManualClock, settle } from '../../src/endpoints/clock.ts';

const SECOND = 1000;
const policy = { ttlMs: 900 * SECOND, refreshMs: 300 * SECOND };

/** A computation that counts its runs and returns "<label>#<run>". */
function counter(label = 'v') {
  let runs = 0;
  const compute = async () => {
    runs += 1;
    return { value: `${label}#${runs}`, bytes: 10 };
  };
  return { compute, runs: () => runs };
}

/** A computation whose runs wait until released, to observe work under way. */
function gated() {
  const gates: { resolve: (v: string) => void; reject: (e: Error) => void }[] = [];
  const compute = () =>
    new Promise<{ value: string; bytes: number }>((resolve, reject) => {
      gates.push({ resolve: (v) => resolve({ value: v, bytes: 10 }), reject });
    });
  return { compute, gates };
}

describe('ResultCache', () => {
  it('misses, then hits with the age since computation', async () => {
    const clock = new ManualClock();
    const cache = new ResultCache<string>({ clock });
    const c = counter();
    const first = await cache.get('e1', 'k', policy, c.compute);
    assert.deepEqual(first, { value: 'v#1', hit: false, ageMs: 0 });
    await clock.advance(42 * SECOND);
    const second = await cache.get('e1', 'k', policy, c.compute);
    assert.deepEqual(second, { value: 'v#1', hit: true, ageMs: 42 * SECOND });
    assert.equal(c.runs(), 1);
    cache.clear();
  });

  it('keeps different keys and endpoints apart', async () => {
    const cache = new ResultCache<string>({ clock: new ManualClock() });
    const c = counter();
    await cache.get('e1', 'a', policy, c.compute);
    await cache.get('e1', 'b', policy, c.compute);
    await cache.get('e2', 'a', policy, c.compute);
    assert.equal(c.runs(), 3);
    assert.equal((await cache.get('e1', 'b', policy, c.compute)).value, 'v#2');
    cache.clear();
  });

  it('expires an entry ttl after computation, not extended by hits', async () => {
    const clock = new ManualClock();
    const cache = new ResultCache<string>({ clock });
    const c = counter();
    const noRefresh = { ttlMs: 10 * SECOND, refreshMs: 0 };
    await cache.get('e', 'k', noRefresh, c.compute);
    await clock.advance(9 * SECOND);
    assert.equal((await cache.get('e', 'k', noRefresh, c.compute)).hit, true);
    await clock.advance(1 * SECOND);
    assert.equal(cache.stats().entries, 0, 'the expiry timer dropped the entry');
    const after = await cache.get('e', 'k', noRefresh, c.compute);
    assert.deepEqual(after, { value: 'v#2', hit: false, ageMs: 0 });
    cache.clear();
  });

  it('runs one computation for concurrent identical misses', async () => {
    const cache = new ResultCache<string>({ clock: new ManualClock() });
    const g = gated();
    const waiting = Array.from({ length: 5 }, () => cache.get('e', 'k', policy, g.compute));
    await settle();
    assert.equal(g.gates.length, 1);
    g.gates[0]!.resolve('shared');
    const results = await Promise.all(waiting);
    assert.ok(results.every((r) => r.value === 'shared' && r.hit === false));
    assert.equal((await cache.get('e', 'k', policy, g.compute)).hit, true);
    assert.equal(g.gates.length, 1);
    cache.clear();
  });

  it('never stores an error; every waiter sees it and the next request runs again', async () => {
    const cache = new ResultCache<string>({ clock: new ManualClock() });
    const g = gated();
    const a = cache.get('e', 'k', policy, g.compute);
    const b = cache.get('e', 'k', policy, g.compute);
    await settle();
    g.gates[0]!.reject(new Error('boom'));
    await assert.rejects(a, /boom/);
    await assert.rejects(b, /boom/);
    assert.equal(cache.stats().entries, 0);
    assert.equal(cache.stats().inFlight, 0);
    const c = counter();
    assert.deepEqual(await cache.get('e', 'k', policy, c.compute), { value: 'v#1', hit: false, ageMs: 0 });
    cache.clear();
  });

  it('refreshes in the background every refresh interval while alive, then expires', async () => {
    const clock = new ManualClock();
    const cache = new ResultCache<string>({ clock });
    const c = counter();
    await cache.get('e', 'k', policy, c.compute);
    await clock.advance(299 * SECOND);
    assert.equal(c.runs(), 1);
    await clock.advance(1 * SECOND);
    assert.equal(c.runs(), 2, 'refreshed at 300 s without any reader');
    const read = await cache.get('e', 'k', policy, c.compute);
    assert.deepEqual(read, { value: 'v#2', hit: true, ageMs: 0 });
    await clock.advance(300 * SECOND);
    assert.equal(c.runs(), 3, 'refreshed again at 600 s');
    await clock.advance(299 * SECOND);
    assert.equal((await cache.get('e', 'k', policy, c.compute)).ageMs, 299 * SECOND);
    await clock.advance(1 * SECOND);
    assert.equal(c.runs(), 3, 'no refresh at 900 s: the entry expired instead');
    assert.equal(cache.stats().entries, 0);
    assert.equal(clock.pendingTimers, 0);
  });

  it('serves the previous value while a refresh is under way', async () => {
    const clock = new ManualClock();
    const cache = new ResultCache<string>({ clock });
    const g = gated();
    const first = cache.get('e', 'k', policy, g.compute);
    await settle();
    g.gates[0]!.resolve('old');
    await first;
    await clock.advance(300 * SECOND);
    assert.equal(g.gates.length, 2, 'refresh started');
    const during = await cache.get('e', 'k', policy, g.compute);
    assert.deepEqual(during, { value: 'old', hit: true, ageMs: 300 * SECOND });
    g.gates[1]!.resolve('new');
    await settle();
    assert.equal((await cache.get('e', 'k', policy, g.compute)).value, 'new');
    cache.clear();
  });

  it('drops the entry when a refresh fails', async () => {
    const clock = new ManualClock();
    const errors: unknown[] = [];
    const cache = new ResultCache<string>({ clock, onRefreshError: (e) => errors.push(e) });
    let fail = false;
    let runs = 0;
    const compute = async () => {
      runs += 1;
      if (fail) throw new Error('backend down');
      return { value: `v#${runs}`, bytes: 1 };
    };
    await cache.get('e', 'k', policy, compute);
    fail = true;
    await clock.advance(300 * SECOND);
    assert.equal(runs, 2);
    assert.equal(cache.stats().entries, 0);
    assert.equal(errors.length, 1);
    fail = false;
    assert.deepEqual(await cache.get('e', 'k', policy, compute), { value: 'v#3', hit: false, ageMs: 0 });
    cache.clear();
  });

  it('never refreshes when the refresh interval is not shorter than the ttl', async () => {
    const clock = new ManualClock();
    const cache = new ResultCache<string>({ clock });
    const c = counter();
    await cache.get('e', 'k', { ttlMs: 60 * SECOND, refreshMs: 60 * SECOND }, c.compute);
    await clock.advance(120 * SECOND);
    assert.equal(c.runs(), 1);
    assert.equal(cache.stats().entries, 0);
  });

  it('invalidates every entry of one endpoint at once and ignores results already under way', async () => {
    const clock = new ManualClock();
    const cache = new ResultCache<string>({ clock });
    const c = counter();
    await cache.get('e1', 'a', policy, c.compute);
    await cache.get('e1', 'b', policy, c.compute);
    await cache.get('e2', 'a', policy, c.compute);
    const g = gated();
    const pending = cache.get('e1', 'c', policy, g.compute);
    await settle();
    cache.invalidateEndpoint('e1');
    assert.equal(cache.stats().entries, 1);
    g.gates[0]!.resolve('stale');
    assert.equal((await pending).value, 'stale', 'the caller that asked before the change still gets an answer');
    assert.equal(cache.stats().entries, 1, 'but it is not stored');
    assert.equal((await cache.get('e2', 'a', policy, c.compute)).hit, true);
    assert.equal((await cache.get('e1', 'a', policy, c.compute)).hit, false);
    cache.clear();
  });

  it('discards a refresh that finishes after invalidation', async () => {
    const clock = new ManualClock();
    const cache = new ResultCache<string>({ clock });
    const g = gated();
    const first = cache.get('e', 'k', policy, g.compute);
    await settle();
    g.gates[0]!.resolve('v1');
    await first;
    await clock.advance(300 * SECOND);
    cache.invalidateEndpoint('e');
    g.gates[1]!.resolve('v2');
    await settle();
    assert.equal(cache.stats().entries, 0);
  });

  it('evicts the least recently used entry beyond the entry limit', async () => {
    const cache = new ResultCache<string>({ clock: new ManualClock(), maxEntries: 2 });
    const c = counter();
    await cache.get('e', 'a', policy, c.compute);
    await cache.get('e', 'b', policy, c.compute);
    await cache.get('e', 'a', policy, c.compute); // a is now the most recent
    await cache.get('e', 'c', policy, c.compute); // evicts b
    assert.equal(cache.stats().entries, 2);
    assert.equal((await cache.get('e', 'a', policy, c.compute)).hit, true);
    assert.equal((await cache.get('e', 'c', policy, c.compute)).hit, true);
    assert.equal((await cache.get('e', 'b', policy, c.compute)).hit, false);
    cache.clear();
  });

  it('evicts by bytes and does not store a value larger than the whole budget', async () => {
    const clock = new ManualClock();
    const cache = new ResultCache<string>({ clock, maxBytes: 100 });
    const sized = (value: string, bytes: number) => async () => ({ value, bytes });
    await cache.get('e', 'a', policy, sized('a', 40));
    await cache.get('e', 'b', policy, sized('b', 40));
    await cache.get('e', 'c', policy, sized('c', 40));
    assert.deepEqual(cache.stats(), { entries: 2, bytes: 80, inFlight: 0 });
    assert.equal((await cache.get('e', 'a', policy, sized('a2', 40))).hit, false, 'a was evicted');
    const huge = await cache.get('e', 'h', policy, sized('huge', 101));
    assert.equal(huge.value, 'huge');
    assert.equal((await cache.get('e', 'h', policy, sized('huge2', 101))).hit, false);
    assert.ok(cache.stats().bytes <= 100);
    cache.clear();
    assert.equal(clock.pendingTimers, 0, 'clear cancels every timer');
  });
});

describe('requestCacheKey', () => {
  it('ignores parameter order and separates sql, lql and redaction', () => {
    const base = { params: { a: '1', b: null }, sql: null, lql: null, redact: false };
    assert.equal(requestCacheKey(base), requestCacheKey({ ...base, params: { b: null, a: '1' } }));
    const variants = [
      requestCacheKey(base),
      requestCacheKey({ ...base, params: { a: '1', b: '' } }),
      requestCacheKey({ ...base, sql: 'select 1' }),
      requestCacheKey({ ...base, lql: 'select 1' }),
      requestCacheKey({ ...base, redact: true }),
    ];
    assert.equal(new Set(variants).size, variants.length);
  });
});
