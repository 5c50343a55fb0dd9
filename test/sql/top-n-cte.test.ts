/**
 * Rewrites of the resolved tree every engine gets (src/sql/rewrite.ts):
 * - top n into a CTE (`limitCteToTopN`): a caller's `ORDER BY ... LIMIT n` over a CTE and its
 *   record UNNESTs also limits the CTE, when that cannot change the answer;
 * - one-row constant CTEs inlined (`inlineOneRowCtes`): `(SELECT start FROM dates)` over a CTE
 *   without FROM becomes the CTE's expression.
 * The same rows come back on every engine as from the query as written.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { logsAllSql } from '../../src/endpoints/supabase/index.ts';
import { prepareEndpointQuery } from '../../src/sql/index.ts';
import { optimise } from '../../src/sql/optimise.ts';
import { resolveQuery } from '../../src/sql/resolve.ts';
import type { RQuery } from '../../src/sql/resolved.ts';
import { inlineOneRowCtes, limitCteToTopN } from '../../src/sql/rewrite.ts';
import { generateClickHouse } from '../../src/engines/clickhouse/printer.ts';
import { generateDuckDb } from '../../src/engines/duckdb/generator.ts';
import { usageApiCountsSql } from '../../src/endpoints/supabase/index.ts';
import { engines, openQueryTestEngine, type QueryTestEngine } from '../support/engines.ts';
import { supabaseData, supabaseSources } from './fixtures.ts';
import { makeCatalog } from './support.ts';

const catalog = makeCatalog(supabaseSources);

function resolved(saved: string, caller?: string): RQuery {
  const prepared = prepareEndpointQuery({ saved, catalog, sandboxable: caller !== undefined, ...(caller !== undefined ? { caller: { sql: caller } } : {}) });
  return resolveQuery(optimise(prepared.ast), { catalog }).query;
}

function rewritten(caller: string): { before: RQuery; after: RQuery } {
  const before = resolved(logsAllSql, caller);
  return { before, after: limitCteToTopN(before) };
}

const hasSubquery = (q: RQuery) => JSON.stringify(q, (k, v) => (k === 'from' || k === 'range' ? undefined : v)).includes('"kind":"subquery"');

describe('one-row constant CTEs inlined', () => {
  test("usage.api-counts' window start becomes the expression itself", () => {
    const before = resolved(usageApiCountsSql);
    assert.ok(hasSubquery(before));
    assert.ok(!hasSubquery(inlineOneRowCtes(before)));
  });

  const untouched: [string, string][] = [
    ['a CTE with a FROM', 'with d as (select max(timestamp) as s from edge_logs) select count(*) as n from edge_logs where timestamp >= (select s from d)'],
    ['a volatile expression', 'with d as (select rand() as r) select count(*) as n from edge_logs where rand() < (select r from d)'],
    [
      'a subquery with its own LIMIT',
      'with d as (select current_timestamp() as s) select count(*) as n from edge_logs where timestamp <= (select s from d limit 1)',
    ],
    [
      'a subquery with a WHERE',
      'with d as (select current_timestamp() as s) select count(*) as n from edge_logs where timestamp <= (select s from d where s is not null)',
    ],
  ];
  for (const [why, sql] of untouched) {
    test(`not with ${why}`, () => {
      const before = resolved(logsAllSql, sql);
      assert.equal(inlineOneRowCtes(before), before);
    });
  }
});

/** The query now reading the table in order: the CTE itself, or the whole query once merged with it. */
function merged(q: RQuery, name: string): RQuery {
  assert.ok(!q.with.some((c) => c.name === name), `CTE ${name} merged into the query`);
  assert.ok(q.body.kind === 'select' && q.body.from?.first.kind === 'range' && q.body.from.first.range.kind === 'table', 'one SELECT over the table');
  assert.equal(q.body.from.joins.length, 0, 'the record UNNESTs became field access');
  return q;
}

const edgeJoins = 'cross join unnest(metadata) as m cross join unnest(m.request) as request cross join unnest(m.response) as response';

