/**
 * Retention under kill -9: the real service in a child process sweeps every second while a large
 * share of its events is expired; it is killed at random moments (during sweeps) and restarted.
 * Every event inside its source's retention must survive every crash, and expired events do go.
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

async function counts(): Promise<{ recent: number; expired: number }> {
  const r = await call('GET', '/api/endpoints/query/retention-counts');
  assert.equal(r.status, 200, JSON.stringify(r.json));
  const row = (r.json as { result: { recent: number; expired: number }[] }).result[0];
  return { recent: row?.recent ?? 0, expired: row?.expired ?? 0 };
}

test('kill -9 during retention sweeps never loses an event inside the retention period', async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'quarry-retention-crash-'));
  const env = { RETENTION_SWEEP_SECONDS: '1' };
  service = await spawnService(dir, env);
  const created = await call('POST', '/api/sources', { name: 'kept' });
  assert.equal(created.status, 201);
  const id = (created.json as { id: string }).id;
  assert.equal((await call('PATCH', `/api/sources/${id}`, { retention_days: 2 })).status, 200);
  const now = Date.now();
  await ingest(Array.from({ length: RECENT }, (_, i) => ({ id: `recent-${i}`, timestamp: new Date(now - (i % 40) * 3_600_000).toISOString(), event_message: 'in' })));
  const endpoint = await call('POST', '/api/endpoints', {
    name: 'retention-counts',
    query:
      "select countif(starts_with(id, 'recent-')) as recent, countif(starts_with(id, 'old-')) as expired from `kept`",
    cache_duration_seconds: 0,
  });
  assert.equal(endpoint.status, 201, JSON.stringify(endpoint.json));

  const deleted: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    // A fresh load of expired events, three to ten days old, then a crash at a random moment of
    // the next sweeps.
    await ingest(
      Array.from({ length: EXPIRED_PER_ROUND }, (_, i) => ({
        id: `old-${round}-${i}`,
        timestamp: new Date(now - 3 * DAY_MS - (i % 7) * DAY_MS).toISOString(),
        event_message: 'out',
      })),
    );
    await new Promise((r) => setTimeout(r, 200 + Math.random() * 1500));
    await service.kill9();
    service = await spawnService(dir, env);
    const c = await counts();
    assert.equal(c.recent, RECENT, `round ${round}: events inside the retention were lost`);
    deleted.push(EXPIRED_PER_ROUND - c.expired);
  }
  // The sweeps do delete: within a few seconds every expired event is gone.
  const deadline = Date.now() + 10_000;
  let last = await counts();
  while (last.expired > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 250));
    last = await counts();
  }
  assert.deepEqual(last, { recent: RECENT, expired: 0 });
  console.log(`expired events already gone at each restart: ${deleted.join(', ')} (of ${EXPIRED_PER_ROUND} + leftovers)`);
});
