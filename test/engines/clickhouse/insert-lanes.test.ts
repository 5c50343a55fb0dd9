/**
 * The per-table insert lanes (src/engines/clickhouse/insert-lanes.ts): one insert per table at a
 * time, rows arriving meanwhile batched into the next, tables in parallel, and a failed batch
 * retried caller by caller so one bad caller fails alone. The insert here is a function that
 * records its calls and finishes when the test says so, so every interleaving is decided by the
 * test, not by timing.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InsertLanes } from '../../../src/engines/clickhouse/insert-lanes.ts';
import { QuarryError } from '../../../src/errors.ts';

interface Call {
  table: string;
  text: string;
  events: number;
  finish(error?: unknown): void;
}

function recorder(): { calls: Call[]; insert: (table: string, text: string, events: number) => Promise<void> } {
  const calls: Call[] = [];
  return {
    calls,
    insert: (table, text, events) =>
      new Promise<void>((resolve, reject) => {
        calls.push({ table, text, events, finish: (e) => (e === undefined ? resolve() : reject(e)) });
      }),
  };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('insert lanes', () => {
  it('runs one insert per table at a time, batches what arrives meanwhile, and runs tables in parallel', async () => {
    const r = recorder();
    const lanes = new InsertLanes(r.insert);
    const settled: string[] = [];
    const track = (name: string, p: Promise<void>) => p.then(() => settled.push(name));
    const a1 = track('a1', lanes.add('a', 'r1\n', 1));
    const b1 = track('b1', lanes.add('b', 'x1\n', 1));
    const a2 = track('a2', lanes.add('a', 'r2\n', 1));
    const a3 = track('a3', lanes.add('a', 'r3\nr4\n', 2));
    await tick();
    assert.deepEqual(
      r.calls.map((c) => [c.table, c.text]),
      [
        ['a', 'r1\n'],
        ['b', 'x1\n'],
      ],
    );
    r.calls[1]?.finish();
    await b1;
    assert.deepEqual(settled, ['b1']);
    r.calls[0]?.finish();
    await a1;
    await tick();
    // a2 and a3 waited together while a1 ran: one insert for both.
    assert.deepEqual(
      r.calls.slice(2).map((c) => [c.table, c.text, c.events]),
      [['a', 'r2\nr3\nr4\n', 3]],
    );
    assert.deepEqual(settled, ['b1', 'a1']);
    r.calls[2]?.finish();
    await Promise.all([a2, a3]);
    assert.deepEqual(settled, ['b1', 'a1', 'a2', 'a3']);
  });

  it('retries a failed batch caller by caller, so only the bad one fails', async () => {
    const r = recorder();
    const lanes = new InsertLanes(r.insert);
    const first = lanes.add('t', 'ok0\n', 1);
    await tick();
    const good = lanes.add('t', 'ok1\n', 1);
    const bad = assert.rejects(lanes.add('t', 'bad\n', 1), /bad row/);
    const later = lanes.add('t', 'ok2\n', 1);
    r.calls[0]?.finish();
    await first;
    await tick();
    assert.equal(r.calls[1]?.text, 'ok1\nbad\nok2\n');
    r.calls[1]?.finish(new Error('refused'));
    await tick();
    for (let i = 2; i < 5; i++) {
      const call = r.calls[i];
      assert.ok(call);
      call.finish(call.text === 'bad\n' ? new Error('refused: bad row') : undefined);
      await tick();
    }
    assert.deepEqual(
      r.calls.slice(2).map((c) => c.text),
      ['ok1\n', 'bad\n', 'ok2\n'],
    );
    await good;
    await later;
    await bad;
  });

  it('does not retry when every retry would fail too, or when the failed insert may have been stored', async () => {
    for (const error of [Object.assign(new Error('No space left on device'), { code: 'ENOSPC' }), new QuarryError('UNAVAILABLE', 'lost')]) {
      const r = recorder();
      const lanes = new InsertLanes(r.insert);
      const first = lanes.add('t', 'a\n', 1);
      await tick();
      const both = [lanes.add('t', 'b\n', 1), lanes.add('t', 'c\n', 1)].map((p) => assert.rejects(p, (e) => e === error));
      r.calls[0]?.finish();
      await first;
      await tick();
      r.calls[1]?.finish(error);
      await Promise.all(both);
      assert.equal(r.calls.length, 2, 'no insert after the failure');
    }
  });
});