describe('top n into a CTE: when it applies', () => {
  test("Studio's edge preview (record UNNESTs, ORDER BY a CTE column) becomes one top n over the table", () => {
    const { after } = rewritten(`select id, timestamp, request.path, response.status_code from edge_logs ${edgeJoins} order by timestamp desc limit 100`);
    const edge = merged(after, 'edge_logs');
    assert.deepEqual(edge.body.kind === 'select' && edge.body.columns.map((c) => c.name), ['id', 'timestamp', 'path', 'status_code']);
    assert.equal(edge.limit?.kind === 'literal' && edge.limit.value.type === 'number' ? edge.limit.value.value : undefined, '100');
    assert.equal(edge.orderBy.length, 1);
    assert.equal(edge.orderBy[0]?.desc, true);
    const key = edge.orderBy[0]?.expr;
    assert.ok(key?.kind === 'column' && key.column === 'timestamp' && key.from.kind === 'table', 'ordered by the table column itself');
  });

  test('an ORDER BY position or alias maps to the CTE column', () => {
    const { after } = rewritten(`select id, timestamp as ts from edge_logs ${edgeJoins} order by 2 desc, id limit 5`);
    assert.equal(merged(after, 'edge_logs').orderBy.length, 2);
  });

  test('with no UNNEST the outer query and the limited CTE become one SELECT over the table', () => {
    const { after } = rewritten(
      "select timestamp, id, event_message as msg from postgres_logs where regexp_contains(event_message, 'x') order by 1 desc, id limit 100",
    );
    assert.ok(!after.with.some((c) => c.name === 'postgres_logs'), 'the CTE is gone');
    assert.ok(after.body.kind === 'select' && after.body.from?.first.kind === 'range' && after.body.from.first.range.kind === 'table');
    assert.deepEqual(
      after.body.columns.map((c) => c.name),
      ['timestamp', 'id', 'msg'],
    );
    assert.equal(after.orderBy.length, 2);
    const where = after.body.where;
    assert.ok(where?.kind === 'binary' && where.op === 'and', "the CTE's own filter and the caller's");
  });

  test('a row-wise WHERE on the outer query is applied inside the CTE too, in its terms', () => {
    const { after } = rewritten(
      `select id from edge_logs ${edgeJoins} where response.status_code = 200 and regexp_contains(event_message, 'x') order by timestamp desc limit 10`,
    );
    const edge = merged(after, 'edge_logs');
    assert.equal(edge.orderBy.length, 1);
    const where = edge.body.kind === 'select' ? edge.body.where : undefined;
    assert.ok(where?.kind === 'binary' && where.op === 'and', "the CTE's own filter and the caller's");
    const text = JSON.stringify(where.right, (k, v) => (k === 'from' ? v.kind : k === 'type' ? undefined : v));
    assert.match(text, /"fields":\["response","status_code"\]/);
    assert.match(text, /"column":"metadata"/);
  });

  test('ClickHouse declares it, DuckDB does not', () => {
    const prepared = prepareEndpointQuery({
      saved: logsAllSql,
      catalog,
      sandboxable: true,
      caller: { sql: `select id, timestamp from edge_logs ${edgeJoins} order by timestamp desc limit 100` },
    });
    assert.doesNotMatch(generateClickHouse(prepared.ast, { catalog, database: 'quarry' }).sql, /^WITH/);
    assert.match(generateDuckDb(prepared.ast, { catalog }).sql, /^WITH/);
  });

  const untouched: [string, string][] = [
    ['a WHERE with a subquery', 'select id from edge_logs where id in (select id from postgres_logs) order by timestamp desc limit 10'],
    ['an ORDER BY on a field below a CTE column', `select id from edge_logs ${edgeJoins} order by response.status_code desc limit 10`],
    ['no LIMIT', 'select id from edge_logs order by timestamp desc'],
    ['an OFFSET', 'select id from edge_logs order by timestamp desc limit 10 offset 5'],
    ['an aggregate', 'select count(*) as n from edge_logs order by n limit 10'],
    ['the CTE read twice', 'select a.id from edge_logs as a cross join (select count(*) as n from edge_logs) as b order by a.timestamp desc limit 10'],
    ['a join that is not a record UNNEST', 'select e.id from edge_logs as e join postgres_logs as p on e.id = p.id order by e.timestamp desc limit 10'],
    [
      'a grouped CTE of the caller',
      'with g as (select event_message, count(*) as n from edge_logs group by event_message) select event_message from g where n > 1 order by event_message limit 2',
    ],
    [
      'a CTE of the caller with its own LIMIT',
      'with x as (select id, timestamp from edge_logs order by timestamp limit 3) select id from x order by timestamp desc limit 2',
    ],
  ];
  for (const [why, sql] of untouched) {
    test(`not with ${why}`, () => {
      const { before, after } = rewritten(sql);
      assert.equal(after, before);
    });
  }
});

