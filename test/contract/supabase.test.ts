/**
 * The seeded endpoints as docs/API.md §1 describes them (logs.all, usage.api-counts),
 * with the project field per CTE from docs/API.md §3.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type TestServer, startTestServer } from '../support/server.ts';
import { engineEnv, engines } from '../support/engines.ts';
import { mustIngest, result, run } from './support.ts';

const iso = (ms: number) => new Date(ms).toISOString();

/** source, CTE, where the project lives (per docs/API.md §3). */
const TABLE: [string, string, 'top' | 'metadata.project_ref' | 'metadata.project'][] = [
  ['cloudflare.logs.prod', 'edge_logs', 'top'],
  ['postgres.logs', 'postgres_logs', 'top'],
  ['deno-relay-logs', 'function_edge_logs', 'metadata.project_ref'],
  ['deno-subhosting-events', 'function_logs', 'metadata.project_ref'],
  ['gotrue.logs.prod', 'auth_logs', 'top'],
  ['realtime.logs.prod', 'realtime_logs', 'metadata.project'],
  ['storage.logs.prod.2', 'storage_logs', 'metadata.project'],
  ['postgREST.logs.prod', 'postgrest_logs', 'top'],
  ['pgbouncer.logs.prod', 'pgbouncer_logs', 'top'],
];

