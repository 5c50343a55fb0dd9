/** The translation cache keys by AST, row cap and the run's parameter signature, and stays bounded. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ParamValue } from '../../src/query/port.ts';
import { TranslationCache } from '../../src/query/translation-cache.ts';
import { generateSql } from '../../src/sql/generator.ts';
import { prepareEndpointQuery } from '../../src/sql/index.ts';
import type { ParamBinding } from '../../src/sql/resolve.ts';
import { DuckDbPrinter } from '../../src/engines/duckdb/generator.ts';
import { makeCatalog } from '../sql/support.ts';

test('one translation per (row cap, parameter signature); the signature is what each used parameter binds', () => {
  const seen: (readonly [string, ParamBinding][])[] = [];
  const cache = new TranslationCache((ast, catalog, maxRows, paramTypes) => {
    seen.push([...paramTypes]);
    return generateSql(ast, maxRows === undefined ? { catalog, paramTypes } : { catalog, maxRows, paramTypes }, new DuckDbPrinter());
  });
  const catalog = makeCatalog([]);
  const q = prepareEndpointQuery({ saved: 'select @a as a, @b + 1 as b, @a as again from (select 1)', catalog, sandboxable: false });
  const run = (params: Record<string, ParamValue | null | undefined>, maxRows?: number) => cache.get(q, maxRows, params);

  const first = run({ a: 'x', b: { type: 'int', value: 1n } });
  assert.deepEqual(seen, [
    [
      ['a', 'string'],
      ['b', 'int'],
    ],
  ]);
  assert.equal(first.generated.columns[1]?.type.k === 'scalar' && first.generated.columns[1].type.t, 'int');
  // Other values of the same types, and parameters the query does not use: the same translation.
  assert.equal(run({ a: 'y', b: { type: 'int', value: 7n }, unused: { type: 'float', value: 1 } }), first);
  assert.equal(seen.length, 1);
  // A NULL, another type, another row cap: each its own.
  const absent = run({ b: { type: 'int', value: 1n } });
  assert.notEqual(absent, first);
  assert.deepEqual(seen.at(-1), [
    ['a', 'null'],
    ['b', 'int'],
  ]);
  assert.notEqual(run({ a: 'x', b: { type: 'float', value: 1.5 } }), first);
  assert.equal(first.generated.columns[1]?.type.k === 'scalar' && first.generated.columns[1].type.t, 'int');
  assert.notEqual(run({ a: 'x', b: { type: 'int', value: 1n } }, 10), first);
  assert.equal(seen.length, 4);
  assert.equal(run({ a: 'z', b: { type: 'int', value: 2n } }), first, 'the first is still there');
  // A prototype name is not a value.
  const proto = prepareEndpointQuery({ saved: 'select @constructor as c from (select 1)', catalog, sandboxable: false });
  cache.get(proto, undefined, {});
  assert.deepEqual(seen.at(-1), [['constructor', 'null']]);
});

test('a query keeps at most 16 translations, least recently used out first', () => {
  let generated = 0;
  const cache = new TranslationCache((ast, catalog, maxRows, paramTypes) => {
    generated++;
    return generateSql(ast, maxRows === undefined ? { catalog, paramTypes } : { catalog, maxRows, paramTypes }, new DuckDbPrinter());
  });
  const catalog = makeCatalog([]);
  const q = prepareEndpointQuery({ saved: 'select @a as a from (select 1)', catalog, sandboxable: false });
  for (let cap = 1; cap <= 17; cap++) cache.get(q, cap, { a: 'x' });
  assert.equal(generated, 17);
  cache.get(q, 17, { a: 'x' });
  cache.get(q, 2, { a: 'x' });
  assert.equal(generated, 17, 'the 16 most recent are kept');
  cache.get(q, 1, { a: 'x' });
  assert.equal(generated, 18, 'the oldest went');
});
