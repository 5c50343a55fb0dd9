import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FieldType } from '../../src/storage/schema.ts';
import { baseColumns } from '../../src/storage/schema.ts';
import { inferFields, mergeSchema, mergeTypes } from '../../src/storage/infer.ts';
import { conform } from '../../src/storage/conform.ts';

const S: FieldType = { kind: 'scalar', type: 'string' };
const I: FieldType = { kind: 'scalar', type: 'int' };
const F: FieldType = { kind: 'scalar', type: 'float' };
const B: FieldType = { kind: 'scalar', type: 'bool' };
const rec = (fields: Record<string, FieldType>): FieldType => ({ kind: 'record', fields });
const list = (element: FieldType): FieldType => ({ kind: 'list', element });

describe('inference and the conflict rule', () => {
  it('infers scalars, records and lists; null, [] and {} carry no type', () => {
    assert.deepEqual(inferFields({ s: 'x', i: 1, f: 1.5, b: true, n: null, e: [], o: {}, r: { a: [1, 2.5] } }, undefined), {
      s: S,
      i: I,
      f: F,
      b: B,
      r: rec({ a: list(F) }),
    });
    assert.deepEqual(inferFields({ big: 2 ** 64 }, undefined), { big: F });
  });

  it('widens int to float and everything else that conflicts to string', () => {
    assert.deepEqual(mergeTypes(I, F), F);
    assert.deepEqual(mergeTypes(I, S), S);
    assert.deepEqual(mergeTypes(B, I), S);
    assert.deepEqual(mergeTypes(rec({ a: I }), S), S);
    assert.deepEqual(mergeTypes(list(I), rec({ a: I })), S);
    assert.deepEqual(mergeTypes(rec({ a: I }), rec({ b: S, A: F })), rec({ a: F, b: S }));
    assert.deepEqual(inferFields({ m: [1, 'a', { x: 1 }] }, undefined), { m: list(S) });
  });

  it('lists only real changes, as in-place additions where possible', () => {
    const schema = { columns: { ...baseColumns, m: rec({ req: rec({ path: S }), tags: list(rec({ k: S })) }), n: I } };
    assert.deepEqual(mergeSchema(schema, { m: rec({ req: rec({ path: S }) }), n: I }).changes, []);
    assert.equal(mergeSchema(schema, { m: rec({ req: rec({ path: S }) }), n: I }).schema, schema);
    const grown = mergeSchema(schema, { m: rec({ req: rec({ search: S }), tags: list(rec({ v: I })) }), p: B });
    assert.deepEqual(grown.changes, [
      { kind: 'add_field', path: ['m', 'req', 'search'], type: S },
      { kind: 'add_field', path: ['m', 'tags', 'element', 'v'], type: I },
      { kind: 'add_column', column: 'p', type: B },
    ]);
    // A string already absorbs an int: no change.
    assert.deepEqual(mergeSchema(schema, { m: rec({ req: rec({ path: I }) }) }).changes, []);
    const retyped = mergeSchema(schema, { m: rec({ req: S }), N: F });
    assert.deepEqual(retyped.changes, [
      { kind: 'retype_column', column: 'm', from: schema.columns.m, to: rec({ req: S, tags: list(rec({ k: S })) }) },
      { kind: 'retype_column', column: 'n', from: I, to: F },
    ]);
  });

  it('conforms values to the stored type', () => {
    const type = rec({ level: S, n: F, sub: rec({ x: S }) });
    assert.deepEqual(conform({ Level: 3, n: 2, sub: { x: { deep: true } }, gone: null }, type), {
      level: '3',
      n: 2,
      sub: { x: '{"deep":true}' },
    });
    const fits = { level: 'a', n: 1 };
    assert.equal(conform(fits, type), fits);
  });
});
