/** The Studio page corpus names where each template came from, and keeps its size. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pageCases } from './studio-pages/pages.ts';
import { reportCases } from './studio-pages/reports.ts';
import { unifiedCases } from './studio-pages/unified.ts';

const all = [...reportCases, ...pageCases, ...unifiedCases];

test('125 Studio page cases, each naming a Studio file and a full commit', () => {
  assert.equal(all.length, 125);
  for (const c of all) {
    assert.match(c.from.path, /^apps\/studio\//, c.name);
    assert.match(c.from.commit, /^[0-9a-f]{40}$/, c.name);
  }
});

test('case names are unique within each page file', () => {
  for (const cases of [reportCases, pageCases, unifiedCases]) {
    const names = cases.map((c) => c.name);
    assert.deepEqual([...new Set(names)], names);
  }
});
