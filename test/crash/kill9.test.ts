/**
 * The short crash test (the long one: `npm run crash-test -- --rounds 200`): the real service is
 * killed with SIGKILL right after a 200 that grew the schema, mid-request and during a checkpoint,
 * while clients ingest events that keep adding nested fields, top-level keys and type conflicts and
 * another makes management changes; every restart must succeed with everything acknowledged.
 *
 * Three of the six rounds also start a second instance on the same DATA_DIR before the kill
 * (issue 19): it must refuse (non-zero within 5 s, naming the first's PID), leave no `unreplayable`
 * file, and leave the first working; in one of them the second is killed with SIGKILL while starting.
 *
 * Six rounds (each kill mode twice: the modes take turns), not eight: a round is mostly the
 * service's start (seconds of CPU), and the rounds of one run cannot overlap (one DATA_DIR). Two
 * runs side by side were tried: on two cores the second instance's start then competes with the
 * other run's service and start, and its 5 s bound measures that instead of the service.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runCrashTest } from '../../scripts/crash-test.ts';

const ROUNDS = 6;

test('kill -9 at random moments, a second instance on the same DATA_DIR refused: nothing acknowledged is lost', { timeout: 300_000 }, async () => {
  const seed = Date.now() % 2 ** 31;
  const lines: string[] = [];
  // 3 of 6 rounds with a second instance; in 1 of those 3 it is killed with SIGKILL while starting.
  const summary = await runCrashTest({
    rounds: ROUNDS,
    clients: 3,
    seed,
    secondShare: 3 / ROUNDS,
    secondKillShare: 1 / 3,
    log: (l) => lines.push(l),
  });
  const report = `seed ${seed}\n${lines.join('\n')}`;
  assert.equal(summary.rounds, ROUNDS, report);
  assert.ok(summary.kills['after-growth'] >= 2 && summary.kills['mid-request'] >= 2 && summary.kills.checkpoint >= 2, report);
  assert.ok(summary.ackedEvents > 0, report);
  assert.ok(summary.ackedChanges > 0, report);
  assert.equal(summary.restartsFailed, 0, report);
  assert.equal(summary.lostEvents, 0, report);
  assert.equal(summary.lostChanges, 0, report);
  assert.equal(summary.secondStarts, 3, report);
  assert.equal(summary.secondStartProblems, 0, report);
  // A kill may come after the second already exited by itself: then it counts as refused.
  assert.ok(summary.secondStartsRefused >= 2, report);
  assert.equal(summary.secondStartsRefused + summary.secondStartsKilled, summary.secondStarts, report);
  assert.deepEqual(summary.problems, [], report);
});
