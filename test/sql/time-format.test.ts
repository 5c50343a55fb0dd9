/**
 * BigQuery's format elements (src/sql/time-format.ts) in FORMAT_/PARSE_ TIMESTAMP, DATETIME and
 * DATE, through the whole pipeline on every engine with the same expected values: BigQuery's
 * answers, from its documented semantics (ZetaSQL's date_time_util.cc and parse_date_time.cc).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { logsAllSql } from '../../src/endpoints/supabase/index.ts';
import { isQuarryError } from '../../src/errors.ts';
import { prepareEndpointQuery } from '../../src/sql/index.ts';
import { ELEMENTS, parsePlan, readFormat } from '../../src/sql/time-format.ts';
import { supabaseData, supabaseSources } from './fixtures.ts';
import { engines, openQueryTestEngine, type QueryTestEngine } from '../support/engines.ts';

let t: QueryTestEngine;

async function run(sql: string) {
  const prepared = prepareEndpointQuery({ saved: logsAllSql, caller: { sql }, catalog: t.catalog, sandboxable: true });
  return (await t.query.run(prepared, { project: 'default' }, { timeoutMs: 10_000, maxRows: 1000 })).rows;
}

async function one(sql: string): Promise<unknown> {
  const rows = await run(`select ${sql} as v`);
  return rows[0]?.v;
}

/**
 * Expressions asked together, in one query of a column each (one run through the pipeline instead of
 * one per expression); each test reads its own column. When the query fails, every expression is
 * asked alone instead, so a failure is the failing expression's own.
 */
function together(expressions: readonly string[]): (expression: string) => Promise<unknown> {
  let values: Promise<unknown[] | undefined> | undefined;
  return async (expression) => {
    values ??= run(`select ${expressions.map((e, i) => `${e} as v${i}`).join(', ')}`).then(
      (rows) => expressions.map((_, i) => rows[0]?.[`v${i}`]),
      () => undefined,
    );
    const all = await values;
    const i = expressions.indexOf(expression);
    return all === undefined || i < 0 ? one(expression) : all[i];
  };
}

/** Unix microseconds of an ISO instant, with all its fraction digits (Date.parse keeps 3). */
function micros(iso: string): number {
  const m = /\.(\d+)Z$/.exec(iso);
  const whole = Date.parse(iso.replace(/\.\d+Z$/, 'Z'));
  return whole * 1000 + (m ? Number(m[1]!.padEnd(6, '0').slice(0, 6)) : 0);
}
/** A Saturday, day 325 of 2026, ISO week 47. */
const TS = "timestamp '2026-11-21 09:05:07.120300'";

const refused = (pattern: RegExp) => (e: unknown) => isQuarryError(e) && e.code === 'INVALID_QUERY' && e.status === 400 && pattern.test(e.message);

describe('format strings (engine-neutral)', () => {
  test('an unknown element is named', () => {
    assert.throws(() => readFormat('%Y-%K', 'parse_timestamp'), refused(/^Unsupported format element %K in PARSE_TIMESTAMP$/));
  });
  test('elements the function cannot read are refused with the reason', () => {
    assert.throws(() => parsePlan('%Y %H', 'parse_date'), refused(/%H in PARSE_DATE: DATE has no time part/));
    assert.throws(() => parsePlan('%F %Ez', 'parse_datetime'), refused(/%Ez in PARSE_DATETIME: DATETIME has no time zone/));
    assert.throws(() => parsePlan('%Y %Q', 'parse_timestamp'), refused(/%Q in PARSE_TIMESTAMP: the quarter/));
    assert.throws(() => readFormat('%Y%', 'format_date'), refused(/ends with a single %/));
  });
  test("the registry holds every element of BigQuery's list", () => {
    for (const e of 'AaBbCcDdeFGgHhIjklMmnPpQRrSsTtUuVWwXxYyZz%'.split('')) assert.ok(ELEMENTS[e], e);
    for (const e of ['Ez', 'E*S', 'E4Y']) assert.ok(ELEMENTS[e], e);
  });
});

