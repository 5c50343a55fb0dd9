/**
 * Window frames (`ROWS|RANGE BETWEEN start AND end`): parsed into a node (src/sql/ast.ts
 * `WindowFrame`), checked against the call by the semantic pass, and printed by each engine's
 * printer, with the same answers on every engine. A frame that is not supported is a 400 naming it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { generateClickHouse } from '../../src/engines/clickhouse/printer.ts';
import { generateDuckDb } from '../../src/engines/duckdb/generator.ts';
import { isQuarryError } from '../../src/errors.ts';
import type { Expr, FuncCall } from '../../src/sql/ast.ts';
import { prepareEndpointQuery } from '../../src/sql/index.ts';
import { parseSql } from '../../src/sql/parse.ts';
import type { SourceTable } from '../../src/storage/schema.ts';
import { engines, openQueryTestEngine, type QueryTestEngine } from '../support/engines.ts';
import { float, int, makeCatalog, schema, str } from './support.ts';

const source: SourceTable = { id: 'points-id', name: 'points', table: 'src_points', schema: schema({ g: str, n: int, x: float }) };
const catalog = makeCatalog([source]);
// n: 1, 2, 4, 5, 9 in group a; 1, 3 in group b; x = n / 2.
const data = {
  points: [
    ['p1', 'a', 1],
    ['p2', 'a', 2],
    ['p3', 'a', 4],
    ['p4', 'a', 5],
    ['p5', 'a', 9],
    ['p6', 'b', 1],
    ['p7', 'b', 3],
  ].map(([id, g, n], i) => ({ id, timestamp: new Date(Date.UTC(2026, 10, 21, 10, i)).toISOString(), event_message: String(id), g, n, x: Number(n) / 2 })),
};

const refused = (code: string, pattern: RegExp) => (e: unknown) => isQuarryError(e) && e.code === code && e.status === 400 && pattern.test(e.message);

function overOf(sql: string): FuncCall['over'] {
  const q = parseSql(sql);
  const body = q.body;
  if (body.kind !== 'select') throw new Error('a SELECT');
  const e = body.columns[0]?.expr as Expr;
  if (e.kind !== 'func') throw new Error('a call');
  return e.over;
}

describe('window frames: the node', () => {
  test('every bound, both units, always with both ends', () => {
    assert.deepEqual(overOf('select sum(n) over (order by n rows between unbounded preceding and current row) from points')?.frame, {
      units: 'rows',
      start: { kind: 'unboundedPreceding' },
      end: { kind: 'currentRow' },
    });
    assert.deepEqual(overOf('select sum(n) over (order by n range between 2 preceding and 3 following) from points')?.frame, {
      units: 'range',
      start: { kind: 'preceding', offset: '2' },
      end: { kind: 'following', offset: '3' },
    });
    // The one-bound form ends at the current row.
    assert.deepEqual(overOf('select sum(n) over (order by n rows 2 preceding) from points')?.frame, {
      units: 'rows',
      start: { kind: 'preceding', offset: '2' },
      end: { kind: 'currentRow' },
    });
    assert.deepEqual(overOf('select sum(n) over (order by n rows between current row and unbounded following) from points')?.frame, {
      units: 'rows',
      start: { kind: 'currentRow' },
      end: { kind: 'unboundedFollowing' },
    });
    assert.equal(overOf('select sum(n) over (order by n) from points')?.frame, undefined);
  });

  test('the node is frozen', () => {
    const frame = overOf('select sum(n) over (order by n rows between 1 preceding and 1 following) from points')?.frame;
    assert.ok(frame && Object.isFrozen(frame) && Object.isFrozen(frame.start) && Object.isFrozen(frame.end));
  });

  test('frames whose ends are out of order are a 400 naming the frame', () => {
    const cases: [string, RegExp][] = [
      ['rows between current row and 1 preceding', /Invalid window frame ROWS BETWEEN CURRENT ROW AND 1 PRECEDING: it ends before it starts/],
      ['rows between 1 following and current row', /ROWS BETWEEN 1 FOLLOWING AND CURRENT ROW: it ends before it starts/],
      ['rows between unbounded following and unbounded following', /cannot start at UNBOUNDED FOLLOWING/],
      [
        'range between unbounded preceding and unbounded preceding',
        /RANGE BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED PRECEDING: it cannot end at UNBOUNDED PRECEDING/,
      ],
      ['rows unbounded following', /ROWS UNBOUNDED FOLLOWING: it cannot start at UNBOUNDED FOLLOWING/],
    ];
    for (const [frame, pattern] of cases) {
      assert.throws(() => parseSql(`select sum(n) over (order by n ${frame}) as s from points`), refused('INVALID_QUERY', pattern), frame);
    }
  });

  test('GROUPS frames and bounds that are not whole numbers are refused, named', () => {
    assert.throws(
      () => parseSql('select sum(n) over (order by n groups between 1 preceding and current row) as s from points'),
      refused('QUERY_NOT_ALLOWED', /GROUPS window frames/),
    );
    assert.throws(
      () => parseSql('select sum(n) over (order by n rows between @p preceding and current row) as s from points'),
      refused('QUERY_NOT_ALLOWED', /window frames with bounds other than a whole number/),
    );
  });
});

describe('window frames: what the call needs (the semantic pass)', () => {
  const prepare = (sql: string) => generateDuckDb(prepareEndpointQuery({ saved: sql, catalog, sandboxable: false }).ast, { catalog });
  test('numbering and navigation functions BigQuery gives no frame refuse one', () => {
    for (const f of ['row_number()', 'rank()', 'lag(n)', 'lead(n, 1)', 'ntile(2)', 'percentile_cont(x, 0.5)']) {
      assert.throws(
        () => prepare(`select ${f} over (order by n rows between unbounded preceding and current row) as v from points`),
        refused('INVALID_QUERY', /does not take a window frame \(ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW\)/),
        f,
      );
    }
  });

  test('RANGE with an offset needs exactly one numeric ORDER BY key', () => {
    for (const order of ['order by timestamp', 'order by g', 'order by n, x', '']) {
      assert.throws(
        () => prepare(`select sum(n) over (${order} range between 1 preceding and current row) as v from points`),
        refused('INVALID_QUERY', /RANGE BETWEEN 1 PRECEDING AND CURRENT ROW needs exactly one ORDER BY key, a number/),
        order,
      );
    }
    // Without an offset, RANGE takes any ORDER BY (or none).
    prepare('select sum(n) over (order by timestamp range between unbounded preceding and current row) as v from points');
    prepare('select sum(n) over (range between unbounded preceding and unbounded following) as v from points');
  });
});

describe('window frames: each printer spells the node', () => {
  const sql = 'select sum(n) over (partition by g order by n rows 1 preceding) as v, lag(n) over (order by n) as l from points';
  test('DuckDB', () => {
    const out = generateDuckDb(prepareEndpointQuery({ saved: sql, catalog, sandboxable: false }).ast, { catalog }).sql;
    assert.match(out, /ROWS BETWEEN 1 PRECEDING AND CURRENT ROW\)/);
    assert.doesNotMatch(out, /UNBOUNDED FOLLOWING/);
  });
  test('ClickHouse: lag/lead over the whole partition, set by the printer as a node', () => {
    const out = generateClickHouse(prepareEndpointQuery({ saved: sql, catalog, sandboxable: false }).ast, { catalog, database: 'quarry' }).sql;
    assert.match(out, /ROWS BETWEEN 1 PRECEDING AND CURRENT ROW\)/);
    assert.match(out, /lagInFrame\(.*OVER \(ORDER BY .* ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING\)/);
  });
});

/** Rows by id: [id, v]. */
type Rows = [string, unknown][];

