/**
 * Two service nodes (two `startServer`s, each with its own DATA_DIR for the DuckDB engine) sharing
 * one real PostgreSQL as their metadata store, driven over HTTP: they start together on an empty
 * database, and what one node's management API changes, the other serves within the bound.
 *
 * The nodes check for changes every 100 ms (test/support/nodes.ts uses 500 ms), so a change seen
 * by the version check rather than a notification arrives sooner; the staleness limit is 2 s.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { assertSeededOnce, eventually, jsonPost as json, revocationReaches } from '../support/nodes.ts';
import { startTestPostgres, type TestPostgres } from '../support/postgres.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/** METADATA_POLL_MS for these nodes. */
const POLL_MS = 100;
/** METADATA_MAX_STALENESS_MS for these nodes. */
const STALE_MS = 2000;

describe('two nodes on one PostgreSQL', () => {
  let server: TestPostgres;
  let url = '';
  let a: TestServer;
  let b: TestServer;

  before(async () => {
    server = await startTestPostgres();
    url = await server.createDatabase('quarry');
    const env = { DATABASE_URL: url, METADATA_POLL_MS: String(POLL_MS), METADATA_MAX_STALENESS_MS: String(STALE_MS) };
    [a, b] = await Promise.all([startTestServer(env), startTestServer(env)]);
  });
  after(async () => {
    await a?.close();
    await b?.close();
    await server?.stop();
  });

  it('starting together on an empty database makes one copy of the nine sources and the two endpoints', async () => {
    await assertSeededOnce(url);
    for (const node of [a, b]) {
      const listed = (await (await node.fetch('/api/sources')).json()) as { id: string }[];
      assert.equal(listed.length, 9);
      assert.deepEqual(await (await node.fetch('/health')).json(), { status: 'ok' });
    }
    const idsA = ((await (await a.fetch('/api/endpoints')).json()) as { id: string }[]).map((e) => e.id).sort();
    const idsB = ((await (await b.fetch('/api/endpoints')).json()) as { id: string }[]).map((e) => e.id).sort();
    assert.deepEqual(idsA, idsB);
  });

  it('an endpoint created, changed and deleted on A is served the same way by B', async () => {
    // Each node's engine has its own events here; B gets the rows it will serve.
    const ingest = await b.fetch(
      '/api/logs?source_name=postgres.logs',
      json([
        { event_message: 'one', project: 'p', timestamp: '2026-11-21T10:00:00Z' },
        { event_message: 'two', project: 'p', timestamp: '2026-11-21T10:00:01Z' },
      ]),
    );
    assert.equal(ingest.status, 200);
    const created = await a.fetch(
      '/api/endpoints',
      json({
        name: 'shared.messages',
        query: 'select event_message from `postgres.logs` order by timestamp',
        cache_duration_seconds: 600,
      }),
    );
    assert.equal(created.status, 201);
    const { id } = (await created.json()) as { id: string };
    const createdAfter = await eventually('created on A, served by B', async () => {
      return (await b.fetch('/api/endpoints/query/shared.messages')).status === 200;
    });
    const first = await b.fetch('/api/endpoints/query/shared.messages');
    assert.deepEqual(await first.json(), { result: [{ event_message: 'one' }, { event_message: 'two' }] });
    assert.equal(first.headers.get('x-cache'), 'HIT');

    // A changes the query: B drops its cached result and serves the new one.
    const patched = await a.fetch(`/api/endpoints/${id}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'select event_message from `postgres.logs` order by timestamp desc' }),
    });
    assert.equal(patched.status, 200);
    const changedAfter = await eventually('changed on A, served changed by B', async () => {
      const r = (await (await b.fetch('/api/endpoints/query/shared.messages')).json()) as { result: { event_message: string }[] };
      return r.result[0]?.event_message === 'two';
    });

    assert.equal((await a.fetch(`/api/endpoints/${id}`, { method: 'DELETE' })).status, 204);
    const deletedAfter = await eventually('deleted on A, gone from B', async () => {
      return (await b.fetch('/api/endpoints/query/shared.messages')).status === 404;
    });
    console.log(`# endpoint seen by B after ${createdAfter} ms, change after ${changedAfter} ms, deletion after ${deletedAfter} ms`);
  });

  it('a token revoked on A is refused by B', async () => {
    const revokedAfter = await revocationReaches(a, b);
    console.log(`# revocation seen by B after ${revokedAfter} ms`);
  });

  it('a source created on A gets its table on B and takes events there', async () => {
    const created = await a.fetch('/api/sources', json({ name: 'made.on.a' }));
    assert.equal(created.status, 201);
    await eventually('source created on A takes events on B', async () => {
      const r = await b.fetch('/api/logs?source_name=made.on.a', json({ event_message: 'hello' }));
      return r.status === 200;
    });
  });

  it('without the metadata store: health says why, tokens are refused once stale, all recovers by itself', async () => {
    const query = '/api/endpoints/query/logs.all?project=x';
    assert.equal((await a.fetch(query)).status, 200);
    await server.pause();
    try {
      const down = await a.fetch('/health');
      assert.equal(down.status, 503);
      const body = (await down.json()) as { status: string; reasons: string[] };
      assert.equal(body.status, 'unavailable');
      assert.match(body.reasons.join(' '), /metadata store/);
      assert.doesNotMatch(body.reasons.join(' '), /127\.0\.0\.1|postgres:\/\//);
      // A change cannot be stored: a 503 that says so, not an internal error.
      const write = await a.fetch('/api/sources', json({ name: 'during.outage' }));
      assert.equal(write.status, 503);
      assert.equal(((await write.json()) as { error: { code: string } }).error.code, 'UNAVAILABLE');
      // Past the staleness limit a node cannot know about revocations: it refuses, with Retry-After.
      await new Promise((r) => setTimeout(r, STALE_MS + POLL_MS));
      const refused = await b.fetch(query);
      assert.equal(refused.status, 503);
      assert.equal(((await refused.json()) as { error: { code: string } }).error.code, 'UNAVAILABLE');
      assert.ok(refused.headers.get('retry-after'));
    } finally {
      await server.start();
    }
    await eventually('health back after PostgreSQL returns', async () => (await a.fetch('/health')).status === 200);
    await eventually('tokens accepted again on both nodes', async () => (await a.fetch(query)).status === 200 && (await b.fetch(query)).status === 200);
    // Writes work again too.
    assert.equal((await a.fetch('/api/sources', json({ name: 'after.outage' }))).status, 201);
    await eventually('B sees writes after the outage', async () => {
      const list = (await (await b.fetch('/api/sources')).json()) as { name: string }[];
      return list.some((s) => s.name === 'after.outage');
    });
  });
});
