import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { JsonObject } from '../../src/storage/event.ts';
import { emptyFields, findOwnName, setOwn } from '../../src/storage/fields.ts';
import { BOOL, FLOAT, INT, STRING } from '../../src/storage/infer.ts';
import { checkFieldLimit } from '../../src/storage/limits.ts';
import { allColumns, growSchema, overflowPart } from '../../src/storage/overflow.ts';
import type { FieldType, TableSchema } from '../../src/storage/schema.ts';
import { baseColumns } from '../../src/storage/schema.ts';

const rec = (fields: Record<string, FieldType>): FieldType => ({ kind: 'record', fields });
const list = (element: FieldType): FieldType => ({ kind: 'list', element });
const table = (columns: Record<string, FieldType>, overflow?: Record<string, FieldType>): TableSchema =>
  overflow === undefined ? { columns: { ...baseColumns, ...columns } } : { columns: { ...baseColumns, ...columns }, overflow };

describe('growSchema', () => {
  it('types new fields while the budget lasts, then keeps them in the overflow', () => {
    const { schema, changes } = growSchema(table({ a: STRING }), { a: STRING, b: INT, c: BOOL, m: rec({ x: INT }) }, 2);
    assert.deepEqual(Object.keys(schema.columns), ['id', 'timestamp', 'event_message', 'a', 'b']);
    assert.deepEqual(schema.overflow, { c: BOOL, m: rec({ x: INT }) });
    assert.deepEqual(changes, [
      { kind: 'add_column', column: 'b', type: INT },
      { kind: 'overflow_field', path: ['c'], type: BOOL },
      { kind: 'overflow_field', path: ['m'], type: rec({ x: INT }) },
    ]);
  });

  it('a new field inside a typed record goes to the overflow at its path, and stays there', () => {
    const first = growSchema(table({ m: rec({ x: INT }) }), { m: rec({ x: INT, y: STRING }) }, 1);
    assert.deepEqual(first.schema.columns.m, rec({ x: INT }));
    assert.deepEqual(first.schema.overflow, { m: rec({ y: STRING }) });
    assert.deepEqual(first.changes, [{ kind: 'overflow_field', path: ['m'], type: rec({ y: STRING }) }]);
    // The same shape again changes nothing; a conflict in the overflow changes only its type.
    assert.deepEqual(growSchema(first.schema, { m: rec({ x: INT, y: STRING }) }, 1).changes, []);
    const conflict = growSchema(first.schema, { m: rec({ y: INT }) }, 1);
    assert.deepEqual(conflict.schema.overflow, { m: rec({ y: STRING }) });
    assert.deepEqual(conflict.changes, []);
    const widen = growSchema(growSchema(table({}, { n: INT }), {}, 0).schema, { n: FLOAT }, 0);
    assert.deepEqual(widen.changes, [{ kind: 'overflow_retype', path: ['n'], from: INT, to: FLOAT }]);
  });

  it('a new field inside a list of records is typed even past the budget', () => {
    const { schema, changes } = growSchema(table({ l: list(rec({ k: STRING })) }), { l: list(rec({ k: STRING, v: INT })) }, 1);
    assert.deepEqual(schema.columns.l, list(rec({ k: STRING, v: INT })));
    assert.deepEqual(changes, [{ kind: 'add_field', path: ['l', 'element', 'v'], type: INT }]);
  });

  it('a typed record that becomes text takes its overflowed fields with it', () => {
    const { schema, changes } = growSchema(table({ m: rec({ x: INT }) }, { m: rec({ y: STRING }), o: INT }), { m: STRING }, 1);
    assert.deepEqual(schema.columns.m, STRING);
    assert.deepEqual(schema.overflow, { o: INT });
    assert.equal(changes[0]?.kind, 'retype_column');
  });

  it('a nested typed record that becomes text takes its overflowed fields with it', () => {
    const { schema } = growSchema(
      table({ n: rec({ r: rec({ a: INT }), s: INT }) }, { n: rec({ r: rec({ b: STRING }), t: INT }) }),
      { n: rec({ r: STRING }) },
      1,
    );
    assert.deepEqual(schema.columns.n, rec({ r: STRING, s: INT }));
    assert.deepEqual(schema.overflow, { n: rec({ t: INT }) });
  });

  it('matches keys case-insensitively across typed columns and the overflow', () => {
    const { schema } = growSchema(table({ Abc: STRING }, { Def: INT }), { abc: STRING, DEF: INT }, 1);
    assert.deepEqual(Object.keys(schema.columns), ['id', 'timestamp', 'event_message', 'Abc']);
    assert.deepEqual(schema.overflow, { Def: INT });
  });

  it('thousands of new keys: the typed part takes the budget, the rest one overflow change each, counted by the field limit', () => {
    const observed = emptyFields<FieldType>();
    for (let i = 0; i < 5000; i++) setOwn(observed, `k${i}`, STRING);
    const before = table({});
    const { schema, changes } = growSchema(before, observed, 100);
    assert.equal(Object.keys(schema.columns).length, 103);
    assert.equal(Object.keys(schema.overflow ?? {}).length, 4900);
    assert.equal(changes.length, 5000);
    assert.equal(checkFieldLimit(before, changes, 5000), undefined);
    assert.deepEqual(checkFieldLimit(before, changes, 4999), { path: 'k4999', limit: 4999, total: 5000 });
  });

  it('readers see every field', () => {
    const s = table({ m: rec({ x: INT }) }, { m: rec({ y: STRING }), o: BOOL });
    assert.deepEqual(allColumns(s), { ...baseColumns, m: rec({ x: INT, y: STRING }), o: BOOL });
    assert.equal(allColumns(s), allColumns(s));
  });
});

describe('overflowPart', () => {
  it('keeps only the overflow fields of an event, shaped to their types; undefined when there are none', () => {
    const overflow = { m: rec({ y: STRING }), o: STRING, constructor: INT };
    const event = JSON.parse('{"a":1,"m":{"x":1,"y":{"deep":true}},"o":5,"constructor":3,"__proto__":{"p":1}}') as JsonObject;
    assert.deepEqual(overflowPart(event, overflow), { m: { y: '{"deep":true}' }, o: '5', constructor: 3 });
    assert.equal(overflowPart({ a: 1, m: { x: 2 } }, overflow), undefined);
  });
});

describe('findOwnName', () => {
  it('finds names ignoring case in large objects built with setOwn, first spelling first', () => {
    const fields = emptyFields<number>();
    for (let i = 0; i < 100; i++) setOwn(fields, `Key${i}`, i);
    assert.equal(findOwnName(fields, 'key5'), 'Key5');
    setOwn(fields, 'NEW', 1);
    setOwn(fields, 'new', 2);
    assert.equal(findOwnName(fields, 'New'), 'NEW');
    assert.equal(findOwnName(fields, 'constructor'), undefined);
    assert.deepEqual(Object.keys({ ...fields }).length, 102);
    assert.equal(JSON.stringify(fields).includes('lowerIndex'), false);
  });
});
