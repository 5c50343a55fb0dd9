/**
 * DuckDB's idle checkpoint (src/engines/duckdb/storage.ts): once DUCKDB_IDLE_CHECKPOINT bytes of
 * write-ahead log have gathered and no append is under way, the service checkpoints by itself,
 * long before DUCKDB_CHECKPOINT_THRESHOLD. Shown on the real service: the log shrinks after a pause
 * (and does not with the rule off), the answers are the same before and after, and kill -9 at
 * random moments around those checkpoints loses nothing acknowledged.
 */
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { type ServiceProcess, spawnService } from '../support/process.ts';
import { tempDirs } from '../support/temp-dirs.ts';
import { PRIVATE_TOKEN } from '../support/tokens.ts';

const tempDir = tempDirs('idle-checkpoint');
const SOURCE = 'idle.events';
const headers = { 'content-type': 'application/json', 'x-api-key': PRIVATE_TOKEN };

function walBytes(dataDir: string): number {
  try {
    return statSync(path.join(dataDir, 'quarry.duckdb.wal')).size;
  } catch {
    return 0;
  }
}

async function createSource(s: ServiceProcess): Promise<void> {
  const r = await fetch(`${s.url}/api/sources`, { method: 'POST', headers, body: JSON.stringify({ name: SOURCE }) });
  assert.ok(r.status === 201 || r.status === 409, await r.text());
}

/** Ingests `n` events tagged `tag` (acknowledged when this resolves); returns their ids. */
async function ingest(s: ServiceProcess, tag: string, n: number): Promise<string[]> {
  const events = Array.from({ length: n }, (_, i) => ({
    id: `${tag}-${i}`,
    event_message: `event ${i} of ${tag} ${'x'.repeat(200)}`,
    timestamp: new Date(Date.UTC(2026, 10, 28, 12, 0, 0, i)).toISOString(),
    metadata: { tag, i, request: { path: `/p/${i % 17}`, status: 200 + (i % 5) } },
  }));
  const r = await fetch(`${s.url}/api/logs?source_name=${SOURCE}`, { method: 'POST', headers, body: JSON.stringify(events) });
  assert.equal(r.status, 200, await r.text());
  return events.map((e) => e.id);
}

/** The ids stored, through the query API. */
async function storedIds(s: ServiceProcess): Promise<Set<string>> {
  const sql = `select id from \`${SOURCE}\``;
  const ep = await fetch(`${s.url}/api/endpoints`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ name: `idle.ids.${Date.now()}.${Math.random().toString(36).slice(2)}`, query: sql, cache_duration_seconds: 0, max_limit: 10000 }),
  });
  const created = (await ep.json()) as { name?: string };
  assert.equal(ep.status, 201, JSON.stringify(created));
  const q = await fetch(`${s.url}/api/endpoints/query/${encodeURIComponent(String(created.name))}`, { headers });
  const body = (await q.json()) as { result: { id: string }[] };
  assert.equal(q.status, 200, JSON.stringify(body));
  return new Set(body.result.map((row) => row.id));
}

async function waitFor(what: string, ok: () => boolean, ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > until) assert.fail(`${what} within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('DuckDB checkpoints when ingest pauses', { concurrency: true, timeout: 120_000 }, () => {
  const hard = { DUCKDB_CHECKPOINT_THRESHOLD: '1GiB' };

  it('the log is checkpointed once appends stop, and the answers are the same before and after; with the rule off it stays', async () => {
    const [on, off] = await Promise.all([tempDir(), tempDir()]);
    const services = await Promise.all([
      spawnService(on, { ...hard, DUCKDB_IDLE_CHECKPOINT: '256KiB' }),
      spawnService(off, { ...hard, DUCKDB_IDLE_CHECKPOINT: 'off' }),
    ]);
    try {
      await Promise.all(
        services.map(async (s, k) => {
          const dir = k === 0 ? on : off;
          await createSource(s);
          const ids: string[] = [];
          for (let b = 0; b < 4; b++) ids.push(...(await ingest(s, `b${b}`, 400)));
          const before = await storedIds(s);
          assert.deepEqual([...before].sort(), [...ids].sort(), 'every acknowledged event, asked right after the last write');
          if (k === 0) {
            // 1,600 events of about 400 bytes: far past 256 KiB of log, far below 1 GiB.
            await waitFor('the idle checkpoint empties the write-ahead log', () => walBytes(dir) < 256 * 1024, 10_000);
          } else {
            await new Promise((r) => setTimeout(r, 1_000));
            assert.ok(walBytes(dir) >= 256 * 1024, `with DUCKDB_IDLE_CHECKPOINT=off the log keeps ${walBytes(dir)} bytes`);
          }
          assert.deepEqual([...(await storedIds(s))].sort(), [...ids].sort(), 'the same answer after the pause');
        }),
      );
    } finally {
      await Promise.all(services.map((s) => s.kill9()));
    }
  });

  it('kill -9 at random moments around idle checkpoints loses nothing acknowledged', async () => {
    const dir = await tempDir();
    const env = { ...hard, DUCKDB_IDLE_CHECKPOINT: '64KiB' };
    const acked: string[] = [];
    let s = await spawnService(dir, env);
    try {
      await createSource(s);
      for (let round = 0; round < 6; round++) {
        acked.push(...(await ingest(s, `r${round}`, 300)));
        // The checkpoint starts 100 ms after the last append ends: kill before, during and after it.
        await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 300)));
        await s.kill9();
        s = await spawnService(dir, env);
        const stored = await storedIds(s);
        const missing = acked.filter((id) => !stored.has(id));
        assert.deepEqual(missing, [], `round ${round}: acknowledged events missing after kill -9`);
        assert.equal(stored.size, acked.length, `round ${round}: no event stored twice or from nowhere`);
      }
    } finally {
      await s.kill9();
    }
  });
});
