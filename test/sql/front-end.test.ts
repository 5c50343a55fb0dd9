/** Parsing, analysis, validation and the sandbox merge, without an engine. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { logsAllSql, usageApiCountsSql } from '../../src/endpoints/supabase/index.ts';
import { isQuarryError } from '../../src/errors.ts';
import { and, col, countStar, eq, fn, lit, param, select, table, unnest } from '../../src/sql/build.ts';
import { analyse, checkSavedQuery, parseSql, prepareEndpointQuery } from '../../src/sql/index.ts';
import { mergeSandboxed } from '../../src/sql/sandbox.ts';
import { validateQuery } from '../../src/sql/validate.ts';
import { supabaseSources } from './fixtures.ts';
import { makeCatalog } from './support.ts';

const catalog = makeCatalog(supabaseSources);

function rejects(fnToRun: () => unknown, code: string, message?: RegExp) {
  assert.throws(fnToRun, (e: unknown) => {
    assert.ok(isQuarryError(e), String(e));
    assert.equal(e.code, code, e.message);
    if (message) assert.match(e.message, message);
    return true;
  });
}

describe('parseSql', () => {
  test('reads @parameters from the AST, not from text', () => {
    const q = parseSql("select '@not_a_param' as s, `@quoted` from t where a = @real -- @comment");
    assert.deepEqual(analyse(q).params, ['real']);
  });

  test('accepts Studio shapes: leading comments, trailing semicolon, trailing comma before FROM', () => {
    const q = parseSql('-- a comment\nselect id, timestamp, from edge_logs;');
    assert.equal(q.body.kind, 'select');
    if (q.body.kind === 'select') assert.equal(q.body.columns.length, 2);
  });

  test('parse errors name the line and column', () => {
    rejects(() => parseSql('select id\nfrom t\nwhere )'), 'PARSE_ERROR', /line 3, column 7/);
  });

  test('parse errors at the end of the text say so', () => {
    rejects(() => parseSql('select id from'), 'PARSE_ERROR', /end of the query/);
  });

  test('an empty query is a parse error', () => {
    rejects(() => parseSql('  -- nothing'), 'PARSE_ERROR');
  });

  test('backtick source names are one dotted name', () => {
    const q = parseSql('select id from `cloudflare.logs.prod` as t');
    assert.deepEqual(analyse(q).tables, [{ name: 'cloudflare.logs.prod', cte: false }]);
  });

  test('date parts in timestamp_trunc become datepart nodes', () => {
    const q = parseSql('select timestamp_trunc(ts, minute) from t');
    assert.ok(q.body.kind === 'select');
    assert.deepEqual((q.body.columns[0]!.expr as { readonly args: readonly unknown[] }).args[1], { kind: 'datepart', part: 'minute' });
  });

  test('constructs outside the allow-list are refused by name', () => {
    rejects(() => parseSql('select a from t tablesample system (10 percent)'), 'QUERY_NOT_ALLOWED', /TABLESAMPLE/);
    rejects(() => parseSql('select a from t where a ilike "x"'), 'QUERY_NOT_ALLOWED', /ILIKE/);
    rejects(() => parseSql('select (1, 2) as s'), 'QUERY_NOT_ALLOWED', /tuples/);
  });
});

describe('analyse', () => {
  test('finds CTE names, tables at any depth, and columns', () => {
    const q = parseSql(`with a as (select x from src1), b as (select x from a union all select y from (select y from src2))
select b.x from b where exists (select 1 from src3 where src3.z = b.x)`);
    const info = analyse(q);
    assert.deepEqual(info.ctes, ['a', 'b']);
    assert.deepEqual(info.tables, [
      { name: 'src1', cte: false },
      { name: 'a', cte: true },
      { name: 'src2', cte: false },
      { name: 'b', cte: true },
      { name: 'src3', cte: false },
    ]);
    assert.ok(info.columns.includes('src3.z'));
  });

  test('a CTE is not visible before it is defined', () => {
    const q = parseSql('with a as (select x from b), b as (select 1 as x) select x from a');
    assert.deepEqual(analyse(q).tables[0], { name: 'b', cte: false });
  });
});

describe('validation', () => {
  test('the saved queries are valid and declare their parameters', () => {
    assert.deepEqual(checkSavedQuery(logsAllSql, catalog), {
      params: ['project', 'iso_timestamp_start', 'iso_timestamp_end'],
      ctes: [
        'edge_logs',
        'postgres_logs',
        'function_edge_logs',
        'function_logs',
        'auth_logs',
        'realtime_logs',
        'storage_logs',
        'postgrest_logs',
        'pgbouncer_logs',
      ],
    });
    assert.deepEqual(checkSavedQuery(usageApiCountsSql, catalog).ctes, ['dates', 'chart_counts']);
  });

  test('a saved query may only name known sources', () => {
    rejects(() => checkSavedQuery('select id from `nope.logs`', catalog), 'QUERY_NOT_ALLOWED', /can't find source nope.logs/);
  });

  test('functions outside the allow-list are restricted', () => {
    rejects(() => checkSavedQuery('select sleep(10) as x', catalog), 'QUERY_NOT_ALLOWED', /Restricted function sleep/);
    rejects(() => checkSavedQuery('select `pg_catalog.version`() as x', catalog), 'QUERY_NOT_ALLOWED');
  });

  test('sandboxed queries may read only the CTEs', () => {
    const caller = parseSql('select id from edge_logs join `postgres.logs` p on true join other on true');
    rejects(() => validateQuery(caller, { catalog, sandboxCtes: ['edge_logs'] }), 'QUERY_NOT_ALLOWED', /Table not found in CTE: \(postgres.logs, other\)/);
  });

  test('window functions need OVER; scalars refuse it', () => {
    rejects(() => checkSavedQuery('select row_number() as n', catalog), 'INVALID_QUERY', /OVER/);
    rejects(() => checkSavedQuery('select lower("a") over () as n', catalog), 'INVALID_QUERY');
  });
});

describe('sandbox merge', () => {
  test("the caller's query replaces the final SELECT and its LIMIT, keeping the CTEs", () => {
    const saved = parseSql('with a as (select 1 as x), b as (select x from a) select x from a limit 100');
    const caller = parseSql('with c as (select x from b) select x from c order by x');
    const merged = mergeSandboxed(saved, caller);
    assert.deepEqual(
      merged.with.map((c) => c.name),
      ['a', 'b', 'c'],
    );
    assert.equal(merged.limit, undefined);
    assert.equal(merged.orderBy.length, 1);
  });

  test('an AST built by hand (as LQL does) goes through the same checks', () => {
    const ast = select({
      columns: [col('t', 'id'), [fn('upper', [col('m', 'request', 'method')]), 'method']],
      from: table('edge_logs', 't'),
      joins: [{ type: 'cross', table: unnest(col('t', 'metadata'), 'm') }],
      where: and(eq(col('t', 'id'), lit('e1')), eq(param('project'), param('project'))),
      limit: 5,
    });
    const prepared = prepareEndpointQuery({ saved: logsAllSql, caller: { ast }, catalog, sandboxable: true });
    assert.equal(prepared.ast.with.length, 9);
    const bad = select({ columns: [countStar()], from: 'cloudflare.logs.prod' });
    rejects(() => prepareEndpointQuery({ saved: logsAllSql, caller: { ast: bad }, catalog, sandboxable: true }), 'QUERY_NOT_ALLOWED');
  });
});

describe('parameters of AST callers', () => {
  test('an AST caller (LQL) may bring parameters of its own; SQL text may not', () => {
    const ast = select({ columns: [col('id')], from: 'edge_logs', where: eq(col('id'), param('__lql_0')) });
    const prepared = prepareEndpointQuery({ saved: logsAllSql, caller: { ast }, catalog, sandboxable: true });
    assert.deepEqual(prepared.params, ['project', 'iso_timestamp_start', 'iso_timestamp_end', '__lql_0']);
    rejects(
      () => prepareEndpointQuery({ saved: logsAllSql, caller: { sql: 'select id from edge_logs where id = @__lql_0' }, catalog, sandboxable: true }),
      'INVALID_QUERY',
      /@__lql_0/,
    );
  });
});
