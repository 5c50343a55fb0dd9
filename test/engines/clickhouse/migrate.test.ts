/**
 * Moving a DuckDB data directory's events to ClickHouse: the service on DuckDB takes events, stops;
 * the migration copies them into chDB; the service started on ClickHouse with the same DATA_DIR
 * answers the same queries with the same rows (metadata stays in DATA_DIR), fields kept in DuckDB's
 * overflow column included.
 */
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { test } from 'node:test';
import { copyEvents } from '../../../src/migrate/copy-events.ts';
import { call, result, run } from '../../contract/support.ts';
import { engineEnv, engines } from '../../support/engines.ts';
import { PRIVATE_TOKEN, startTestServer, tempDataDir } from '../../support/server.ts';

const queries = [
  'select id, event_message, timestamp, metadata from edge_logs order by timestamp desc, id',
  'select r.method, count(*) as n from edge_logs cross join unnest(metadata) as m cross join unnest(m.request) as r group by r.method order by r.method',
  'select id, t from edge_logs cross join unnest(metadata) as m cross join unnest(m.tags) as t order by id, t',
];

test('events move from DuckDB to ClickHouse and answer the same queries', { skip: !engines.includes('clickhouse') }, async () => {
  const dir = await tempDataDir();
  try {
    // Three typed fields: the rest of metadata is kept in DuckDB's overflow column and must move too.
    const duck = await startTestServer({ INGEST_MAX_TYPED_FIELDS: '3' }, dir);
    const before: unknown[] = [];
    try {
      const events = Array.from({ length: 25 }, (_, i) => ({
        event_message: `e${i}`,
        project: 'p',
        timestamp: new Date(Date.UTC(2026, 10, 20 + (i % 3), 10, i)).toISOString(),
        metadata: { request: { method: i % 2 ? 'GET' : 'POST', path: `/x/${i}` }, ...(i % 4 === 0 ? { tags: ['a', `t${i}`] } : {}), n: i },
      }));
      const ingested = await call(duck, 'POST', '/api/logs?source_name=cloudflare.logs.prod', { body: events });
      assert.equal(ingested.status, 200, ingested.text);
      for (const sql of queries) before.push(result(await run(duck, 'logs.all', { project: 'p', sql })));
    } finally {
      await duck.stop();
    }
    const env = { PORT: '0', DATA_DIR: dir, LOG_LEVEL: 'silent', LOGFLARE_PRIVATE_ACCESS_TOKEN: PRIVATE_TOKEN, ...engineEnv('clickhouse') };
    const report = await copyEvents(env);
    assert.equal(report.copied['cloudflare.logs.prod'], 25);
    await assert.rejects(copyEvents(env), /already holds events/);
    await assert.rejects(copyEvents({ ...env, QUARRY_ENGINE: 'duckdb' }), /names the engine the events are in/);
    const ch = await startTestServer(engineEnv('clickhouse'), dir);
    try {
      for (const [i, sql] of queries.entries()) assert.deepEqual(result(await run(ch, 'logs.all', { project: 'p', sql })), before[i], sql);
    } finally {
      await ch.stop();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
