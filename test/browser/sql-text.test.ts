/**
 * The explorer's reading of SQL text (src/web/sql-text.js, a browser module run here under Node):
 * declared parameters, the CTE split, and the merge that "save as endpoint" sends, checked by the
 * server's own save-time validation.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import { type TestServer, startTestServer } from '../support/server.ts';

interface SqlText {
  declaredParams(sql: string): string[];
  splitWith(sql: string): { ctes: string; final: string } | undefined;
  finalSelect(saved: string): string;
  mergeForSave(saved: string, caller: string): string;
}

// A plain-JS browser module: imported by a computed path so the type check does not follow it.
const modulePath: string = '../../src/web/sql-text.js';
const { declaredParams, splitWith, finalSelect, mergeForSave } = (await import(modulePath)) as SqlText;

const logsAll = await readFile(new URL('../../src/endpoints/supabase/logs.all.sql', import.meta.url), 'utf8');

describe('explorer SQL text', () => {
  test('parameters: each @name once, in order; not in strings, comments, backticks or @@system names', () => {
    const sql = `-- @commented
      select @a, '@in_string', "@dq", \`@tick\`, @b /* @block */, @@session.x, @a, @sql, @lql # @hash
      from t where x = @c_1`;
    assert.deepEqual(declaredParams(sql), ['a', 'b', 'c_1']);
    assert.deepEqual(declaredParams(logsAll), ['project', 'iso_timestamp_start', 'iso_timestamp_end']);
    assert.deepEqual(declaredParams("select 'it''s @not' as x"), []);
    assert.deepEqual(declaredParams("select '''@triple''' , @after"), ['after']);
  });

  test('the seeded logs.all splits into its nine CTEs and the final SELECT', () => {
    const split = splitWith(logsAll);
    assert.ok(split);
    assert.equal(finalSelect(logsAll), 'select id, timestamp, event_message, metadata\nfrom edge_logs\nlimit 100');
    assert.match(split.ctes, /^edge_logs as \(/);
    assert.ok(split.ctes.endsWith(')'));
    assert.equal((split.ctes.match(/^\w+ as \($/gm) ?? []).length, 9);
  });

  test('tricky CTE lists: column lists, RECURSIVE, parentheses inside strings and comments', () => {
    const sql = "WITH RECURSIVE a (x) AS (select ')' as x /* ) */), `b c` as (select (1) -- )\n) select * from a";
    assert.deepEqual(splitWith(sql), {
      ctes: "a (x) AS (select ')' as x /* ) */), `b c` as (select (1) -- )\n)",
      final: 'select * from a',
    });
    assert.equal(splitWith('select 1'), undefined);
    assert.equal(splitWith('with a as (select 1'), undefined);
    assert.equal(splitWith('with a as select 1'), undefined);
    assert.equal(finalSelect('select 1 from x'), 'select 1 from x');
  });

  test("merging puts the caller's CTEs after the saved ones", () => {
    const merged = mergeForSave('with a as (select 1 as n) select n from a', 'with b as (select n from a) select n from b');
    assert.equal(merged, 'with\na as (select 1 as n),\nb as (select n from a)\nselect n from b\n');
    assert.equal(mergeForSave('select 1 as n', ' select 2 as n '), 'select 2 as n');
  });

  describe('the merged query is what the server accepts as a new endpoint', () => {
    let s: TestServer;
    before(async () => {
      s = await startTestServer();
    });
    after(() => s.close());

    for (const caller of [
      'select timestamp_trunc(timestamp, hour) as hour, count(*) as n from edge_logs group by hour',
      'with recent as (select id, timestamp from postgres_logs) select id from recent order by timestamp desc limit 5',
    ]) {
      test(caller.slice(0, 50), async () => {
        const query = mergeForSave(logsAll, caller);
        const r = await s.fetch('/api/endpoints', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ name: `merged.${Math.random().toString(36).slice(2, 8)}`, query }),
        });
        assert.equal(r.status, 201, await r.text());
      });
    }
  });
});
