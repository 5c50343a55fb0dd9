/**
 * Schema growth stays bounded and fast with the default limits (over HTTP, real server):
 *
 * - one event with 5,000 new keys answers within a second while a bystander sending 20-event
 *   batches to another source every 20 ms keeps its p50 under 50 ms;
 * - after 2,000 new fields arrived over time in one source, ordinary 20-event batches into it
 *   keep their p50 within 2× of a source of the same ordinary shape that never grew (measured
 *   interleaved, so both see the same load; the p50 before the growth is printed beside them).
 *
 * On a machine so busy that an ordinary request alone takes over 10 ms, the bounds scale with
 * that request's own p50 (a 1 s bound means "100 ordinary requests"), so the test checks the
 * shape of the cost, not the machine. The figures are printed as diagnostics.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createSource } from '../endpoints/http-support.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let s: TestServer;
before(async () => {
  s = await startTestServer();
  for (const name of ['wide.grow', 'wide.control', 'wide.bystander', 'wide.keys']) await createSource(s, name);
});
after(() => s.close());

async function ingest(source: string, body: unknown): Promise<number> {
  const r = await s.fetch(`/api/logs?source_name=${source}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  await r.arrayBuffer();
  return r.status;
}

function batch(n: number, tag: string): unknown[] {
  return Array.from({ length: n }, (_, i) => ({ message: `${tag} ${i}`, project: 'p', metadata: { request: { path: `/x/${i}` }, status: 200 } }));
}

function p50(xs: readonly number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

async function timed(source: string, body: unknown): Promise<number> {
  const started = performance.now();
  assert.equal(await ingest(source, body), 200);
  return performance.now() - started;
}

/** p50 of `n` sequential ordinary requests into each of `sources`, taken in turn. */
async function ordinary(sources: readonly string[], n: number): Promise<number[]> {
  const out = sources.map(() => [] as number[]);
  for (let i = 0; i < n; i++) for (let k = 0; k < sources.length; k++) out[k]!.push(await timed(sources[k]!, batch(20, 'ordinary')));
  return out.map(p50);
}

test('5,000 keys in one event answer within a second; a bystander keeps its pace', { timeout: 120_000 }, async (t) => {
  for (let i = 0; i < 10; i++) {
    assert.equal(await ingest('wide.bystander', batch(20, 'warm')), 200);
    assert.equal(await ingest('wide.keys', batch(200, 'fill')), 200);
  }
  const [alone] = await ordinary(['wide.bystander'], 30);
  const scale = Math.max(1, (alone as number) / 10);
  const latencies: number[] = [];
  let done = false;
  const bystander = (async () => {
    const pending: Promise<void>[] = [];
    while (!done) {
      pending.push(timed('wide.bystander', batch(20, 'bystander')).then((ms) => void latencies.push(ms)));
      await new Promise((r) => setTimeout(r, 20));
    }
    await Promise.all(pending);
  })();
  await new Promise((r) => setTimeout(r, 200));
  const wide: Record<string, unknown> = { message: 'wide' };
  for (let k = 0; k < 5000; k++) wide[`key_${k}`] = `v${k}`;
  const wideMs = await timed('wide.keys', [wide]);
  await new Promise((r) => setTimeout(r, 200));
  done = true;
  await bystander;
  const during = p50(latencies);
  t.diagnostic(
    `5,000-key event ${wideMs.toFixed(0)} ms; bystander p50 ${during.toFixed(1)} ms during (${latencies.length} requests), ${alone?.toFixed(1)} ms alone`,
  );
  assert.ok(wideMs < 1000 * scale, `the 5,000-key event took ${wideMs.toFixed(0)} ms`);
  assert.ok(during < 50 * scale, `bystander p50 ${during.toFixed(1)} ms during the wide event`);
  // The event is stored whole: every key is a field of the source.
  const list = (await (await s.fetch('/api/sources')).json()) as { id: string; name: string }[];
  const schema = (await (await s.fetch(`/api/sources/${list.find((x) => x.name === 'wide.keys')?.id}/schema`)).json()) as { columns: object };
  assert.equal(Object.keys(schema.columns).filter((k) => k.startsWith('key_')).length, 5000);
});

test('2,000 new fields over time leave ordinary ingest within 2× of a source that never grew', { timeout: 180_000 }, async (t) => {
  for (let i = 0; i < 10; i++) {
    assert.equal(await ingest('wide.grow', batch(200, 'fill')), 200);
    assert.equal(await ingest('wide.control', batch(200, 'fill')), 200);
  }
  const [beforeGrowth] = await ordinary(['wide.grow'], 40);
  // 100 requests of 20 new fields each, half top-level keys, half inside metadata.request.
  const growth: number[] = [];
  for (let r = 0; r < 100; r++) {
    const request: Record<string, unknown> = { path: '/grow' };
    const event: Record<string, unknown> = { message: 'grow', project: 'p', metadata: { request } };
    for (let k = 0; k < 20; k++) {
      const n = r * 20 + k;
      if (k % 2 === 0) event[`top_${n}`] = n;
      else request[`nested_${n}`] = `v${n}`;
    }
    growth.push(await timed('wide.grow', [event]));
  }
  const [grown, control] = await ordinary(['wide.grow', 'wide.control'], 60);
  t.diagnostic(
    `ordinary p50: ${beforeGrowth?.toFixed(1)} ms before the growth, ${grown?.toFixed(1)} ms after, control source ${control?.toFixed(1)} ms; ` +
      `growth requests p50 ${p50(growth.slice(0, 10)).toFixed(1)} ms (first 10), ${p50(growth.slice(-10)).toFixed(1)} ms (last 10)`,
  );
  assert.ok((grown as number) < 2 * (control as number), `ordinary p50 ${grown?.toFixed(1)} ms after 2,000 fields, ${control?.toFixed(1)} ms without`);
  // Adding the 2,000th field costs about what adding the 20th did (not 1 ms more per field).
  assert.ok(p50(growth.slice(-10)) < Math.max(3 * p50(growth.slice(0, 10)), 100), 'late growth requests cost about what early ones did');
});
