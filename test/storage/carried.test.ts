/**
 * Records every stored event carried (src/storage/carried.ts): the bookkeeping, and the printers
 * leaving out the presence test of such a record, and only where no outer join can make it NULL.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { generateClickHouse } from '../../src/engines/clickhouse/printer.ts';
import { generateDuckDb } from '../../src/engines/duckdb/generator.ts';
import { prepareEndpointQuery } from '../../src/sql/index.ts';
import { afterAppend, carriedByAll, carries, combineCarried, keysOnceEach, recordPaths } from '../../src/storage/carried.ts';
import { mergeEntrySchemas } from '../../src/storage/catalog.ts';
import type { JsonObject } from '../../src/storage/event.ts';
import type { RecordPath, SourceTable, TableSchema } from '../../src/storage/schema.ts';
import { int, list, makeCatalog, rec, schema, str } from '../sql/support.ts';

const columns = schema({
  metadata: rec({ request: rec({ method: str, headers: rec({ ua: str }) }), response: rec({ status_code: int }), tags: list(rec({ inner: rec({ v: int }) })) }),
  plain: str,
}).columns;

describe('the bookkeeping', () => {
  test('record paths: records inside records, not inside lists', () => {
    assert.deepEqual(recordPaths(columns), [['metadata'], ['metadata', 'request'], ['metadata', 'request', 'headers'], ['metadata', 'response']]);
  });

  test('an event carries a path only with an object at every step', () => {
    const e = { metadata: { request: { headers: {} }, response: null, tags: [] } };
    assert.equal(carries(e, ['metadata']), true);
    assert.equal(carries(e, ['metadata', 'request', 'headers']), true);
    assert.equal(carries(e, ['metadata', 'response']), false);
    assert.equal(carries(e, ['metadata', 'tags']), false);
    assert.equal(carries({ metadata: 'text' }, ['metadata']), false);
    assert.equal(carries({ metadata: { request: 'x' } }, ['metadata', 'request']), false);
    assert.equal(carries({ Metadata: {} }, ['metadata']), false);
  });

  test('carriedByAll keeps the paths every event carries', () => {
    const paths = recordPaths(columns);
    const events: JsonObject[] = [{ metadata: { request: { headers: {} }, response: {} } }, { metadata: { request: {}, response: {} } }];
    assert.deepEqual(carriedByAll(events, paths), [['metadata'], ['metadata', 'request'], ['metadata', 'response']]);
    assert.deepEqual(carriedByAll([...events, {}], paths), []);
    assert.deepEqual(carriedByAll([], paths), paths);
  });

  test('the first append decides; later ones only take away; an unknown table stays unknown', () => {
    const all = (paths: readonly RecordPath[]) => [...paths];
    const first = afterAppend({ columns, unwritten: true }, columns, all);
    assert.deepEqual(first, { carried: recordPaths(columns) });
    // A record that appears later was missing from the events before: it is never tracked.
    const grown = schema({ ...columns, extra: rec({ a: int }) }).columns;
    assert.deepEqual(afterAppend({ columns, carried: [['metadata']] }, grown, all), { carried: [['metadata']] });
    assert.deepEqual(
      afterAppend({ columns, carried: [['metadata'], ['metadata', 'request']] }, columns, (p) => p.slice(0, 1)),
      { carried: [['metadata']] },
    );
    // No way to tell what an append carries: nothing is carried from then on.
    assert.deepEqual(afterAppend({ columns, unwritten: true }, columns, undefined), { carried: [] });
    assert.deepEqual(afterAppend({ columns }, columns, all), {});
    // A record that became text in a conflict is not a record any more.
    const text = schema({ ...columns, metadata: str }).columns;
    assert.deepEqual(afterAppend({ columns, carried: [['metadata'], ['metadata', 'request']] }, text, all), { carried: [] });
  });

  test('a key that appears more often than events in the received text, or any escape, is not judged', () => {
    const paths = [['metadata'], ['metadata', 'request']];
    const once = JSON.stringify([{ metadata: { request: {} } }, { metadata: { request: {} } }]);
    assert.deepEqual(keysOnceEach(once, 2, paths), paths);
    assert.deepEqual(keysOnceEach('[{"metadata":{"request":null,"request":{}}}]', 1, paths), [['metadata']]);
    assert.deepEqual(keysOnceEach('[{"metadata":null,"metadata":{"request":{}}}]', 1, paths), []);
    assert.deepEqual(keysOnceEach('[{"metadata":{"re\\u0071uest":1}}]', 1, paths), []);
  });

  test('two views combine to what both say', () => {
    const a: TableSchema = { columns, carried: [['metadata'], ['metadata', 'request']] };
    const b: TableSchema = {
      columns,
      carried: [
        ['metadata', 'request'],
        ['metadata', 'response'],
      ],
    };
    assert.deepEqual(combineCarried(a, b), { carried: [['metadata', 'request']] });
    assert.deepEqual(combineCarried({ columns, unwritten: true }, b), { carried: b.carried });
    assert.deepEqual(combineCarried(a, { columns, unwritten: true }), { carried: a.carried });
    assert.deepEqual(combineCarried({ columns, unwritten: true }, { columns, unwritten: true }), { unwritten: true });
    assert.deepEqual(combineCarried(a, { columns }), {});
    // Merging a held entry with a reloaded one: fields of both, carried of both.
    const merged = mergeEntrySchemas(a, { columns: schema({ ...columns, more: int }).columns, carried: [['metadata']] });
    assert.deepEqual(merged.carried, [['metadata']]);
    assert.ok(Object.hasOwn(merged.columns, 'more'));
  });
});

const carriedSchema: TableSchema = {
  ...schema({ metadata: rec({ request: rec({ method: str }), response: rec({ status_code: int }) }) }),
  carried: [['metadata'], ['metadata', 'request']],
};
const logs: SourceTable = { id: '00000000-0000-4000-8000-000000000001', name: 'logs', table: 'src_logs', schema: carriedSchema };
const catalog = makeCatalog([logs]);

const printers = {
  duckdb: (ast: ReturnType<typeof prepareEndpointQuery>['ast']) => generateDuckDb(ast, { catalog }).sql,
  clickhouse: (ast: ReturnType<typeof prepareEndpointQuery>['ast']) => generateClickHouse(ast, { catalog, database: 'q' }).sql,
};

/** How many presence markers the printed query reads. */
function markers(engine: keyof typeof printers, sql: string): number {
  const printed = printers[engine](prepareEndpointQuery({ saved: sql, catalog, sandboxable: false }).ast);
  return printed.split('$present').length - 1;
}

