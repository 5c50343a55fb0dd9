/**
 * Retention under kill -9: the real service in a child process sweeps every second; each round
 * loads a batch of expired events, waits for the next sweep to start (its log line) and kills the
 * process a random few milliseconds into it, while it deletes. Every event inside its source's
 * retention must survive every crash, and the expired events do go.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { type ServiceProcess, spawnService } from '../support/process.ts';
import { PRIVATE_TOKEN } from '../support/server.ts';

const ROUNDS = 3;
const RECENT = 2000;
const EXPIRED_PER_ROUND = 20_000;
const DAY_MS = 86_400_000;

let dir: string | undefined;
let service: ServiceProcess | undefined;

after(async () => {
  await service?.kill9();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function call(method: string, pathAndQuery: string, body?: unknown): Promise<{ status: number; json: unknown }> {
  const init: RequestInit = { method, headers: { 'x-api-key': PRIVATE_TOKEN } };
  if (body !== undefined) {
    init.headers = { ...init.headers, 'content-type': 'application/json' };
    init.body = JSON.stringify(body);
  }
  const r = await fetch(`${(service as ServiceProcess).url}${pathAndQuery}`, init);
  const text = await r.text();
  return { status: r.status, json: text === '' ? null : JSON.parse(text) };
}

async function ingest(events: unknown[]): Promise<void> {
  for (let i = 0; i < events.length; i += 20_000) {
    const r = await call('POST', '/api/logs?source_name=kept', events.slice(i, i + 20_000));
    assert.equal(r.status, 200, JSON.stringify(r.json));
  }
}

/** Calls `onLine` with each line the service logs, until the returned function is called. */
function watchLog(s: ServiceProcess, onLine: (line: string) => void): () => void {
  let pending = '';
  const onData = (d: Buffer) => {
    pending += d.toString();
    for (let i = pending.indexOf('\n'); i >= 0; i = pending.indexOf('\n')) {
      onLine(pending.slice(0, i));
      pending = pending.slice(i + 1);
    }
  };
  s.child.stdout?.on('data', onData);
  return () => s.child.stdout?.off('data', onData);
}

function nextLine(s: ServiceProcess, pattern: RegExp, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`no log line ${pattern} within ${timeoutMs} ms`));
    }, timeoutMs);
    const stop = watchLog(s, (line) => {
      if (pattern.test(line)) {
        clearTimeout(timer);
        stop();
        resolve(line);
      }
    });
  });
}

async function counts(): Promise<{ recent: number; expired: number }> {
  const r = await call('GET', '/api/endpoints/query/retention-counts');
  assert.equal(r.status, 200, JSON.stringify(r.json));
  const row = (r.json as { result: { recent: number; expired: number }[] }).result[0];
  return { recent: row?.recent ?? 0, expired: row?.expired ?? 0 };
}

test('kill -9 during retention sweeps never loses an event inside the retention period', async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'quarry-retention-crash-'));
  const env = { RETENTION_SWEEP_SECONDS: '1', LOG_LEVEL: 'info' };
  service = await spawnService(dir, env);
  const created = await call('POST', '/api/sources', { name: 'kept' });
  assert.equal(created.status, 201);
  const id = (created.json as { id: string }).id;
  assert.equal((await call('PATCH', `/api/sources/${id}`, { retention_days: 2 })).status, 200);
  const now = Date.now();
  await ingest(
    Array.from({ length: RECENT }, (_, i) => ({ id: `recent-${i}`, timestamp: new Date(now - (i % 40) * 3_600_000).toISOString(), event_message: 'in' })),
  );
  const endpoint = await call('POST', '/api/endpoints', {
    name: 'retention-counts',
    query: "select countif(starts_with(id, 'recent-')) as recent, countif(starts_with(id, 'old-')) as expired from `kept`",
    cache_duration_seconds: 0,
  });
  assert.equal(endpoint.status, 201, JSON.stringify(endpoint.json));

  const sweeps: string[] = [];
  const kills: string[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const s = service;
    watchLog(s, (line) => {
      const m = /Retention sweep deleted (\d+) event\(s\) in (\d+) ms/.exec(line);
      if (m && m[1] !== '0') sweeps.push(`${m[1]} in ${m[2]} ms`);
    });
    // A fresh load of expired events (three to ten days old) in one commit, so the next sweep
    // has all of them to delete; the kill comes a random few milliseconds into that sweep.
    const r = await call(
      'POST',
      '/api/logs?source_name=kept',
      Array.from({ length: EXPIRED_PER_ROUND }, (_, i) => ({
        id: `old-${round}-${i}`,
        timestamp: new Date(now - 3 * DAY_MS - (i % 7) * DAY_MS).toISOString(),
        event_message: 'out',
      })),
    );
    assert.equal(r.status, 200);
    // The first sweep to start after the commit.
    await nextLine(s, /Retention sweep started/, 5000);
    const delay = Math.random() * 15;
    await new Promise((done) => setTimeout(done, delay));
    await s.kill9();
    kills.push(`${delay.toFixed(0)} ms`);
    service = await spawnService(dir, env);
    const c = await counts();
    assert.equal(c.recent, RECENT, `round ${round}: events inside the retention were lost`);
  }
  // The sweeps do delete: within a few seconds every expired event is gone.
  const deadline = Date.now() + 10_000;
  let last = await counts();
  while (last.expired > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 25));
    last = await counts();
  }
  assert.deepEqual(last, { recent: RECENT, expired: 0 });
  console.log(`killed ${kills.join(', ')} into a sweep; sweeps that deleted and finished: ${sweeps.join('; ')}`);
});
