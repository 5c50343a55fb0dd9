/**
 * Value growth (src/sql/value-growth.ts): values grown by ordinary functions (CONCAT nested through
 * subqueries, TO_BASE64 nested, REPLACE with a long replacement, ARRAY_TO_STRING) are measured on
 * the AST and refused past QUERY_MAX_VALUE_GROWTH or the built-bytes limit, while every query of
 * the Studio corpus, Logflare's cases and the seeded endpoints passes.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { logsAllSql } from '../../src/endpoints/supabase/index.ts';
import { isQuarryError } from '../../src/errors.ts';
import { defaultQueryBounds, prepareEndpointQuery, type QueryBounds } from '../../src/sql/index.ts';
import { concatChain, nestedCalls } from '../security/query-bombs.ts';
import { makeCatalog } from './support.ts';
import { supabaseSources } from './fixtures.ts';

const catalog = makeCatalog(supabaseSources);

function prepare(sql: string, bounds?: QueryBounds) {
  return prepareEndpointQuery({ saved: logsAllSql, caller: { sql }, catalog, sandboxable: true, ...(bounds ? { bounds } : {}) });
}

function tooComplex(pattern: RegExp) {
  return (e: unknown) => {
    assert.ok(isQuarryError(e), `not a QuarryError: ${String(e)}`);
    assert.equal(e.code, 'QUERY_TOO_COMPLEX', e.message);
    assert.match(e.message, pattern);
    return true;
  };
}

const growth = tooComplex(/QUERY_MAX_VALUE_GROWTH/);
const built = tooComplex(/bytes from its own text and functions.*QUERY_MAX_VALUE_BYTES/);

describe('value growth', () => {
  test('CONCAT of a value with itself, read through nested subqueries: 4^3 passes, 4^4 is refused', () => {
    assert.doesNotThrow(() => prepare(concatChain(3, 'event_message')));
    assert.throws(() => prepare(concatChain(4, 'event_message')), growth);
    assert.throws(() => prepare(concatChain(5, 'event_message')), growth);
  });

  test('the same through CTEs, and with || instead of CONCAT', () => {
    const ctes = (n: number) => {
      const parts = ['c0 as (select event_message as s from edge_logs)'];
      for (let i = 1; i <= n; i++) parts.push(`c${i} as (select s || s || s || s as s from c${i - 1})`);
      return `with ${parts.join(', ')} select length(s) as n from c${n}`;
    };
    assert.doesNotThrow(() => prepare(ctes(3)));
    assert.throws(() => prepare(ctes(4)), growth);
  });

  test('functions that grow a little, nested deeply: TO_BASE64, TO_JSON_STRING, UPPER', () => {
    assert.doesNotThrow(() => prepare(nestedCalls('to_base64', 4, 'cast(event_message as bytes)')));
    assert.throws(() => prepare(nestedCalls('to_base64', 7, 'cast(event_message as bytes)')), growth);
    assert.throws(() => prepare(nestedCalls('to_json_string', 3, 'event_message')), growth);
    assert.throws(() => prepare(nestedCalls('upper', 4, 'event_message')), growth);
  });

  test('REPLACE by a replacement read from the rows has no bound; by a long constant, its multiple', () => {
    assert.throws(() => prepare("select replace(event_message, 'a', event_message) as r from edge_logs"), tooComplex(/without bound/));
    assert.throws(() => prepare("select regexp_replace(event_message, '', id) as r from edge_logs"), tooComplex(/without bound/));
    assert.doesNotThrow(() => prepare("select replace(event_message, 'a', 'bb') as r, regexp_replace(event_message, '[0-9]+', '#') as d from edge_logs"));
    assert.throws(() => prepare(`select replace(event_message, 'a', '${'x'.repeat(100)}') as r from edge_logs`), growth);
    assert.throws(() => prepare(`select regexp_replace(event_message, '', '${'x'.repeat(70)}') as r from edge_logs`), growth);
  });

  test('ARRAY_TO_STRING with a separator read from the rows, or with a long one over many elements', () => {
    assert.throws(() => prepare('select array_to_string(split(event_message), event_message) as r from edge_logs'), tooComplex(/without bound/));
    assert.throws(() => prepare(`select array_to_string(generate_array(1, 100000), '${'x'.repeat(100)}') as r`), built);
    assert.doesNotThrow(() => prepare("select array_to_string(generate_array(1, 1000), ', ') as r"));
  });

  test('values built from the query text over every row: REPEAT, GENERATE_ARRAY and literals within 4 × the per-row limit', () => {
    // GENERATE_ARRAY with a count known only when it runs is guarded then, at 512 elements per row.
    const generated = prepare('select array_length(generate_array(1, length(id) * 12000)) as n from edge_logs').ast;
    assert.match(JSON.stringify(generated), /"name":"generate_array".*"maxBytes":4096/);
    assert.throws(
      () =>
        prepare(
          `select concat(repeat(id, length(id)), repeat(id, length(id)), repeat(id, length(id)), repeat(id, length(id)), repeat(id, 2)) as r from edge_logs`,
        ),
      built,
    );
    assert.doesNotThrow(() => prepare('select concat(repeat(id, length(id)), id) as r from edge_logs'));
    assert.doesNotThrow(() => prepare(`select concat(id, '${'x'.repeat(15_000)}') as r from edge_logs`));
    assert.throws(() => prepare(`select concat(id, '${'x'.repeat(17_000)}') as r from edge_logs`), built);
    // Computed once (no FROM), the whole limit.
    assert.doesNotThrow(() => prepare(`select concat('${'x'.repeat(70_000)}', 'y') as r`));
  });

  test('an element of a generated array is small, wherever the array is read', () => {
    assert.doesNotThrow(() =>
      prepare(
        "with b as (select t from unnest(generate_timestamp_array(timestamp '2026-01-01', timestamp '2026-01-02', interval 1 minute)) as t) select b.t, count(e.id) as n from b left join edge_logs e on timestamp_trunc(e.timestamp, minute) = b.t group by b.t",
      ),
    );
  });

  test('QUERY_MAX_VALUE_GROWTH is the configured one', () => {
    const tight = { ...defaultQueryBounds, maxValueGrowth: 2 };
    assert.throws(
      () => prepare('select concat(event_message, event_message, event_message) as r from edge_logs', tight),
      tooComplex(/limit of 2 \(QUERY_MAX_VALUE_GROWTH\)/),
    );
    assert.doesNotThrow(() => prepare('select concat(event_message, event_message) as r from edge_logs', tight));
  });
});
