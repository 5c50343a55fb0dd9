/**
 * A source table created with the first ClickHouse layout (`ORDER BY timestamp`, before the
 * project led the sorting key) keeps working: the service opens it, answers from it, appends to
 * it, and leaves its layout as it was; a new source gets the project key.
 */
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { connectClickHouse } from '../../../src/engines/clickhouse/client.ts';
import { call, result, run } from '../../contract/support.ts';
import { engineEnv, engines } from '../../support/engines.ts';
import { startTestServer, tempDataDir } from '../../support/server.ts';

/** The table statement of the first layout, as it was written. */
const firstLayout = (table: string) => `CREATE TABLE ${table} (
  id String, timestamp DateTime64(6, 'UTC'), event_message Nullable(String), fields JSON
) ENGINE = MergeTree PARTITION BY toYYYYMMDD(timestamp) ORDER BY timestamp
SETTINGS non_replicated_deduplication_window = 10000, fsync_after_insert = 1, fsync_part_directory = 1`;

const events = (from: number, n: number) =>
  Array.from({ length: n }, (_, k) => {
    const i = from + k;
    return {
      id: `ev-${i}`,
      event_message: `e${i}`,
      project: i % 2 ? 'p' : 'q',
      timestamp: new Date(Date.UTC(2026, 10, 20 + (i % 3), 10, i % 60)).toISOString(),
      metadata: { request: { method: i % 3 ? 'GET' : 'POST' }, response: { status_code: 200 + (i % 4) * 100 } },
    };
  });

const query =
  'select id, event_message, response.status_code from edge_logs cross join unnest(metadata) as m cross join unnest(m.response) as response order by id';

async function sortingKeys(chdbDir: string): Promise<Record<string, string>> {
  const conn = await connectClickHouse({ chdbPath: chdbDir, database: 'quarry' });
  try {
    const r = await conn.client.query({
      query: "SELECT t.name AS name, t.sorting_key AS key FROM system.tables AS t WHERE t.database = 'quarry' AND t.name LIKE 'src\\_%'",
      format: 'JSONEachRow',
    });
    return Object.fromEntries(((await r.json()) as { name: string; key: string }[]).map((x) => [x.name, x.key]));
  } finally {
    await conn.close();
  }
}

test('a table of the first layout opens, answers, takes events and keeps its layout', { skip: !engines.includes('clickhouse') }, async () => {
  const dir = await tempDataDir();
  const chdbDir = path.join(dir, 'clickhouse');
  try {
    let s = await startTestServer(engineEnv('clickhouse'), dir);
    try {
      const ingested = await call(s, 'POST', '/api/logs?source_name=cloudflare.logs.prod', { body: events(0, 20) });
      assert.equal(ingested.status, 200, ingested.text);
    } finally {
      await s.stop();
    }
    // (The test process runs the service in-process, so chDB's directory is this process's.)
    const tables = Object.entries(await sortingKeys(chdbDir));
    const table = tables.find(([, key]) => key.startsWith('CAST(fields.project'))?.[0] ?? '';
    assert.ok(table, `a project-keyed table among ${JSON.stringify(tables)}`);
    // Rewrite the edge table as the first layout would have created it, with the same rows.
    const conn = await connectClickHouse({ chdbPath: chdbDir, database: 'quarry' });
    try {
      const t = `quarry.${table}`;
      await conn.client.command({ query: `RENAME TABLE ${t} TO ${t}_old` });
      await conn.client.command({ query: firstLayout(t) });
      await conn.client.command({ query: `INSERT INTO ${t} SELECT * FROM ${t}_old` });
      await conn.client.command({ query: `DROP TABLE ${t}_old` });
    } finally {
      await conn.close();
    }
    assert.equal((await sortingKeys(chdbDir))[table], 'timestamp');

    s = await startTestServer(engineEnv('clickhouse'), dir);
    try {
      const before = result(await run(s, 'logs.all', { project: 'p', sql: query }));
      assert.equal(before.length, 10);
      const more = await call(s, 'POST', '/api/logs?source_name=cloudflare.logs.prod', { body: events(20, 10) });
      assert.equal(more.status, 200, more.text);
      const after = result(await run(s, 'logs.all', { project: 'p', sql: query }));
      assert.equal(after.length, 15);
      // The rows stored before read as before, beside the new ones.
      assert.deepEqual(
        after.filter((r) => before.some((b) => b.id === r.id)),
        before,
      );
      assert.deepEqual(
        after.map((r) => r.id),
        events(0, 30)
          .filter((e) => e.project === 'p')
          .map((e) => e.id)
          .sort(),
      );
      // A new Supabase source still gets the project key.
      const pg = await call(s, 'POST', '/api/logs?source_name=postgres.logs', {
        body: [{ event_message: 'x', project: 'p', metadata: { parsed: { error_severity: 'LOG' } } }],
      });
      assert.equal(pg.status, 200, pg.text);
    } finally {
      await s.stop();
    }
    const keys = await sortingKeys(chdbDir);
    assert.equal(keys[table], 'timestamp', 'the first layout is left as it was');
    assert.ok(
      Object.values(keys).some((k) => k.startsWith('CAST(fields.project')),
      JSON.stringify(keys),
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
