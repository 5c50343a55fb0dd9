import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isQuarryError } from '../../src/errors.ts';
import { parseLql } from '../../src/lql/parse.ts';
import type { FilterRule, LqlRules } from '../../src/lql/rules.ts';

const now = new Date('2026-11-21T10:37:42.123Z');

function parse(lql: string): LqlRules {
  return parseLql(lql, { now });
}

type Stripped = FilterRule extends infer R ? (R extends unknown ? Omit<R, 'source'> : never) : never;

/** The filters without their source positions, for compact comparisons. */
function filters(lql: string): Stripped[] {
  return parse(lql).filters.map(({ source: _source, ...rest }) => rest);
}

function only(lql: string): Stripped {
  const all = filters(lql);
  assert.equal(all.length, 1, `expected one filter from ${lql}`);
  return all[0]!;
}

/** Asserts a PARSE_ERROR whose message contains every fragment. */
function rejects(lql: string, ...fragments: string[]): string {
  try {
    parse(lql);
  } catch (e) {
    assert.ok(isQuarryError(e), `expected a QuarryError for ${lql}, got ${String(e)}`);
    assert.equal(e.code, 'PARSE_ERROR');
    assert.equal(e.status, 400);
    for (const f of fragments) assert.ok(e.message.includes(f), `message for ${lql} lacks «${f}»: ${e.message}`);
    return e.message;
  }
  assert.fail(`expected ${lql} to be rejected`);
}

const base = { negate: false, quoted: false };

/** The `value` of the single filter `lql` parses into. */
function valueFrom(lql: string): unknown {
  const f = only(lql);
  return 'value' in f ? f.value : undefined;
}

describe('free text', () => {
  test('a bare word is a case-sensitive substring filter on event_message', () => {
    assert.deepEqual(only('error'), { ...base, path: 'event_message', operator: 'string_contains', value: 'error' });
  });

  test('words are ANDed, one filter each, in order', () => {
    assert.deepEqual(
      filters('user sign up').map((f) => (f.operator === 'string_contains' ? f.value : null)),
      ['user', 'sign', 'up'],
    );
  });

  test('special characters are part of a word', () => {
    for (const c of ['.', '?', '!', '@', '#', '$', '%', '^', '&', '*', '(', ')', '-', '_', '=', '+', '[', ']', '{', '}', '|', '\\', '/', ';', ',', '<', '>']) {
      const f = only(`my${c}string`);
      assert.deepEqual(f, { ...base, path: 'event_message', operator: 'string_contains', value: `my${c}string` }, `char ${c}`);
    }
  });

  test('a quoted phrase is one filter, with \\" and \\\\ unescaped', () => {
    assert.deepEqual(only('"staging error"'), { path: 'event_message', operator: 'string_contains', value: 'staging error', negate: false, quoted: true });
    assert.equal(valueFrom(String.raw`"say \"hi\" c:\\x"`) as string, String.raw`say "hi" c:\x`);
  });

  test('~ is a regex on event_message, quoted or not; unquoted keeps \\" literally', () => {
    assert.deepEqual(only(String.raw`~server\_\d`), { ...base, path: 'event_message', operator: '~', value: String.raw`server\_\d` });
    assert.deepEqual(only('~"log message \\d\\d"'), { path: 'event_message', operator: '~', value: 'log message \\d\\d', negate: false, quoted: true });
    assert.equal(valueFrom(String.raw`~^er\"ror`) as string, String.raw`^er\"ror`);
  });

  test('- negates the following clause', () => {
    assert.equal(only('-error').negate, true);
    assert.equal(only('-~pattern').negate, true);
    assert.equal(only('-m.status:500').negate, true);
  });
});

