/**
 * The SQL parser's WebAssembly is compiled on the first parse, not when the module loads: the
 * compiled module is about 11 MiB that a service which only ingests never needs (the idle footprint,
 * docs/PERFORMANCE.md). Run in a child process, which nothing else has made parse yet; it counts the
 * modules compiled, and checks the spare instance still takes over after a crash.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { repoRoot } from '../support/repo.ts';

const script = `
let compiled = 0;
const Module = WebAssembly.Module;
WebAssembly.Module = new Proxy(Module, { construct(target, args) { compiled++; return new target(...args); } });
const { parseStatements } = await import('./src/sql/sqlparser.ts');
const atLoad = compiled;
const first = parseStatements('select 1 as a').length;
const afterFirst = compiled;
let crash = 'parsed';
try { parseStatements('select ' + Array(1000).fill('1').join('+') + ' as x'); } catch (e) { crash = e.message; }
const afterCrash = parseStatements('select 2 as b').length;
console.log(JSON.stringify({ atLoad, first, afterFirst, crash, afterCrash, end: compiled }));
`;

test('the parser compiles its WebAssembly on the first parse, once, and its spare still takes over', () => {
  const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: repoRoot,
    env: { ...process.env, NODE_TEST_CONTEXT: undefined },
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.equal(child.status, 0, child.stderr);
  const out = JSON.parse(child.stdout.trim().split('\n').at(-1) as string) as Record<string, unknown>;
  assert.deepEqual(out, {
    atLoad: 0,
    first: 1,
    afterFirst: 1,
    crash: 'The query is too complex to parse (too many operators or levels of nesting).',
    afterCrash: 1,
    end: 1,
  });
});
