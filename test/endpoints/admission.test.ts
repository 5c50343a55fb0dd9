import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Admission } from '../../src/endpoints/admission.ts';
import { QuarryError } from '../../src/errors.ts';

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => {
    open = r;
  });
  return { open, opened };
}

test('runs up to maxRunning at once, queues up to maxWaiting in order, refuses the rest with OVERLOADED', async () => {
  const a = new Admission({ maxRunning: 2, maxWaiting: 1, retryAfterSeconds: 3 });
  const order: string[] = [];
  const gates = [gate(), gate(), gate()];
  const job = (i: number) => async () => {
    order.push(`start ${i}`);
    await gates[i]!.opened;
    order.push(`end ${i}`);
    return i;
  };
  const p0 = a.run(job(0));
  const p1 = a.run(job(1));
  const p2 = a.run(job(2));
  assert.equal(a.running, 2);
  assert.equal(a.waiting, 1);
  await assert.rejects(a.run(job(0)), (e: unknown) => {
    assert.ok(e instanceof QuarryError);
    assert.equal(e.code, 'OVERLOADED');
    assert.equal(e.status, 503);
    assert.equal(e.retryAfter, 3);
    return true;
  });
  await Promise.resolve();
  assert.deepEqual(order, ['start 0', 'start 1']);
  gates[0]!.open();
  assert.equal(await p0, 0);
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(order, ['start 0', 'start 1', 'end 0', 'start 2']);
  assert.equal(a.running, 2);
  gates[1]!.open();
  gates[2]!.open();
  assert.deepEqual(await Promise.all([p1, p2]), [1, 2]);
  assert.equal(a.running, 0);
  assert.equal(a.waiting, 0);
});

test('a failing job frees its slot', async () => {
  const a = new Admission({ maxRunning: 1, maxWaiting: 0 });
  await assert.rejects(
    a.run(async () => {
      throw new Error('boom');
    }),
    /boom/,
  );
  assert.equal(await a.run(async () => 'ok'), 'ok');
});
