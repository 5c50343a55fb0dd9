/**
 * Bind-time specialisation (src/sql/bind-time.ts): tests of a parameter alone are decided from the
 * run's values, and the result is the same query an engine would have run, row for row, on every
 * engine and for every class of value (NULL, '', one of the query's literals, anything else).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { logsAllSql, usageApiCountsSql } from '../../src/endpoints/supabase/index.ts';
import { type BindValue, type PreparedQuery, prepareEndpointQuery, specialiseForValues } from '../../src/sql/index.ts';
import { engines, openQueryTestEngine, type QueryTestEngine } from '../support/engines.ts';
import { supabaseData, supabaseSources } from './fixtures.ts';
import { makeCatalog } from './support.ts';

const catalog = makeCatalog(supabaseSources);
const prepare = (sql: string, caller?: string): PreparedQuery =>
  prepareEndpointQuery({ saved: sql, catalog, sandboxable: caller !== undefined, ...(caller !== undefined ? { caller: { sql: caller } } : {}) });
const edge = '`cloudflare.logs.prod`';

describe('bind-time specialisation: the tree', () => {
  const cases: [title: string, sql: string, values: Record<string, BindValue>, expected: string][] = [
    [
      'an optional bound with a value keeps only the comparison',
      `select id from ${edge} as t where t.project = @p and (@s is null or @s = '' or t.timestamp > safe_cast(@s as timestamp))`,
      { p: 'default', s: '2026-11-21T10:00:00Z' },
      `select id from ${edge} as t where t.project = @p and t.timestamp > safe_cast(@s as timestamp)`,
    ],
    [
      'an optional bound that is NULL disappears',
      `select id from ${edge} as t where t.project = @p and (@s is null or @s = '' or t.timestamp > safe_cast(@s as timestamp))`,
      { p: 'default', s: null },
      `select id from ${edge} as t where t.project = @p`,
    ],
    [
      "an optional bound that is '' disappears",
      `select id from ${edge} as t where (@s is null or @s = '' or t.timestamp > safe_cast(@s as timestamp))`,
      { s: '' },
      `select id from ${edge} as t`,
    ],
    [
      'a CASE on IN lists keeps the branch the value takes',
      `select case when @i in ('a', 'b') then 1 when @i = 'c' then 2 else 3 end as x from ${edge}`,
      { i: 'c' },
      `select 2 as x from ${edge}`,
    ],
    [
      'a CASE whose branches are all decided false becomes its ELSE',
      `select case when @i in ('a', 'b') then 1 else 3 end as x from ${edge}`,
      { i: 'zzz' },
      `select 3 as x from ${edge}`,
    ],
    ['a simple CASE on a parameter', `select case @i when 'a' then 'A' when 'b' then 'B' end as x from ${edge}`, { i: 'b' }, `select 'B' as x from ${edge}`],
    [
      'an undecided WHEN before the decided one stays, the decided one becomes the ELSE',
      `select case when id = 'e1' then 0 when @i = 'a' then 1 when @i = 'b' then 2 end as x from ${edge}`,
      { i: 'a' },
      `select case when id = 'e1' then 0 else 1 end as x from ${edge}`,
    ],
    ['NOT and != are decided', `select id from ${edge} where not (@i != 'a') and id is not null`, { i: 'a' }, `select id from ${edge} where id is not null`],
    ['a filter decided FALSE stays a filter', `select id from ${edge} where @i = 'a'`, { i: 'b' }, `select id from ${edge} where false`],
    [
      'a NULL comparison in a filter filters everything',
      `select id from ${edge} where @i = 'a' or @i = 'b'`,
      { i: null },
      `select id from ${edge} where false`,
    ],
    [
      'HAVING and subqueries are specialised too',
      `select id, count(*) as n from ${edge} where id in (select id from ${edge} where @s is null or id = @s) group by id having @m is null or count(*) > 1`,
      { s: null, m: 'x' },
      `select id, count(*) as n from ${edge} where id in (select id from ${edge}) group by id having count(*) > 1`,
    ],
    [
      'a typed value is decided only by IS NULL',
      `select id from ${edge} where (@n is null or @n = '5') and @n is not null`,
      { n: { type: 'int' } },
      `select id from ${edge} where @n = '5'`,
    ],
  ];
  for (const [title, sql, values, expected] of cases) {
    test(title, () => {
      assert.deepEqual(specialiseForValues(prepare(sql), values).ast, prepare(expected).ast);
    });
  }

  test('a NULL outcome used as a value is left for the engine', () => {
    const sql = `select @i = 'a' as x, id from ${edge}`;
    const prepared = prepare(sql);
    assert.equal(specialiseForValues(prepared, { i: null }), prepared);
    assert.deepEqual(specialiseForValues(prepared, { i: 'a' }).ast, prepare(`select true as x, id from ${edge}`).ast);
  });

  test('a query that tests no parameter alone comes back as itself', () => {
    const prepared = prepare(`select id from ${edge} as t where t.project = @p`);
    assert.equal(specialiseForValues(prepared, { p: 'x' }), prepared);
  });

  test('the same outcomes give the same query object, and the values never enter the tree', () => {
    const prepared = prepare(logsAllSql, 'select count(*) as n from edge_logs');
    const a = specialiseForValues(prepared, { project: 'a', iso_timestamp_start: '2026-01-01T00:00:00Z', iso_timestamp_end: null });
    const b = specialiseForValues(prepared, { project: 'b', iso_timestamp_start: '2026-02-02T00:00:00Z', iso_timestamp_end: null });
    const c = specialiseForValues(prepared, { project: 'b', iso_timestamp_start: '', iso_timestamp_end: null });
    assert.equal(a, b);
    assert.notEqual(a, c);
    assert.notEqual(a.ast, prepared.ast);
    assert.equal(a.catalog, prepared.catalog);
    assert.deepEqual(a.params, prepared.params);
    assert.ok(!JSON.stringify(a.ast).includes('2026-01-01'));
    assert.ok(!JSON.stringify(b.ast).includes('2026-02-02'));
  });
});

/** Values of every class for each parameter: NULL, '', each literal the query tests, other text. */
const VALUE_CLASSES: Record<string, (string | null)[]> = {
  project: ['default', 'nope', '', null],
  iso_timestamp_start: [null, '', '2026-11-21T10:00:00Z', '2000-01-01T00:00:00Z'],
  iso_timestamp_end: [null, '', '2026-11-21T10:30:00Z'],
  interval: ['minutely', '1hr', '5min', 'hourly', '3hr', '1day', 'daily', '7d', 'weekly', '', null],
  a: [null, '', 'x', 'y', 'other'],
};

