/**
 * Cost and value-size bounds (src/sql/bounds.ts, cost.ts, value-bounds.ts): what legitimate
 * queries reach (printed as figures), the attacks of issue 20 refused before any engine sees them,
 * and the guards printed where a size is known only when the query runs, on every engine.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { logsAllSql, usageApiCountsSql } from '../../src/endpoints/supabase/index.ts';
import { isQuarryError } from '../../src/errors.ts';
import { defaultQueryBounds, prepareEndpointQuery, type QueryBounds } from '../../src/sql/index.ts';
import { parseSql } from '../../src/sql/parse.ts';
import { measureCost, type QueryCost } from '../../src/sql/cost.ts';
import { mergeSandboxed } from '../../src/sql/sandbox.ts';
import { functionCases } from '../corpus/functions.ts';
import { savedCases } from '../corpus/saved.ts';
import { semanticsCases } from '../corpus/semantics.ts';
import { studioCases } from '../corpus/studio.ts';
import { pageCases } from '../corpus/studio-pages/pages.ts';
import { reportCases } from '../corpus/studio-pages/reports.ts';
import { unifiedCases } from '../corpus/studio-pages/unified.ts';
import { joinChain, unionChain } from '../security/query-bombs.ts';
import { engines, openQueryTestEngine, type QueryTestEngine } from '../support/engines.ts';
import { makeCatalog } from './support.ts';
import { supabaseData, supabaseSources } from './fixtures.ts';

const catalog = makeCatalog(supabaseSources);

function prepare(sql: string, bounds?: QueryBounds) {
  return prepareEndpointQuery({ saved: logsAllSql, caller: { sql }, catalog, sandboxable: true, ...(bounds ? { bounds } : {}) });
}

function refused(code: string, ...patterns: RegExp[]) {
  return (e: unknown) => {
    assert.ok(isQuarryError(e), `not a QuarryError: ${String(e)}`);
    assert.equal(e.code, code, e.message);
    assert.equal(e.status, 400);
    for (const p of patterns) assert.match(e.message, p);
    return true;
  };
}

/** Every query of the corpus, Studio's pages included. */
const legitimate: readonly { name: string; sql?: string }[] = [
  ...studioCases,
  ...functionCases,
  ...savedCases,
  ...semanticsCases,
  ...reportCases,
  ...pageCases,
  ...unifiedCases,
];

