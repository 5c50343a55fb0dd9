/**
 * Two service nodes on one shared event store: two `startServer`s on two ports, both on the
 * ClickHouse engine, and one real PostgreSQL as their metadata store. Every check goes over HTTP.
 * Run twice: both nodes on one embedded chDB database (the same data directory: chDB lets any
 * number of sessions in one process share it), and both nodes on one "server" over HTTP, the test
 * front over chDB (test/support/clickhouse-front.ts), the way production runs.
 *
 * One PostgreSQL serves both runs (a database each), and the nodes check for changes every 100 ms
 * (test/support/nodes.ts uses 500 ms).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createEndpoint, ingest, query, type Row } from '../endpoints/http-support.ts';
import { type ClickHouseFront, startClickHouseFront } from '../support/clickhouse-front.ts';
import { engines } from '../support/engines.ts';
import { assertSeededOnce, eventually, jsonPost as json, revocationReaches } from '../support/nodes.ts';
import { startTestPostgres, type TestPostgres } from '../support/postgres.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const skip = !engines.includes('clickhouse') && 'chdb is not installed';
/** One chDB directory for the process (chDB binds one per process); each run has its own database. */
const chdbDir = skip ? '' : await mkdtemp(path.join(tmpdir(), 'quarry-shared-chdb-'));
/** METADATA_POLL_MS for these nodes. */
const POLL_MS = 100;
/** One PostgreSQL for both runs, each on a database of its own; started once the first run needs it. */
let postgres: Promise<TestPostgres> | undefined;
const sharedPostgres = () => {
  postgres ??= startTestPostgres();
  return postgres;
};
after(async () => {
  if (postgres) await (await postgres).stop();
  if (chdbDir) await rm(chdbDir, { recursive: true, force: true });
});

