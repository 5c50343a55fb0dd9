/**
 * A schema change in one source does not hold up ingest into another (over HTTP, real server):
 * while one event brings 1,000 new keys to one source, a bystander sending 20-event batches to
 * another source every 20 ms (open loop, so a stall shows in every request it covers) keeps its
 * p50 under 100 ms, or, on a machine so busy that the bystander alone is slower than 10 ms, within
 * 10× of its own p50 alone. (Before schema changes ran beside appends, the bystander's p50 was
 * the length of the whole change: 6.9 s against 0.2 s alone, measured on the same busy machine.)
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestServer, type TestServer } from '../support/server.ts';

let s: TestServer;
before(async () => {
  s = await startTestServer();
  for (const name of ['grow.big', 'grow.bystander']) {
    const r = await s.fetch('/api/sources', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name }) });
    assert.equal(r.status, 201);
  }
});
after(async () => {
  await s.close();
});

async function ingest(source: string, body: unknown): Promise<number> {
  const r = await s.fetch(`/api/logs?source_name=${source}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  await r.arrayBuffer();
  return r.status;
}

function batch(n: number, tag: string): unknown[] {
  return Array.from({ length: n }, (_, i) => ({ message: `${tag} ${i}`, project: 'p', metadata: { request: { path: `/x/${i}` }, status: 200 } }));
}

/** Bystander latencies over `ms` with nothing else going on. */
async function bystanderFor(ms: number): Promise<number[]> {
  const out: number[] = [];
  const pending: Promise<void>[] = [];
  const end = performance.now() + ms;
  while (performance.now() < end) {
    const started = performance.now();
    pending.push(ingest('grow.bystander', batch(20, 'alone')).then(() => void out.push(performance.now() - started)));
    await new Promise((r) => setTimeout(r, 20));
  }
  await Promise.all(pending);
  return out;
}

function p50(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

test('1,000 new keys in one source: another source keeps ingesting at its usual pace', { timeout: 180_000 }, async () => {
  // Warm both paths and give the big source some rows.
  for (let i = 0; i < 20; i++) {
    assert.equal(await ingest('grow.bystander', batch(20, 'warm')), 200);
    assert.equal(await ingest('grow.big', batch(500, 'fill')), 200);
  }
  const wide: Record<string, unknown> = { message: 'wide' };
  for (let k = 0; k < 1000; k++) wide[`key_${k}`] = `v${k}`;

  const alone = await bystanderFor(2000);
  const latencies: number[] = [];
  let done = false;
  const bystander = (async () => {
    const pending: Promise<void>[] = [];
    while (!done) {
      const started = performance.now();
      pending.push(
        ingest('grow.bystander', batch(20, 'bystander')).then((status) => {
          assert.equal(status, 200);
          latencies.push(performance.now() - started);
        }),
      );
      await new Promise((r) => setTimeout(r, 20));
    }
    await Promise.all(pending);
  })();
  const started = performance.now();
  assert.equal(await ingest('grow.big', [wide]), 200);
  const wideMs = performance.now() - started;
  done = true;
  await bystander;

  const r = await s.fetch('/api/sources');
  assert.equal(r.status, 200);
  const median = p50(latencies);
  console.log(
    `# 1,000 new keys answered in ${Math.round(wideMs)} ms; bystander: ${latencies.length} requests, p50 ${median.toFixed(1)} ms, max ${Math.max(...latencies).toFixed(0)} ms (alone: p50 ${p50(alone).toFixed(1)} ms)`,
  );
  assert.ok(latencies.length >= 5, `the bystander sent ${latencies.length} requests meanwhile`);
  const bound = Math.max(100, 10 * p50(alone));
  assert.ok(
    median < bound,
    `bystander p50 ${median.toFixed(1)} ms (alone ${p50(alone).toFixed(1)} ms) while another source grew by 1,000 keys (${Math.round(wideMs)} ms)`,
  );
});