describe('field filters', () => {
  test('m. and metadata. prefixes both mean metadata.', () => {
    assert.equal(only('m.user.id:5').path, 'metadata.user.id');
    assert.equal(only('metadata.user.id:5').path, 'metadata.user.id');
    assert.equal(only('project:abc').path, 'project');
  });

  test('m. needs two characters after the dot, as in Logflare: m.a is a plain field', () => {
    assert.equal(only('m.a:1').path, 'm.a');
    assert.equal(only('m.ab:1').path, 'metadata.ab');
  });

  test('operators', () => {
    const ops: [string, string][] = [
      ['m.num:5', '='],
      ['m.num:>5', '>'],
      ['m.num:>=5', '>='],
      ['m.num:<5', '<'],
      ['m.num:<=5', '<='],
      ['m.num:~5', '~'],
      ['m.num:@>5', 'list_includes'],
      ['m.num:@>~5', 'list_includes_regexp'],
    ];
    for (const [lql, op] of ops) assert.equal(only(lql).operator, op, lql);
  });

  test('unquoted numbers and booleans are cast, quoted ones stay strings', () => {
    assert.deepEqual(only('m.num:1'), { ...base, path: 'metadata.num', operator: '=', value: { type: 'number', text: '1', integer: true } });
    assert.deepEqual(valueFrom('m.num:1.5'), { type: 'number', text: '1.5', integer: false });
    assert.deepEqual(valueFrom('m.num:999999999999999999999'), { type: 'number', text: '999999999999999999999', integer: true });
    assert.deepEqual(valueFrom('m.flag:true'), { type: 'bool', value: true });
    assert.deepEqual(valueFrom('m.flag:false'), { type: 'bool', value: false });
    const quoted = only('m.num:"1"');
    assert.deepEqual(quoted, { path: 'metadata.num', operator: '=', value: { type: 'string', value: '1' }, negate: false, quoted: true });
    assert.deepEqual(valueFrom('m.word:some_word1'), { type: 'string', value: 'some_word1' });
    assert.deepEqual(valueFrom('m.p:(a b)'), { type: 'string', value: 'a b' });
  });

  test('NULL', () => {
    assert.deepEqual(only('m.plan:NULL'), { ...base, path: 'metadata.plan', operator: '=', value: { type: 'null' } });
  });

  test('quoted values keep spaces and special characters; escapes are unescaped', () => {
    assert.equal((valueFrom('m.context.file:"some module.ex"') as { value: string }).value, 'some module.ex');
    assert.equal((valueFrom('m.f:"こんにちは 🚀"') as { value: string }).value, 'こんにちは 🚀');
    assert.equal(valueFrom(String.raw`m.context.address:~"\\d\\d\\d ST"`) as string, String.raw`\d\d\d ST`);
  });

  test('numeric ranges', () => {
    assert.deepEqual(only('m.int:50..200'), {
      ...base,
      path: 'metadata.int',
      operator: 'range',
      from: { type: 'number', text: '50', integer: true },
      to: { type: 'number', text: '200', integer: true },
    });
    const f = only('m.float:30.1..300.1');
    assert.ok(f.operator === 'range');
    assert.deepEqual(
      [f.from, f.to],
      [
        { type: 'number', text: '30.1', integer: false },
        { type: 'number', text: '300.1', integer: false },
      ],
    );
  });

  test('level ranges expand to the levels in between', () => {
    const f = only('metadata.level:debug..error');
    assert.ok(f.operator === 'in');
    assert.deepEqual(
      f.values.map((v) => (v.type === 'string' ? v.value : null)),
      ['debug', 'info', 'notice', 'warning', 'error'],
    );
    const g = only('metadata.level:notice..warning');
    assert.ok(g.operator === 'in');
    assert.equal(g.values.length, 2);
  });

  test('@> and @>~ on arrays', () => {
    assert.deepEqual(only('m.arr:@>a'), { ...base, path: 'metadata.arr', operator: 'list_includes', value: { type: 'string', value: 'a' } });
    assert.deepEqual(valueFrom('m.arr:@>1'), { type: 'number', text: '1', integer: true });
    assert.deepEqual(only('m.arr:@>~"a c"'), { path: 'metadata.arr', operator: 'list_includes_regexp', value: 'a c', negate: false, quoted: true });
    assert.deepEqual(only('m.arr:@>~abc'), { ...base, path: 'metadata.arr', operator: 'list_includes_regexp', value: 'abc' });
  });

  test('a value outside the allowed forms is an error naming the field', () => {
    rejects('metadata.user.emailAddress:', 'Error while parsing `metadata.user.emailAddress` field metadata filter value', 'column 1');
    rejects('m.field:', 'metadata filter value');
    rejects('m.path:/rest/v1', 'Error while parsing `metadata.path` field metadata filter value: /rest/v1');
    for (const bad of ['m.field::value', 'm.field:>=<100', 'm.field:~~pattern', 'm.field:>>100', 'm.x:foo..bar']) rejects(bad, 'Error while parsing');
  });
});

