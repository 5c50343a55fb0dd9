import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type ParamValue, paramText } from '../../src/query/port.ts';
import { type ParamSpec, bindTyped, checkParamSpecs, paramKey } from '../../src/endpoints/typed-params.ts';
import { isQuarryError } from '../../src/errors.ts';

function bind(spec: Omit<ParamSpec, 'name'>, value: unknown): ParamValue | null {
  const specs = [{ name: 'p', ...spec } as ParamSpec];
  return bindTyped(specs, ['p'], value === undefined ? {} : { p: value }).p ?? null;
}

function refused(spec: Omit<ParamSpec, 'name'>, value: unknown): string {
  try {
    bind(spec, value);
  } catch (e) {
    assert.ok(isQuarryError(e) && e.code === 'BAD_REQUEST' && e.status === 400, String(e));
    return e.message;
  }
  assert.fail(`${JSON.stringify(value)} was accepted as ${spec.type}`);
}

const micros = (iso: string) => BigInt(Date.parse(iso)) * 1000n;

test('timestamps: offsets, fractions to the microsecond, no offset is UTC, a date is midnight UTC', () => {
  const ts = { type: 'timestamp' } as const;
  assert.deepEqual(bind(ts, '2026-11-21T10:00:00Z'), { type: 'timestamp', micros: micros('2026-11-21T10:00:00Z') });
  assert.deepEqual(bind(ts, '2026-11-21T10:00:00'), { type: 'timestamp', micros: micros('2026-11-21T10:00:00Z') });
  assert.deepEqual(bind(ts, '2026-11-21 10:00'), { type: 'timestamp', micros: micros('2026-11-21T10:00:00Z') });
  assert.deepEqual(bind(ts, '2026-11-21T12:30:00+02:30'), { type: 'timestamp', micros: micros('2026-11-21T10:00:00Z') });
  assert.deepEqual(bind(ts, '2026-11-21T05:00:00-0500'), { type: 'timestamp', micros: micros('2026-11-21T10:00:00Z') });
  assert.deepEqual(bind(ts, '2026-11-21T10:00:00.123456789Z'), { type: 'timestamp', micros: micros('2026-11-21T10:00:00Z') + 123456n });
  assert.deepEqual(bind(ts, '2026-11-21T10:00:00.5Z'), { type: 'timestamp', micros: micros('2026-11-21T10:00:00Z') + 500000n });
  assert.deepEqual(bind(ts, '2026-11-21'), { type: 'timestamp', micros: micros('2026-11-21T00:00:00Z') });
  assert.deepEqual(bind(ts, '1969-12-31T23:59:59Z'), { type: 'timestamp', micros: -1_000_000n });
  for (const bad of ['2026-11-21T24:00:00Z', '2026-11-31T10:00:00Z', '2026-11-21T10:60:00Z', '2026-11-21T10:00:00+25:00', '1700000000', 'now', '']) {
    assert.match(refused(ts, bad), /"p" must be timestamp/, bad);
  }
});

test('ints are exact 64-bit, floats finite, bools strict, dates real, enums exact', () => {
  assert.deepEqual(bind({ type: 'int' }, '9223372036854775807'), { type: 'int', value: 9223372036854775807n });
  assert.deepEqual(bind({ type: 'int' }, '-9223372036854775808'), { type: 'int', value: -9223372036854775808n });
  assert.deepEqual(bind({ type: 'int' }, ' +42 '), { type: 'int', value: 42n });
  assert.deepEqual(bind({ type: 'int' }, 42), { type: 'int', value: 42n });
  for (const bad of ['9223372036854775808', '1e3', '0x10', '4.0', 4.5, true, 2 ** 60]) refused({ type: 'int' }, bad);
  assert.deepEqual(bind({ type: 'float' }, '-1.5e3'), { type: 'float', value: -1500 });
  assert.deepEqual(bind({ type: 'float' }, '.5'), { type: 'float', value: 0.5 });
  for (const bad of ['Infinity', 'NaN', '1,5', '', '1e400']) refused({ type: 'float' }, bad);
  assert.deepEqual(bind({ type: 'bool' }, 'TRUE'), { type: 'bool', value: true });
  assert.deepEqual(bind({ type: 'bool' }, '0'), { type: 'bool', value: false });
  assert.deepEqual(bind({ type: 'bool' }, false), { type: 'bool', value: false });
  for (const bad of ['yes', 'on', '2', '']) refused({ type: 'bool' }, bad);
  assert.deepEqual(bind({ type: 'date' }, '2024-02-29'), { type: 'date', days: Date.UTC(2024, 1, 29) / 86_400_000 });
  for (const bad of ['2026-02-29', '2026-1-01', '2026-11-21T00:00:00Z']) refused({ type: 'date' }, bad);
  assert.equal(bind({ type: 'enum', values: ['a', 'B'] }, 'B'), 'B');
  assert.match(refused({ type: 'enum', values: ['a', 'B'] }, 'b'), /one of "a", "B"/);
  assert.equal(bind({ type: 'string' }, ['x', 'y']), 'y', 'a repeated query parameter: the last');
  refused({ type: 'string' }, { nested: true });
});

