/**
 * logs.all as Supabase Studio uses it: nine CTEs, each filtered by project (read from the field
 * that source carries it in) and by an exclusive start / inclusive end, newest first.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Row, ingest, iso, micros, query, rows } from '../endpoints/http-support.ts';
import { type TestServer, startTestServer } from '../support/server.ts';

interface CteCase {
  cte: string;
  source: string;
  /** An event of `project` at `ms`, with the project where this source carries it. */
  event(id: string, project: string, ms: number): Row;
}

const T = Date.UTC(2026, 10, 21, 9, 0, 0);
const topLevel =
  (extra: Row = {}) =>
  (id: string, project: string, ms: number): Row => ({
    id,
    timestamp: iso(ms),
    project,
    event_message: `${id} message`,
    metadata: { host: 'h', ...extra },
  });
const inMetadata =
  (field: string) =>
  (id: string, project: string, ms: number): Row => ({
    id,
    timestamp: iso(ms),
    event_message: `${id} message`,
    metadata: { [field]: project, level: 'info' },
  });

const CASES: CteCase[] = [
  {
    cte: 'edge_logs',
    source: 'cloudflare.logs.prod',
    event: (id, project, ms) => ({
      id,
      timestamp: iso(ms),
      project,
      event_message: `${id} message`,
      metadata: {
        request: { method: 'GET', path: '/rest/v1/todos', headers: { cf_connecting_ip: '10.0.0.1' } },
        response: { status_code: 200 },
      },
    }),
  },
  {
    cte: 'postgres_logs',
    source: 'postgres.logs',
    event: topLevel({ parsed: { error_severity: 'LOG' } }),
  },
  { cte: 'function_edge_logs', source: 'deno-relay-logs', event: inMetadata('project_ref') },
  { cte: 'function_logs', source: 'deno-subhosting-events', event: inMetadata('project_ref') },
  { cte: 'auth_logs', source: 'gotrue.logs.prod', event: topLevel({ level: 'info', status: 200, path: '/token', msg: 'ok' }) },
  { cte: 'realtime_logs', source: 'realtime.logs.prod', event: inMetadata('project') },
  { cte: 'storage_logs', source: 'storage.logs.prod.2', event: inMetadata('project') },
  { cte: 'postgrest_logs', source: 'postgREST.logs.prod', event: topLevel() },
  { cte: 'pgbouncer_logs', source: 'pgbouncer.logs.prod', event: topLevel() },
];

/** Three events of project `proj` one minute apart, and one of project `other` in between. */
function eventsFor(c: CteCase): Row[] {
  return [
    c.event(`${c.cte}-1`, 'proj', T + 60_000),
    c.event(`${c.cte}-2`, 'proj', T + 120_000),
    c.event(`${c.cte}-3`, 'proj', T + 180_000),
    c.event(`${c.cte}-other`, 'other', T + 120_000),
  ];
}

