/**
 * The SQL parser's WASM traps beside embedded chDB. A query that overflows sqlparser-rs's stack
 * ends in an out-of-bounds memory access; V8 turns that into a RuntimeError (and the parser into a
 * fresh instance) only if the access is checked by the compiled code. Caught as SIGSEGV instead,
 * it reached ClickHouse's fatal-signal handler, which chDB installs over V8's, and the process froze
 * for minutes before dying. Run in a child process so that a regression fails here, in seconds,
 * instead of hanging the suite.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { engines } from '../support/engines.ts';
import { repoRoot } from '../support/repo.ts';

// The script imports the TypeScript source (through tsx), also when this test runs compiled.
const root = repoRoot;

const script = `
import { createChdbConnection } from 'chdb/connection';
const c = createChdbConnection({ path: process.env.CHDB_DIR });
await c.query({ query: 'SELECT 1' });
const { parseStatements } = await import('./src/sql/sqlparser.ts');
let poison = 'parsed';
try { parseStatements('select ' + Array(1000).fill('1').join('+') + ' as x'); } catch (e) { poison = e.message; }
console.log(JSON.stringify({ poison, after: parseStatements('select 2').length }));
await c.close();
`;

test('a query that crashes the parser is refused beside embedded chDB, and parsing goes on', {
  skip: !engines.includes('clickhouse') && 'chdb is not installed',
}, async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'quarry-parser-chdb-'));
  try {
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: root,
      env: { ...process.env, NODE_TEST_CONTEXT: undefined, CHDB_DIR: dir },
      encoding: 'utf8',
      timeout: 30_000,
      killSignal: 'SIGKILL',
    });
    assert.equal(child.status, 0, `the child froze or crashed (exit ${child.status}, ${child.signal}): ${child.stderr.slice(-500)}`);
    const out = child.stdout;
    const answer = JSON.parse(out.trim().split('\n').at(-1) ?? '{}') as { poison: string; after: number };
    assert.match(answer.poison, /too complex to parse/);
    assert.equal(answer.after, 1);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