describe('cost bounds', () => {
  test('legitimate queries stay far below the defaults (figures)', () => {
    const saved = parseSql(logsAllSql);
    const queries: [string, ReturnType<typeof parseSql>][] = [
      ['logs.all', saved],
      ['usage.api-counts', parseSql(usageApiCountsSql)],
    ];
    for (const c of legitimate) {
      try {
        queries.push([c.name, c.sql === undefined ? saved : mergeSandboxed(saved, parseSql(c.sql))]);
      } catch {
        // cases that are meant to be refused before this point (they do not parse or merge)
      }
    }
    const most: Record<keyof QueryCost, [number, string]> = { tableReferences: [0, ''], joins: [0, ''], setOperands: [0, ''], nesting: [0, ''] };
    for (const [name, q] of queries) {
      const cost = measureCost(q);
      for (const k of Object.keys(most) as (keyof QueryCost)[]) if (cost[k] > most[k][0]) most[k] = [cost[k], name];
    }
    console.log(`# ${queries.length} legitimate queries reach at most:`);
    for (const [k, [n, name]] of Object.entries(most)) console.log(`#   ${k}: ${n} (${name})`);
    // Studio's unified logs count reads its CTEs 91 times once they are written out.
    assert.ok(most.tableReferences[0] * 4 <= defaultQueryBounds.maxTableReferences * 3, `table references: ${most.tableReferences[0]}`);
    // Studio's service-flow queries join a table and 14 UNNESTs of its records, each UNNEST counted
    // (the bound is checked before names are resolved, when a record and a list look alike).
    assert.ok(most.joins[0] * 2 <= defaultQueryBounds.maxJoins, `joins: ${most.joins[0]}`);
    assert.ok(most.setOperands[0] * 3 <= defaultQueryBounds.maxSetOperands, `set operands: ${most.setOperands[0]}`);
    assert.ok(most.nesting[0] * 4 <= defaultQueryBounds.maxNesting);
    // And every one of them prepares under the defaults.
    for (const c of legitimate) {
      try {
        prepare(c.sql ?? 'select id from edge_logs');
      } catch (e) {
        assert.ok(!(isQuarryError(e) && e.code === 'QUERY_TOO_COMPLEX'), `${c.name}: ${String(e)}`);
      }
    }
  });

  test('a CTE read twice by a CTE read twice multiplies, measured without inlining', () => {
    assert.equal(measureCost(mergeSandboxed(parseSql(logsAllSql), parseSql(joinChain(3)))).tableReferences, 27);
    assert.equal(measureCost(mergeSandboxed(parseSql(logsAllSql), parseSql(unionChain(5)))).setOperands, 2 + 4 + 8 + 16 + 32);
    const chain = mergeSandboxed(parseSql(logsAllSql), parseSql(joinChain(400)));
    const t = performance.now();
    const cost = measureCost(chain);
    console.log(`# a 400-level chain measured in ${(performance.now() - t).toFixed(1)} ms: ${cost.tableReferences} references`);
    assert.ok(cost.tableReferences > 1e100);
  });

  test('the join chain is QUERY_TOO_COMPLEX, naming the bound, its limit and what it reached', () => {
    assert.throws(() => prepare(joinChain(8)), refused('QUERY_TOO_COMPLEX', /QUERY_MAX_TABLE_REFERENCES/, /limit of 128\b/, /\b6561 table references/));
    assert.doesNotThrow(() => prepare(joinChain(3)));
  });

  test('the UNION ALL doubling chain is QUERY_TOO_COMPLEX; operands are counted after inlining', () => {
    assert.throws(() => prepare(unionChain(12)), refused('QUERY_TOO_COMPLEX', /QUERY_MAX_TABLE_REFERENCES/));
    const loose = { ...defaultQueryBounds, maxTableReferences: 1e9 };
    assert.throws(
      () => prepare(unionChain(12), loose),
      refused('QUERY_TOO_COMPLEX', /QUERY_MAX_SET_OPERANDS/, /8190 set-operation operands/, /limit of 256\b/),
    );
  });

  test('CTEs reading no table still multiply', () => {
    const ctes = ['c0 as (select 1 as x)'];
    for (let k = 1; k <= 10; k++) ctes.push(`c${k} as (select x from c${k - 1} union all select x from c${k - 1})`);
    assert.throws(() => prepare(`with ${ctes.join(', ')} select count(*) as n from c10`), refused('QUERY_TOO_COMPLEX', /1024 table references/));
  });

  test('join fan-out and nesting have bounds of their own', () => {
    const names = Array.from({ length: 40 }, (_, i) => `t${i}`);
    const wide = `select count(*) as n from edge_logs t0 ${names
      .slice(1)
      .map((a, i) => `join edge_logs ${a} on ${a}.id = t${i}.id`)
      .join(' ')}`;
    const loose = { ...defaultQueryBounds, maxTableReferences: 1e9 };
    assert.throws(() => prepare(wide, loose), refused('QUERY_TOO_COMPLEX', /QUERY_MAX_JOINS/, /40 items joined/, /limit of 32\b/));
    // Items inside parenthesised joins count as the FROM's own.
    const nested = `select count(*) as n from edge_logs t0 ${names
      .slice(1)
      .map((a) => `join (edge_logs ${a} cross join unnest(${a}.metadata) as m${a})`)
      .join(' on true ')} on true`;
    assert.throws(() => prepare(nested, loose), refused('QUERY_TOO_COMPLEX', /QUERY_MAX_JOINS/, /79 items joined/));
    const ctes: string[] = [];
    let prev = 'edge_logs';
    for (let k = 1; k <= 40; k++) {
      ctes.push(`c${k} as (select id from ${prev})`);
      prev = `c${k}`;
    }
    assert.throws(() => prepare(`with ${ctes.join(', ')} select id from ${prev}`), refused('QUERY_TOO_COMPLEX', /QUERY_MAX_NESTING/, /limit of 32\b/));
  });

  test('the bounds are the query as it runs: a saved query alone is bounded too', () => {
    const saved = `with e as (select id from \`cloudflare.logs.prod\`), ${joinChain(6).slice('with '.length).replaceAll('edge_logs', 'e')}`;
    assert.throws(() => prepareEndpointQuery({ saved, catalog, sandboxable: false }), refused('QUERY_TOO_COMPLEX'));
  });

  test('bounds are configurable (QUERY_MAX_*), and the defaults come from config', () => {
    const tight = { ...defaultQueryBounds, maxTableReferences: 2 };
    assert.throws(() => prepare(joinChain(1), tight), refused('QUERY_TOO_COMPLEX', /limit of 2\b/));
    assert.doesNotThrow(() => prepare(joinChain(1)));
    assert.deepEqual(loadConfig({}).queryBounds, defaultQueryBounds);
    const env = {
      QUERY_MAX_TABLE_REFERENCES: '500',
      QUERY_MAX_JOINS: '8',
      QUERY_MAX_SET_OPERANDS: '100',
      QUERY_MAX_NESTING: '10',
      QUERY_MAX_VALUE_BYTES: '4MiB',
      QUERY_MAX_VALUE_GROWTH: '32',
    };
    assert.deepEqual(loadConfig(env).queryBounds, {
      maxTableReferences: 500,
      maxJoins: 8,
      maxSetOperands: 100,
      maxNesting: 10,
      maxValueBytes: 4 * 2 ** 20,
      maxValueGrowth: 32,
    });
    assert.throws(() => loadConfig({ QUERY_MAX_VALUE_BYTES: 'lots' }), /QUERY_MAX_VALUE_BYTES/);
  });
});