for (const engine of engines) {
  describe(engine, () => {
    before(async () => {
      t = await openQueryTestEngine(engine, supabaseSources, supabaseData);
    });
    after(() => t.close());

    describe('FORMAT_TIMESTAMP: every element', () => {
      const expected: [string, string][] = [
        ['%A', 'Saturday'],
        ['%a', 'Sat'],
        ['%B', 'November'],
        ['%b', 'Nov'],
        ['%h', 'Nov'],
        ['%C', '20'],
        ['%c', 'Sat Nov 21 09:05:07 2026'],
        ['%D', '11/21/26'],
        ['%d', '21'],
        ['%e', '21'],
        ['%F', '2026-11-21'],
        ['%G', '2026'],
        ['%g', '26'],
        ['%H', '09'],
        ['%I', '09'],
        ['%j', '325'],
        ['%k', ' 9'],
        ['%l', ' 9'],
        ['%M', '05'],
        ['%m', '11'],
        ['[%n]', '[\n]'],
        ['%P', 'am'],
        ['%p', 'AM'],
        ['%Q', '4'],
        ['%R', '09:05'],
        ['%r', '09:05:07 AM'],
        ['%S', '07'],
        ['%s', String(Date.parse('2026-11-21T09:05:07Z') / 1000)],
        ['%T', '09:05:07'],
        ['[%t]', '[\t]'],
        ['%U', '46'],
        ['%u', '6'],
        ['%V', '47'],
        ['%W', '46'],
        ['%w', '6'],
        ['%X', '09:05:07'],
        ['%x', '11/21/26'],
        ['%Y', '2026'],
        ['%y', '26'],
        ['%Z', 'UTC'],
        ['%z', '+0000'],
        ['100%%', '100%'],
        ['%Ez', '+00:00'],
        ['%E0S', '07'],
        ['%E1S', '07.1'],
        ['%E3S', '07.120'],
        ['%E6S', '07.120300'],
        ['%E9S', '07.120300000'],
        ['%E*S', '07.1203'],
        ['%E4Y', '2026'],
        ['%EY %Ey %EC %Od %OH %OM %OS', '2026 26 20 21 09 05 07'],
      ];
      const sql = (format: string) => `format_timestamp('${format.replaceAll('\n', '\\n').replaceAll('\t', '\\t')}', ${TS})`;
      const ask = together(expected.map(([format]) => sql(format)));
      for (const [format, value] of expected) {
        test(`${JSON.stringify(format)} → ${JSON.stringify(value)}`, async () => {
          assert.equal(await ask(sql(format)), value);
        });
      }

      test('single digits: %e, %k, %l and %U/%W at the start of a year', async () => {
        assert.equal(await one("format_timestamp('[%e][%k][%l][%I][%P][%U][%W]', timestamp '2027-01-03 21:00:00')"), '[ 3][21][ 9][09][pm][01][00]');
      });
      test('%E*S writes no point for whole seconds', async () => {
        assert.equal(await one("format_timestamp('%H:%M:%E*S', timestamp '2026-11-21 10:00:00')"), '10:00:00');
      });
      test("Studio's format round trips", async () => {
        assert.equal(await one(`format_timestamp('%Y-%m-%dT%H:%M:%E*S%Ez', ${TS})`), '2026-11-21T09:05:07.1203+00:00');
      });
      test('with a time zone: the wall-clock time, its offset and %Z', async () => {
        assert.equal(await one(`format_timestamp('%F %H:%M %z %Ez %Z', ${TS}, 'Asia/Kolkata')`), '2026-11-21 14:35 +0530 +05:30 UTC+5:30');
        assert.equal(await one(`format_timestamp('%H:%M %z %Ez %Z', ${TS}, 'America/New_York')`), '04:05 -0500 -05:00 UTC-5');
        // %s is the instant's, whatever the zone.
        assert.equal(await one(`format_timestamp('%s', ${TS}, 'America/New_York')`), String(Date.parse('2026-11-21T09:05:07Z') / 1000));
      });
      test('literal text with quotes and percent signs', async () => {
        assert.equal(await one(`format_timestamp('it''s %Y %% 100%%', ${TS})`), "it's 2026 % 100%");
      });
      test('NULL gives NULL', async () => {
        assert.equal(await one("format_timestamp('%Y', cast(null as timestamp))"), null);
      });
    });

    describe('FORMAT_DATE and FORMAT_DATETIME', () => {
      test('FORMAT_DATE writes time and zone elements as they are spelt', async () => {
        assert.equal(await one("format_date('%A %d %B %Y (%j, %U) %H:%M %E3S %z', date '2026-11-21')"), 'Saturday 21 November 2026 (325, 46) %H:%M %E3S %z');
      });
      test('FORMAT_DATETIME writes zone elements as they are spelt', async () => {
        assert.equal(await one("format_datetime('%c %E*S %z %Ez %Z', datetime '2008-12-25 15:30:00.25')"), 'Thu Dec 25 15:30:00 2008 00.25 %z %Ez %Z');
      });
      test('the formats that worked before keep working', async () => {
        assert.deepEqual(await run("select format_date('%Y/%m/%d', date '2026-11-21') as d, format_datetime('%H:%M', datetime '2026-11-21 10:30:00') as t"), [
          { d: '2026/11/21', t: '10:30' },
        ]);
      });
    });

    describe("PARSE_TIMESTAMP: Studio's Auth report format", () => {
      const studio = (text: string) => one(`parse_timestamp('%Y-%m-%dT%H:%M:%E*S%Ez', '${text}')`);
      test('with a fraction and +02:00', async () => assert.equal(await studio('2026-11-21T10:00:00.123456+02:00'), micros('2026-11-21T08:00:00.123456Z')));
      test('without a fraction', async () => assert.equal(await studio('2026-11-21T10:00:00+02:00'), micros('2026-11-21T08:00:00Z')));
      test('-05:30', async () => assert.equal(await studio('2026-11-21T10:00:00.5-05:30'), micros('2026-11-21T15:30:00.500Z')));
      test('Z is UTC (%Ez reads it)', async () => assert.equal(await studio('2026-11-21T10:00:00.120Z'), micros('2026-11-21T10:00:00.120Z')));
      test('+HHMM and +HH', async () => {
        assert.equal(await studio('2026-11-21T10:00:00+0200'), micros('2026-11-21T08:00:00Z'));
        assert.equal(await studio('2026-11-21T10:00:00-03'), micros('2026-11-21T13:00:00Z'));
      });
      test('digits past the sixth are ignored', async () =>
        assert.equal(await studio('2026-11-21T10:00:00.1234567891+00:00'), micros('2026-11-21T10:00:00.123456Z')));
      test('on a column', async () => {
        const rows = await run(
          "select parse_timestamp('%Y-%m-%dT%H:%M:%E*S%Ez', concat(format_timestamp('%Y-%m-%dT%H:%M:%E*S', timestamp), '+02:00')) as p, timestamp from edge_logs where id = 'e1'",
        );
        assert.equal(rows.length, 1);
        assert.equal(rows[0]!.p, (rows[0]!.timestamp as number) - 2 * 3600 * 1_000_000);
      });
    });

    describe('PARSE_*: reading', () => {
      const cases: [string, unknown][] = [
        ["parse_timestamp('%Y-%m-%d %H:%M:%S', '2026-11-21 10:00:00')", micros('2026-11-21T10:00:00Z')],
        ["parse_timestamp('%c', 'Thu Dec 25 07:30:00 2008')", micros('2008-12-25T07:30:00Z')],
        ["parse_timestamp('%a %b %e %I:%M:%S %Y', 'Thu Dec 25 07:30:00 2008')", micros('2008-12-25T07:30:00Z')],
        ["parse_timestamp('%Y-%m-%d %H:%M', '2026-11-21 10:00', 'America/New_York')", micros('2026-11-21T15:00:00Z')],
        ["parse_timestamp('%Y-%m-%d %H:%M%Ez', '2026-11-21 10:00+01:00', 'America/New_York')", micros('2026-11-21T09:00:00Z')],
        ["parse_timestamp('%Y-%m-%d %H:%M:%S %z', '2026-11-21 10:00:00 -0130')", micros('2026-11-21T11:30:00Z')],
        ["parse_timestamp('%s', '1700000000')", 1_700_000_000_000_000],
        ["parse_timestamp('%Y-%m-%d %H:%M:%E3S', '2026-11-21 10:00:00.5')", micros('2026-11-21T10:00:00.500Z')],
        ["parse_timestamp('%FT%T', '2026-11-21T10:00:00')", micros('2026-11-21T10:00:00Z')],
        ["parse_timestamp('%Y', '2026')", micros('2026-01-01T00:00:00Z')],
        ["parse_datetime('%I:%M:%S %p', '2:23:38 pm')", '1970-01-01T14:23:38'],
        ["parse_datetime('%I:%M %P', '12:05 AM')", '1970-01-01T00:05:00'],
        ["parse_datetime('%Y-%m-%d %H:%M:%S', '1998-10-18 13:45:55')", '1998-10-18T13:45:55'],
        ["parse_datetime('%Y-%m-%d %H:%M:%E*S', '1998-10-18 13:45:55.25')", '1998-10-18T13:45:55.250000'],
        ["parse_date('%Y%m%d', '20081225')", '2008-12-25'],
        ["parse_date('%b-%d-%Y', 'dec-25-2008')", '2008-12-25'],
        ["parse_date('%A, %B %e %Y', 'Thursday, DECEMBER 25 2008')", '2008-12-25'],
        ["parse_date('%F', '2000-02-29')", '2000-02-29'],
        ["parse_date('%x', '12/25/08')", '2008-12-25'],
        ["parse_date('%y%m%d', '690101')", '1969-01-01'],
        ["parse_date('%y%m%d', '680101')", '2068-01-01'],
        ["parse_date('%Y %m %d', '  2026   11 21 ')", '2026-11-21'],
        ["parse_date('%Y-%m-%d', '2026-1-2')", '2026-01-02'],
        ["parse_date('%Y-%m-%d', cast(null as string))", null],
      ];
      const ask = together(cases.map(([sql]) => sql));
      for (const [sql, value] of cases) {
        test(`${sql} → ${JSON.stringify(value)}`, async () => assert.equal(await ask(sql), value));
      }

      test('round trips: PARSE_TIMESTAMP(f, FORMAT_TIMESTAMP(f, ts)) = ts', async () => {
        const formats = ['%Y-%m-%d %H:%M:%E6S', '%Y-%m-%dT%H:%M:%E*S%Ez', '%c', '%F %T %z', '%d/%b/%Y:%H:%M:%E*S %z', '%s'];
        for (const f of formats) {
          const value = await one(`parse_timestamp('${f}', format_timestamp('${f}', timestamp '2026-11-21 09:05:07${f.includes('E') ? '.120300' : ''}'))`);
          assert.equal(value, micros(`2026-11-21T09:05:07${f.includes('E') ? '.1203' : ''}Z`), f);
        }
        assert.equal(await one("parse_date('%A %d %B %Y', format_date('%A %d %B %Y', date '2026-11-21'))"), '2026-11-21');
        assert.equal(await one("parse_datetime('%D %r', format_datetime('%D %r', datetime '2026-11-21 21:05:07'))"), '2026-11-21T21:05:07');
      });
    });

    describe('PARSE_*: failures are clean 400s', () => {
      const bad: [string, RegExp][] = [
        ["parse_timestamp('%Y-%m-%d', 'nope')", /PARSE_TIMESTAMP could not read a value with its format/],
        ["parse_timestamp('%Y-%m-%dT%H:%M:%E*S%Ez', '2026-11-21T10:00:00+15:00')", /could not read/],
        ["parse_timestamp('%Y-%m-%dT%H:%M:%E*S%Ez', '2026-11-21T10:00:00z')", /could not read/],
        ["parse_date('%Y-%m-%d', '2026-02-30')", /PARSE_DATE could not read/],
        ["parse_date('%Y-%m-%d', '2026-13-01')", /could not read/],
        ["parse_datetime('%H:%M', '24:00')", /could not read/],
        ["parse_date('%Y-%m-%d', '2026-11-21 trailing')", /could not read/],
        ["parse_timestamp('%Y-%m-%d %H:%M:%E3S', '2026-11-21 10:00:00.1234')", /could not read/],
        ["parse_timestamp('%Y-%K', '2026-1')", /^Unsupported format element %K in PARSE_TIMESTAMP$/],
        ["format_timestamp('%Y %i', current_timestamp())", /^Unsupported format element %i in FORMAT_TIMESTAMP$/],
        ["parse_date('%Y-%m-%d %H', '2026-11-21 10')", /%H in PARSE_DATE: DATE has no time part/],
        ["parse_timestamp('%Y %Z', '2026 UTC')", /%Z in PARSE_TIMESTAMP: time zone names are not supported/],
        ["parse_date('%G-%V', '2026-47')", /%G in PARSE_DATE: week-based dates/],
      ];
      for (const [sql, message] of bad) {
        test(sql, async () => assert.rejects(one(sql), refused(message)));
      }
      test('a format that is not a constant is refused', async () => {
        await assert.rejects(
          run("select parse_timestamp(event_message, '2026') as v from edge_logs"),
          refused(/PARSE_TIMESTAMP needs a constant format string/),
        );
        await assert.rejects(run('select format_timestamp(id, timestamp) as v from edge_logs'), refused(/FORMAT_TIMESTAMP needs a constant format string/));
      });
      test('a failing row of a column fails the query with a 400', async () => {
        await assert.rejects(run("select parse_timestamp('%Y-%m-%d', id) as v from edge_logs"), refused(/could not read/));
      });
    });
  });
}
