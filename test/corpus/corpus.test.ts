/**
 * Runs every corpus case through the whole pipeline (parse → validate → sandbox merge →
 * generation → execution → encoding) against the Supabase fixture data, on every engine
 * (test/support/engines.ts), with the same expected rows.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { logsAllSql } from '../../src/endpoints/supabase/index.ts';
import { isQuarryError } from '../../src/errors.ts';
import { prepareEndpointQuery } from '../../src/sql/index.ts';
import { supabaseData, supabaseSources } from '../sql/fixtures.ts';
import { engines, openQueryTestEngine, type QueryTestEngine } from '../support/engines.ts';
import { functionCases } from './functions.ts';
import { savedCases } from './saved.ts';
import { semanticsCases } from './semantics.ts';
import { studioCases } from './studio.ts';
import type { CorpusCase, Row } from './types.ts';

const suites: [string, CorpusCase[]][] = [
  ['studio shapes', studioCases],
  ['functions', functionCases],
  ['saved logs.all', savedCases],
  ['semantics', semanticsCases],
];

test('the corpus holds at least 150 queries', () => {
  assert.ok(suites.reduce((n, [, cases]) => n + cases.length, 0) >= 150);
});

async function run(t: QueryTestEngine, c: CorpusCase) {
  const prepared = prepareEndpointQuery({
    saved: logsAllSql,
    caller: c.sql === undefined ? undefined : { sql: c.sql },
    catalog: t.catalog,
    sandboxable: true,
  });
  return t.query.run(prepared, c.params ?? { project: 'default' }, { timeoutMs: 10_000, maxRows: c.maxRows ?? 1000 });
}

/** Expected rows may list only some keys; only those are compared. */
function project(actual: Row[], expected: Row[]): Row[] {
  return actual.map((row, i) => {
    const keys = Object.keys(expected[i] ?? row);
    return Object.fromEntries(keys.map((k) => [k, row[k] ?? null]));
  });
}

const sortKey = (r: Row) => JSON.stringify(r);

for (const engine of engines) {
  describe(engine, () => {
    let t: QueryTestEngine;
    before(async () => {
      t = await openQueryTestEngine(engine, supabaseSources, supabaseData);
    });
    after(() => t.close());

    for (const [suite, cases] of suites) {
      describe(suite, () => {
        for (const c of cases) {
          test(c.name, async () => {
            if ('error' in c.expect) {
              const expected = c.expect;
              await assert.rejects(run(t, c), (e: unknown) => {
                assert.ok(isQuarryError(e), `expected a QuarryError, got ${String(e)}`);
                assert.equal(e.code, expected.error, e.message);
                if (expected.message) assert.match(e.message, expected.message);
                return true;
              });
              return;
            }
            const result = await run(t, c);
            const expected = c.expect;
            assert.equal(result.rows.length, expected.length, `row count; got ${JSON.stringify(result.rows)}`);
            const actual = project(result.rows, expected);
            if (c.unordered) assert.deepEqual(actual.map(sortKey).sort(), expected.map(sortKey).sort());
            else assert.deepEqual(actual, expected);
            if (c.warnings) assert.deepEqual([...result.warnings].sort(), [...c.warnings].sort());
          });
        }
      });
    }
  });
}
