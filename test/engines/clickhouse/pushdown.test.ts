/**
 * Paths read through a CTE are read from the table's own path columns (src/engines/clickhouse/
 * pushdown.ts): ClickHouse reads the sub-object a CTE passes on in full otherwise.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { generateClickHouse } from '../../../src/engines/clickhouse/printer.ts';
import { logsAllSql } from '../../../src/endpoints/supabase/index.ts';
import { prepareEndpointQuery } from '../../../src/sql/index.ts';
import { supabaseData, supabaseSources } from '../../sql/fixtures.ts';
import { engines, openQueryTestEngine, type QueryTestEngine } from '../../support/engines.ts';

const chart = `select timestamp_trunc(t.timestamp, minute) as minute,
  count(case when response.status_code >= 500 then 1 else null end) as errors,
  countif(regexp_contains(request.path, '/rest')) as rest
from edge_logs t
  cross join unnest(t.metadata) as m
  cross join unnest(m.response) as response
  cross join unnest(m.request) as request
group by minute order by minute`;

describe('ClickHouse: paths below a CTE column', { skip: !engines.includes('clickhouse') }, () => {
  let t: QueryTestEngine;
  before(async () => {
    t = await openQueryTestEngine('clickhouse', supabaseSources, supabaseData);
  });
  after(() => t.close());

  const generate = (sql: string) => {
    const prepared = prepareEndpointQuery({ saved: logsAllSql, caller: { sql }, catalog: t.catalog, sandboxable: true });
    return { prepared, generated: generateClickHouse(prepared.ast, { catalog: t.catalog, database: 'quarry_test', maxRows: 100 }) };
  };

  async function plan(sql: string, params: Record<string, string | null>): Promise<string> {
    const client = t.connection!.client;
    const r = await client.query({ query: `EXPLAIN actions = 1 ${sql}`, query_params: params, format: 'JSONEachRow' });
    return ((await r.json()) as (string | { explain: string })[]).map((x) => (typeof x === 'string' ? x : x.explain)).join('\n');
  }

  it('reads a scalar path of a CTE record column from the table, not the whole record', async () => {
    const { prepared, generated } = generate(chart);
    const cte = generated.sql.slice(0, generated.sql.lastIndexOf(') SELECT '));
    assert.match(cte, /^WITH `edge_logs` AS \(SELECT /);
    assert.match(cte, /CAST\(`t`\.`fields`\.`metadata`\.`response`\.`status_code` AS Nullable\(Int64\)\) AS `__p\d+`/);
    assert.match(cte, /CAST\(`t`\.`fields`\.`metadata`\.`request`\.`path` AS Nullable\(String\)\) AS `__p\d+`/);
    const outer = generated.sql.slice(generated.sql.lastIndexOf(') SELECT ') + 2);
    assert.doesNotMatch(outer, /`metadata`/, 'the caller reads the added columns only');
    // ClickHouse reads the two path columns, never the metadata sub-object.
    const params = { project: 'default', iso_timestamp_start: null, iso_timestamp_end: null };
    const text = await plan(generated.sql, params);
    const read = /ReadFromMergeTree[\s\S]*$/.exec(text)?.[0] ?? '';
    assert.doesNotMatch(read, /\^`?metadata/);
    assert.match(read, /fields\.metadata\.response\.status_code/);
    // And the answer is the fixture's.
    const result = await t.query.run(prepared, params, { timeoutMs: 10_000, maxRows: 100 });
    const total = result.rows.reduce((n, r) => n + Number((r as { errors: number }).errors), 0);
    const expected = (supabaseData['cloudflare.logs.prod'] as { project?: string; metadata?: { response?: { status_code?: number } } }[]).filter(
      (e) => e.project === 'default' && (e.metadata?.response?.status_code ?? 0) >= 500,
    ).length;
    assert.ok(expected > 0);
    assert.equal(total, expected);
  });

  it('leaves a list path read in a correlated subquery, and a grouped CTE, as they were', () => {
    const { generated } = generate("select id from edge_logs as e where exists (select 1 from unnest(e.metadata.tags) as tag where tag = 'c')");
    assert.doesNotMatch(generated.sql, /__p\d+/);
    const grouped = generateClickHouse(
      prepareEndpointQuery({
        saved: 'with g as (select t.metadata.request.path as path, count(*) as n from `cloudflare.logs.prod` as t group by path) select path, n from g',
        catalog: t.catalog,
        sandboxable: false,
      }).ast,
      { catalog: t.catalog, database: 'quarry_test' },
    );
    assert.doesNotMatch(grouped.sql, /__p\d+/);
  });
});
