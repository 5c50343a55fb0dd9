/**
 * A caller's expression never raises on another project's rows (issue 20, "isolation by
 * structure"). DuckDB may evaluate a caller's CAST over a struct field on every row of a vector
 * its scan has already filtered, so `cast(metadata.request.method as int64)` raised on project B's
 * row although `logs.all` reads project A only: a 400 that told A something of B's data. The
 * runner asks such a query again with every CTE computed first (runner.ts); checked here with
 * DuckDB's filter pushdown on and off.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { DuckDBConnection } from '@duckdb/node-api';
import { DuckDbQueryRunner } from '../../../src/engines/duckdb/runner.ts';
import { logsAllSql } from '../../../src/endpoints/supabase/index.ts';
import { isQuarryError } from '../../../src/errors.ts';
import { prepareEndpointQuery } from '../../../src/sql/index.ts';
import { supabaseSources } from '../../sql/fixtures.ts';
import { openTestDb, type TestDb } from '../../sql/support.ts';

const T = (i: number) => new Date(Date.UTC(2026, 10, 27, 10, 0, i)).toISOString();
const edge = (id: string, project: string, method: string, i: number) => ({
  id,
  timestamp: T(i),
  event_message: `${project} ${id}`,
  project,
  identifier: null,
  metadata: { tags: [], request: { method, path: '/x', url: null, headers: null }, response: { status_code: 200, origin_time: 1 } },
});

// Project A's methods are numbers; project B's one row is not.
const rows = [...Array.from({ length: 3000 }, (_, i) => edge(`a${i}`, 'A', String(i + 1), i % 50)), edge('b1', 'B', 'b-secret-method', 25)];

for (const pushdown of ['on', 'off'] as const) {
  describe(`DuckDB, filter pushdown ${pushdown}: a caller's expression sees only the saved query's rows`, () => {
    let t: TestDb;
    let runner: DuckDbQueryRunner;
    before(async () => {
      t = await openTestDb(supabaseSources, { 'cloudflare.logs.prod': rows });
      const connect = async (): Promise<DuckDBConnection> => {
        const conn = await t.db.connect();
        await conn.run(`SET disabled_optimizers = '${pushdown === 'off' ? 'filter_pushdown' : ''}'`);
        return conn;
      };
      runner = new DuckDbQueryRunner({ connect });
    });
    after(() => {
      runner.close();
      t.db.close();
    });

    const run = (sql: string) =>
      runner.run(
        prepareEndpointQuery({ saved: logsAllSql, catalog: t.catalog, sandboxable: true, caller: { sql } }),
        { project: 'A', iso_timestamp_start: '2026-11-27T00:00:00Z', iso_timestamp_end: '2026-11-28T00:00:00Z' },
        { timeoutMs: 30_000, maxRows: 10_000 },
      );

    for (const sql of [
      'select count(*) as n from edge_logs t cross join unnest(t.metadata) m cross join unnest(m.request) r where cast(r.method as int64) > 0',
      'select id from edge_logs t cross join unnest(t.metadata) m cross join unnest(m.request) r where cast(r.method as int64) = 5',
      'select sum(cast(r.method as int64)) as s from edge_logs t cross join unnest(t.metadata) m cross join unnest(m.request) r',
    ]) {
      test(`raises nothing on project B's row: ${sql}`, async () => {
        const r = await run(sql);
        assert.ok(r.rows.length > 0);
        assert.ok(!JSON.stringify(r.rows).includes('b1'));
      });
    }

    test("an error from the caller's own rows is still an error, and quotes no value", async () => {
      await assert.rejects(
        run("select cast(concat(r.method, 'x') as int64) as n from edge_logs t cross join unnest(t.metadata) m cross join unnest(m.request) r"),
        (e: unknown) => isQuarryError(e) && e.code === 'INVALID_QUERY' && !/\dx|b-secret/.test(e.message),
      );
    });
  });
}
