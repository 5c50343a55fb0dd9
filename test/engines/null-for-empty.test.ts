/**
 * Aggregates over no rows answer as on BigQuery on every engine: counts 0, every other aggregate
 * NULL. ClickHouse gets `aggregate_functions_null_for_empty` only for queries holding an aggregate
 * other than a count (src/engines/clickhouse/lockdown.ts `needsNullForEmpty`): the setting slows
 * `count()` down, and a count's printing already answers 0.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { needsNullForEmpty } from '../../src/engines/clickhouse/lockdown.ts';
import { logsAllSql } from '../../src/endpoints/supabase/index.ts';
import { prepareEndpointQuery } from '../../src/sql/index.ts';
import { supabaseData, supabaseSources } from '../sql/fixtures.ts';
import { makeCatalog } from '../sql/support.ts';
import { engines, openQueryTestEngine, type QueryTestEngine } from '../support/engines.ts';

const catalog = makeCatalog(supabaseSources);
const ast = (sql: string) => prepareEndpointQuery({ saved: logsAllSql, catalog, sandboxable: true, caller: { sql } }).ast;

describe('which queries need aggregate_functions_null_for_empty on ClickHouse', () => {
  test('counts alone do not', () => {
    assert.equal(needsNullForEmpty(ast('select count(*) as n from edge_logs')), false);
    assert.equal(needsNullForEmpty(ast('select countif(id is null) as c, approx_count_distinct(id) as d, count(distinct id) as e from edge_logs')), false);
    assert.equal(needsNullForEmpty(ast('select id from edge_logs limit 1')), false);
  });

  test('any other aggregate does, wherever it is (a CTE, a subquery, a window)', () => {
    assert.equal(needsNullForEmpty(ast('select count(*) as n, max(timestamp) as m from edge_logs')), true);
    assert.equal(needsNullForEmpty(ast('with x as (select sum(1) as s from edge_logs) select count(*) as n from x')), true);
    assert.equal(needsNullForEmpty(ast('select count(*) as n from edge_logs where timestamp > (select min(timestamp) from postgres_logs)')), true);
    assert.equal(needsNullForEmpty(ast('select id, sum(1) over (order by timestamp) as s from edge_logs')), true);
  });
});

for (const engineName of engines) {
  describe(`aggregates over no rows on ${engineName}`, () => {
    let engine: QueryTestEngine;
    before(async () => {
      engine = await openQueryTestEngine(engineName, supabaseSources, supabaseData);
    });
    after(async () => {
      await engine.close();
    });
    const run = (sql: string) =>
      engine.query.run(
        prepareEndpointQuery({ saved: logsAllSql, catalog: engine.catalog, sandboxable: true, caller: { sql } }),
        { project: 'default', iso_timestamp_start: null, iso_timestamp_end: null },
        { timeoutMs: 30_000, maxRows: 1000 },
      );

    test('counts are 0', async () => {
      const r = await run(
        "select count(*) as n, countif(id is null) as c, approx_count_distinct(id) as d, count(distinct id) as e from edge_logs where id = 'none'",
      );
      assert.deepEqual(r.rows, [{ n: 0, c: 0, d: 0, e: 0 }]);
    });

    test('other aggregates are NULL, beside a count', async () => {
      const r = await run("select count(*) as n, max(timestamp) as m, sum(1) as s, avg(1) as a from edge_logs where id = 'none'");
      assert.deepEqual(r.rows, [{ n: 0, m: null, s: null, a: null }]);
    });

    test('a grouped count over no rows has no row', async () => {
      const r = await run("select event_message, count(*) as n from edge_logs where id = 'none' group by event_message");
      assert.deepEqual(r.rows, []);
    });
  });
}