describe('value-size bounds, constant arguments (before any engine)', () => {
  // Over rows a value may take a 256th of QUERY_MAX_VALUE_BYTES (4096 of 1048576 bytes); computed once, all of it.
  const tooLarge = (fn: string, limit = 4096) =>
    refused('INVALID_QUERY', new RegExp(`^${fn} would build a value larger than ${limit} bytes, the limit QUERY_MAX_VALUE_BYTES sets: it asks for \\d+$`));
  for (const [sql, fn] of [
    ['select repeat(id, 40000000) as r from edge_logs', 'REPEAT'],
    ["select repeat('abcd', 300000) as r from edge_logs", 'REPEAT'],
    ['select lpad(id, 1000000000) as r from edge_logs', 'LPAD'],
    ["select rpad(id, 2000000, 'x') as r from edge_logs", 'RPAD'],
    ["select format('%.1000000000f', 1.5) as r from edge_logs", 'FORMAT'],
    ["select format('%1000000000d', 1) as r from edge_logs", 'FORMAT'],
    ["select format('%600000d%600000d', 1, 2) as r from edge_logs", 'FORMAT'],
    ['select lpad(id, 5000) as r from edge_logs', 'LPAD'],
  ] as const) {
    test(`${sql} → 400 naming ${fn} and the limit`, () => {
      const t = performance.now();
      assert.throws(() => prepare(sql), tooLarge(fn));
      console.log(`# refused in ${(performance.now() - t).toFixed(1)} ms`);
    });
  }

  test('a value computed once may take the whole QUERY_MAX_VALUE_BYTES, one computed for every row a 256th', () => {
    assert.doesNotThrow(() => prepare("select length(lpad('x', 1000000)) as n"));
    assert.throws(() => prepare("select lpad('x', 2000000) as r"), tooLarge('LPAD', 1048576));
    // The first FROM item is computed once, and so is a joined UNNEST that reads no column; one
    // that reads the row's columns, once per row.
    assert.doesNotThrow(() => prepare("select count(*) as n from unnest(split(lpad('x', 200000, ','), ',')) as p"));
    assert.doesNotThrow(() => prepare("select count(*) as n from edge_logs cross join unnest(split(lpad('x', 200000, ','), ',')) as p"));
    assert.throws(() => prepare("select count(*) as n from edge_logs e cross join unnest(split(lpad(e.id, 200000, ','), ',')) as p"), tooLarge('LPAD'));
  });

  test('sizes within the limit pass, and the limit is configurable', () => {
    for (const sql of [
      "select repeat('ab', 1000) as r from edge_logs",
      'select lpad(id, 4000) as r from edge_logs',
      "select format('%1000d|%.20f', 1, 1.5) as r from edge_logs",
    ]) {
      assert.doesNotThrow(() => prepare(sql), sql);
    }
    assert.throws(
      () => prepare('select lpad(id, 100) as r from edge_logs', { ...defaultQueryBounds, maxValueBytes: 2560 }),
      refused('INVALID_QUERY', /LPAD would build a value larger than 10 bytes/),
    );
  });

  test('a size known only when it runs marks the call for the engine guard', () => {
    const body = prepare('select repeat(id, length(id)) as r from edge_logs').ast.body;
    assert.ok(body.kind === 'select');
    assert.equal(body.columns[0]?.expr.kind === 'func' && body.columns[0].expr.maxBytes, 4096);
    assert.doesNotMatch(JSON.stringify(prepare("select repeat('ab', 3) as r from edge_logs").ast), /maxBytes/);
  });
});

