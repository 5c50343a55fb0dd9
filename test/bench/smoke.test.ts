import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

describe('benchmark smoke run', () => {
  it('runs at 10k events without the baseline and prints parseable JSON', { timeout: 240_000 }, async () => {
    const resultsDir = mkdtempSync(path.join(os.tmpdir(), 'quarry-bench-smoke-'));
    try {
      const stdout = await new Promise<string>((resolve, reject) => {
        execFile(
          process.execPath,
          ['--import', 'tsx', 'bench/run.ts', '--events', '10000', '--no-baseline', '--runs', '2', '--hit-requests', '200', '--json-only', '--results-dir', resultsDir],
          { cwd: repoRoot, maxBuffer: 16 * 1024 * 1024, timeout: 230_000 },
          (error, out, err) => (error ? reject(new Error(`${error.message}\n${err}`)) : resolve(out)),
        );
      });
      const result = JSON.parse(stdout) as Record<string, unknown>;
      assert.equal((result.params as { events: number }).events, 10_000);
      assert.equal(typeof result.queries, 'object');
      assert.ok(Array.isArray(result.notes));
      const files = readdirSync(resultsDir).filter((f) => f.endsWith('-10000.json'));
      assert.equal(files.length, 1);
      assert.deepEqual(JSON.parse(readFileSync(path.join(resultsDir, files[0]!), 'utf8')), result);
    } finally {
      rmSync(resultsDir, { recursive: true, force: true });
    }
  });
});
