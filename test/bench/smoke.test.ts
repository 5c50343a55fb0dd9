import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { engines } from '../support/engines.ts';
import { entryArgs, repoRoot } from '../support/repo.ts';

/**
 * The smallest run that still proves the figures parse: 1,000 events (the fewest where every
 * question's fields exist, so the hand-written limit runs beside the service: at 300 DuckDB's
 * limit fails to bind a nested key), one timed run per question and one cache-hit request. Most of
 * what is left is the benchmark's own: two service starts and the wait for each to go quiet (in
 * samples of 250 ms, `--quiet-ms 250`, not the bench's 1 s) (the warm-up is the least, `--warmup-ms
 * 0`: three calls per question and side, bench/stats.ts).
 */
const EVENTS = 1_000;

interface Result {
  engine: string;
  params: { events: number };
  ingest: { events: number; bytesPerEvent: number; eventsPerSecond: number } | null;
  queries: Record<string, { ours: unknown; limit: unknown; oursOverLimit: number | null; rows: { ours?: number; limit?: number } }>;
  ingestLimit?: Record<'grouped' | 'bulk', { events: number; eventsPerSecond: number; cpuMs: number } | null>;
  notes: string[];
  compareIngestEventsPerSecond?: number;
}

function bench(args: string[], resultsDir: string): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    execFile(
      process.execPath,
      [
        ...entryArgs('bench/run.ts'),
        ...args,
        '--no-baseline',
        '--hit-requests',
        '1',
        '--warmup-ms',
        '0',
        '--quiet-ms',
        '250',
        '--json-only',
        '--results-dir',
        resultsDir,
      ],
      { cwd: repoRoot, maxBuffer: 16 * 1024 * 1024, timeout: 290_000 },
      (error, out, err) => (error ? reject(new Error(`${error.message}\n${err}`)) : resolve(out)),
    );
  });
}

/** Every question measured by the service and by the hand-written limit, with the same rows. */
function assertMeasured(r: Result): void {
  for (const [id, q] of Object.entries(r.queries)) {
    assert.ok(q.ours !== null && q.limit !== null, `${r.engine} ${id} measured on both sides: ${JSON.stringify(r.notes)}`);
    assert.ok(typeof q.oursOverLimit === 'number' && q.oursOverLimit > 0, id);
    if (!id.startsWith('usage_')) assert.equal(q.rows.ours, q.rows.limit, `${r.engine} ${id} rows`);
  }
}

describe('benchmark smoke run', () => {
  // One run of both engines on the same data (the ClickHouse half is skipped without chDB).
  const both = engines.includes('clickhouse');
  it(`runs ${both ? 'DuckDB and ClickHouse (chDB)' : 'DuckDB'} at ${EVENTS.toLocaleString('en')} events without the baseline and prints parseable JSON`, {
    timeout: 300_000,
  }, async () => {
    const resultsDir = mkdtempSync(path.join(os.tmpdir(), 'quarry-bench-smoke-'));
    try {
      const stdout = await bench(['--engine', both ? 'both' : 'duckdb', '--events', String(EVENTS), '--runs', '1'], resultsDir);
      const parsed = JSON.parse(stdout) as Result | Result[];
      const results = Array.isArray(parsed) ? parsed : [parsed];
      assert.deepEqual(
        results.map((r) => r.engine),
        both ? ['duckdb', 'clickhouse'] : ['duckdb'],
      );
      for (const r of results) {
        assert.equal(r.params.events, EVENTS);
        assert.equal(r.ingest?.events, EVENTS);
        assert.ok((r.ingest?.bytesPerEvent ?? 0) > 0);
        // The ingest limit stored every event of the same bodies, both ways (it checks its own count).
        for (const mode of ['grouped', 'bulk'] as const) {
          const l = r.ingestLimit?.[mode];
          assert.ok(l && l.events === EVENTS && l.eventsPerSecond > 0 && l.cpuMs > 0, `${r.engine} ingest limit (${mode}): ${JSON.stringify(r.notes)}`);
        }
        assertMeasured(r);
      }
      const files = readdirSync(resultsDir).sort();
      assert.deepEqual(
        files.map((f) => f.slice(11)),
        both ? [`${EVENTS}-clickhouse.json`, `${EVENTS}.json`] : [`${EVENTS}.json`],
      );
      assert.deepEqual(JSON.parse(readFileSync(path.join(resultsDir, files.at(-1)!), 'utf8')), results[0]);
      if (both) assert.equal(results[1]!.compareIngestEventsPerSecond, results[0]!.ingest?.eventsPerSecond);
    } finally {
      rmSync(resultsDir, { recursive: true, force: true });
    }
  });
});
