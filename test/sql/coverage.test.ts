/**
 * BigQuery beyond the original allow-list, through the whole pipeline on every engine
 * (test/support/engines.ts) with the same expected rows: value tables (Studio's unqualified UNNEST fields), `::` casts, STRUCT values and the
 * functions the registry gained. Values are BigQuery's answers for the same queries.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { logsAllSql } from '../../src/endpoints/supabase/index.ts';
import { isQuarryError } from '../../src/errors.ts';
import { prepareEndpointQuery } from '../../src/sql/index.ts';
import { supabaseData, supabaseSources } from './fixtures.ts';
import { engines, openQueryTestEngine, type QueryTestEngine } from '../support/engines.ts';

let t: QueryTestEngine;

async function run(sql: string) {
  const prepared = prepareEndpointQuery({ saved: logsAllSql, caller: { sql }, catalog: t.catalog, sandboxable: true });
  return (await t.query.run(prepared, { project: 'default' }, { timeoutMs: 10_000, maxRows: 1000 })).rows;
}

const us = (hms: string) => Date.parse(`2026-11-21T${hms}Z`) * 1000;

type Case = [name: string, sql: string, expected: Record<string, unknown>[]];

function cases(list: Case[]) {
  for (const [name, sql, expected] of list) {
    test(name, async () => assert.deepEqual(await run(sql), expected));
  }
}

for (const engine of engines) {
  describe(engine, () => {
    before(async () => {
      t = await openQueryTestEngine(engine, supabaseSources, supabaseData);
    });
    after(() => t.close());

    describe('value tables: Studio shapes with unqualified UNNEST fields', () => {
      cases([
        [
          'Logs Explorer "REST Requests": path is r.path',
          `select id, path, cast(timestamp as datetime) as timestamp from edge_logs
            cross join unnest(metadata) as m cross join unnest(m.request) as r
            where path like '%rest/v1%' order by timestamp desc limit 100`,
          [
            { id: 'e7', path: '/rest/v1/z', timestamp: '2026-11-21T10:05:00' },
            { id: 'e5', path: '/rest/v1/auth/x', timestamp: '2026-11-21T10:04:00' },
            { id: 'e1', path: '/rest/v1/todos', timestamp: '2026-11-21T10:00:00' },
          ],
        ],
        [
          '"Storage object requests": path and status_code from two value tables',
          `select id, method, status_code from edge_logs
            cross join unnest(metadata) as m cross join unnest(m.request) as r cross join unnest(m.response) as res
            where (path like '%storage/v1/object/%') order by timestamp desc`,
          [{ id: 'e3', method: 'GET', status_code: 500 }],
        ],
        [
          'Edge Functions filtered by `function_id` (a field of m)',
          "select id, function_id, status_code from function_edge_logs cross join unnest(metadata) as m cross join unnest(m.response) as response where (`function_id` = 'fn1') order by timestamp desc",
          [
            { id: 'f2', function_id: 'fn1', status_code: 500 },
            { id: 'f1', function_id: 'fn1', status_code: 200 },
          ],
        ],
        [
          'a list of records: its element fields are unqualified too',
          'select id, host from storage_logs cross join unnest(metadata) as m cross join unnest(m.context) as c order by host',
          [
            { id: 's1', host: 'h1' },
            { id: 's2', host: 'h2' },
            { id: 's2', host: 'h3' },
          ],
        ],
      ]);

      test('a name two value tables provide is INVALID_QUERY naming both', async () => {
        await assert.rejects(
          run('select level from function_logs cross join unnest(metadata) as m cross join unnest(metadata) as m2'),
          (e: unknown) => isQuarryError(e) && e.code === 'INVALID_QUERY' && /Column name level is ambiguous: it may be m\.level or m2\.level/.test(e.message),
        );
      });
    });

    describe('casts', () => {
      cases([
        [
          "self-hosted pg_cron page: event_message::text LIKE '%cron job%'",
          "select id from postgres_logs where event_message::text LIKE '%cron job%'",
          [{ id: 'p4' }],
        ],
        ['x::int64 and x::float64', "select '5'::int64 + 1 as i, '1.5'::float64 as f, 2::string as s", [{ i: 6, f: 1.5, s: '2' }]],
      ]);
    });

    describe('STRUCT values', () => {
      cases([
        ['STRUCT(...) is an object in results', "select struct(1 as a, 'x' as b) as s", [{ s: { a: 1, b: 'x' } }]],
        ['typed STRUCT<...>(...)', "select struct<a int64, b string>(1, 'x') as s", [{ s: { a: 1, b: 'x' } }]],
        ['field access on a STRUCT value', "select struct(1 as a, 'x' as b).b as v", [{ v: 'x' }]],
        ['a STRUCT through a derived table', 'select s.a as a from (select struct(2 as a) as s)', [{ a: 2 }]],
        ['an unnamed field is named after its column', "select struct(id, 1 as n).id as v from edge_logs where id = 'e1'", [{ v: 'e1' }]],
      ]);
    });

    describe('string functions', () => {
      cases([
        ['char_length / byte_length', "select char_length('héllo') as c, character_length('ab') as c2, byte_length('héllo') as b", [{ c: 5, c2: 2, b: 6 }]],
        ['ascii / unicode / chr', "select ascii('A') as a, ascii('') as e, unicode('é') as u, chr(65) as c", [{ a: 65, e: 0, u: 233, c: 'A' }]],
        [
          'left, right, lpad, rpad, repeat, reverse, translate',
          "select left('abcdef', 2) as l, right('abcdef', 2) as r, lpad('7', 3, '0') as lp, rpad('ab', 4) as rp, repeat('ab', 3) as rep, reverse('abc') as rev, translate('abc', 'ab', 'xy') as tr",
          [{ l: 'ab', r: 'ef', lp: '007', rp: 'ab  ', rep: 'ababab', rev: 'cba', tr: 'xyc' }],
        ],
        [
          'regexp_extract_all, with and without a group',
          "select regexp_extract_all('a1b22c333', r'\\d+') as a, regexp_extract_all('k=1,k=2', r'k=(\\d)') as b",
          [{ a: ['1', '22', '333'], b: ['1', '2'] }],
        ],
        ['regexp_substr', "select regexp_substr('abc123', r'\\d+') as v, regexp_substr('abc', r'\\d+') as n", [{ v: '123', n: null }]],
        [
          'hashes are BYTES; to_hex shows them',
          "select to_hex(md5('abc')) as m, to_hex(sha256('abc')) as s, to_base64(from_base64('aGVsbG8=')) as b",
          [{ m: '900150983cd24fb0d6963f7d28e17f72', s: 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad', b: 'aGVsbG8=' }],
        ],
      ]);
    });

    describe('math functions', () => {
      cases([
        [
          'sign, exp, ln, log, log10, cbrt',
          'select sign(-3) as s, exp(0) as e, ln(1) as l, log(8, 2) as l2, log10(100) as l10, round(cbrt(27), 6) as c',
          [{ s: -1, e: 1, l: 0, l2: 3, l10: 2, c: 3 }],
        ],
        ['LOG(x) is the natural logarithm', 'select round(log(exp(2)), 6) as v', [{ v: 2 }]],
        ['trunc, ceiling', 'select trunc(1.256, 2) as t, trunc(-1.7) as t0, ceiling(1.2) as c', [{ t: 1.25, t0: -1, c: 2 }]],
        [
          'safe arithmetic is NULL on overflow',
          'select safe_add(9223372036854775807, 1) as o, safe_multiply(2, 3) as m, safe_subtract(5, 7) as s, safe_negate(5) as n',
          [{ o: null, m: 6, s: -2, n: -5 }],
        ],
        [
          'ieee_divide, is_inf, is_nan',
          "select ieee_divide(1, 0) as d, is_inf(ieee_divide(1, 0)) as i, is_nan(cast('nan' as float64)) as n",
          [{ d: 'Infinity', i: true, n: true }],
        ],
        ['trigonometry', 'select round(cos(0), 6) as c, round(atan2(1, 1) * 4, 2) as pi, round(tanh(0), 6) as t', [{ c: 1, pi: 3.14, t: 0 }]],
        ['rand() is in [0, 1)', 'select rand() >= 0 and rand() < 1 as ok', [{ ok: true }]],
        ['zeroifnull, nullifzero', 'select zeroifnull(cast(null as int64)) as z, nullifzero(0) as n', [{ z: 0, n: null }]],
      ]);
    });

    describe('date and time functions', () => {
      cases([
        [
          'DATE(y, m, d) and DATETIME(y, m, d, h, mi, s)',
          'select date(2026, 11, 21) as d, datetime(2026, 11, 21, 10, 30, 0) as dt',
          [{ d: '2026-11-21', dt: '2026-11-21T10:30:00' }],
        ],
        ['unix_date / date_from_unix_date', "select unix_date(date '1970-01-11') as n, date_from_unix_date(10) as d", [{ n: 10, d: '1970-01-11' }]],
        [
          'format_date / format_datetime',
          "select format_date('%Y/%m/%d', date '2026-11-21') as d, format_datetime('%H:%M', datetime '2026-11-21 10:30:00') as t",
          [{ d: '2026/11/21', t: '10:30' }],
        ],
        [
          'parse_date / parse_datetime / parse_timestamp',
          "select parse_date('%Y%m%d', '20261121') as d, parse_datetime('%Y-%m-%d %H:%M', '2026-11-21 10:30') as dt, parse_timestamp('%Y-%m-%d %H:%M:%S', '2026-11-21 10:00:00') as ts",
          [{ d: '2026-11-21', dt: '2026-11-21T10:30:00', ts: us('10:00:00') }],
        ],
        ['last_day', "select last_day(date '2026-02-10') as d", [{ d: '2026-02-28' }]],
      ]);
    });

    describe('array functions', () => {
      cases([
        [
          'generate_array / generate_date_array',
          "select generate_array(1, 7, 3) as a, generate_date_array('2026-11-01', '2026-11-03') as d",
          [{ a: [1, 4, 7], d: ['2026-11-01', '2026-11-02', '2026-11-03'] }],
        ],
        [
          'array_concat, array_reverse, array_to_string, array_first, array_last',
          "select array_concat([1, 2], [3], [4]) as c, array_reverse([1, 2, 3]) as r, array_to_string(['a', 'b'], '-') as s, array_first(['x', 'y']) as f, array_last(['x', 'y']) as l",
          [{ c: [1, 2, 3, 4], r: [3, 2, 1], s: 'a-b', f: 'x', l: 'y' }],
        ],
      ]);

      test('generate_array refuses to build a huge array', async () => {
        await assert.rejects(run('select generate_array(1, 1000000000) as a'), (e: unknown) => isQuarryError(e) && e.code === 'INVALID_QUERY');
      });
    });

    describe('JSON functions', () => {
      cases([
        [
          'json_query / json_value / to_json_string',
          `select json_query('{"a":{"b":1}}', '$.a') as q, json_value('{"a":"x"}', '$.a') as v, json_value('"y"') as v0, to_json_string(struct(1 as a)) as j`,
          [{ q: '{"b":1}', v: 'x', v0: 'y', j: '{"a":1}' }],
        ],
      ]);
    });

    describe('aggregate and window functions', () => {
      cases([
        ['max_by / min_by', 'select max_by(id, timestamp) as latest, min_by(id, timestamp) as earliest from edge_logs', [{ latest: 'e8', earliest: 'e1' }]],
        [
          'population and sample statistics',
          'select round(var_pop(x), 6) as vp, var_samp(x) as vs, stddev_samp(x) as ss, round(stddev_pop(x), 6) as sp, corr(x, x) as c, bit_or(x) as b from unnest([1, 2, 3]) as x',
          [{ vp: 0.666667, vs: 1, ss: 1, sp: 0.816497, c: 1, b: 3 }],
        ],
        [
          'nth_value',
          "select id, nth_value(id, 2) over (order by timestamp rows between unbounded preceding and unbounded following) as second from edge_logs where id in ('e1', 'e2', 'e3') order by timestamp",
          [
            { id: 'e1', second: 'e2' },
            { id: 'e2', second: 'e2' },
            { id: 'e3', second: 'e2' },
          ],
        ],
        [
          'percentile_cont / percentile_disc',
          'select percentile_cont(x, 0.5) over () as c, percentile_disc(x, 0.5) over () as d from unnest([1, 2, 3, 4]) as x limit 1',
          [{ c: 2.5, d: 2 }],
        ],
      ]);
    });
  });
}
