/** What the DuckDB generator emits, and the plans DuckDB makes of it. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { logsAllSql } from '../../../src/endpoints/supabase/index.ts';
import { generateDuckDb } from '../../../src/engines/duckdb/generator.ts';
import { prepareEndpointQuery } from '../../../src/sql/index.ts';
import { supabaseData, supabaseSources } from '../../sql/fixtures.ts';
import { makeCatalog, openTestDb, type TestDb } from '../../sql/support.ts';

const catalog = makeCatalog(supabaseSources);

function gen(callerSql?: string, maxRows = 1000) {
  const p = prepareEndpointQuery({ saved: logsAllSql, caller: callerSql ? { sql: callerSql } : undefined, catalog, sandboxable: true });
  return generateDuckDb(p.ast, { catalog, maxRows });
}

/** The SQL of one generated CTE. */
function cteSql(sql: string, name: string): string {
  const start = sql.indexOf(`"${name}" AS (`);
  assert.ok(start >= 0, `${name} not generated`);
  let depth = 0;
  for (let i = sql.indexOf('(', start); i < sql.length; i++) {
    if (sql[i] === '(') depth++;
    if (sql[i] === ')' && --depth === 0) return sql.slice(start, i + 1);
  }
  return sql.slice(start);
}

describe('generated SQL', () => {
  test('parameters become $name, sources become quoted physical tables', () => {
    const g = gen();
    assert.deepEqual(g.params.sort(), ['iso_timestamp_end', 'iso_timestamp_start', 'project']);
    assert.match(g.sql, /"t"\."project" = \$project/);
    assert.match(g.sql, /FROM "src_edge" AS "t"/);
    assert.doesNotMatch(g.sql, /@project|cloudflare/);
  });

  test('UNNEST of records is field access: no join at all', () => {
    const g = gen(`select request.path, response.status_code from edge_logs
      cross join unnest(metadata) as m cross join unnest(m.request) as request cross join unnest(m.response) as response`);
    assert.doesNotMatch(g.sql, /JOIN|unnest/i);
    assert.match(g.sql, /"edge_logs"\."metadata"\."request"\."path"/);
  });

  test('UNNEST of a list is a select-list unnest in a derived table, never a lateral join', () => {
    const g = gen('select c.host from storage_logs cross join unnest(metadata) as m cross join unnest(m.context) as c');
    assert.match(
      g.sql,
      /\(SELECT "storage_logs"\.\*, unnest\("storage_logs"\."metadata"\."context"\) AS "__u\d+" FROM "storage_logs" AS "storage_logs"\) AS "storage_logs"/,
    );
    assert.doesNotMatch(g.sql, /JOIN\s+unnest|JOIN\s+\(SELECT unnest/i);
  });

  test('LEFT JOIN UNNEST keeps empty lists by unnesting [NULL]', () => {
    const g = gen('select c.host from storage_logs cross join unnest(metadata) as m left join unnest(m.context) as c on true');
    assert.match(g.sql, /CASE WHEN len\(.*\) > 0 THEN .* ELSE \[NULL\] END/);
  });

  test('the outer LIMIT of a plain projection is pushed into the newest-first CTE', () => {
    const edge = cteSql(gen().sql, 'edge_logs');
    assert.match(edge, /ORDER BY "t"\."timestamp" DESC NULLS LAST LIMIT 100\)$/);
  });

  test('the newest-first top-n is found on the narrow columns first, then read by rowid', () => {
    const edge = cteSql(gen().sql, 'edge_logs');
    assert.match(
      edge,
      /WHERE \("t"\."rowid" IN \(SELECT "t"\."rowid" AS "rowid" FROM "src_edge" AS "t" WHERE .*"t"\."project" = \$project.* ORDER BY "t"\."timestamp" DESC NULLS LAST LIMIT 100\)\) ORDER BY "t"\."timestamp" DESC NULLS LAST LIMIT 100\)$/,
    );
    // Not for aggregates or filtered callers.
    assert.doesNotMatch(gen('select count(*) as n from edge_logs').sql, /rowid/);
    assert.doesNotMatch(gen("select id from edge_logs where id = 'x' limit 1").sql, /rowid/);
  });

  test('max rows caps the pushed limit too', () => {
    const edge = cteSql(gen('select id from edge_logs', 25).sql, 'edge_logs');
    assert.match(edge, /LIMIT 25\)$/);
  });

  test('no push when the caller filters; inner ORDER BY dropped when the caller aggregates', () => {
    assert.doesNotMatch(cteSql(gen("select id from edge_logs where id = 'x' limit 1").sql, 'edge_logs'), /LIMIT/);
    const agg = cteSql(gen('select count(*) as n from edge_logs').sql, 'edge_logs');
    assert.doesNotMatch(agg, /ORDER BY|LIMIT/);
  });

  test('CTEs the query does not read are not generated', () => {
    const g = gen('select id from auth_logs');
    assert.match(g.sql, /"auth_logs" AS \(/);
    assert.doesNotMatch(g.sql, /edge_logs|postgres_logs|pgbouncer_logs/);
  });

  test('missing nested paths read NULL and are reported once', () => {
    const g = gen('select r.search, r.search as again, r.path from edge_logs cross join unnest(metadata) as m cross join unnest(m.request) as r');
    assert.deepEqual(g.warnings, ['r.search']);
    assert.match(g.sql, /NULL AS "search"/);
  });

  test('output columns carry DATETIME apart from TIMESTAMP', () => {
    const g = gen("select timestamp, datetime(timestamp, 'UTC') as dt from edge_logs");
    assert.deepEqual(
      g.columns.map((c) => [c.name, c.type]),
      [
        ['timestamp', { k: 'scalar', t: 'timestamp' }],
        ['dt', { k: 'scalar', t: 'datetime' }],
      ],
    );
  });
});

describe('DuckDB plans', () => {
  let t: TestDb;
  before(async () => {
    t = await openTestDb(supabaseSources, supabaseData);
  });
  after(() => t.db.close());

  async function plan(sql: string): Promise<string> {
    const g = gen(sql);
    const stmt = await t.conn.prepare(`EXPLAIN ${g.sql}`);
    stmt.bind({ project: 'default', iso_timestamp_start: null, iso_timestamp_end: null } as never);
    const r = await stmt.runAndReadAll();
    return r
      .getRows()
      .map((row) => row.map(String).join('\n'))
      .join('\n');
  }

  test('logs.all default select is a top-n, not a full sort', async () => {
    const p = await plan('select id, timestamp, event_message, metadata from edge_logs limit 100');
    assert.match(p, /TOP_N/);
    assert.doesNotMatch(p, /\bORDER_BY\b/);
  });

  test('the Studio edge preview plan has no unnest operator or lateral join', async () => {
    const p = await plan(`select id, request.path from edge_logs cross join unnest(metadata) as m cross join unnest(m.request) as request
      order by timestamp desc limit 100`);
    assert.doesNotMatch(p, /UNNEST|DELIM_JOIN/);
  });
});