const QUERIES: [name: string, saved: string, caller?: string][] = [
  ['logs.all, count', logsAllSql, 'select count(*) as n from edge_logs'],
  ['logs.all, newest ids', logsAllSql, 'select id from postgres_logs order by timestamp desc, id limit 5'],
  ['usage.api-counts', usageApiCountsSql],
  [
    'CASE, IN, NOT and NULL tests together',
    `select id, case @a when 'x' then 'X' when 'y' then 'Y' end as k,
       case when @a in ('x', 'y') then 1 when @a is null then 2 else 3 end as c,
       @a is null as isnull
     from ${edge} as t
     where (not (@a = 'x') or t.id is not null) and (@a is null or @a != 'y' or t.id = 'e1')
     order by id`,
  ],
];

/** Every combination of the classes of the parameters a query declares. */
function combinations(params: readonly string[]): Record<string, string | null>[] {
  let out: Record<string, string | null>[] = [{}];
  for (const p of params) {
    const classes = VALUE_CLASSES[p] ?? [null, 'v'];
    out = out.flatMap((o) => classes.map((v) => ({ ...o, [p]: v })));
  }
  return out;
}

for (const engineName of engines) {
  describe(`bind-time specialisation on ${engineName}: same rows as the query as written`, () => {
    let engine: QueryTestEngine;
    before(async () => {
      engine = await openQueryTestEngine(engineName, supabaseSources, supabaseData);
    });
    after(async () => {
      await engine.close();
    });

    for (const [name, saved, caller] of QUERIES) {
      test(name, async () => {
        const prepared = prepareEndpointQuery({
          saved,
          catalog: engine.catalog,
          sandboxable: caller !== undefined,
          ...(caller ? { caller: { sql: caller } } : {}),
        });
        let specialisedRuns = 0;
        for (const values of combinations(prepared.params)) {
          const specialised = specialiseForValues(prepared, values);
          if (specialised !== prepared) specialisedRuns++;
          const options = { timeoutMs: 30_000, maxRows: 1000 };
          const asWritten = await engine.query.run(prepared, values, options);
          const decided = await engine.query.run(specialised, values, options);
          assert.deepEqual(decided.rows, asWritten.rows, `values ${JSON.stringify(values)}`);
        }
        assert.ok(specialisedRuns > 0, 'some combination was specialised');
      });
    }
  });
}
