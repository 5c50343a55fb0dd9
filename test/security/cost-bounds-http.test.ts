/**
 * Issue 20's cost and value-size attacks over HTTP, against the real server on loopback, on every
 * engine: each is refused with a 400 before the engine sees it (or by the guard printed in the
 * statement), and legitimate large-but-fine queries still run. Times and the process's RSS are
 * printed as figures, not asserted.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ingest, type Row } from '../endpoints/http-support.ts';
import { engineEnv, engines } from '../support/engines.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { growthBombs, joinChain, queryBombs, unionChain } from './query-bombs.ts';

interface Answer {
  status: number;
  ms: number;
  json: { result?: Row[]; error?: { message: string; code: string; status: number } };
}

const mib = (n: number) => `${(n / 2 ** 20).toFixed(0)} MiB`;

for (const engine of engines) {
  describe(`${engine}: cost and value-size bounds over HTTP (logs.all)`, () => {
    let s: TestServer;

    async function ask(sql: string): Promise<Answer> {
      const started = performance.now();
      const r = await s.fetch('/api/endpoints/query/logs.all', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ sql, project: 'attacker' }),
      });
      const json = (await r.json()) as Answer['json'];
      return { status: r.status, ms: performance.now() - started, json };
    }

    before(async () => {
      s = await startTestServer(engineEnv(engine));
      const now = Date.now();
      const events = [0, 1, 2].map((i) => ({
        id: `own-${i}`,
        timestamp: new Date(now - 60_000 + i).toISOString(),
        event_message: `m${i}`,
        project: 'attacker',
      }));
      await ingest(s, 'cloudflare.logs.prod', events);
    });
    after(async () => {
      await s?.close();
    });

    for (const bomb of [...queryBombs, ...growthBombs]) {
      test(`${bomb.name} (${bomb.sql.length} bytes) → 400 ${bomb.code}`, async () => {
        const rssBefore = process.memoryUsage().rss;
        const a = await ask(bomb.sql);
        const rssAfter = process.memoryUsage().rss;
        console.log(`# ${engine} ${bomb.name}: ${a.status} ${a.json.error?.code ?? ''} in ${a.ms.toFixed(0)} ms, RSS ${mib(rssBefore)} → ${mib(rssAfter)}`);
        assert.equal(a.status, 400, JSON.stringify(a.json));
        assert.equal(a.json.error?.code, bomb.code);
        assert.match(a.json.error?.message ?? '', bomb.message);
      });
    }

    test('the server answers at once afterwards', async () => {
      const a = await ask('select count(*) as n from edge_logs');
      console.log(`# ${engine} probe after the attacks: ${a.status} in ${a.ms.toFixed(0)} ms`);
      assert.equal(a.status, 200);
      assert.deepEqual(a.json.result, [{ n: 3 }]);
    });

    test('legitimate large-but-fine queries still run', async () => {
      const fine: [string, (rows: Row[]) => void][] = [
        [joinChain(3), (rows) => assert.deepEqual(rows, [{ n: 3 }])],
        [unionChain(6), (rows) => assert.deepEqual(rows, [{ n: 3 * 64 }])],
        ['select length(repeat(id, 800)) as n from edge_logs order by n limit 1', (rows) => assert.deepEqual(rows, [{ n: 4_000 }])],
        ['select length(lpad(id, 4000)) as n from edge_logs limit 1', (rows) => assert.deepEqual(rows, [{ n: 4_000 }])],
        ["select length(lpad('x', 1000000)) as n", (rows) => assert.deepEqual(rows, [{ n: 1_000_000 }])],
        [
          'select length(concat(event_message, event_message, event_message, event_message)) as n from edge_logs order by n limit 1',
          (rows) => assert.deepEqual(rows, [{ n: 8 }]),
        ],
        ["select format('%20.3f|%08d', 1.5, 42) as f from edge_logs limit 1", (rows) => assert.deepEqual(rows, [{ f: '               1.500|00000042' }])],
        ['select length(repeat(id, length(id) * 100)) as n from edge_logs limit 1', (rows) => assert.deepEqual(rows, [{ n: 2_500 }])],
        [
          `select 'edge' as s, count(*) as n from edge_logs union all select 'pg', count(*) from postgres_logs union all select 'fe', count(*) from function_edge_logs
           union all select 'fl', count(*) from function_logs union all select 'au', count(*) from auth_logs union all select 'rt', count(*) from realtime_logs
           union all select 'st', count(*) from storage_logs union all select 'pr', count(*) from postgrest_logs union all select 'pb', count(*) from pgbouncer_logs`,
          (rows) => assert.equal(rows.length, 9),
        ],
      ];
      for (const [sql, check] of fine) {
        const a = await ask(sql);
        console.log(`# ${engine} fine (${sql.length} bytes): ${a.status} in ${a.ms.toFixed(0)} ms`);
        assert.equal(a.status, 200, `${sql}: ${JSON.stringify(a.json)}`);
        check(a.json.result ?? []);
      }
    });
  });
}

describe('the bounds follow the configuration', () => {
  test('QUERY_MAX_TABLE_REFERENCES and QUERY_MAX_VALUE_BYTES set on the server are the ones applied', async () => {
    // 1,024 bytes for a value built on every row (a 256th).
    const s = await startTestServer({ QUERY_MAX_TABLE_REFERENCES: '2', QUERY_MAX_VALUE_BYTES: '256KiB' });
    try {
      const ask = async (sql: string) => {
        const r = await s.fetch('/api/endpoints/query/logs.all', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ sql, project: 'p' }),
        });
        return { status: r.status, json: (await r.json()) as Answer['json'] };
      };
      const three = await ask('select count(*) as n from edge_logs a join edge_logs b on a.id = b.id join edge_logs c on b.id = c.id');
      assert.equal(three.status, 400, JSON.stringify(three.json));
      assert.equal(three.json.error?.code, 'QUERY_TOO_COMPLEX');
      assert.match(three.json.error?.message ?? '', /limit of 2 \(QUERY_MAX_TABLE_REFERENCES\)/);
      assert.equal((await ask('select count(*) as n from edge_logs a join edge_logs b on a.id = b.id')).status, 200);
      const big = await ask("select repeat('x', 2000) as s from edge_logs");
      assert.equal(big.status, 400, JSON.stringify(big.json));
      assert.match(big.json.error?.message ?? '', /QUERY_MAX_VALUE_BYTES/);
    } finally {
      await s.close();
    }
  });
});