describe('timestamp filters', () => {
  const ts = (value: string) => ({ type: 'timestamp', value });

  test('ISO dates and datetimes with operators', () => {
    const rules = filters('t:>2019-01-01 timestamp:<=2019-04-20 t:<2020-01-01T03:14:15 t:>=2019-01-01T03:14:15Z t:<=2020-01-01T00:00:00.345');
    assert.deepEqual(
      rules.map((r) => [r.path, r.operator, 'value' in r ? r.value : null]),
      [
        ['timestamp', '>', { type: 'date', value: '2019-01-01' }],
        ['timestamp', '<=', { type: 'date', value: '2019-04-20' }],
        ['timestamp', '<', ts('2020-01-01 03:14:15.000000')],
        ['timestamp', '>=', ts('2019-01-01 03:14:15.000000')],
        ['timestamp', '<=', ts('2020-01-01 00:00:00.345000')],
      ],
    );
  });

  test('offsets are applied; microseconds are kept', () => {
    assert.deepEqual(valueFrom('t:>2020-01-01T13:14:15.000500'), ts('2020-01-01 13:14:15.000500'));
    assert.deepEqual(valueFrom('t:2020-01-01T02:00:00+02:00'), ts('2020-01-01 00:00:00.000000'));
    assert.deepEqual(valueFrom('t:2020-01-01T00:00:00-0130'), ts('2020-01-01 01:30:00.000000'));
  });

  test("times follow src/time.ts's rules: a leap second is the next minute, hours, minutes and offsets are checked", () => {
    assert.deepEqual(valueFrom('t:2019-12-31T23:59:60Z'), ts('2020-01-01 00:00:00.000000'));
    rejects('t:2020-01-01T24:00:00Z', "got '2020-01-01T24:00:00Z'");
    rejects('t:2020-01-01T10:60:00Z', "got '2020-01-01T10:60:00Z'");
    rejects('t:2020-01-01T10:00:61Z', "got '2020-01-01T10:00:61Z'");
    rejects('t:2020-01-01T10:00:00+24:00', "got '2020-01-01T10:00:00+24:00'");
  });

  test('unix seconds, milliseconds and microseconds (truncated to ms)', () => {
    assert.deepEqual(valueFrom('t:>1577836800'), ts('2020-01-01 00:00:00.000000'));
    assert.deepEqual(valueFrom('t:>1577836800123'), ts('2020-01-01 00:00:00.123000'));
    assert.deepEqual(valueFrom('t:>1577836800123456'), ts('2020-01-01 00:00:00.123000'));
  });

  test('14- and 15-digit numbers are rejected, as are other lengths', () => {
    rejects(
      't:>15778368001234',
      "Error while parsing timestamp filter value: expected ISO8601 string, Unix timestamp, range or shorthand, got '15778368001234'",
    );
    rejects('t:>157783680012345', "got '157783680012345'");
    rejects('timestamp:>20', "Error while parsing timestamp: '20' is not a valid Unix timestamp (expected 10, 13, or 16 digits)");
  });

  test('anything else is rejected with the ISO8601 message', () => {
    rejects('t:>invalid-date', 'Error while parsing timestamp filter value', "got 'invalid-date'");
    rejects('t:2020-02-30', "got '2020-02-30'");
    rejects('t:tomorrow', "got 'tomorrow'");
  });

  test('ranges a..b, inclusive, with dates or datetimes', () => {
    assert.deepEqual(only('t:2019-01-01T00:13:37..2019-02-01T00:23:34'), {
      ...base,
      path: 'timestamp',
      operator: 'range',
      from: ts('2019-01-01 00:13:37.000000'),
      to: ts('2019-02-01 00:23:34.000000'),
    });
    const f = only('t:2019-01-01..2019-02-01');
    assert.ok(f.operator === 'range');
    assert.deepEqual(
      [f.from, f.to],
      [
        { type: 'date', value: '2019-01-01' },
        { type: 'date', value: '2019-02-01' },
      ],
    );
    assert.equal(only('-t:2019-01-01T00:13:37Z..2019-02-01T00:23:34Z').negate, true);
  });

  test('a range may not mix timestamps with and without offsets', () => {
    rejects('t:2019-01-01T00:00:00Z..2019-02-01T00:00:00', 'Timestamp range cannot mix timestamps with and without timezone offsets');
    rejects('t:1577836800..2019-02-01T00:00:00', 'Timestamp range cannot mix timestamps with and without timezone offsets');
  });

  test('brace ranges', () => {
    const cases: [string, unknown, unknown][] = [
      ['t:2020-{05..07}-01', { type: 'date', value: '2020-05-01' }, { type: 'date', value: '2020-07-01' }],
      ['t:{2010..2020}-05-{01..02}', { type: 'date', value: '2010-05-01' }, { type: 'date', value: '2020-05-02' }],
      ['t:2022-04-{07..09}T00:{00..40}:00', ts('2022-04-07 00:00:00.000000'), ts('2022-04-09 00:40:00.000000')],
      ['t:2020-01-01T13:14:15.{0..515}', ts('2020-01-01 13:14:15.000000'), ts('2020-01-01 13:14:15.515000')],
      ['t:2020-01-01T13:14:15.{1..7}', ts('2020-01-01 13:14:15.100000'), ts('2020-01-01 13:14:15.700000')],
      ['t:2020-01-01T13:14:15.{005001..1}', ts('2020-01-01 13:14:15.005001'), ts('2020-01-01 13:14:15.100000')],
      ['t:2020-{01..12}-{01..30}T{00..23}:{15..20}:{35..55}.{000001..585444}', ts('2020-01-01 00:15:35.000001'), ts('2020-12-30 23:20:55.585444')],
    ];
    for (const [lql, from, to] of cases) {
      const f = only(lql);
      assert.ok(f.operator === 'range', lql);
      assert.deepEqual([f.from, f.to], [from, to], lql);
    }
  });

  test('shorthands, relative to now (2026-11-21T10:37:42Z, a Saturday)', () => {
    const end = ts('2026-11-21 10:37:42.000000');
    const range = (lql: string) => {
      const f = only(lql);
      assert.ok(f.operator === 'range', lql);
      return [f.from, f.to];
    };
    assert.deepEqual(valueFrom('t:now'), end);
    assert.deepEqual(range('t:today'), [
      { type: 'date', value: '2026-11-21' },
      { type: 'date', value: '2026-11-21' },
    ]);
    assert.deepEqual(range('t:yesterday'), [
      { type: 'date', value: '2026-11-20' },
      { type: 'date', value: '2026-11-20' },
    ]);
    assert.deepEqual(range('t:this@minute'), [ts('2026-11-21 10:37:00.000000'), end]);
    assert.deepEqual(range('t:this@hour'), [ts('2026-11-21 10:00:00.000000'), end]);
    assert.deepEqual(range('t:this@day'), [ts('2026-11-21 00:00:00.000000'), end]);
    assert.deepEqual(range('t:this@week'), [ts('2026-11-16 00:00:00.000000'), end]);
    assert.deepEqual(range('t:this@month'), [ts('2026-11-01 00:00:00.000000'), end]);
    assert.deepEqual(range('t:this@year'), [ts('2026-01-01 00:00:00.000000'), end]);
    assert.deepEqual(range('t:last@50s'), [ts('2026-11-21 10:36:52.000000'), end]);
    assert.deepEqual(range('t:last@43m'), [ts('2026-11-21 09:54:00.000000'), end]);
    assert.deepEqual(range('t:last@5minutes'), [ts('2026-11-21 10:32:00.000000'), end]);
    assert.deepEqual(range('t:last@100hours'), [ts('2026-11-17 06:00:00.000000'), end]);
    assert.deepEqual(range('t:last@7d'), [ts('2026-11-14 00:00:00.000000'), end]);
    assert.deepEqual(range('t:last@2w'), [ts('2026-11-07 00:00:00.000000'), end]);
    assert.deepEqual(range('t:last@1mm'), [ts('2026-10-21 00:00:00.000000'), end]);
    assert.deepEqual(range('t:last@1y'), [ts('2025-11-21 00:00:00.000000'), end]);
  });

  test('unknown shorthand units and operators before ranges are rejected', () => {
    rejects('t:last@5fortnights', "unknown time unit 'fortnights'");
    rejects('t:this@second', "unknown time unit 'second'");
    rejects('t:>today', 'time range');
  });
});