/** Each caller query; the reference is the same query with the rewrite kept out. */
const CALLERS: (string | [string, string])[] = [
  [
    'with d as (select timestamp_sub(current_timestamp(), interval 100000 day) as s, @project as p) select count(*) as n, max((select p from d)) as p from edge_logs where timestamp >= (select s from d)',
    'with d as (select timestamp_sub(current_timestamp(), interval 100000 day) as s, @project as p) select count(*) as n, max((select p from d limit 1)) as p from edge_logs where timestamp >= (select s from d limit 1)',
  ],
  `select id, timestamp, request.method, request.path, response.status_code from edge_logs ${edgeJoins} order by timestamp desc, id limit 3`,
  `select id, timestamp, event_message from edge_logs ${edgeJoins} order by timestamp, id limit 2`,
  'select id, timestamp as ts from postgres_logs cross join unnest(metadata) as m order by 2 desc, 1 limit 2',
  'select id, upper(event_message) as msg from auth_logs order by timestamp desc, id limit 1',
  `select id, timestamp from edge_logs ${edgeJoins} where response.status_code >= 200 and regexp_contains(event_message, '[a-z]') order by timestamp desc, id limit 2`,
  "select id, timestamp, parsed.error_severity from postgres_logs cross join unnest(metadata) as m cross join unnest(m.parsed) as parsed where parsed.error_severity in ('ERROR', 'LOG') order by timestamp desc, id limit 2",
  // merged into one SELECT (no UNNEST)
  "select timestamp, id, event_message as msg from postgres_logs where regexp_contains(event_message, 'a') order by 1 desc, id limit 3",
  // a grouped CTE of the caller: its filter on an aggregate must stay outside it
  'with g as (select event_message, count(*) as n from edge_logs group by event_message) select event_message, n from g where n > 0 order by event_message limit 2',
  'with g as (select distinct event_message from edge_logs) select event_message from g order by event_message desc limit 1',
];

for (const engineName of engines) {
  describe(`rewrites on ${engineName}: the rows of the query as written`, () => {
    let engine: QueryTestEngine;
    before(async () => {
      engine = await openQueryTestEngine(engineName, supabaseSources, supabaseData);
    });
    after(async () => {
      await engine.close();
    });
    for (const entry of CALLERS) {
      const [caller, written] = typeof entry === 'string' ? [entry, `${entry} offset 0`] : entry;
      test(caller, async () => {
        const params = { project: 'default', iso_timestamp_start: null, iso_timestamp_end: null };
        const run = (sql: string) =>
          engine.query.run(prepareEndpointQuery({ saved: logsAllSql, catalog: engine.catalog, sandboxable: true, caller: { sql } }), params, {
            timeoutMs: 30_000,
            maxRows: 1000,
          });
        const limited = await run(caller);
        const reference = await run(written);
        assert.ok(reference.rows.length > 0, 'the fixture has rows for this query');
        assert.deepEqual(limited.rows, reference.rows);
      });
    }
  });
}