const CASES: [title: string, select: string, expect: Rows][] = [
  [
    'ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW: a running sum',
    'sum(n) over (partition by g order by n rows between unbounded preceding and current row)',
    [
      ['p1', 1],
      ['p2', 3],
      ['p3', 7],
      ['p4', 12],
      ['p5', 21],
      ['p6', 1],
      ['p7', 4],
    ],
  ],
  [
    'ROWS n PRECEDING (to the current row)',
    'sum(n) over (partition by g order by n rows 1 preceding)',
    [
      ['p1', 1],
      ['p2', 3],
      ['p3', 6],
      ['p4', 9],
      ['p5', 14],
      ['p6', 1],
      ['p7', 4],
    ],
  ],
  [
    'ROWS BETWEEN n PRECEDING AND n FOLLOWING',
    'sum(n) over (partition by g order by n rows between 1 preceding and 1 following)',
    [
      ['p1', 3],
      ['p2', 7],
      ['p3', 11],
      ['p4', 18],
      ['p5', 14],
      ['p6', 4],
      ['p7', 4],
    ],
  ],
  [
    'ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING',
    'count(*) over (partition by g order by n rows between current row and unbounded following)',
    [
      ['p1', 5],
      ['p2', 4],
      ['p3', 3],
      ['p4', 2],
      ['p5', 1],
      ['p6', 2],
      ['p7', 1],
    ],
  ],
  [
    'ROWS BETWEEN n FOLLOWING AND UNBOUNDED FOLLOWING (empty at the end: NULL)',
    'max(n) over (partition by g order by n rows between 1 following and unbounded following)',
    [
      ['p1', 9],
      ['p2', 9],
      ['p3', 9],
      ['p4', 9],
      ['p5', null],
      ['p6', 3],
      ['p7', null],
    ],
  ],
  [
    'RANGE BETWEEN n PRECEDING AND CURRENT ROW over an INT64 key',
    'count(*) over (partition by g order by n range between 1 preceding and current row)',
    [
      ['p1', 1],
      ['p2', 2],
      ['p3', 1],
      ['p4', 2],
      ['p5', 1],
      ['p6', 1],
      ['p7', 1],
    ],
  ],
  [
    'RANGE BETWEEN n PRECEDING AND n FOLLOWING over a FLOAT64 key',
    'count(*) over (partition by g order by x range between 1 preceding and 1 following)',
    [
      ['p1', 2],
      ['p2', 3],
      ['p3', 3],
      ['p4', 2],
      ['p5', 1],
      ['p6', 2],
      ['p7', 2],
    ],
  ],
  [
    'RANGE BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING without ORDER BY',
    'sum(n) over (partition by g range between unbounded preceding and unbounded following)',
    [
      ['p1', 21],
      ['p2', 21],
      ['p3', 21],
      ['p4', 21],
      ['p5', 21],
      ['p6', 4],
      ['p7', 4],
    ],
  ],
  [
    'first_value / last_value over a frame',
    "concat(cast(first_value(n) over (partition by g order by n rows between 1 preceding and 1 following) as string), '-', cast(last_value(n) over (partition by g order by n rows between 1 preceding and 1 following) as string))",
    [
      ['p1', '1-2'],
      ['p2', '1-4'],
      ['p3', '2-5'],
      ['p4', '4-9'],
      ['p5', '5-9'],
      ['p6', '1-3'],
      ['p7', '1-3'],
    ],
  ],
  [
    'lag and lead see the whole partition whatever the default frame',
    "concat(coalesce(cast(lag(n) over (partition by g order by n) as string), '-'), '/', coalesce(cast(lead(n, 2) over (partition by g order by n) as string), '-'))",
    [
      ['p1', '-/4'],
      ['p2', '1/5'],
      ['p3', '2/9'],
      ['p4', '4/-'],
      ['p5', '5/-'],
      ['p6', '-/-'],
      ['p7', '1/-'],
    ],
  ],
];

for (const engine of engines) {
  describe(`window frames on ${engine}`, () => {
    let t: QueryTestEngine;
    before(async () => {
      t = await openQueryTestEngine(engine, [source], data);
    });
    after(() => t.close());

    for (const [title, select, expect] of CASES) {
      test(title, async () => {
        const prepared = prepareEndpointQuery({ saved: `select id, ${select} as v from points order by id`, catalog: t.catalog, sandboxable: false });
        const result = await t.query.run(prepared, {}, { timeoutMs: 10_000, maxRows: 100 });
        assert.deepEqual(
          result.rows.map((r) => [r.id, r.v]),
          expect,
        );
      });
    }

    test('an unsupported frame is a 400 naming it, before the engine sees it', async () => {
      const prepared = () =>
        prepareEndpointQuery({ saved: 'select lag(n) over (order by n rows 1 preceding) as v from points', catalog: t.catalog, sandboxable: false });
      await assert.rejects(
        async () => t.query.run(prepared(), {}, { timeoutMs: 10_000, maxRows: 100 }),
        refused('INVALID_QUERY', /LAG does not take a window frame \(ROWS BETWEEN 1 PRECEDING AND CURRENT ROW\)/),
      );
    });
  });
}