for (const via of ['embedded chDB', 'HTTP'] as const) {
  describe(`two nodes on one ClickHouse (${via}) and one PostgreSQL`, { skip }, () => {
    let url = '';
    let front: ClickHouseFront | undefined;
    let a: TestServer;
    let b: TestServer;

    before(async () => {
      url = await (await sharedPostgres()).createDatabase(via === 'HTTP' ? 'quarry_http' : 'quarry_embedded');
      if (via === 'HTTP') front = await startClickHouseFront({ path: chdbDir });
      const env = {
        DATABASE_URL: url,
        METADATA_POLL_MS: String(POLL_MS),
        QUARRY_ENGINE: 'clickhouse',
        CLICKHOUSE_URL: front ? front.url : `chdb://${chdbDir}`,
        CLICKHOUSE_DATABASE: via === 'HTTP' ? 'quarry_http' : 'quarry_embedded',
      };
      [a, b] = await Promise.all([startTestServer(env), startTestServer(env)]);
    });
    after(async () => {
      await a?.close();
      await b?.close();
      await front?.close();
    });

    it('starting together on an empty database makes one copy of the nine sources and the two endpoints', async () => {
      await assertSeededOnce(url);
      assert.notEqual(a.url, b.url);
      for (const node of [a, b]) {
        assert.equal(((await (await node.fetch('/api/sources')).json()) as unknown[]).length, 9);
        assert.deepEqual(await (await node.fetch('/health')).json(), { status: 'ok' });
      }
    });

    it('ingest through both at once: every event is readable through either node', async () => {
      const endpoint = await createEndpoint(a, {
        name: 'shared.ids',
        query: "select id from `gotrue.logs.prod` where project = 'shared' order by id",
      });
      const seenAfter = await eventually('endpoint created on A runs on B', async () => {
        return (await query(b, endpoint.name)).status === 200;
      });
      const batches: Promise<void>[] = [];
      const expected: string[] = [];
      for (let i = 0; i < 12; i++) {
        const node = i % 2 === 0 ? a : b;
        const events: Row[] = Array.from({ length: 25 }, (_, k) => {
          const id = `e-${String(i).padStart(2, '0')}-${String(k).padStart(2, '0')}`;
          expected.push(id);
          return {
            id,
            project: 'shared',
            event_message: `from ${node === a ? 'a' : 'b'}`,
            timestamp: new Date(Date.UTC(2026, 10, 20, 10, i, k)).toISOString(),
          };
        });
        batches.push(ingest(node, 'gotrue.logs.prod', events));
      }
      await Promise.all(batches);
      expected.sort();
      for (const node of [a, b]) {
        const r = await query(node, endpoint.name, {}, { headers: { 'cache-control': 'no-cache' } });
        assert.equal(r.status, 200, JSON.stringify(r.error));
        assert.deepEqual(
          r.rows.map((row) => row.id),
          expected,
        );
      }
      console.log(`# endpoint created on A ran on B after ${seenAfter} ms`);
    });

    it('a field first sent to A is queryable through B at once, with its type', async () => {
      const wrapped = await createEndpoint(a, {
        name: 'shared.realtime.wrapped',
        query: 'with rt as (select id, metadata from `realtime.logs.prod`) select id from rt',
        sandboxable: true,
      });
      await eventually('endpoint created on A runs on B', async () => (await query(b, wrapped.name)).status === 200);
      // B has read the source's catalogue entry; A now grows it with fields B has never seen.
      await ingest(a, 'realtime.logs.prod', [{ id: 'r2', event_message: 'y', metadata: { second_on_a: 7, nested: { deeper_on_a: 'again' } } }]);
      const answer = await query(b, wrapped.name, {
        sql: "select id, m.second_on_a + 1 as n, d.deeper_on_a as d from rt cross join unnest(metadata) as m cross join unnest(m.nested) as d where id = 'r2'",
      });
      assert.equal(answer.status, 200, JSON.stringify(answer.error));
      assert.deepEqual(answer.rows, [{ id: 'r2', n: 8, d: 'again' }]);
      assert.equal(answer.headers.get('x-query-warnings'), null);
      // A brand-new top-level field too: a name B does not know is not an error.
      await ingest(a, 'realtime.logs.prod', [{ id: 'r3', event_message: 'z', top_level_on_a: 'here' }]);
      const top = await createEndpoint(a, {
        name: 'shared.realtime.top',
        query: 'with rt as (select id, top_level_on_a from `realtime.logs.prod`) select id from rt',
        sandboxable: true,
      });
      await eventually('endpoint with the new top-level field runs on B', async () => (await query(b, top.name)).status === 200);
      await ingest(a, 'realtime.logs.prod', [{ id: 'r4', event_message: 'w', another_top_on_a: 'there' }]);
      const topAnswer = await query(b, wrapped.name, { sql: "select id from rt where id = 'r4'" });
      assert.equal(topAnswer.status, 200);
    });

    it('two nodes adding the same new field at once is not an error, and both values are kept', async () => {
      const sends: Promise<Response>[] = [];
      for (let i = 0; i < 6; i++) {
        const node = i % 2 === 0 ? a : b;
        // The same new field, once as a number and once as text: the conflict rule widens it.
        const value = i % 2 === 0 ? i : `t${i}`;
        sends.push(node.fetch('/api/logs?source_name=storage.logs.prod.2', json([{ id: `s${i}`, event_message: 'race', metadata: { raced: value } }])));
      }
      const statuses = await Promise.all(sends.map(async (p) => (await p).status));
      assert.deepEqual(statuses, [200, 200, 200, 200, 200, 200]);
      const endpoint = await createEndpoint(b, {
        name: 'shared.storage',
        query: 'with st as (select id, event_message, metadata from `storage.logs.prod.2`) select id from st',
        sandboxable: true,
      });
      await eventually('endpoint created on B runs on A', async () => (await query(a, endpoint.name)).status === 200);
      for (const node of [a, b]) {
        const r = await query(node, endpoint.name, {
          sql: "select id, m.raced as raced from st cross join unnest(metadata) as m where event_message = 'race' order by id",
        });
        assert.equal(r.status, 200, JSON.stringify(r.error));
        assert.deepEqual(r.rows, [
          { id: 's0', raced: '0' },
          { id: 's1', raced: 't1' },
          { id: 's2', raced: '2' },
          { id: 's3', raced: 't3' },
          { id: 's4', raced: '4' },
          { id: 's5', raced: 't5' },
        ]);
      }
    });

    it('a record every event carried, then an event without it through B: both nodes drop it at once', async () => {
      const endpoint = await createEndpoint(a, {
        name: 'shared.postgrest.records',
        query: 'with pr as (select id, metadata from `postgREST.logs.prod`) select id from pr',
        sandboxable: true,
      });
      await eventually('endpoint created on A runs on B', async () => (await query(b, endpoint.name)).status === 200);
      const carried = Array.from({ length: 20 }, (_, i) => ({
        id: `c${i}`,
        event_message: 'carried',
        metadata: { request: { method: 'GET' }, response: { status_code: 200 } },
      }));
      await ingest(a, 'postgREST.logs.prod', carried);
      const both = 'select count(*) as n from pr cross join unnest(metadata) as m cross join unnest(m.request) as r cross join unnest(m.response) as s';
      const response = 'select count(*) as n from pr cross join unnest(metadata) as m cross join unnest(m.response) as s';
      const fresh = { headers: { 'cache-control': 'no-cache' } };
      const counts = async (node: TestServer) => {
        const [x, y] = [await query(node, endpoint.name, { sql: both }, fresh), await query(node, endpoint.name, { sql: response }, fresh)];
        assert.equal(x.status, 200, JSON.stringify(x.error));
        return [Number(x.rows[0]?.n), Number(y.rows[0]?.n)];
      };
      for (const node of [a, b]) assert.deepEqual(await counts(node), [20, 20]);
      // B stores an event without `request`: A, whose catalogue said every event carried it, must
      // not count it under UNNEST(m.request) from the moment B acknowledged it.
      await ingest(b, 'postgREST.logs.prod', [{ id: 'c-none', event_message: 'no request', metadata: { response: { status_code: 500 } } }]);
      for (const node of [a, b]) assert.deepEqual(await counts(node), [20, 21]);
    });

    it('a token revoked on A is refused by B within the bound', async () => {
      const revokedAfter = await revocationReaches(a, b);
      console.log(`# revocation seen by B after ${revokedAfter} ms`);
    });
  });
}
