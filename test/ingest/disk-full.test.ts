/**
 * A full disk, over HTTP on a small filesystem this test mounts itself (tmpfs with a size; needs
 * root, otherwise skipped with the reason): ingest answers 507 INSUFFICIENT_STORAGE and
 * acknowledges nothing it did not store, queries keep answering, ingest works again once space
 * returns (no restart), and a start-up on a full disk says so.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, openSync, closeSync, writeSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { spawnChild } from '../support/process.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let mountPoint: string | undefined;
let skipReason: string | undefined;

before(async () => {
  if (process.getuid?.() !== 0) {
    skipReason = 'needs root to mount a small tmpfs (CI runs as root)';
    return;
  }
  const dir = await mkdtemp(path.join(tmpdir(), 'quarry-diskfull-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=48m', 'tmpfs', dir], { stdio: 'pipe' });
    mountPoint = dir;
  } catch (e) {
    skipReason = `could not mount a tmpfs: ${(e as Error).message.split('\n')[0]}`;
    await rm(dir, { recursive: true, force: true });
  }
  if (skipReason !== undefined) console.log(`# disk-full test skipped: ${skipReason}`);
});

after(async () => {
  if (mountPoint === undefined) return;
  execFileSync('umount', ['-l', mountPoint]);
  await rm(mountPoint, { recursive: true, force: true });
});

/** Fills the filesystem with one file until it refuses more; returns the file. */
function fill(dir: string): string {
  const file = path.join(dir, 'filler');
  const fd = openSync(file, 'a');
  const chunk = Buffer.alloc(256 * 1024, 1);
  try {
    for (;;) {
      try {
        writeSync(fd, chunk);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e;
        // The last pages: smaller writes until not even one byte fits.
        for (let size = 64 * 1024; size >= 1; size = Math.floor(size / 4)) {
          try {
            for (;;) writeSync(fd, chunk.subarray(0, size));
          } catch {}
        }
        return file;
      }
    }
  } finally {
    closeSync(fd);
  }
}

function events(prefix: string, n: number): { id: string; message: string; metadata: unknown }[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `${prefix}-${i}`,
    message: `disk test ${prefix} ${i} ${'x'.repeat(300)}`,
    metadata: { request: { path: `/p/${i}`, n: i }, level: 'info' },
  }));
}

async function ingest(s: TestServer, body: unknown): Promise<{ status: number; json: { error?: { code: string; message: string } } }> {
  const r = await s.fetch('/api/logs?source_name=disk.test', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: r.status, json: (await r.json()) as { error?: { code: string; message: string } } };
}

async function storedIds(s: TestServer): Promise<Set<string>> {
  const r = await s.fetch('/api/endpoints/query/disk_ids');
  assert.equal(r.status, 200, await r.clone().text());
  const row = ((await r.json()) as { result: { ids: string | null }[] }).result[0];
  return new Set((row?.ids ?? '').split(',').filter(Boolean));
}

test('a full disk: 507, nothing unstored acknowledged, queries answer, ingest resumes when space returns', async (t) => {
  if (mountPoint === undefined) {
    t.skip(skipReason);
    return;
  }
  const dataDir = path.join(mountPoint, 'data');
  mkdirSync(dataDir);
  let s = await startTestServer({}, dataDir);
  try {
    assert.equal(
      (await s.fetch('/api/sources', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"disk.test"}' })).status,
      201,
    );
    const ep = await s.fetch('/api/endpoints', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'disk_ids', query: "select string_agg(id, ',') as ids from `disk.test`", cache_duration_seconds: 0 }),
    });
    assert.equal(ep.status, 201, await ep.text());
    assert.equal((await ingest(s, events('warm', 50))).status, 200);
    const acked = new Set<string>(events('warm', 50).map((e) => e.id));
    const refused = new Set<string>();

    const filler = fill(mountPoint);
    let full: { status: number; json: { error?: { code: string; message: string } } } | undefined;
    for (let i = 0; i < 400 && full === undefined; i++) {
      const batch = events(`b${i}`, 200);
      const r = await ingest(s, batch);
      if (r.status === 200) for (const e of batch) acked.add(e.id);
      else if (r.status === 507) {
        full = r;
        for (const e of batch) refused.add(e.id);
      } else assert.fail(`ingest on a full disk answered ${r.status}: ${JSON.stringify(r.json)}`);
    }
    assert.ok(full !== undefined, 'the disk filled up');
    assert.equal(full.json.error?.code, 'INSUFFICIENT_STORAGE');
    assert.match(full.json.error?.message ?? '', /disk .* is full/);
    // Still full: another request is refused the same way, not with a 500.
    const again = await ingest(s, events('again', 200));
    assert.ok(again.status === 507 || again.status === 200, `second request on a full disk: ${again.status}`);
    if (again.status === 200) for (const e of events('again', 200)) acked.add(e.id);
    else for (const e of events('again', 200)) refused.add(e.id);

    // The service stays up and answers queries.
    assert.equal((await s.fetch('/health', {}, null)).status, 200);
    const whileFull = await storedIds(s);
    for (const id of acked) assert.ok(whileFull.has(id), `acknowledged ${id} readable while the disk is full`);

    // Space returns: ingest works again without a restart.
    await rm(filler);
    const resumed = events('resumed', 100);
    const r = await ingest(s, resumed);
    assert.equal(r.status, 200, JSON.stringify(r.json));
    for (const e of resumed) acked.add(e.id);

    await s.stop();
    s = await startTestServer({}, dataDir);
    const after = await storedIds(s);
    for (const id of acked) assert.ok(after.has(id), `acknowledged ${id} present after a restart`);
    for (const id of refused) assert.ok(!after.has(id), `refused ${id} was not stored`);
  } finally {
    await s.stop();
  }

  // A start-up on a full disk says so.
  const filler = fill(mountPoint);
  try {
    const child = spawnChild(dataDir);
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      out += d.toString();
    });
    const exited = once(child, 'exit');
    const deadline = Date.now() + 60_000;
    while (!/disk holding .* is (full|almost full)/.test(out) && child.exitCode === null && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
    }
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
    assert.match(out, /disk holding .* is (full|almost full)/, out);
    assert.doesNotMatch(out, /INTERNAL/, out);
  } finally {
    await rm(filler, { force: true });
  }
});