for (const engine of Object.keys(printers) as (keyof typeof printers)[]) {
  describe(`${engine}: a record every event carried is not tested`, () => {
    test('cross joins of carried records test nothing; the one not carried is tested', () => {
      assert.equal(markers(engine, 'select count(*) as n from logs t cross join unnest(t.metadata) m cross join unnest(m.request) r'), 0);
      assert.equal(markers(engine, 'select count(*) as n from logs t cross join unnest(t.metadata) m cross join unnest(m.response) r'), 1);
      const cte = 'with c as (select id, metadata from logs) select count(*) as n from c cross join unnest(c.metadata) m cross join unnest(m.request) r';
      assert.equal(markers(engine, cte), 0);
    });

    test('a record an outer join can make NULL keeps its test', () => {
      const left = 'select count(*) as n from (select 1 as one) a left join logs t on true cross join unnest(t.metadata) m';
      assert.equal(markers(engine, left), 1);
      const inCte =
        'with c as (select t.metadata from (select 1 as one) a left join logs t on true) select count(*) as n from c cross join unnest(c.metadata) m';
      assert.equal(markers(engine, inCte), 1);
      const derived =
        'select count(*) as n from (select t.metadata from (select 1 as one) a left join logs t on true) d cross join unnest(d.metadata) m cross join unnest(m.request) r';
      assert.equal(markers(engine, derived), 1);
      // Two output names that differ only by case: the resolver's pick is not followed.
      const twoNames =
        'with e as (select b.metadata as MD, a.metadata as md from logs a left join logs b on false) select count(*) as n from e cross join unnest(e.md) m';
      const printed = printers[engine](prepareEndpointQuery({ saved: twoNames, catalog, sandboxable: false }).ast);
      assert.match(printed, /IS NOT NULL|JSONAllPaths/, 'the record itself is tested');
      // The preserved side of a LEFT JOIN is never NULL.
      assert.equal(markers(engine, 'select count(*) as n from logs t left join (select 1 as one) a on true cross join unnest(t.metadata) m'), 0);
    });
  });
}
