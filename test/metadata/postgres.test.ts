/**
 * The shared metadata store on a real PostgreSQL: the same behaviour as the embedded one, plus what
 * several nodes need — concurrent migrations, changes seen by the other node (by notification, or
 * by the version check when a notification is lost), one warmer per cached result, health.
 *
 * The groups below use databases of their own on one PostgreSQL and run side by side (each in
 * order); the two nodes check for changes every 50 ms.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { newEndpoint } from '../../src/endpoints/model.ts';
import { openPostgresMetadata } from '../../src/metadata/postgres/records.ts';
import { type MetadataChanges, type MetadataStore, openMetadataStore } from '../../src/metadata/store.ts';
import { startTestPostgres, type TestPostgres } from '../support/postgres.ts';
import { metadataStoreSuite } from './store-suite.ts';

const NOW = '2026-11-21T10:00:00.000Z';

/** Waits until `check` passes, at most `ms`; returns the time it took. */
async function within(ms: number, check: () => boolean): Promise<number> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > ms) throw new Error(`not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
  return Date.now() - start;
}

describe('metadata store: PostgreSQL', { concurrency: true }, () => {
  let server: TestPostgres;
  before(async () => {
    server = await startTestPostgres();
  });
  after(async () => {
    await server?.stop();
  });

  describe('the common behaviour', { concurrency: 1 }, () => {
    let url = '';
    before(async () => {
      url = await server.createDatabase('suite');
    });
    metadataStoreSuite(() => openPostgresMetadata({ url }));
  });

  it('lets several nodes migrate an empty database at once', async () => {
    const url = await server.createDatabase('migrate');
    const opened = await Promise.all([1, 2, 3, 4].map(() => openPostgresMetadata({ url })));
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    const r = await c.query('SELECT version FROM quarry_schema_migrations ORDER BY version');
    assert.deepEqual(
      r.rows.map((x) => x.version),
      [1, 2],
    );
    await c.end();
    for (const o of opened) await o.close();
  });

  describe('two nodes', { concurrency: 1 }, () => {
    let url = '';
    let a: MetadataStore;
    let b: MetadataStore;
    const heardByB: MetadataChanges[] = [];
    before(async () => {
      url = await server.createDatabase('nodes');
      a = await openMetadataStore(await openPostgresMetadata({ url, pollMs: 50 }));
      b = await openMetadataStore(await openPostgresMetadata({ url, pollMs: 50 }));
      b.onChange((c) => {
        heardByB.push(c);
      });
    });
    after(async () => {
      await a?.close();
      await b?.close();
    });

    it('sees an endpoint created, changed and deleted on the other node, and is told which', async () => {
      const e = await a.endpoints.insert(newEndpoint('3a9b8c7d-6e5f-4a3b-8c2d-1e0f9a8b7c6d', { name: 'shared', query: 'select 1' }, NOW));
      await within(3000, () => b.endpoints.byName('shared') !== undefined);
      assert.deepEqual(b.endpoints.get(e.id), e);
      await a.endpoints.replace({ ...e, max_limit: 9, updated_at: '2026-11-21T11:00:00.000Z' });
      await within(3000, () => b.endpoints.get(e.id)?.max_limit === 9);
      await a.endpoints.delete(e.id);
      await within(3000, () => b.endpoints.get(e.id) === undefined);
      assert.ok(heardByB.some((c) => c.endpointsChanged.includes(e.id)));
      // The name is free again on both nodes; B's create does not collide with a stale mirror.
      await b.endpoints.insert(newEndpoint('4b0c9d8e-7f6a-4b5c-9d3e-2f1a0b9c8d7e', { name: 'shared', query: 'select 2' }, NOW));
      await within(3000, () => a.endpoints.byName('shared')?.query === 'select 2');
    });

    it('refuses a revoked token on the other node', async () => {
      const { token, value } = await a.tokens.create({ description: 'short-lived', scopes: ['query'] });
      await within(3000, () => b.tokens.findByValue(value)?.id === token.id);
      await a.tokens.revoke(token.id);
      await within(3000, () => b.tokens.findByValue(value) === undefined);
    });

    it('sees a source created and removed on the other node, and is told which', async () => {
      const s = await b.sources.create({ name: 'from.b' });
      await within(3000, () => a.sources.get(s.id)?.name === 'from.b');
      await b.sources.delete(s.id);
      await within(3000, () => a.sources.get(s.id) === undefined);
    });

    it('a write whose notification is lost is still seen, by the version check', async () => {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      // Written behind the nodes' backs: no NOTIFY, only the version moves.
      await c.query('BEGIN');
      await c.query(
        `INSERT INTO quarry_sources VALUES ('5c1d0e9f-8a7b-4c6d-8e4f-3a2b1c0d9e8f', 'quiet.source', 'src_5c1d0e9f8a7b4c6d8e4f3a2b1c0d9e8f', NULL, now(), now())`,
      );
      await c.query('UPDATE quarry_metadata_version SET version = version + 1');
      await c.query('COMMIT');
      await c.end();
      const took = await within(3000, () => b.sources.byName('quiet.source') !== undefined && a.sources.byName('quiet.source') !== undefined);
      assert.ok(took >= 0);
      // Written as a build before per-source key rules wrote it: it keeps the legacy names.
      assert.equal(a.sources.byName('quiet.source')?.key_rule, 'legacy');
    });

    it('two nodes creating the same name at once: one wins, the other gets a 422, both agree', async () => {
      const results = await Promise.allSettled([a.sources.create({ name: 'race' }), b.sources.create({ name: 'race' })]);
      assert.deepEqual(results.map((r) => r.status).sort(), ['fulfilled', 'rejected']);
      const rejected = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
      assert.equal((rejected.reason as { status?: number }).status, 422);
      const winner = (results.find((r) => r.status === 'fulfilled') as PromiseFulfilledResult<{ id: string }>).value;
      await within(3000, () => a.sources.byName('race')?.id === winner.id && b.sources.byName('race')?.id === winner.id);
    });

    it('one node at a time warms a given cached result', async () => {
      assert.equal(await a.claimWarming('endpoint\u0000key', 300), true);
      assert.equal(await b.claimWarming('endpoint\u0000key', 300), false);
      assert.equal(await a.claimWarming('endpoint\u0000key', 300), true, 'the holder renews its lease');
      assert.equal(await b.claimWarming('endpoint\u0000other', 300), true, 'another result is free');
      await new Promise((r) => setTimeout(r, 400));
      assert.equal(await b.claimWarming('endpoint\u0000key', 300), true, 'an expired lease goes to whoever asks');
      assert.equal(await a.claimWarming('endpoint\u0000key', 300), false);
    });

    it('seeding under the exclusive lock runs one node at a time', async () => {
      const order: string[] = [];
      const work = (who: string) => async () => {
        order.push(`${who} in`);
        await new Promise((r) => setTimeout(r, 150));
        order.push(`${who} out`);
      };
      await Promise.all([a.exclusive(work('a')), b.exclusive(work('b'))]);
      assert.equal(order.length, 4);
      assert.equal(order[0]?.slice(0, 1), order[1]?.slice(0, 1), `interleaved: ${order.join(', ')}`);
    });
  });
});