describe('select, chart, from', () => {
  test('s: and select: with aliases; s:* means no explicit select', () => {
    const r = parse('s:event_message select:m.user.id s:m.qty@quantity s:*');
    assert.deepEqual(
      r.selects.map((s) => [s.path, s.alias]),
      [
        ['event_message', undefined],
        ['metadata.user.id', undefined],
        ['metadata.qty', 'quantity'],
      ],
    );
    assert.deepEqual(parse('s:*').selects, []);
  });

  test('a blank select alias is rejected', () => {
    rejects('s:m.qty@', 'Error while parsing select clause: select alias cannot be blank, expected alias name after @. For example, s:my_field@my_alias');
  });

  test('chart clauses merge into one rule with defaults', () => {
    const strip = (r: LqlRules) => (r.chart ? { aggregate: r.chart.aggregate, path: r.chart.path, period: r.chart.period } : undefined);
    assert.deepEqual(strip(parse('c:count(*) c:group_by(t::minute)')), { aggregate: 'count', path: 'timestamp', period: 'minute' });
    assert.deepEqual(strip(parse('c:sum(m.metric) c:group_by(t::h)')), { aggregate: 'sum', path: 'metadata.metric', period: 'hour' });
    assert.deepEqual(strip(parse('chart:group_by(timestamp::day)')), { aggregate: 'count', path: 'timestamp', period: 'day' });
    assert.deepEqual(strip(parse('chart:m.latency')), { aggregate: 'count', path: 'metadata.latency', period: 'minute' });
    for (const agg of ['count', 'countd', 'avg', 'sum', 'max', 'p50', 'p95', 'p99']) {
      assert.equal(parse(`c:${agg}(m.x)`).chart?.aggregate, agg);
    }
    for (const [p, period] of [
      ['s', 'second'],
      ['second', 'second'],
      ['m', 'minute'],
      ['d', 'day'],
    ]) {
      assert.equal(parse(`c:group_by(t::${p})`).chart?.period, period);
    }
  });

  test('bad chart clauses are rejected', () => {
    rejects('c:invalid(m.field)', "unknown aggregate 'invalid'");
    rejects('c:group_by(t::fortnight)', "unknown period 'fortnight'");
    rejects('c:count(*) c:avg(m.x)', 'Only one chart rule can be used in a LQL query');
  });

  test('f: and from:', () => {
    assert.equal(parse('f:my_table_123').from?.table, 'my_table_123');
    assert.equal(parse('from:_private').from?.table, '_private');
    assert.equal(parse('f:events m.level:error t:today').from?.table, 'events');
  });

  test('more than one from rule is an error, not a crash', () => {
    rejects('f:a m.x:1 from:b', 'Only one from rule (f:table) is allowed per query, found 2');
  });

  test('negating a non-filter clause is rejected', () => {
    rejects('-s:x', 'negation');
  });
});

describe('query level', () => {
  test('empty and blank queries have no rules', () => {
    assert.deepEqual(parse(''), { filters: [], selects: [] });
    assert.deepEqual(parse('  \n '), { filters: [], selects: [] });
  });

  test('clauses may be separated by newlines and runs of spaces', () => {
    assert.equal(filters('\n  -m.int:>=100\n  -m.str:~a   error\n').length, 3);
  });

  test('at most 100 clauses', () => {
    assert.equal(filters(Array.from({ length: 100 }, (_, i) => `w${i}`).join(' ')).length, 100);
    rejects(Array.from({ length: 101 }, (_, i) => `w${i}`).join(' '), 'at most 100', '`w100`');
  });

  test('syntax errors name the line and column', () => {
    rejects('"unclosed quote', 'quoted string at line 1, column 1', 'never closed');
    rejects('error\n  m.x:1 "open', 'line 2, column 9');
    rejects('a\u0000b', 'line 1, column 2');
  });

  test('errors name the clause and its column', () => {
    const message = rejects('error m.num:>=<1', '`m.num:>=<1`', 'column 7');
    assert.match(message, /line 1/);
  });
});