for (const engine of engines) {
  describe(`${engine}: value-size guards in the printed SQL`, () => {
    let t: QueryTestEngine;
    before(async () => {
      t = await openQueryTestEngine(engine, supabaseSources, supabaseData);
    });
    after(() => t.close());

    const run = async (sql: string, bounds?: QueryBounds) =>
      (
        await t.query.run(
          prepareEndpointQuery({ saved: logsAllSql, caller: { sql }, catalog: t.catalog, sandboxable: true, ...(bounds ? { bounds } : {}) }),
          { project: 'default' },
          { timeoutMs: 10_000, maxRows: 1000 },
        )
      ).rows;

    for (const [sql, fn] of [
      ['select length(repeat(id, length(id) * 40000000)) as n from edge_logs', 'REPEAT'],
      ['select length(lpad(id, length(id) * 500000000)) as n from edge_logs', 'LPAD'],
      ["select length(rpad(id, length(id) * 500000000, 'ab')) as n from edge_logs", 'RPAD'],
    ] as const) {
      test(`${sql} → 400 INVALID_QUERY before the value is built`, async () => {
        const started = performance.now();
        await assert.rejects(run(sql), refused('INVALID_QUERY', new RegExp(`${fn} would build a value larger than 4096 bytes`)));
        console.log(`# ${engine}: refused in ${(performance.now() - started).toFixed(0)} ms`);
      });
    }

    test('sizes within the limit run, NULL sizes give NULL', async () => {
      const rows = await run(
        "select id, length(repeat(id, length(id) * 100)) as r, length(lpad(id, length(id) + 5)) as l, length(rpad(id, length(id) + 5, '-')) as p, repeat(id, cast(null as int64)) as z from edge_logs order by id limit 1",
      );
      const id = String(rows[0]!.id);
      assert.deepEqual(rows, [{ id, r: id.length * id.length * 100, l: id.length + 5, p: id.length + 5, z: null }]);
    });

    test('the guard counts the bytes of the repeated text, with the configured limit', async () => {
      // 64 bytes for a value computed on every row.
      const small = { ...defaultQueryBounds, maxValueBytes: 64 * 256 };
      await assert.rejects(
        run("select repeat(concat(id, 'xxxxxxxxxx'), length(id) + 10) as r from edge_logs", small),
        refused('INVALID_QUERY', /REPEAT would build a value larger than 64 bytes/),
      );
      const rows = await run('select repeat(id, 2) as r from edge_logs order by id limit 1', small);
      assert.equal(rows.length, 1);
    });
  });
}
