/**
 * Background refresh with several nodes: two result caches (two nodes) ask the shared PostgreSQL
 * store before each refresh, and each round exactly one of them recomputes a given result.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ResultCache } from '../../src/endpoints/cache.ts';
import { ManualClock } from '../../src/endpoints/clock.ts';
import { openPostgresMetadata } from '../../src/metadata/postgres/records.ts';
import type { MetadataRecords } from '../../src/metadata/records.ts';
import { type TestPostgres, startTestPostgres } from '../support/postgres.ts';

const SECOND = 1000;
const policy = { ttlMs: 900 * SECOND, refreshMs: 300 * SECOND };

async function until(check: () => boolean, ms = 3000): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > ms) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('cache warming across nodes (PostgreSQL lease)', () => {
  let server: TestPostgres;
  let a: MetadataRecords;
  let b: MetadataRecords;
  before(async () => {
    server = await startTestPostgres();
    const url = await server.createDatabase('warming');
    a = await openPostgresMetadata({ url });
    b = await openPostgresMetadata({ url });
  });
  after(async () => {
    await a?.close();
    await b?.close();
    await server?.stop();
  });

  it('refreshes a given result on one node per round, the same node while it holds the lease', async () => {
    const clock = new ManualClock();
    const runs = { a: 0, b: 0 };
    const node = (records: MetadataRecords) => new ResultCache<string>({ clock, claimWarming: (key, holdMs) => records.claimWarming(key, holdMs) });
    const caches = { a: node(a), b: node(b) };
    const compute = (name: 'a' | 'b') => async () => {
      runs[name] += 1;
      return { value: `${name}#${runs[name]}`, bytes: 10 };
    };
    await caches.a.get('endpoint', 'k', policy, compute('a'));
    await caches.b.get('endpoint', 'k', policy, compute('b'));
    assert.deepEqual(runs, { a: 1, b: 1 });

    await clock.advance(300 * SECOND);
    await until(() => runs.a + runs.b === 3);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(runs.a + runs.b, 3, `both nodes refreshed: ${JSON.stringify(runs)}`);
    const warmer = runs.a === 2 ? 'a' : 'b';

    await clock.advance(300 * SECOND);
    await until(() => runs.a + runs.b === 4);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(runs[warmer], 3, `the lease holder keeps warming: ${JSON.stringify(runs)}`);
    assert.equal(runs.a + runs.b, 4);
    caches.a.clear();
    caches.b.clear();
  });
});
