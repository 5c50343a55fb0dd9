/**
 * test/tiers.ts accounts for every test file (docs/TESTING.md), and a unit file, which shares one
 * process with every other unit file, reaches for nothing only the other tiers may use.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { withoutComments } from './architecture/imports.ts';
import { repoRoot } from './support/repo.ts';
import { filesOf, testFiles } from './tiers.ts';

const root = repoRoot;

const onDisk = readdirSync(path.join(root, 'test'), { recursive: true, withFileTypes: true })
  .filter((e) => e.isFile() && e.name.endsWith('.test.ts'))
  .map((e) => path.relative(root, path.join(e.parentPath, e.name)))
  .sort();

/** What a unit file may not import, directly or through the test helpers it imports. */
const NOT_IN_UNIT: readonly { readonly target: RegExp; readonly why: string }[] = [
  { target: /^test\/support\/server\.ts$/, why: 'boots the service' },
  { target: /^test\/support\/(engines|clickhouse-front)\.ts$/, why: 'opens every engine, chDB included' },
  { target: /^test\/support\/(process|nodes)\.ts$/, why: 'spawns the service' },
  { target: /^test\/support\/(postgres|logflare-postgres)\.ts$/, why: 'starts PostgreSQL' },
  { target: /^src\/(server|main)\.ts$/, why: 'boots the service' },
  { target: /^src\/engines\/clickhouse\/(client|index)\.ts$/, why: 'opens ClickHouse (chDB)' },
  { target: /^(bench|scripts)\//, why: 'runs tools as processes' },
  { target: /^node:(child_process|cluster|worker_threads)$/, why: 'starts processes or threads' },
  { target: /^(chdb|pg|playwright-core|@clickhouse\/client)(\/|$)/, why: 'a server, chDB or a browser' },
];

/** The modules a file imports (relative ones as paths from the root), `import type` left out. */
function importsOf(file: string): string[] {
  const code = withoutComments(readFileSync(path.join(root, file), 'utf8'));
  const out: string[] = [];
  for (const m of code.matchAll(
    /(?:^|[\s;])(import|export)\s+(type\s)?[^;]*?\bfrom\s+['"]([^'"]+)['"]|(?:^|[\s;])import\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g,
  )) {
    if (m[2] !== undefined) continue;
    const spec = (m[3] ?? m[4] ?? m[5]) as string;
    out.push(spec.startsWith('.') ? path.relative(root, path.resolve(root, path.dirname(file), spec)) : spec);
  }
  return out;
}

/** Every module a test file reaches through relative imports, following test/ helpers (not src/, which the layer tests cover). */
function reach(file: string): Map<string, string> {
  const via = new Map<string, string>([[file, file]]);
  const todo = [file];
  for (let f = todo.pop(); f !== undefined; f = todo.pop()) {
    for (const target of importsOf(f)) {
      if (via.has(target)) continue;
      via.set(target, f);
      if (target.startsWith('test/') && target.endsWith('.ts') && existsSync(path.join(root, target))) todo.push(target);
    }
  }
  return via;
}

describe('test tiers (test/tiers.ts)', () => {
  test('every test file has a tier', () => {
    const missing = onDisk.filter((f) => testFiles[f] === undefined);
    assert.deepEqual(missing, [], `add these to test/tiers.ts (docs/TESTING.md says which tier): ${missing.join(', ')}`);
  });

  test('every entry names a test file that exists', () => {
    assert.deepEqual(
      Object.keys(testFiles).filter((f) => !onDisk.includes(f)),
      [],
    );
  });

  test('`alone` is for system files and `fast` for integration files; each entry says why', () => {
    for (const [file, e] of Object.entries(testFiles)) {
      if (e.alone) assert.equal(e.tier, 'system', file);
      if (e.fast) assert.equal(e.tier, 'integration', file);
      assert.ok(e.why.length > 0, file);
    }
    assert.equal(filesOf('unit').length + filesOf('integration').length + filesOf('system').length, Object.keys(testFiles).length);
  });

  test('a unit file imports no service, engine list, chDB, PostgreSQL, browser or child process', () => {
    const wrong: string[] = [];
    for (const file of filesOf('unit')) {
      for (const [target, from] of reach(file)) {
        const rule = NOT_IN_UNIT.find((r) => r.target.test(target));
        if (rule) wrong.push(`${file}: ${from} imports ${target} (${rule.why})`);
      }
    }
    assert.deepEqual(wrong, [], 'move these files to the integration or system tier');
  });

  test('the import scan sees what it must', () => {
    const via = reach('test/http/auth.test.ts');
    assert.ok(via.has('test/support/server.ts'));
    assert.ok(reach('test/bench/smoke.test.ts').has('node:child_process'));
    // A type-only import brings nothing in.
    assert.ok(!reach('test/corpus/studio-provenance.test.ts').has('test/corpus/studio-pages/harness.ts'));
  });
});
