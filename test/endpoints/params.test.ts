import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bindDeclared, callerQuery, mergeParams, paramString, redactionFor } from '../../src/endpoints/params.ts';

describe('mergeParams', () => {
  it('lets a body value win over the query string', () => {
    assert.deepEqual(
      { ...mergeParams({ project: 'q', a: '1' }, { project: 'b', sql: 'select 1' }) },
      {
        project: 'b',
        a: '1',
        sql: 'select 1',
      },
    );
  });
  it('ignores a body that is not an object', () => {
    assert.deepEqual({ ...mergeParams({ a: '1' }, ['x']) }, { a: '1' });
    assert.deepEqual({ ...mergeParams({ a: '1' }, 'text') }, { a: '1' });
    assert.deepEqual({ ...mergeParams(undefined, null) }, {});
  });
});

describe('paramString', () => {
  it('binds every value as a string', () => {
    assert.equal(paramString('x'), 'x');
    assert.equal(paramString(''), '');
    assert.equal(paramString(12), '12');
    assert.equal(paramString(1.5), '1.5');
    assert.equal(paramString(true), 'true');
    assert.equal(paramString(['a', 'b']), 'b', 'a repeated query-string parameter binds its last value');
    assert.equal(paramString({ a: 1 }), '{"a":1}');
    assert.equal(paramString(null), null);
    assert.equal(paramString(undefined), null);
  });
});

describe('bindDeclared', () => {
  it('binds declared names, absent as NULL, and ignores undeclared and reserved ones', () => {
    const bound = bindDeclared(['project', 'iso_timestamp_start', 'iso_timestamp_end'], {
      project: 'default',
      iso_timestamp_end: 2026,
      other: 'ignored',
      sql: 'select 1',
    });
    assert.deepEqual(bound, { project: 'default', iso_timestamp_start: null, iso_timestamp_end: '2026' });
  });
  it('does not treat inherited object keys as parameters', () => {
    assert.deepEqual(bindDeclared(['constructor', 'toString'], {}), { constructor: null, toString: null });
  });
});

describe('callerQuery', () => {
  it('prefers sql over lql and treats blank values as absent', () => {
    assert.deepEqual(callerQuery({ sql: 'select 1', lql: 'error' }), { kind: 'sql', text: 'select 1' });
    assert.deepEqual(callerQuery({ sql: '  ', lql: 'error' }), { kind: 'lql', text: 'error' });
    assert.equal(callerQuery({ sql: '', lql: '' }), null);
    assert.equal(callerQuery({ project: 'x' }), null);
  });
});

describe('redactionFor', () => {
  it('follows the header when present, else the endpoint default', () => {
    assert.equal(redactionFor(undefined, false), false);
    assert.equal(redactionFor(undefined, true), true);
    assert.equal(redactionFor('true', false), true);
    assert.equal(redactionFor('TRUE', false), true);
    assert.equal(redactionFor('false', true), false);
    assert.equal(redactionFor('no', true), false);
  });
});

describe('mergeParams and prototype keys', () => {
  it('keeps __proto__ as a plain parameter name', () => {
    const merged = mergeParams({}, JSON.parse('{"__proto__": {"polluted": "yes"}, "a": "1"}'));
    assert.equal(Object.getPrototypeOf(merged), null);
    assert.deepEqual(Object.keys(merged).sort(), ['__proto__', 'a']);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });
});
