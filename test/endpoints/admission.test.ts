import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Admission, type Ticket } from '../../src/endpoints/admission.ts';
import { QuarryError } from '../../src/errors.ts';

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => {
    open = r;
  });
  return { open, opened };
}

const far = (caller: string): Ticket => ({ caller, deadline: performance.now() + 60_000 });
const tick = () => new Promise((r) => setImmediate(r));

function isOverloaded(e: unknown): boolean {
  assert.ok(e instanceof QuarryError);
  assert.equal(e.code, 'OVERLOADED');
  assert.equal(e.status, 503);
  assert.ok((e.retryAfter ?? 0) >= 1);
  return true;
}

test('runs up to maxRunning at once, queues up to maxWaiting in order, refuses the rest with OVERLOADED', async () => {
  const a = new Admission({ maxRunning: 2, maxWaiting: 1, maxPerCaller: 2, retryAfterSeconds: 3 });
  const order: string[] = [];
  const gates = [gate(), gate(), gate()];
  const job = (i: number) => async () => {
    order.push(`start ${i}`);
    await gates[i]!.opened;
    order.push(`end ${i}`);
    return i;
  };
  const p0 = a.run(far('a'), job(0));
  const p1 = a.run(far('a'), job(1));
  const p2 = a.run(far('a'), job(2));
  assert.equal(a.running, 2);
  assert.equal(a.waiting, 1);
  await assert.rejects(a.run(far('a'), job(0)), (e: unknown) => {
    isOverloaded(e);
    assert.equal((e as QuarryError).retryAfter, 3);
    return true;
  });
  await Promise.resolve();
  assert.deepEqual(order, ['start 0', 'start 1']);
  gates[0]!.open();
  assert.equal(await p0, 0);
  await tick();
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
    a.run(far('a'), async () => {
      throw new Error('boom');
    }),
    /boom/,
  );
  assert.equal(await a.run(far('a'), async () => 'ok'), 'ok');
});

test('one caller never takes every running slot: another caller starts at once', async () => {
  const a = new Admission({ maxRunning: 4, maxWaiting: 64 });
  const hold = gate();
  const flood = Array.from({ length: 50 }, () => a.run(far('flood'), () => hold.opened).catch(() => 'refused'));
  assert.equal(a.running, 2, 'the default share is half of maxRunning');
  assert.equal(a.waiting, 48);
  let ran = false;
  await a.run(far('other'), async () => {
    ran = true;
  });
  assert.ok(ran);
  hold.open();
  await Promise.all(flood);
  assert.equal(a.running, 0);
});

test('a free slot goes to the callers in turn, not in arrival order', async () => {
  const a = new Admission({ maxRunning: 1, maxWaiting: 10, maxPerCaller: 1 });
  const order: string[] = [];
  const first = gate();
  const p = [a.run(far('a'), () => first.opened)];
  for (let i = 0; i < 3; i++) p.push(a.run(far('a'), async () => void order.push(`a${i}`)));
  for (let i = 0; i < 2; i++) p.push(a.run(far('b'), async () => void order.push(`b${i}`)));
  first.open();
  await Promise.all(p);
  assert.deepEqual(order, ['a0', 'b0', 'a1', 'b1', 'a2']);
});

test('with the queue full, a caller below its share takes a place from the largest holder', async () => {
  const a = new Admission({ maxRunning: 1, maxWaiting: 4, maxPerCaller: 1 });
  const hold = gate();
  const running = a.run(far('a'), () => hold.opened);
  const outcomes: string[] = [];
  const waiting = Array.from({ length: 4 }, (_, i) =>
    a
      .run(far('a'), async () => void outcomes.push(`a${i} ran`))
      .catch((e: unknown) => {
        isOverloaded(e);
        outcomes.push(`a${i} refused`);
      }),
  );
  const b = a.run(far('b'), async () => void outcomes.push('b ran'));
  await tick();
  assert.deepEqual(outcomes, ['a3 refused'], "the newest of a's places went to b");
  // b holds 1 and a holds 3: another b still takes a's place, a third b (holding 2 vs 2) does not.
  const b2 = a.run(far('b'), async () => void outcomes.push('b2 ran'));
  await assert.rejects(
    a.run(far('b'), async () => undefined),
    isOverloaded,
  );
  hold.open();
  await Promise.all([running, ...waiting, b, b2]);
  assert.deepEqual(outcomes, ['a3 refused', 'a2 refused', 'a0 ran', 'b ran', 'a1 ran', 'b2 ran']);
});

test('a query that cannot start before its deadline is refused at the deadline; a late start gets only the time left', async () => {
  const a = new Admission({ maxRunning: 1, maxWaiting: 10 });
  const hold = gate();
  const running = a.run(far('a'), () => hold.opened);
  const started = performance.now();
  await assert.rejects(
    a.run({ caller: 'b', deadline: performance.now() + 150 }, async () => 'never'),
    isOverloaded,
  );
  const waited = performance.now() - started;
  assert.ok(waited >= 140 && waited < 1000, `refused after ${waited} ms`);
  assert.equal(a.waiting, 0);
  const late = a.run({ caller: 'b', deadline: performance.now() + 400 }, async (remaining) => remaining);
  setTimeout(() => hold.open(), 150);
  const remaining = await late;
  assert.ok(remaining > 0 && remaining < 300, `remaining ${remaining}`);
  await running;
});

test('a query whose deadline passed before admission, with a slot free, is its own time-out (504), not a busy service (503)', async () => {
  const a = new Admission({ maxRunning: 2, maxWaiting: 10 });
  let ran = false;
  await assert.rejects(
    a.run({ caller: 'a', deadline: performance.now() - 1 }, async () => {
      ran = true;
    }),
    (e: unknown) => e instanceof QuarryError && e.code === 'QUERY_TIMEOUT' && e.status === 504,
  );
  assert.equal(ran, false);
  assert.equal(a.running, 0, 'the slot is given back');
  // The same past deadline while every slot is taken: it waited, so the service was busy.
  const hold = gate();
  const busy = [a.run(far('x'), () => hold.opened), a.run(far('y'), () => hold.opened)];
  await assert.rejects(
    a.run({ caller: 'b', deadline: performance.now() + 20 }, async () => 'never'),
    isOverloaded,
  );
  hold.open();
  await Promise.all(busy);
  assert.equal(a.running, 0);
});