test('defaults, required, and parameters the list does not describe', () => {
  const specs: ParamSpec[] = [
    { name: 'a', type: 'int', default: 7 },
    { name: 'b', type: 'date', required: true },
    { name: 'c', type: 'bool' },
  ];
  assert.deepEqual(bindTyped(specs, ['a', 'b', 'c', 'd', 'sql'], { b: '2026-01-01', d: 5, sql: 'select 1' }), {
    a: { type: 'int', value: 7n },
    b: { type: 'date', days: Date.UTC(2026, 0, 1) / 86_400_000 },
    c: null,
    d: '5',
  });
  assert.throws(() => bindTyped(specs, ['a', 'b'], {}), /"b" is required \(date\)/);
  assert.throws(() => bindTyped(specs, ['a', 'b'], { b: null }), /"b" is required/);
  // The cache key spells the value, so equal values share an entry.
  assert.equal(paramKey(bind({ type: 'int' }, '007')), paramKey(bind({ type: 'int' }, 7)));
  assert.notEqual(paramKey(bind({ type: 'int' }, '7')), paramKey('7'));
});

test('the list is checked on its own when the query is not known, and fully when it is', () => {
  assert.deepEqual(checkParamSpecs(null, ['a']), {});
  assert.deepEqual(checkParamSpecs([{ name: 'a', type: 'int', default: '12' }], ['a']), {});
  assert.deepEqual(checkParamSpecs([{ name: 'zz', type: 'int' }], undefined), {}, 'the query is unknown: no use check');
  assert.deepEqual(Object.keys(checkParamSpecs([{ name: 'zz', type: 'int' }], ['a'])), ['params[0].name']);
  assert.deepEqual(Object.keys(checkParamSpecs([{ name: '__lql_0', type: 'int' }], undefined)), ['params[0].name']);
  assert.deepEqual(checkParamSpecs([{ name: 'a', type: 'timestamp', default: 'soon' }], ['a']), {
    'params[0].default': ['"soon" does not fit timestamp'],
  });
  assert.deepEqual(checkParamSpecs([{ name: 'a', type: 'enum', values: ['x'], default: 'y' }], ['a']), {
    'params[0].default': ['"y" does not fit enum (one of "x")'],
  });
  assert.deepEqual(
    Object.keys(
      checkParamSpecs(
        Array.from({ length: 101 }, (_, i) => ({ name: `p${i}`, type: 'int' })),
        undefined,
      ),
    ),
    ['params'],
  );
});

test("every broken rule of a list is named, in the vocabulary's words, however many there are", () => {
  const fields = checkParamSpecs(
    [
      { name: 'min', type: 'integer' },
      { name: 'kind', type: 'enum' },
      { name: 'unused', type: 'int' },
      { name: 'min', type: 'int' },
      { name: 'sql', type: 'string' },
      { type: 'int' },
      { name: 'x', type: 'int', default: 'ten', values: ['a'] },
      { name: 'y', type: 'date', default: '2026-13-01', required: true, colour: 'red' },
      'kind',
      { name: 'z', type: 'enum', values: ['a', 'a', 3] },
      { name: 'w', type: 5, default: { a: 1 }, required: 'yes', description: 3 },
    ],
    ['min', 'kind', 'x', 'y', 'z', 'w'],
  );
  assert.deepEqual(fields, {
    'params[0].type': ['unknown type "integer": use one of string, int, float, bool, timestamp, date, enum'],
    'params[1].values': ['an enum needs a non-empty list of allowed text values'],
    'params[2].name': ['the query does not use @unused (it uses @min, @kind, @x, @y, @z, @w)'],
    'params[3].name': ['"min" is described twice'],
    'params[4].name': ['"sql" is reserved'],
    'params[5].name': ['must be a parameter name: letters, digits and underscores, not starting with a digit'],
    'params[6].values': ['only an enum lists values'],
    'params[7].colour': ['is not a parameter setting (name, type, default, required, description, values)'],
    'params[7].default': ['a required parameter takes no default', '"2026-13-01" does not fit date'],
    'params[8]': ['must be an object with a name and a type'],
    'params[9].values': ['an enum needs a non-empty list of allowed text values', 'lists a value twice'],
    'params[10].type': ['unknown type 5: use one of string, int, float, bool, timestamp, date, enum'],
    'params[10].default': ['must be text, a number or a boolean'],
    'params[10].required': ['must be true or false'],
    'params[10].description': ['must be text or null'],
  });
  assert.deepEqual(checkParamSpecs({ min: 'int' }, undefined), {
    params: ['must be a list of {name, type, default, required, description} objects, or null'],
  });
  // TypeBox gathers 8 errors by default; a list with many bad settings is reported whole.
  const many = checkParamSpecs(
    Array.from({ length: 40 }, (_, i) => ({ name: `p${i}`, type: 'nope', extra: true })),
    undefined,
  );
  assert.equal(Object.keys(many).length, 80);
});

test('typed values as text, for engines that send parameters as text', () => {
  assert.equal(paramText('x'), 'x');
  assert.equal(paramText({ type: 'int', value: -9223372036854775808n }), '-9223372036854775808');
  assert.equal(paramText({ type: 'float', value: 1.5 }), '1.5');
  assert.equal(paramText({ type: 'bool', value: false }), 'false');
  assert.equal(paramText({ type: 'date', days: Date.UTC(2026, 10, 21) / 86_400_000 }), '2026-11-21');
  assert.equal(paramText({ type: 'timestamp', micros: micros('2026-11-21T10:00:00Z') + 5n }), '2026-11-21 10:00:00.000005');
  assert.equal(paramText({ type: 'timestamp', micros: -1n }), '1969-12-31 23:59:59.999999');
});
