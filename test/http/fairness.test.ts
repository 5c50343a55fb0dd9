/**
 * Fair queries with real deadlines, over HTTP: one token floods the service with slow queries;
 * another token's cheap queries are still answered quickly, and no query is answered later than
 * its time limit (counted from arrival) plus one second.
 *
 * The limit is 2.5 s (the flood lasts about that long): the slow queries still take several times
 * that, so each one meets the deadline.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { type ServiceProcess, spawnService } from '../support/process.ts';
import { PRIVATE_TOKEN } from '../support/server.ts';

const TIMEOUT_MS = 2500;
let dir: string;
// The service runs in its own process, so the 200 clients here do not share its event loop.
let service: ServiceProcess;
let flooder: string;
const served: { status: number; ms: number }[] = [];
let bystander: string;

async function call(method: string, pathAndQuery: string, token: string, body?: unknown): Promise<Response> {
  const headers: Record<string, string> = { 'x-api-key': token };
  if (body !== undefined) headers['content-type'] = 'application/json';
  return fetch(`${service.url}${pathAndQuery}`, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
}

async function newToken(): Promise<string> {
  const r = await call('POST', '/api/access-tokens', PRIVATE_TOKEN, { scopes: ['query'] });
  assert.equal(r.status, 201);
  return ((await r.json()) as { token: string }).token;
}

before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'quarry-fairness-'));
  service = await spawnService(dir, { QUERY_TIMEOUT_MS: String(TIMEOUT_MS), LOG_LEVEL: 'debug' });
  // The service's own request log: status and milliseconds from the request's arrival.
  let pending = '';
  service.child.stdout?.on('data', (d: Buffer) => {
    pending += d.toString();
    for (let i = pending.indexOf('\n'); i >= 0; i = pending.indexOf('\n')) {
      const line = pending.slice(0, i);
      pending = pending.slice(i + 1);
      const m = /"path":"\/api\/endpoints\/query\/logs\.all","status":(\d+),"ms":([\d.]+)/.exec(line);
      if (m) served.push({ status: Number(m[1]), ms: Number(m[2]) });
    }
  });
  const events = Array.from({ length: 4000 }, (_, i) => ({
    project: 'p',
    event_message: `message ${i} ${'x'.repeat(i % 50)}`,
    metadata: { request: { path: `/rest/v1/t${i % 97}` } },
  }));
  assert.equal((await call('POST', '/api/logs?source_name=cloudflare.logs.prod', PRIVATE_TOKEN, events)).status, 200);
  flooder = await newToken();
  bystander = await newToken();
});
after(async () => {
  await service?.kill9();
  if (dir) await rm(dir, { recursive: true, force: true });
});

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

test("during 200 concurrent slow queries from one token, another token's cheap queries are answered fast, and none is late", async () => {
  // A self-join with a regular expression over every pair: seconds of work each.
  const slow =
    'select count(*) as n from edge_logs a cross join edge_logs b ' + "where regexp_contains(concat(a.event_message, b.event_message), 'x{40}.*x{45}')";
  const floodUrl = `/api/endpoints/query/logs.all?${new URLSearchParams({ project: 'p', sql: slow })}`;
  const cheapUrl = `/api/endpoints/query/logs.all?${new URLSearchParams({ project: 'p' })}`;
  // The same cheap calls without the flood, to tell the flood's effect from a busy machine's.
  const baseline: number[] = [];
  for (let i = 0; i < 20; i++) {
    const started = performance.now();
    const r = await call('GET', cheapUrl, bystander);
    await r.arrayBuffer();
    baseline.push(performance.now() - started);
  }
  const flood = Array.from({ length: 200 }, async () => {
    const started = performance.now();
    const r = await call('GET', floodUrl, flooder);
    const body = (await r.json()) as { error?: { code: string } };
    return { status: r.status, code: body.error?.code, ms: performance.now() - started, retryAfter: r.headers.get('retry-after') };
  });
  // Let the flood fill the slots and the queue first.
  await new Promise((r) => setTimeout(r, 300));
  const cheap: { status: number; ms: number }[] = [];
  const floodDone = Promise.all(flood);
  let settled = false;
  void floodDone.then(() => {
    settled = true;
  });
  while (!settled || cheap.length < 10) {
    const started = performance.now();
    const r = await call('GET', cheapUrl, bystander);
    await r.arrayBuffer();
    cheap.push({ status: r.status, ms: performance.now() - started });
    if (cheap.length >= 60) break;
  }
  const results = await floodDone;

  const statuses = new Map<string, number>();
  for (const r of results) statuses.set(`${r.status} ${r.code ?? ''}`, (statuses.get(`${r.status} ${r.code ?? ''}`) ?? 0) + 1);
  const summary = JSON.stringify(Object.fromEntries(statuses));
  for (const r of results) {
    assert.ok([200, 503, 504].includes(r.status), summary);
    if (r.status === 503) {
      assert.equal(r.code, 'OVERLOADED');
      assert.ok(Number(r.retryAfter) >= 1);
    }
    if (r.status === 504) assert.equal(r.code, 'QUERY_TIMEOUT');
  }
  const latest = Math.max(...results.map((r) => r.ms));
  // As the service measures it, from each request's arrival: at most the limit plus one second.
  // Its request log lines arrive a moment after the answers.
  const logDeadline = Date.now() + 2000;
  while (served.length < results.length && Date.now() < logDeadline) await new Promise((r) => setTimeout(r, 10));
  const latestServed = Math.max(...served.filter((r) => r.status !== 200).map((r) => r.ms));
  assert.ok(served.length >= results.length, `request log lines: ${served.length}`);
  assert.ok(latestServed <= TIMEOUT_MS + 1000, `the service answered a query ${latestServed.toFixed(0)} ms after its arrival`);
  // As the client sees it: on a machine starved of CPU, connections also wait in the kernel
  // before the service can read them, which no deadline of the service covers.
  assert.ok(latest <= TIMEOUT_MS + 3000, `the latest flood answer came after ${latest.toFixed(0)} ms (${summary})`);

  const ms = cheap.map((c) => c.ms);
  assert.ok(
    cheap.every((c) => c.status === 200),
    `cheap statuses: ${cheap.map((c) => c.status)}`,
  );
  const p50 = percentile(ms, 50);
  const baseP50 = percentile(baseline, 50);
  console.log(
    `flood: ${summary}, latest ${latest.toFixed(0)} ms at the client, ${latestServed.toFixed(0)} ms in the service's log; bystander: ${cheap.length} calls, p50 ${p50.toFixed(1)} ms, p95 ${percentile(ms, 95).toFixed(1)} ms (without the flood: p50 ${baseP50.toFixed(1)} ms)`,
  );
  // Under 100 ms. On a machine so oversubscribed that the same calls alone are slow (other
  // processes' load, not the flood), within 6× of those: the flood must not take the slots.
  assert.ok(p50 < Math.max(100, 6 * baseP50), `bystander p50 ${p50.toFixed(1)} ms (${baseP50.toFixed(1)} ms without the flood)`);
});
