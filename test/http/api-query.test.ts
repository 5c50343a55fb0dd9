/**
 * `GET`/`POST /api/query`, Logflare's ad hoc query API, on every engine: rows over ingested
 * sources, the 1000-row cap, management scope only, the sandbox's refusals, no cache.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Row, createSource, createToken, ingest } from '../endpoints/http-support.ts';
import { engineEnv, engines } from '../support/engines.ts';
import { PUBLIC_TOKEN, type TestServer, startTestServer } from '../support/server.ts';

const SOURCE = 'adhoc.events';
const T0 = Date.UTC(2026, 10, 21, 10, 0, 0);

interface Answer {
  status: number;
  rows: Row[];
  error?: { code: string; message: string; status: number };
}

async function answer(r: Response): Promise<Answer> {
  const body = (await r.json()) as { result?: Row[]; error?: Answer['error'] };
  return { status: r.status, rows: body.result ?? [], ...(body.error ? { error: body.error } : {}) };
}

function get(s: TestServer, params: Record<string, string>, token?: string | null): Promise<Answer> {
  return s.fetch(`/api/query?${new URLSearchParams(params).toString()}`, {}, token).then(answer);
}

function post(s: TestServer, body: Row, token?: string | null): Promise<Answer> {
  return s.fetch('/api/query', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }, token).then(answer);
}

const event = (id: string, n: number, project = 'p1'): Row => ({
  id,
  timestamp: new Date(T0 + n * 1000).toISOString(),
  project,
  event_message: `message ${n}`,
});

for (const engine of engines) {
  describe(engine, () => {
    describe('/api/query', () => {
      let s: TestServer;

      before(async () => {
        s = await startTestServer(engineEnv(engine));
        await createSource(s, SOURCE);
        await ingest(s, SOURCE, [event('e1', 1), event('e2', 2), event('e3', 3, 'p2')]);
      });
      after(() => s.close());

      const ITEMS = `select id, event_message from \`${SOURCE}\` where project = 'p1' order by id`;
      const expected = [
        { id: 'e1', event_message: 'message 1' },
        { id: 'e2', event_message: 'message 2' },
      ];

      test('GET with sql or bq_sql, and POST with a JSON body, return the rows', async () => {
        for (const name of ['sql', 'bq_sql']) {
          const r = await get(s, { [name]: ITEMS });
          assert.equal(r.status, 200, JSON.stringify(r.error));
          assert.deepEqual(r.rows, expected, name);
        }
        const p = await post(s, { sql: ITEMS });
        assert.equal(p.status, 200, JSON.stringify(p.error));
        assert.deepEqual(p.rows, expected);
      });

      test('@name parameters bind from the query string or body; unbound ones are NULL', async () => {
        const sql = `select count(*) as n from \`${SOURCE}\` where project = @project`;
        assert.deepEqual((await get(s, { sql, project: 'p2' })).rows, [{ n: 1 }]);
        assert.deepEqual((await post(s, { sql, project: 'p1' })).rows, [{ n: 2 }]);
        assert.deepEqual((await get(s, { sql })).rows, [{ n: 0 }]);
      });

      test('at most 1000 rows come back', async () => {
        const r = await get(s, { sql: `select t.id, x from \`${SOURCE}\` as t cross join unnest(generate_array(1, 1200)) as x` });
        assert.equal(r.status, 200, JSON.stringify(r.error));
        assert.equal(r.rows.length, 1000);
      });

      test('only the management scope: 401 without a token, 403 for public or query tokens; no CORS', async () => {
        const params = { sql: ITEMS };
        const none = await get(s, params, null);
        assert.equal(none.status, 401);
        assert.equal(none.error?.code, 'UNAUTHORIZED');
        assert.equal((await post(s, params, null)).status, 401);
        const pub = await get(s, params, PUBLIC_TOKEN);
        assert.equal(pub.status, 403);
        assert.equal(pub.error?.code, 'FORBIDDEN');
        const queryToken = await createToken(s, ['query']);
        assert.equal((await get(s, params, queryToken)).status, 403);
        const cors = await s.fetch(`/api/query?${new URLSearchParams(params).toString()}`, { headers: { origin: 'https://example.com' } });
        assert.equal(cors.status, 200);
        assert.equal(cors.headers.get('access-control-allow-origin'), null, 'no CORS: a management API');
      });

      test('no query, or another dialect, is a 400 naming what to send', async () => {
        const missing = await get(s, {});
        assert.equal(missing.status, 400);
        assert.match(missing.error?.message ?? '', /"sql"/);
        for (const name of ['pg_sql', 'ch_sql']) {
          const r = await get(s, { [name]: 'select 1' });
          assert.equal(r.status, 400, name);
          assert.equal(r.error?.code, 'BAD_REQUEST');
          assert.match(r.error?.message ?? '', new RegExp(`"${name}"`));
        }
      });

      test('tables that are not sources, table functions and files are refused without internals', async () => {
        for (const sql of [
          'select table_name from information_schema.tables',
          'select id from no_such_source',
          "select column0 from read_csv('/etc/passwd')",
          "select x from '/etc/passwd'",
          'select x from generate_series(1, 10) as x',
          "select x from file('/etc/passwd')",
          'select name from system.tables',
        ]) {
          const r = await get(s, { sql });
          assert.ok(r.status >= 400 && r.status < 500, `${sql}: ${r.status} ${JSON.stringify(r.error)}`);
          const message = r.error?.message ?? '';
          assert.ok(message.length > 0, sql);
          assert.doesNotMatch(message, /wildcard/i, `${sql}: refused for its table, not its columns`);
          assert.doesNotMatch(message, /src\/|\.ts\b|duckdb|chdb|clickhouse|src_[0-9a-f]{8}/i, `${sql}: ${message}`);
        }
      });

      test('a parse error is a 400 naming the position', async () => {
        const r = await get(s, { sql: 'select id fro items' });
        assert.equal(r.status, 400);
        assert.equal(r.error?.code, 'PARSE_ERROR');
        assert.match(r.error?.message ?? '', /line|column/i);
      });

      test('nothing is cached: the same SQL sees rows ingested in between', async () => {
        const sql = `select count(*) as n from \`${SOURCE}\` where project = 'p3'`;
        assert.deepEqual((await get(s, { sql })).rows, [{ n: 0 }]);
        await ingest(s, SOURCE, [event('e4', 4, 'p3')]);
        assert.deepEqual((await get(s, { sql })).rows, [{ n: 1 }]);
      });
    });
  });
}
