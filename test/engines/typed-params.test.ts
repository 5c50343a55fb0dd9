/**
 * Typed parameter values on every engine (test/support/engines.ts), with the same expected rows:
 * each binds with its own type (never as text), absent values are NULL with NULL's meaning, a
 * string never becomes SQL, and one query's translation follows the types its runs bind.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { ParamValue } from '../../src/query/port.ts';
import { isQuarryError } from '../../src/errors.ts';
import { type PreparedQuery, prepareEndpointQuery } from '../../src/sql/index.ts';
import type { SourceTable } from '../../src/storage/schema.ts';
import { engines, openQueryTestEngine, type QueryTestEngine } from '../support/engines.ts';
import { bool, float, int, schema, str } from '../sql/support.ts';

const source: SourceTable = {
  id: '00000000-0000-4000-8000-0000000000a1',
  name: 'typed.events',
  table: 'src_typed',
  schema: schema({ n: int, score: float, ok: bool, kind: str }),
};
const data = {
  'typed.events': [
    { id: 'e1', timestamp: '2026-11-21T10:00:00Z', n: 2, score: 0.25, ok: true, kind: 'a' },
    { id: 'e2', timestamp: '2026-11-21T10:00:01Z', n: 9, score: 1.5, ok: true, kind: "it's {x:String}" },
    { id: 'e3', timestamp: '2026-11-21T10:00:02Z', n: 10, score: 3, ok: true, kind: 'b' },
    { id: 'e4', timestamp: '2026-11-21T10:00:03.5Z', n: 100, score: 3, ok: false, kind: 'b' },
    { id: 'e5', timestamp: '2026-11-22T00:00:00Z', kind: 'a' },
  ],
};

type Params = Record<string, ParamValue | null | undefined>;
const int64 = (value: bigint | number): ParamValue => ({ type: 'int', value: BigInt(value) });
const f64 = (value: number): ParamValue => ({ type: 'float', value });
const flag = (value: boolean): ParamValue => ({ type: 'bool', value });
const at = (iso: string): ParamValue => ({ type: 'timestamp', micros: BigInt(Date.parse(iso)) * 1000n });
const day = (iso: string): ParamValue => ({ type: 'date', days: Date.parse(`${iso}T00:00:00Z`) / 86_400_000 });
const micros = (iso: string) => Date.parse(iso) * 1000;

for (const engine of engines) {
  describe(engine, () => {
    let t: QueryTestEngine;
    before(async () => {
      t = await openQueryTestEngine(engine, [source], data);
    });
    after(() => t.close());

    const prepare = (saved: string): PreparedQuery => prepareEndpointQuery({ saved, catalog: t.catalog, sandboxable: false });
    const runPrepared = async (q: PreparedQuery, params: Params) => (await t.query.run(q, params, { timeoutMs: 10_000, maxRows: 100 })).rows;
    const run = (saved: string, params: Params) => runPrepared(prepare(saved), params);
    const ids = async (where: string, params: Params) => (await run(`select id from \`typed.events\` where ${where} order by id`, params)).map((r) => r.id);

    test('the engine declares the capability', () => {
      assert.equal(t.query.capabilities.typedParams, true);
    });

    test('an int compares as a number: 9 <= 10 and 100, where text would put "9" after both', async () => {
      assert.deepEqual(await ids('n >= @min', { min: int64(9) }), ['e2', 'e3', 'e4']);
      assert.deepEqual(await ids('n > @min', { min: int64(9) }), ['e3', 'e4']);
      assert.deepEqual(await ids('n between @lo and @hi', { lo: int64(3), hi: int64(10) }), ['e2', 'e3']);
      assert.deepEqual(await ids('n < @min', { min: int64(-9_223_372_036_854_775_808n) }), []);
    });

    test('arithmetic keeps each type: int + int is an int, float arithmetic is exact where the value is', async () => {
      const [r] = await run(
        'select @min + 1 as next, @min * @min as square, @ratio * 2 as doubled, @ratio + @min as sum, @min / 4 as quarter, @min + 0.5 as half from (select 1)',
        {
          min: int64(9),
          ratio: f64(1.5),
        },
      );
      assert.deepEqual(r, { next: 10, square: 81, doubled: 3, sum: 10.5, quarter: 2.25, half: 9.5 });
      assert.deepEqual(await ids('score >= @ratio', { ratio: f64(1.5) }), ['e2', 'e3', 'e4']);
      assert.deepEqual(await ids('score * 2 = @ratio', { ratio: f64(0.5) }), ['e1']);
    });

    test('a bool is a BOOL', async () => {
      assert.deepEqual(await ids('ok = @flag', { flag: flag(false) }), ['e4']);
      assert.deepEqual(await ids('ok = @flag', { flag: flag(true) }), ['e1', 'e2', 'e3']);
      assert.deepEqual(await run('select @flag as f, not @flag as g, @flag and true as h from (select 1)', { flag: flag(true) }), [
        { f: true, g: false, h: true },
      ]);
    });

    test('a timestamp window, to the microsecond; a TIMESTAMP result is unix microseconds', async () => {
      const window = { since: at('2026-11-21T10:00:01Z'), until: at('2026-11-21T10:00:03.5Z') };
      assert.deepEqual(await ids('timestamp >= @since and timestamp < @until', window), ['e2', 'e3']);
      assert.deepEqual(await ids('timestamp > @since and timestamp <= @until', window), ['e3', 'e4']);
      const [r] = await run(
        'select @since as since, timestamp_diff(@until, @since, millisecond) as ms, timestamp_add(@since, interval 1 hour) as later from (select 1)',
        window,
      );
      assert.deepEqual(r, { since: micros('2026-11-21T10:00:01Z'), ms: 2500, later: micros('2026-11-21T11:00:01Z') });
      // Far from 1970 both ways, and before it.
      const [far] = await run('select @a as a, @b as b, @c as c from (select 1)', {
        a: at('1000-01-01T00:00:00Z'),
        b: at('9999-12-31T23:59:59Z'),
        c: at('1969-12-31T23:59:59.5Z'),
      });
      assert.deepEqual(far, { a: micros('1000-01-01T00:00:00Z'), b: micros('9999-12-31T23:59:59Z'), c: -500_000 });
    });

    test('a date is a DATE', async () => {
      assert.deepEqual(await ids('date(timestamp) = @day', { day: day('2026-11-22') }), ['e5']);
      assert.deepEqual(await ids('date(timestamp) < @day', { day: day('2026-11-22') }), ['e1', 'e2', 'e3', 'e4']);
      assert.deepEqual(await run('select @day as day, date_add(@day, interval 1 day) as next from (select 1)', { day: day('2024-02-28') }), [
        { day: '2024-02-28', next: '2024-02-29' },
      ]);
    });

    test('an enum (a string value) and a plain string bind as strings', async () => {
      assert.deepEqual(await ids('kind = @kind', { kind: 'b' }), ['e3', 'e4']);
      assert.deepEqual(await run("select @s as s, @s || '!' as t, length(@s) as n from (select 1)", { s: '007' }), [{ s: '007', t: '007!', n: 3 }]);
    });

    test('absent or null values are NULL, with NULL meaning the same on every engine', async () => {
      for (const params of [{}, { p: null, min: null, since: null, day: null }] as Params[]) {
        const [r] = await run(
          `select @p is null as a, coalesce(@p, 'd') as b, @p = 'x' as c, @p as p, @p || 'z' as e, @p in ('a', 'b') as i,
             coalesce(@min, 5) as m, @min + 1 as n, @since as s, coalesce(@day, date '2026-01-02') as d,
             if(@p is null, cast(@min as int64), 7) as ci, safe_cast(@since as timestamp) as sc from (select 1)`,
          params,
        );
        assert.deepEqual(r, { a: true, b: 'd', c: null, p: null, e: null, i: null, m: 5, n: null, s: null, d: '2026-01-02', ci: null, sc: null });
        assert.deepEqual(await ids('n >= @min or timestamp >= @since or kind = @p', params), []);
        assert.deepEqual(await ids('@min is null or n >= @min', params), ['e1', 'e2', 'e3', 'e4', 'e5']);
      }
    });

    test('a string value never becomes SQL: quotes, braces and placeholder-looking text come back as they were', async () => {
      const nasty = [
        "it's {x:String}",
        "'; SELECT 1 --",
        '}{p:String}',
        "{s:Nullable(String)}') OR 1=1 --",
        'back\\slash\ttab\nnewline "double"',
        'NULL',
        '\\N',
        '',
      ];
      for (const s of nasty) {
        assert.deepEqual(await run('select @s as s, length(@s) as n from (select 1)', { s }), [{ s, n: [...s].length }], JSON.stringify(s));
      }
      assert.deepEqual(await ids('kind = @kind', { kind: "it's {x:String}" }), ['e2']);
      assert.deepEqual(await ids('kind = @kind', { kind: "a' OR '1'='1" }), []);
    });

    test('one query runs with different types, nulls and strings in turn, each with its own translation', async () => {
      const q = prepare('select @v as v, @v is null as missing from (select 1)');
      const turns: [Params, Record<string, unknown>][] = [
        [{}, { v: null, missing: true }],
        [{ v: '5' }, { v: '5', missing: false }],
        [{ v: int64(5) }, { v: 5, missing: false }],
        [{ v: f64(5.5) }, { v: 5.5, missing: false }],
        [{ v: flag(true) }, { v: true, missing: false }],
        [{ v: at('2026-11-21T10:00:00Z') }, { v: micros('2026-11-21T10:00:00Z'), missing: false }],
        [{ v: day('2026-11-21') }, { v: '2026-11-21', missing: false }],
        [{ v: null }, { v: null, missing: true }],
        [{ v: '5' }, { v: '5', missing: false }],
        [{ v: int64(6) }, { v: 6, missing: false }],
      ];
      for (const [params, expected] of turns)
        assert.deepEqual(
          await runPrepared(q, params),
          [expected],
          JSON.stringify(params, (_k, x) => (typeof x === 'bigint' ? String(x) : x)),
        );
    });

    test('LIMIT takes an int parameter; a NULL LIMIT caps nothing, a NULL OFFSET differs (docs/SQL.md)', async () => {
      assert.deepEqual(await run('select id from `typed.events` order by id limit @n', { n: int64(2) }), [{ id: 'e1' }, { id: 'e2' }]);
      assert.equal((await run('select id from `typed.events` order by id limit @n', {})).length, 5);
      const offset = run('select id from `typed.events` order by id limit 2 offset @n', {});
      if (engine === 'clickhouse') await assert.rejects(offset, (e: unknown) => isQuarryError(e) && e.code === 'INVALID_QUERY' && /OFFSET/.test(e.message));
      else assert.deepEqual(await offset, [{ id: 'e1' }, { id: 'e2' }]);
    });

    if (engine === 'clickhouse') {
      test('a date ClickHouse cannot hold is a 400 naming the parameter, not a silently clamped value', async () => {
        await assert.rejects(run('select @d as d from (select 1)', { d: day('1899-12-31') }), (e: unknown) => {
          assert.ok(isQuarryError(e) && e.code === 'BAD_REQUEST' && e.status === 400, String(e));
          assert.match(e.message, /Parameter "d": 1899-12-31 is outside the dates the ClickHouse engine holds \(1900-01-01 to 2299-12-31\)/);
          return true;
        });
        await assert.rejects(run('select @d as d from (select 1)', { d: day('2300-01-01') }), /outside the dates/);
        assert.deepEqual(await run('select @a as a, @b as b from (select 1)', { a: day('1900-01-01'), b: day('2299-12-31') }), [
          { a: '1900-01-01', b: '2299-12-31' },
        ]);
      });
    }
  });
}
