/**
 * Top n into a CTE (src/sql/rewrite.ts, `limitCteToTopN`): a caller's `ORDER BY ... LIMIT n` over a
 * CTE and its record UNNESTs also limits the CTE, when that cannot change the answer; the same rows
 * come back on every engine.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { logsAllSql } from '../../src/endpoints/supabase/index.ts';
import { prepareEndpointQuery } from '../../src/sql/index.ts';
import { optimise } from '../../src/sql/optimise.ts';
import { resolveQuery } from '../../src/sql/resolve.ts';
import type { RQuery } from '../../src/sql/resolved.ts';
import { limitCteToTopN } from '../../src/sql/rewrite.ts';
import { engines, openQueryTestEngine, type QueryTestEngine } from '../support/engines.ts';
import { supabaseData, supabaseSources } from './fixtures.ts';
import { makeCatalog } from './support.ts';

const catalog = makeCatalog(supabaseSources);

function rewritten(caller: string): { before: RQuery; after: RQuery } {
  const prepared = prepareEndpointQuery({ saved: logsAllSql, catalog, sandboxable: true, caller: { sql: caller } });
  const before = resolveQuery(optimise(prepared.ast), { catalog }).query;
  return { before, after: limitCteToTopN(before) };
}

function cte(q: RQuery, name: string): RQuery {
  const found = q.with.find((c) => c.name === name);
  assert.ok(found, `CTE ${name}`);
  return found.query;
}

const edgeJoins = 'cross join unnest(metadata) as m cross join unnest(m.request) as request cross join unnest(m.response) as response';

describe('top n into a CTE: when it applies', () => {
  test("Studio's edge preview (record UNNESTs, ORDER BY a CTE column) limits edge_logs", () => {
    const { after } = rewritten(`select id, timestamp, request.path, response.status_code from edge_logs ${edgeJoins} order by timestamp desc limit 100`);
    const edge = cte(after, 'edge_logs');
    assert.equal(edge.limit?.kind === 'literal' && edge.limit.value.type === 'number' ? edge.limit.value.value : undefined, '100');
    assert.equal(edge.orderBy.length, 1);
    assert.equal(edge.orderBy[0]?.desc, true);
    const key = edge.orderBy[0]?.expr;
    assert.ok(key?.kind === 'column' && key.column === 'timestamp' && key.from.kind === 'table', 'ordered by the table column itself');
  });

  test('an ORDER BY position or alias maps to the CTE column', () => {
    const { after } = rewritten('select id, timestamp as ts from edge_logs order by 2 desc, id limit 5');
    assert.equal(cte(after, 'edge_logs').orderBy.length, 2);
  });

  test('a row-wise WHERE on the outer query is applied inside the CTE too, in its terms', () => {
    const { after } = rewritten(`select id from edge_logs ${edgeJoins} where response.status_code = 200 and regexp_contains(event_message, 'x') order by timestamp desc limit 10`);
    const edge = cte(after, 'edge_logs');
    assert.equal(edge.orderBy.length, 1);
    const where = edge.body.kind === 'select' ? edge.body.where : undefined;
    assert.ok(where?.kind === 'binary' && where.op === 'and', 'the CTE keeps its own filter and adds the caller\'s');
    const text = JSON.stringify(where.right, (k, v) => (k === 'from' ? v.kind : k === 'type' ? undefined : v));
    assert.match(text, /"fields":\["response","status_code"\]/);
    assert.match(text, /"column":"metadata"/);
    assert.ok(after.body.kind === 'select' && after.body.where, 'the outer WHERE stays');
  });

  const untouched: [string, string][] = [
    ['a WHERE with a subquery', 'select id from edge_logs where id in (select id from postgres_logs) order by timestamp desc limit 10'],
    ['an ORDER BY on a field below a CTE column', `select id from edge_logs ${edgeJoins} order by response.status_code desc limit 10`],
    ['no LIMIT', 'select id from edge_logs order by timestamp desc'],
    ['an OFFSET', 'select id from edge_logs order by timestamp desc limit 10 offset 5'],
    ['an aggregate', 'select count(*) as n from edge_logs order by n limit 10'],
    ['the CTE read twice', 'select a.id from edge_logs as a cross join (select count(*) as n from edge_logs) as b order by a.timestamp desc limit 10'],
    ['a join that is not a record UNNEST', 'select e.id from edge_logs as e join postgres_logs as p on e.id = p.id order by e.timestamp desc limit 10'],
    ['a CTE of the caller with its own LIMIT', 'with x as (select id, timestamp from edge_logs order by timestamp limit 3) select id from x order by timestamp desc limit 2'],
  ];
  for (const [why, sql] of untouched) {
    test(`not with ${why}`, () => {
      const { before, after } = rewritten(sql);
      assert.equal(after, before);
    });
  }
});

/** Each caller query; `offset 0` keeps the rewrite out, for the reference rows. */
const CALLERS = [
  `select id, timestamp, request.method, request.path, response.status_code from edge_logs ${edgeJoins} order by timestamp desc, id limit 3`,
  `select id, timestamp, event_message from edge_logs ${edgeJoins} order by timestamp, id limit 2`,
  'select id, timestamp as ts from postgres_logs cross join unnest(metadata) as m order by 2 desc, 1 limit 2',
  'select id, upper(event_message) as msg from auth_logs order by timestamp desc, id limit 1',
  `select id, timestamp from edge_logs ${edgeJoins} where response.status_code >= 200 and regexp_contains(event_message, '[a-z]') order by timestamp desc, id limit 2`,
  "select id, timestamp, parsed.error_severity from postgres_logs cross join unnest(metadata) as m cross join unnest(m.parsed) as parsed where parsed.error_severity in ('ERROR', 'LOG') order by timestamp desc, id limit 2",
];

for (const engineName of engines) {
  describe(`top n into a CTE on ${engineName}: the rows of the query as written`, () => {
    let engine: QueryTestEngine;
    before(async () => {
      engine = await openQueryTestEngine(engineName, supabaseSources, supabaseData);
    });
    after(async () => {
      await engine.close();
    });
    for (const caller of CALLERS) {
      test(caller, async () => {
        const params = { project: 'default', iso_timestamp_start: null, iso_timestamp_end: null };
        const run = (sql: string) =>
          engine.query.run(prepareEndpointQuery({ saved: logsAllSql, catalog: engine.catalog, sandboxable: true, caller: { sql } }), params, {
            timeoutMs: 30_000,
            maxRows: 1000,
          });
        const limited = await run(caller);
        const reference = await run(`${caller} offset 0`);
        assert.ok(reference.rows.length > 0, 'the fixture has rows for this query');
        assert.deepEqual(limited.rows, reference.rows);
      });
    }
  });
}
