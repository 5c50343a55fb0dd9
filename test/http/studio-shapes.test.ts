/**
 * Supabase Studio's own query shapes over HTTP, against `logs.all`: the Logs Explorer templates
 * that read UNNEST fields unqualified (BigQuery value tables), the Edge Functions page's
 * `function_id` filter, and self-hosted Studio's Postgres-style `::text` cast (pg_cron page).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ingest, iso, query, type Row, rows } from '../endpoints/http-support.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const T = Date.UTC(2026, 10, 21, 9, 0, 0);
const at = (minute: number) => iso(T + minute * 60_000);

function edge(id: string, minute: number, method: string, path: string, status: number, project = 'proj'): Row {
  return {
    id,
    timestamp: at(minute),
    project,
    event_message: `${method} | ${status} | ${path}`,
    metadata: { request: { method, path, url: `http://kong:8000${path}` }, response: { status_code: status } },
  };
}

function fnEdge(id: string, minute: number, functionId: string, status: number): Row {
  return {
    id,
    timestamp: at(minute),
    event_message: `POST | ${status} | /functions/v1/${functionId}`,
    metadata: { project_ref: 'proj', function_id: functionId, execution_time_ms: 12, request: { method: 'POST' }, response: { status_code: status } },
  };
}

function pg(id: string, minute: number, message: string, app: string): Row {
  return { id, timestamp: at(minute), project: 'proj', event_message: message, metadata: { parsed: { application_name: app, error_severity: 'LOG' } } };
}

describe('Studio query shapes over HTTP', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
    await ingest(s, 'cloudflare.logs.prod', [
      edge('e1', 1, 'GET', '/rest/v1/todos', 200),
      edge('e2', 2, 'GET', '/storage/v1/object/public/a.png', 200),
      edge('e3', 3, 'POST', '/rest/v1/rpc/f', 201),
      edge('e4', 4, 'GET', '/storage/v1/object/public/a.png', 304),
      edge('e5', 5, 'GET', '/auth/v1/user', 200),
      edge('e6', 6, 'GET', '/rest/v1/other', 200, 'other'),
      edge('e7', 7, 'PUT', '/storage/v1/object/b.png', 200),
    ]);
    await ingest(s, 'deno-relay-logs', [fnEdge('f1', 1, 'fn-a', 200), fnEdge('f2', 2, 'fn-b', 500), fnEdge('f3', 3, 'fn-a', 503)]);
    await ingest(s, 'postgres.logs', [
      pg('p1', 1, 'checkpoint starting', 'postgres'),
      pg('p2', 2, 'cron job 3 starting: select 1', 'pg_cron'),
      pg('p3', 3, 'cron job 3 completed', 'pg_cron'),
    ]);
  });
  after(() => s.close());

  const run = (sql: string) => rows(s, 'logs.all', { project: 'proj', sql });

  test('Logs Explorer "REST Requests": `path` is r.path', async () => {
    const r = await run(`select
  cast(timestamp as datetime) as timestamp,
  id, event_message, path
from edge_logs
cross join unnest(metadata) as m
cross join unnest(m.request) as r
where
  path like '%rest/v1%'
order by timestamp desc
limit 100`);
    assert.deepEqual(r, [
      { timestamp: '2026-11-21T09:03:00', id: 'e3', event_message: 'POST | 201 | /rest/v1/rpc/f', path: '/rest/v1/rpc/f' },
      { timestamp: '2026-11-21T09:01:00', id: 'e1', event_message: 'GET | 200 | /rest/v1/todos', path: '/rest/v1/todos' },
    ]);
  });

  test('"Storage object requests": fields of two value tables, unqualified', async () => {
    const r = await run(`select id, method, path, status_code
from edge_logs
cross join unnest(metadata) as m
cross join unnest(m.request) as r
cross join unnest(m.response) as res
where (path like '%storage/v1/object/%')
order by timestamp desc
limit 100`);
    assert.deepEqual(r, [
      { id: 'e7', method: 'PUT', path: '/storage/v1/object/b.png', status_code: 200 },
      { id: 'e4', method: 'GET', path: '/storage/v1/object/public/a.png', status_code: 304 },
      { id: 'e2', method: 'GET', path: '/storage/v1/object/public/a.png', status_code: 200 },
    ]);
  });

  test('"Storage egress requests": grouped by the unqualified path', async () => {
    const r = await run(`select path, count(*) as requests
from edge_logs
cross join unnest(metadata) as m
cross join unnest(m.request) as r
where path like '%storage/v1/object/%' and method = 'GET'
group by path
order by requests desc`);
    assert.deepEqual(r, [{ path: '/storage/v1/object/public/a.png', requests: 2 }]);
  });

  test('Edge Functions filtered by `function_id`', async () => {
    const r = await run(`select id, function_edge_logs.timestamp, event_message, response.status_code, m.function_id
from function_edge_logs
  cross join unnest(metadata) as m
  cross join unnest(m.response) as response
where (\`function_id\` = 'fn-a')
order by timestamp desc
limit 100`);
    assert.deepEqual(
      r.map((x) => [x.id, x.status_code, x.function_id]),
      [
        ['f3', 503, 'fn-a'],
        ['f1', 200, 'fn-a'],
      ],
    );
  });

  test("self-hosted pg_cron page: event_message::text LIKE '%cron job%'", async () => {
    const r = await run(`select id, event_message from postgres_logs
where (event_message::text LIKE '%cron job%')
order by timestamp desc`);
    assert.deepEqual(
      r.map((x) => x.id),
      ['p3', 'p2'],
    );
  });

  test('a name two value tables provide: 400 INVALID_QUERY naming both candidates', async () => {
    const r = await query(s, 'logs.all', {
      project: 'proj',
      sql: 'select status_code from edge_logs cross join unnest(metadata) as m cross join unnest(m.response) as a cross join unnest(m.response) as b',
    });
    assert.equal(r.status, 400);
    assert.equal(r.error?.code, 'INVALID_QUERY');
    assert.match(r.error?.message ?? '', /Column name status_code is ambiguous: it may be a\.status_code or b\.status_code/);
  });
});