describe('logs.all', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
    for (const c of CASES) await ingest(s, c.source, eventsFor(c));
  });
  after(() => s.close());

  for (const c of CASES) {
    describe(c.cte, () => {
      const ids = async (params: Record<string, string>) => (await rows(s, 'logs.all', { sql: `select id from ${c.cte}`, ...params })).map((r) => r.id);

      test('only the project asked for, newest first', async () => {
        assert.deepEqual(await ids({ project: 'proj' }), [`${c.cte}-3`, `${c.cte}-2`, `${c.cte}-1`]);
        assert.deepEqual(await ids({ project: 'other' }), [`${c.cte}-other`]);
        assert.deepEqual(await ids({ project: 'nobody' }), []);
        assert.deepEqual(await ids({}), [], 'no project → NULL → nothing');
      });

      test('start is exclusive, end inclusive; missing or empty bounds do not filter', async () => {
        const at = (n: number) => iso(T + n * 60_000);
        assert.deepEqual(await ids({ project: 'proj', iso_timestamp_start: at(1), iso_timestamp_end: at(2) }), [`${c.cte}-2`]);
        assert.deepEqual(await ids({ project: 'proj', iso_timestamp_start: at(1) }), [`${c.cte}-3`, `${c.cte}-2`]);
        assert.deepEqual(await ids({ project: 'proj', iso_timestamp_end: at(1) }), [`${c.cte}-1`]);
        assert.deepEqual(await ids({ project: 'proj', iso_timestamp_start: '', iso_timestamp_end: '' }), [`${c.cte}-3`, `${c.cte}-2`, `${c.cte}-1`]);
        const justBefore = iso(T + 60_000 - 1);
        assert.deepEqual(await ids({ project: 'proj', iso_timestamp_start: justBefore, iso_timestamp_end: at(1) }), [`${c.cte}-1`]);
      });

      test('the CTE exposes timestamp, id, event_message and metadata in the contract encoding', async () => {
        const [row] = await rows(s, 'logs.all', {
          project: 'proj',
          sql: `select id, timestamp, event_message, metadata from ${c.cte} where id = '${c.cte}-2' limit 1`,
        });
        assert.ok(row);
        assert.equal(row.id, `${c.cte}-2`);
        assert.equal(row.timestamp, micros(T + 120_000));
        assert.equal(row.event_message, `${c.cte}-2 message`);
        assert.ok(Array.isArray(row.metadata) && row.metadata.length === 1, JSON.stringify(row.metadata));
      });
    });
  }

  test('without sql: the edge_logs default select, newest first', async () => {
    const r = await rows(s, 'logs.all', { project: 'proj' });
    assert.deepEqual(
      r.map((x) => x.id),
      ['edge_logs-3', 'edge_logs-2', 'edge_logs-1'],
    );
    assert.deepEqual(Object.keys(r[0] ?? {}).sort(), ['event_message', 'id', 'metadata', 'timestamp']);
    assert.deepEqual(r[0]?.metadata, [
      {
        request: [{ method: 'GET', path: '/rest/v1/todos', headers: [{ cf_connecting_ip: '10.0.0.1' }] }],
        response: [{ status_code: 200 }],
      },
    ]);
  });

  describe('row limits', () => {
    before(async () => {
      const base = T - 86_400_000;
      const bulk = Array.from({ length: 1100 }, (_, i) => ({
        timestamp: iso(base + i * 1000),
        project: 'bulk',
        event_message: `bulk ${i}`,
        metadata: { request: { path: '/x' } },
      }));
      await ingest(s, 'cloudflare.logs.prod', bulk);
    });

    test('the saved default select returns at most 100 rows', async () => {
      assert.equal((await rows(s, 'logs.all', { project: 'bulk' })).length, 100);
    });

    test('a caller query returns at most 1000 rows, with or without LIMIT', async () => {
      assert.equal((await rows(s, 'logs.all', { project: 'bulk', sql: 'select id from edge_logs' })).length, 1000);
      assert.equal((await rows(s, 'logs.all', { project: 'bulk', sql: 'select id from edge_logs limit 5000' })).length, 1000);
      assert.equal((await rows(s, 'logs.all', { project: 'bulk', sql: 'select id from edge_logs limit 7' })).length, 7);
      const [count] = await rows(s, 'logs.all', { project: 'bulk', sql: 'select count(*) as c from edge_logs' });
      assert.deepEqual(count, { c: 1100 });
    });
  });

  describe('Studio-shaped queries', () => {
    const studio = (sql: string, extra: Record<string, string> = {}) =>
      rows(s, 'logs.all', {
        project: 'proj',
        iso_timestamp_start: iso(T),
        iso_timestamp_end: iso(T + 3_600_000),
        sql,
        ...extra,
      });

    test('edge logs preview with the UNNEST chain', async () => {
      const r = await studio(`-- edge logs
select id, edge_logs.timestamp, event_message, request.method, request.path, response.status_code
from edge_logs
cross join unnest(metadata) as m
cross join unnest(m.request) as request
cross join unnest(m.response) as response
order by timestamp desc
limit 100;`);
      assert.deepEqual(r[0], {
        id: 'edge_logs-3',
        timestamp: micros(T + 180_000),
        event_message: 'edge_logs-3 message',
        method: 'GET',
        path: '/rest/v1/todos',
        status_code: 200,
      });
      assert.equal(r.length, 3);
    });

    test('postgres logs preview reading parsed fields, some never sent', async () => {
      const r = await query(s, 'logs.all', {
        project: 'proj',
        sql: `select postgres_logs.timestamp, id, event_message, parsed.error_severity, parsed.detail, parsed.hint
from postgres_logs
cross join unnest(metadata) as m
cross join unnest(m.parsed) as parsed
order by timestamp desc
limit 100`,
      });
      assert.equal(r.status, 200, JSON.stringify(r.error));
      assert.equal(r.rows.length, 3);
      assert.deepEqual(r.rows[0], {
        timestamp: micros(T + 180_000),
        id: 'postgres_logs-3',
        event_message: 'postgres_logs-3 message',
        error_severity: 'LOG',
        detail: null,
        hint: null,
      });
      assert.match(r.headers.get('x-query-warnings') ?? '', /detail/);
    });

    test('auth logs preview with metadata unnested under its own name', async () => {
      const r = await studio(`select id, auth_logs.timestamp, event_message, metadata.level, metadata.status, metadata.path, metadata.msg as msg
from auth_logs
cross join unnest(metadata) as metadata
order by timestamp desc
limit 100`);
      assert.deepEqual(r[0], {
        id: 'auth_logs-3',
        timestamp: micros(T + 180_000),
        event_message: 'auth_logs-3 message',
        level: 'info',
        status: 200,
        path: '/token',
        msg: 'ok',
      });
    });

    for (const c of CASES) {
      test(`count and chart over ${c.cte}`, async () => {
        assert.deepEqual(await studio(`SELECT count(*) as count FROM ${c.cte}`), [{ count: 3 }]);
        const chart = await studio(`select timestamp_trunc(t.timestamp, minute) as timestamp, count(t.timestamp) as count
from ${c.cte} t
where t.timestamp > '${iso(T)}'
group by timestamp
order by timestamp asc`);
        assert.deepEqual(chart, [
          { timestamp: micros(T + 60_000), count: 1 },
          { timestamp: micros(T + 120_000), count: 1 },
          { timestamp: micros(T + 180_000), count: 1 },
        ]);
      });

      test(`single log from ${c.cte}`, async () => {
        const [one] = await studio(`select id, timestamp, event_message, metadata from ${c.cte} where id = '${c.cte}-1' limit 1`);
        assert.equal(one?.id, `${c.cte}-1`);
        assert.equal(one?.timestamp, micros(T + 60_000));
      });
    }

    test('lql over one CTE goes through the same sandbox', async () => {
      const r = await rows(s, 'logs.all', { project: 'proj', lql: 'f:postgres_logs s:timestamp' });
      assert.deepEqual(r, [{ timestamp: micros(T + 180_000) }, { timestamp: micros(T + 120_000) }, { timestamp: micros(T + 60_000) }]);
    });

    test('lql filters bind their values as parameters', async () => {
      const r = await rows(s, 'logs.all', { project: 'proj', lql: 'f:postgres_logs "postgres_logs-2"' });
      assert.equal(r.length, 1);
    });

    test('another project sees none of it', async () => {
      assert.deepEqual(await studio('select id from edge_logs', { project: 'elsewhere' }), []);
    });
  });
});