for (const engine of engines) {
  describe(engine, () => {
    describe('logs.all', () => {
      let s: TestServer;
      const T = Date.UTC(2026, 10, 20, 8, 0, 0);
      before(async () => {
        s = await startTestServer(engineEnv(engine));
        for (const [source, cte, where] of TABLE) {
          const right = (id: string, ms: number) =>
            where === 'top'
              ? { id, timestamp: iso(ms), project: 'proj', event_message: id, metadata: { project: 'decoy', project_ref: 'decoy' } }
              : { id, timestamp: iso(ms), project: 'decoy', event_message: id, metadata: { [where.split('.')[1] as string]: 'proj' } };
          // The decoy carries `proj` in the field this source is NOT filtered on.
          const decoy =
            where === 'top'
              ? { id: `${cte}-decoy`, timestamp: iso(T), project: 'other', event_message: 'decoy', metadata: { project: 'proj', project_ref: 'proj' } }
              : {
                  id: `${cte}-decoy`,
                  timestamp: iso(T),
                  project: 'proj',
                  event_message: 'decoy',
                  metadata: { [where === 'metadata.project' ? 'project_ref' : 'project']: 'proj', [where.split('.')[1] as string]: 'other' },
                };
          await mustIngest(s, source, [right(`${cte}-1`, T + 1), right(`${cte}-2`, T + 2), decoy]);
        }
      });
      after(() => s.close());

      for (const [, cte] of TABLE) {
        test(`${cte}: the project is read from the contract's field, and only from it`, async () => {
          const rows = result(await run(s, 'logs.all', { project: 'proj', sql: `select id from ${cte}` }));
          assert.deepEqual(
            rows.map((r) => r.id),
            [`${cte}-2`, `${cte}-1`],
          );
          const others = result(await run(s, 'logs.all', { project: 'other', sql: `select id from ${cte}` }));
          assert.deepEqual(
            others.map((r) => r.id),
            [`${cte}-decoy`],
          );
        });
      }

      test('microsecond bounds: start exclusive, end inclusive', async () => {
        const ids = async (start: string, end: string) =>
          result(await run(s, 'logs.all', { project: 'proj', sql: 'select id from postgres_logs', iso_timestamp_start: start, iso_timestamp_end: end })).map(
            (r) => r.id,
          );
        // events at T+1 ms and T+2 ms
        assert.deepEqual(await ids(iso(T + 1), iso(T + 2)), ['postgres_logs-2']);
        assert.deepEqual(await ids('2026-11-20T08:00:00.000999Z', '2026-11-20T08:00:00.001000Z'), ['postgres_logs-1']);
        assert.deepEqual(await ids('2026-11-20T08:00:00.001000Z', '2026-11-20T08:00:00.001999Z'), []);
        // ISO with an offset is the same instant.
        assert.deepEqual(await ids('2026-11-20T09:00:00.001+01:00', ''), ['postgres_logs-2']);
      });

      test('the saved select (no sql): the 100 newest edge_logs rows, newest first, four columns', async () => {
        const base = T - 3_600_000;
        await mustIngest(
          s,
          'cloudflare.logs.prod',
          Array.from({ length: 150 }, (_, i) => ({ id: `bulk-${String(i).padStart(3, '0')}`, timestamp: iso(base + i * 1000), project: 'bulk', metadata: {} })),
        );
        const rows = result(await run(s, 'logs.all', { project: 'bulk' }));
        assert.equal(rows.length, 100);
        assert.deepEqual(
          rows.map((r) => r.id),
          Array.from({ length: 100 }, (_, i) => `bulk-${String(149 - i).padStart(3, '0')}`),
        );
        for (const r of rows) assert.deepEqual(Object.keys(r).sort(), ['event_message', 'id', 'metadata', 'timestamp']);
      });
    });

    describe('usage.api-counts', () => {
      let s: TestServer;
      const MIN = 60_000;
      const now = Date.now();
      const edge = (ms: number, path: string, host = 'abcproj') => ({
        timestamp: iso(ms),
        project: 'whatever',
        metadata: { request: { path, url: `https://${host}.supabase.co${path}` } },
      });
      const bucket = (ms: number, size: number) => new Date(Math.floor(ms / size) * size).toISOString().slice(0, 19);

      before(async () => {
        s = await startTestServer(engineEnv(engine));
        await mustIngest(s, 'cloudflare.logs.prod', [
          edge(now - 2 * MIN, '/rest/v1/auth/storage/realtime'), // all four categories
          edge(now - 2 * MIN, '/functions/v1/hello'), // none: a row with zeros
          edge(now - 3 * MIN, '/v1/rest'), // contains, not prefix
          edge(now - 10 * MIN, '/functions/v1/alone'), // a bucket whose only request is in no category: zeros
          edge(now - 57 * MIN, '/auth/v1/token'),
          edge(now - 64 * MIN, '/storage/v1/x'), // outside the 60 minutes
          edge(now - 6.5 * 24 * 60 * MIN, '/realtime/v1/websocket'), // inside 7 days
          edge(now - 7.5 * 24 * 60 * MIN, '/rest/v1/too-old'), // outside 7 days
          edge(now - 2 * MIN, '/rest/v1/x', 'someoneelse'),
        ]);
      });
      after(() => s.close());

      const counts = (r: Record<string, unknown>) => [r.total_rest_requests, r.total_storage_requests, r.total_auth_requests, r.total_realtime_requests];

      test('minutely: 60 one-minute buckets; every matching category counts; zeros not nulls; ascending', async () => {
        const rows = result(await run(s, 'usage.api-counts', { project: 'abcproj', interval: 'minutely' }));
        const expected = new Map<string, number[]>();
        const add = (ms: number, c: number[]) => {
          const k = bucket(ms, MIN);
          const prev = expected.get(k) ?? [0, 0, 0, 0];
          expected.set(
            k,
            prev.map((v, i) => v + (c[i] ?? 0)),
          );
        };
        add(now - 2 * MIN, [1, 1, 1, 1]);
        add(now - 2 * MIN, [0, 0, 0, 0]);
        add(now - 3 * MIN, [1, 0, 0, 0]);
        add(now - 10 * MIN, [0, 0, 0, 0]);
        add(now - 57 * MIN, [0, 0, 1, 0]);
        const want = [...expected.entries()].sort(([a], [b]) => a.localeCompare(b));
        assert.deepEqual(
          rows.map((r) => [r.timestamp, counts(r)]),
          want,
        );
        for (const r of rows) {
          assert.deepEqual(Object.keys(r).sort(), [
            'timestamp',
            'total_auth_requests',
            'total_realtime_requests',
            'total_rest_requests',
            'total_storage_requests',
          ]);
          assert.match(r.timestamp as string, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/, 'a DATETIME string without offset');
        }
      });

      test('hourly: the last hour in one-hour buckets', async () => {
        const rows = result(await run(s, 'usage.api-counts', { project: 'abcproj', interval: 'hourly' }));
        const totals = rows.reduce<number[]>((acc, r) => acc.map((v, i) => v + (counts(r)[i] as number)), [0, 0, 0, 0]);
        assert.deepEqual(totals, [2, 1, 2, 1]);
        for (const r of rows) assert.match(r.timestamp as string, /T\d\d:00:00$/);
      });

      test('daily: the last 7 days in one-day buckets', async () => {
        const rows = result(await run(s, 'usage.api-counts', { project: 'abcproj', interval: 'daily' }));
        const totals = rows.reduce<number[]>((acc, r) => acc.map((v, i) => v + (counts(r)[i] as number)), [0, 0, 0, 0]);
        assert.deepEqual(totals, [2, 2, 2, 2]);
        for (const r of rows) assert.match(r.timestamp as string, /T00:00:00$/);
        const stamps = rows.map((r) => r.timestamp as string);
        assert.deepEqual([...stamps].sort(), stamps, 'ascending');
      });
    });
  });
}
