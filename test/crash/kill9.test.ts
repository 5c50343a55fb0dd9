/**
 * The short crash test (the long one: `npm run crash-test -- --rounds 200`): the real service is
 * killed with SIGKILL right after a 200 that grew the schema, mid-request and during a checkpoint,
 * while clients ingest events that keep adding nested fields, top-level keys and type conflicts and
 * another makes management changes; every restart must succeed with everything acknowledged.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runCrashTest } from '../../scripts/crash-test.ts';

test('kill -9 at random moments: every restart succeeds and nothing acknowledged is lost', { timeout: 300_000 }, async () => {
  const seed = Date.now() % 2 ** 31;
  const lines: string[] = [];
  const summary = await runCrashTest({ rounds: 8, clients: 3, seed, log: (l) => lines.push(l) });
  const report = `seed ${seed}\n${lines.join('\n')}`;
  assert.equal(summary.rounds, 8, report);
  assert.ok(summary.kills['after-growth'] >= 2 && summary.kills['mid-request'] >= 2 && summary.kills.checkpoint >= 2, report);
  assert.ok(summary.ackedEvents > 0, report);
  assert.ok(summary.ackedChanges > 0, report);
  assert.equal(summary.restartsFailed, 0, report);
  assert.equal(summary.lostEvents, 0, report);
  assert.equal(summary.lostChanges, 0, report);
});
