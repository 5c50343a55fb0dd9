/**
 * `QUARRY_ENGINE=clickhouse CLICKHOUSE_URL=chdb: npm start` keeps every acknowledged event through
 * a `kill -9` right after the 200s (several clients at once, so acknowledgements come from group
 * commits), and a retried insert is stored once.
 */
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { test } from 'node:test';
import { result, run } from '../../contract/support.ts';
import { edgeEvent } from '../../ingest/fixtures.ts';
import { engineEnv, engines } from '../../support/engines.ts';
import { spawnService } from '../../support/process.ts';
import { PRIVATE_TOKEN, startTestServer, tempDataDir } from '../../support/server.ts';

test('every acknowledged event survives kill -9 on ClickHouse (chDB)', { skip: !engines.includes('clickhouse') }, async () => {
  const dir = await tempDataDir();
  try {
    const service = await spawnService(dir, engineEnv('clickhouse') as Record<string, string>);
    const acknowledged: string[] = [];
    let i = 0;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        for (let r = 0; r < 5; r++) {
          const events = Array.from({ length: 50 }, () => ({ ...edgeEvent(i), id: `ack-${i++}`, project: 'dur' }));
          const res = await fetch(`${service.url}/api/logs?source_name=cloudflare.logs.prod`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-api-key': PRIVATE_TOKEN },
            body: JSON.stringify(events),
          });
          assert.equal(res.status, 200, await res.text());
          for (const e of events) acknowledged.push(e.id);
        }
      }),
    );
    await service.kill9();
    const s = await startTestServer(engineEnv('clickhouse'), dir);
    try {
      const rows = result(await run(s, 'logs.all', { project: 'dur', sql: 'select id from edge_logs limit 5000' }, { prefix: '/api/endpoints/query' }));
      const stored = new Set(rows.map((r) => String(r.id)));
      assert.equal(acknowledged.length, 1000);
      assert.deepEqual(
        acknowledged.filter((id) => !stored.has(id)),
        [],
      );
      const counts = result(await run(s, 'logs.all', { project: 'dur', sql: 'select count(*) as n, count(distinct id) as d from edge_logs' }));
      assert.deepEqual(counts, [{ n: 1000, d: 1000 }], 'no event lost or stored twice');
    } finally {
      await s.stop();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
