/**
 * An operator's mistakes, each ending in "nothing acknowledged is lost", on every engine: a second
 * instance on a held folder (started after the first, and both at once, with kill -9 of either
 * afterwards), a read-only DATA_DIR, a start on a full disk, a folder written by a newer version, a
 * write-ahead log with a torn or garbage tail, and a start while another program holds the port.
 * Every instance is the real service (`node src/main.ts`) on loopback.
 *
 * Speed: a full start of the service is what these tests pay for (a refused one is cheap: the
 * folder is claimed before the service's modules load). So the engines run side by side, two
 * mistakes at a time on each; and the mistakes that begin with "a folder holding acknowledged data,
 * left by kill -9" each get a copy of one such folder per engine (written once: five batches, an
 * endpoint and a token each, DUCKDB_CHECKPOINT_THRESHOLD=1GiB so DuckDB's write-ahead log holds
 * them) instead of starting, writing and killing a service of their own. The two rounds of two
 * simultaneous starts run at once too.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { appendFileSync, closeSync, cpSync, existsSync, openSync, readdirSync, readFileSync, statSync, truncateSync, writeFileSync, writeSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { startServer } from '../../src/server.ts';
import { engineEnv, engines } from '../support/engines.ts';
import { kill9, spawnChild } from '../support/process.ts';
import { PRIVATE_TOKEN, PUBLIC_TOKEN } from '../support/tokens.ts';
import { tempDirs } from '../support/temp-dirs.ts';

const tempDir = tempDirs('mistakes');

// ---------------------------------------------------------------- processes

interface Running {
  pid: number;
  url: string;
  output: () => string;
  kill9(): Promise<void>;
  /** SIGTERM, and the exit code. */
  stop(): Promise<number | null>;
  child: ReturnType<typeof spawnChild>;
}

interface Exited {
  code: number | null;
  output: string;
  ms: number;
}

// The tests run several at a time; a start is the busy part (CPU for seconds). A timed start (the
// refused second start of a held folder, which must give up within 5 s) runs alone: the other
// tests' starts wait for it, and it waits for theirs, so it measures the service, not this file.
let starting = 0;
const whenIdle: (() => void)[] = [];
let timedRun: Promise<void> | undefined;

/** Waits for any timed start to end, then counts a start until the returned function is called. */
async function startSlot(): Promise<() => void> {
  while (timedRun !== undefined) await timedRun;
  starting++;
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    starting--;
    if (starting === 0) for (const wake of whenIdle.splice(0)) wake();
  };
}

/** Runs `fn` (which starts the service timed) once no other start is under way, holding new ones back. */
async function alone<T>(fn: () => Promise<T>): Promise<T> {
  while (timedRun !== undefined) await timedRun;
  let done: () => void = () => undefined;
  timedRun = new Promise<void>((r) => {
    done = r;
  });
  try {
    while (starting > 0) await new Promise<void>((r) => whenIdle.push(r));
    return await fn();
  } finally {
    timedRun = undefined;
    done();
  }
}

/**
 * Starts the service; resolves once it listens, or with how it exited. `timed`: the start runs
 * inside `alone`, so it takes no slot.
 */
async function launch(dataDir: string, env: Record<string, string> = {}, timed = false): Promise<Running | Exited> {
  const endSlot = timed ? () => undefined : await startSlot();
  const r = await launchNow(dataDir, env);
  endSlot();
  return r;
}

function launchNow(dataDir: string, env: Record<string, string>): Promise<Running | Exited> {
  const started = Date.now();
  const child = spawnChild(dataDir, env);
  let out = '';
  const collect = (d: Buffer) => {
    out += d.toString();
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  return new Promise((resolve) => {
    let exit: { code: number | null; ms: number } = { code: null, ms: 0 };
    child.once('exit', (code: number | null) => {
      exit = { code, ms: Date.now() - started };
    });
    // What it said is complete once its pipes close, a moment after it exits (on a busy machine
    // its last words may arrive after the exit event).
    const onClose = () => resolve({ ...exit, output: out });
    child.once('close', onClose);
    const onData = () => {
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (!m?.[1]) return;
      child.stdout.off('data', onData);
      child.off('close', onClose);
      resolve({
        pid: child.pid as number,
        url: m[1],
        output: () => out,
        child,
        kill9: () => kill9(child),
        async stop() {
          if (child.exitCode !== null) return child.exitCode;
          const exited = once(child, 'exit');
          child.kill('SIGTERM');
          const [code] = (await exited) as [number | null];
          return code;
        },
      });
    };
    child.stdout.on('data', onData);
  });
}

function isRunning(r: Running | Exited): r is Running {
  return 'url' in r;
}

async function mustStart(dataDir: string, env: Record<string, string>): Promise<Running> {
  const r = await launch(dataDir, env);
  if (!isRunning(r)) assert.fail(`the service did not start (exit ${r.code}):\n${r.output}`);
  return r;
}

async function mustRefuse(dataDir: string, env: Record<string, string>, timed = false): Promise<Exited> {
  const r = await launch(dataDir, env, timed);
  if (isRunning(r)) {
    await r.kill9();
    assert.fail(`the service started where it must refuse:\n${r.output()}`);
  }
  assert.notEqual(r.code, 0, `exit code: ${r.output}`);
  assert.doesNotMatch(r.output, /\n\s+at .*\(.*:\d+:\d+\)/, `no stack trace: ${r.output}`);
  return r;
}

// ---------------------------------------------------------------- data

const SOURCE = 'mistakes.events';
const headers = { 'content-type': 'application/json', 'x-api-key': PRIVATE_TOKEN };

/** What the service acknowledged: event ids, endpoint names, token values. */
interface Acked {
  events: string[];
  endpoints: string[];
  tokens: string[];
}

function newAcked(): Acked {
  return { events: [], endpoints: [], tokens: [] };
}

async function post(url: string, body: unknown): Promise<Response> {
  return fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
}

/** Makes the source and its read-back endpoint (once per folder). */
async function prepare(s: Running): Promise<void> {
  const created = await post(`${s.url}/api/sources`, { name: SOURCE });
  assert.ok(created.status === 201 || created.status === 409, await created.text());
  const ep = await post(`${s.url}/api/endpoints`, {
    name: 'mistakes.ids',
    query: `select string_agg(id, ',') as ids, count(*) as n from \`${SOURCE}\``,
    cache_duration_seconds: 0,
  });
  assert.equal(ep.status, 201, await ep.text());
}

/** Ingests `n` events, makes an endpoint and a token: all acknowledged, all recorded in `acked`. */
async function write(s: Running, acked: Acked, tag: string, n = 40): Promise<void> {
  const events = Array.from({ length: n }, (_, i) => ({
    id: `${tag}-${i}`,
    event_message: `event ${i} of ${tag}`,
    timestamp: new Date(Date.UTC(2026, 10, 27, 10, 0, i)).toISOString(),
    metadata: { tag, i, nested: { deep: `v${i}` } },
  }));
  const r = await post(`${s.url}/api/logs?source_name=${SOURCE}`, events);
  assert.equal(r.status, 200, await r.text());
  acked.events.push(...events.map((e) => e.id));
  const name = `mistakes.${tag.replace(/[^a-z0-9]/g, '_')}`;
  const ep = await post(`${s.url}/api/endpoints`, { name, query: `select count(*) as n from \`${SOURCE}\`` });
  assert.equal(ep.status, 201, await ep.text());
  acked.endpoints.push(name);
  const token = await post(`${s.url}/api/access-tokens`, { scopes: ['query'], description: tag });
  const text = await token.text();
  assert.equal(token.status, 201, text);
  acked.tokens.push((JSON.parse(text) as { token: string }).token);
}

/** Every acknowledged event, endpoint and token is there. */
async function assertAllThere(s: Running, acked: Acked, context: string): Promise<void> {
  const r = await fetch(`${s.url}/api/endpoints/query/mistakes.ids`, { headers });
  assert.equal(r.status, 200, `${context}: ${await r.clone().text()}`);
  const row = ((await r.json()) as { result: { ids: string | null }[] }).result[0];
  const stored = new Set((row?.ids ?? '').split(',').filter(Boolean));
  const missing = acked.events.filter((id) => !stored.has(id));
  assert.deepEqual(missing, [], `${context}: acknowledged events missing`);
  for (const name of acked.endpoints) {
    const q = await fetch(`${s.url}/api/endpoints/query/${encodeURIComponent(name)}`, { headers });
    assert.equal(q.status, 200, `${context}: endpoint ${name}: ${await q.text()}`);
  }
  for (const token of acked.tokens) {
    const q = await fetch(`${s.url}/api/endpoints/query/mistakes.ids`, { headers: { 'x-api-key': token } });
    assert.equal(q.status, 200, `${context}: a token acknowledged earlier: ${await q.text()}`);
  }
}

/**
 * A folder holding acknowledged data, left by kill -9: the service wrote five batches (an endpoint
 * and a token each) with DUCKDB_CHECKPOINT_THRESHOLD=1GiB, so DuckDB's write-ahead log still holds
 * them all, the last batch (`lastTag`) last.
 */
interface Crashed {
  dir: string;
  acked: Acked;
  lastTag: string;
}

async function crashedFolder(env: Record<string, string>, engine: string): Promise<Crashed> {
  const dir = await tempDir();
  const acked = newAcked();
  const s = await mustStart(dir, { ...env, DUCKDB_CHECKPOINT_THRESHOLD: '1GiB' });
  let lastTag = '';
  try {
    await prepare(s);
    for (let i = 0; i < 5; i++) {
      lastTag = `${engine}-crashed-${i}`;
      await write(s, acked, lastTag, 200);
    }
  } finally {
    await s.kill9();
  }
  return { dir, acked, lastTag };
}

/** A copy of `from`'s folder at `to` (default: a new temporary folder), with its own record of what was acknowledged. */
async function copyOf(from: Crashed, to?: string): Promise<{ dir: string; acked: Acked }> {
  const dir = to ?? (await tempDir());
  cpSync(from.dir, dir, { recursive: true });
  return { dir, acked: { events: [...from.acked.events], endpoints: [...from.acked.endpoints], tokens: [...from.acked.tokens] } };
}

// ---------------------------------------------------------------- files

/** Every file under `dir` (recursively) with its size and content hash. */
function snapshot(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    const full = path.join(entry.parentPath, entry.name);
    const rel = path.relative(dir, full);
    if (entry.isDirectory()) out.set(`${rel}/`, 'dir');
    else if (entry.isFile()) out.set(rel, `${statSync(full).size}:${createHash('sha256').update(readFileSync(full)).digest('hex')}`);
  }
  return out;
}

/**
 * No file under `dir` was created, deleted or changed since `before`. A start that took the lock
 * (nobody held it) writes who holds it into `quarry.lock` (DATA_DIR's and the chDB folder's); pass
 * `lockTaken` to allow those files.
 */
function assertUnchanged(before: Map<string, string>, dir: string, context: string, lockTaken = false): void {
  const now = snapshot(dir);
  const lockFiles = new Set(['quarry.lock', path.join('clickhouse', 'quarry.lock')]);
  const changed = [...new Set([...before.keys(), ...now.keys()])].filter((k) => before.get(k) !== now.get(k) && !(lockTaken && lockFiles.has(k)));
  assert.deepEqual(changed, [], `${context}: files changed in ${dir}`);
}

/** The pause makes the first instance write nothing while the second tries, so byte-identity is exact. */
function pause(s: Running): void {
  process.kill(s.pid, 'SIGSTOP');
}

function resume(s: Running): void {
  process.kill(s.pid, 'SIGCONT');
}

// ---------------------------------------------------------------- a small file system of our own

interface Mount {
  dir: string;
  readOnly(on: boolean): void;
  close(): void;
}

let mountProblem: string | undefined;

/** A tmpfs of `size` this test mounts itself (needs root; otherwise the tests using it skip). */
async function mountTmpfs(size: string): Promise<Mount | undefined> {
  if (process.getuid?.() !== 0) {
    mountProblem = 'needs root to mount a tmpfs (CI runs as root)';
    return undefined;
  }
  const dir = await tempDir();
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'pipe' });
  } catch (e) {
    mountProblem = `could not mount a tmpfs: ${(e as Error).message.split('\n')[0]}`;
    return undefined;
  }
  return {
    dir,
    readOnly(on) {
      execFileSync('mount', ['-o', `remount,${on ? 'ro' : 'rw'}`, dir], { stdio: 'pipe' });
    },
    close() {
      execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
    },
  };
}

/** Fills the file system holding `dir` until not one more byte fits; returns the filler file. */
function fill(dir: string): string {
  const file = path.join(dir, 'filler');
  const fd = openSync(file, 'a');
  const chunk = Buffer.alloc(256 * 1024, 1);
  try {
    for (let size = chunk.length; size >= 1; size = Math.floor(size / 4)) {
      try {
        for (;;) writeSync(fd, chunk.subarray(0, size));
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e;
      }
    }
  } finally {
    closeSync(fd);
  }
  return file;
}

// ---------------------------------------------------------------- the mistakes

/** Two simultaneous starts on a fresh folder, then kill -9 (see the test of that name). */
async function simultaneousStarts(env: Record<string, string>, killFirst: 'winner' | 'loser'): Promise<void> {
  const dataDir = await tempDir();
  const acked = newAcked();
  // One slot for both, so they are started in the same moment.
  const endSlot = await startSlot();
  const [a, b] = await Promise.all([launchNow(dataDir, env), launchNow(dataDir, env)]);
  endSlot();
  const winners = [a, b].filter(isRunning);
  if (winners.length !== 1) await Promise.all(winners.map((w) => w.kill9()));
  assert.equal(
    winners.length,
    1,
    `exactly one of two simultaneous starts runs: ${[a, b].map((r) => (isRunning(r) ? 'running' : `exit ${r.code}: ${r.output}`)).join(' | ')}`,
  );
  const winner = winners[0] as Running;
  const loser = [a, b].find((r) => !isRunning(r)) as Exited;
  try {
    assert.notEqual(loser.code, 0);
    assert.match(loser.output, new RegExp(`PID ${winner.pid}\\b`), loser.output);
    await prepare(winner);
    await write(winner, acked, `race-${killFirst}`);
    if (killFirst === 'loser') {
      // A third start killed while it is still finding out that the folder is held.
      const endThirdSlot = await startSlot();
      const third = spawnChild(dataDir, env);
      await new Promise((r) => setTimeout(r, 150));
      await kill9(third);
      endThirdSlot();
      await write(winner, acked, 'after-third');
    }
  } finally {
    await winner.kill9();
  }
  const again = await mustStart(dataDir, env);
  try {
    await assertAllThere(again, acked, `simultaneous starts, then kill -9 (${killFirst})`);
  } finally {
    assert.equal(await again.stop(), 0);
  }
}

// The engines side by side (each its own processes), two mistakes at a time on each.
describe('operator mistakes', { concurrency: true, timeout: 1_200_000 }, () => {
  for (const engine of engines) {
    const env = engineEnv(engine) as Record<string, string>;

    describe(`operator mistakes (${engine})`, { concurrency: 2, timeout: 1_200_000 }, () => {
      // Written once per engine, copied by each mistake that starts from it; started at once so it
      // is ready by the time those run.
      let crashed: Promise<Crashed>;
      before(() => {
        crashed = crashedFolder(env, engine);
        crashed.catch(() => undefined);
      });

      it('a second start on a held folder exits within 5 s naming the holder and changes nothing; kill -9 of the first loses nothing', async () => {
        const dataDir = await tempDir();
        const acked = newAcked();
        const first = await mustStart(dataDir, env);
        try {
          await prepare(first);
          await write(first, acked, 'before');
          pause(first);
          let second: Exited;
          const before = snapshot(dataDir);
          try {
            second = await alone(() => mustRefuse(dataDir, env, true));
            assertUnchanged(before, dataDir, 'the refused second start');
          } finally {
            resume(first);
          }
          assert.ok(second.ms < 5000, `the second start took ${second.ms} ms to give up`);
          assert.match(second.output, new RegExp(`PID ${first.pid}\\b`), second.output);
          assert.match(second.output, /another DATA_DIR/, second.output);
          assert.match(second.output, new RegExp(dataDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')), 'names the folder');
          console.log(`# ${engine}: a second start was refused in ${second.ms} ms`);
          // The first goes on as if nothing happened.
          await write(first, acked, 'after');
          await assertAllThere(first, acked, 'the first instance after the refused second start');
        } finally {
          await first.kill9();
        }
        const again = await mustStart(dataDir, env);
        try {
          await assertAllThere(again, acked, 'after kill -9 of the first and a restart');
          assert.deepEqual(
            readdirSync(dataDir).filter((f) => f.includes('unreplayable') || f.includes('corrupt')),
            [],
            'no log was moved aside',
          );
        } finally {
          assert.equal(await again.stop(), 0);
        }
      });

      it('two starts at once on one folder: exactly one runs; kill -9 of either afterwards loses nothing', async () => {
        // The two rounds on folders of their own, at once.
        const rounds = await Promise.allSettled((['winner', 'loser'] as const).map((killFirst) => simultaneousStarts(env, killFirst)));
        for (const r of rounds) if (r.status === 'rejected') throw r.reason;
      });

      it('a start while another program holds the port fails cleanly and releases the folder', async () => {
        const dataDir = await tempDir();
        const holder = createServer();
        await new Promise<void>((r) => holder.listen(0, '127.0.0.1', () => r()));
        const port = (holder.address() as { port: number }).port;
        try {
          const refused = await mustRefuse(dataDir, { ...env, PORT: String(port) });
          assert.match(refused.output, /could not listen on 127\.0\.0\.1:\d+/, refused.output);
          assert.match(refused.output, /PORT/, refused.output);
          // In one process: the failed start closes what it opened and drops the lock, so a start on
          // the same folder right after succeeds.
          const config = loadConfig({
            ...env,
            PORT: String(port),
            HOST: '127.0.0.1',
            DATA_DIR: dataDir,
            LOG_LEVEL: 'silent',
            LOGFLARE_PRIVATE_ACCESS_TOKEN: PRIVATE_TOKEN,
            LOGFLARE_PUBLIC_ACCESS_TOKEN: PUBLIC_TOKEN,
          });
          const endSlot = await startSlot();
          try {
            await assert.rejects(startServer(config), (e: Error) => e.name === 'StartupError' && /could not listen/.test(e.message));
            const server = await startServer({ ...config, port: 0 });
            await server.close();
          } finally {
            endSlot();
          }
        } finally {
          holder.close();
        }
        const acked = newAcked();
        const s = await mustStart(dataDir, env);
        try {
          await prepare(s);
          await write(s, acked, 'port');
        } finally {
          await s.kill9();
        }
        const again = await mustStart(dataDir, env);
        try {
          await assertAllThere(again, acked, 'after the port mistake');
        } finally {
          await again.stop();
        }
      });

      it('a data folder written by a newer Quarry is refused and left as it was', async () => {
        const { dir: dataDir, acked } = await copyOf(await crashed);
        const marker = path.join(dataDir, 'quarry-format.json');
        const original = readFileSync(marker);
        writeFileSync(marker, '{"format":99,"written_by":"quarry 9.0.0"}\n');
        const before = snapshot(dataDir);
        const refused = await mustRefuse(dataDir, env);
        assert.match(refused.output, /written by a newer Quarry \(quarry 9\.0\.0, data format 99\)/, refused.output);
        assertUnchanged(before, dataDir, 'the refused downgrade', true);
        writeFileSync(marker, original);
        const again = await mustStart(dataDir, env);
        try {
          await assertAllThere(again, acked, 'back on the version that wrote it');
        } finally {
          await again.stop();
        }
      });

      it('a read-only DATA_DIR is refused with a clear message, and nothing in it changes', async (t) => {
        const mount = await mountTmpfs('256m');
        if (!mount) return t.skip(mountProblem);
        try {
          // Left by kill -9, so the read-only start also finds a log to replay.
          const { dir: dataDir, acked } = await copyOf(await crashed, path.join(mount.dir, 'data'));
          mount.readOnly(true);
          const before = snapshot(dataDir);
          const refused = await mustRefuse(dataDir, env);
          assert.match(refused.output, /read-only file system/, refused.output);
          assertUnchanged(before, dataDir, 'the refused read-only start', true);
          // A new folder on a read-only disk: the same.
          const fresh = await mustRefuse(path.join(mount.dir, 'fresh'), env);
          assert.match(fresh.output, /read-only file system|cannot be used/, fresh.output);
          mount.readOnly(false);
          const again = await mustStart(dataDir, env);
          try {
            await assertAllThere(again, acked, 'read-write again');
          } finally {
            await again.stop();
          }
        } finally {
          mount.close();
        }
      });

      it('a start on a full disk says so, changes nothing, and starts once space returns', async (t) => {
        const mount = await mountTmpfs('256m');
        if (!mount) return t.skip(mountProblem);
        try {
          // Left by kill -9: a log to replay (and checkpoint) at the next start, which needs space.
          const { dir: dataDir, acked } = await copyOf(await crashed, path.join(mount.dir, 'data'));
          const filler = fill(mount.dir);
          const before = snapshot(dataDir);
          const r = await launch(dataDir, env);
          if (isRunning(r)) {
            // An engine that needs no space to start may start; then it must still serve everything.
            console.log(`# ${engine}: started on a full disk`);
            try {
              await assertAllThere(r, acked, 'started on a full disk');
            } finally {
              await r.kill9();
            }
          } else {
            assert.notEqual(r.code, 0);
            assert.match(r.output, /disk holding .* is full/, r.output);
            assert.doesNotMatch(r.output, /unreplayable|moved/, r.output);
            assertUnchanged(before, dataDir, 'the refused start on a full disk', true);
          }
          await rm(filler);
          const again = await mustStart(dataDir, env);
          try {
            await assertAllThere(again, acked, 'space returned');
          } finally {
            await again.stop();
          }
        } finally {
          mount.close();
        }
      });

      if (engine === 'duckdb') duckDbOnly(env, () => crashed);
    });
  }
});

/** Mistakes that concern DuckDB's own files. */
function duckDbOnly(env: Record<string, string>, crashed: () => Promise<Crashed>): void {
  it('a database file written by a newer DuckDB is refused, and its write-ahead log is not touched', async () => {
    const { dir: dataDir, acked } = await copyOf(await crashed());
    const file = path.join(dataDir, 'quarry.duckdb');
    assert.ok(existsSync(`${file}.wal`), 'the crash left a log');
    const original = readFileSync(file);
    writeFileSync(file, withStorageVersion(original, 200n));
    const before = snapshot(dataDir);
    const refused = await mustRefuse(dataDir, env);
    assert.match(refused.output, /written by a newer DuckDB/, refused.output);
    assertUnchanged(before, dataDir, 'the refused newer file', true);
    writeFileSync(file, original);
    const again = await mustStart(dataDir, env);
    try {
      await assertAllThere(again, acked, 'the original file back');
    } finally {
      await again.stop();
    }
  });

  for (const tail of ['zeros', 'garbage', 'torn'] as const) {
    it(`a write-ahead log with a ${tail} tail: the start succeeds and every whole entry is kept`, async () => {
      const from = await crashed();
      const { dir: dataDir, acked } = await copyOf(from);
      const wal = path.join(dataDir, 'quarry.duckdb.wal');
      const size = statSync(wal).size;
      let lastBatchCut = false;
      if (tail === 'zeros') appendFileSync(wal, Buffer.alloc(8192));
      else if (tail === 'garbage') appendFileSync(wal, Buffer.from(Array.from({ length: 8192 }, (_, i) => (i * 7919 + 13) % 256)));
      else {
        // A torn last write: the log ends inside its last entry (the last batch was never fully written).
        truncateSync(wal, size - 64);
        lastBatchCut = true;
      }
      const again = await mustStart(dataDir, env);
      try {
        const expected = lastBatchCut ? { ...acked, events: acked.events.filter((id) => !id.startsWith(`${from.lastTag}-`)) } : acked;
        await assertAllThere(again, expected, `a ${tail} tail`);
        assert.deepEqual(
          readdirSync(dataDir).filter((f) => f.includes('unreplayable')),
          [],
          'the log was not moved aside',
        );
      } finally {
        await again.stop();
      }
    });
  }
}

/**
 * A copy of a DuckDB file whose header claims storage version `version`, with the header's
 * checksum made to match (DuckDB's block checksum: 5381 xor each 64-bit word times a constant).
 */
function withStorageVersion(file: Buffer, version: bigint): Buffer {
  const out = Buffer.from(file);
  out.writeBigUInt64LE(version, 12);
  const mask = (1n << 64n) - 1n;
  let sum = 5381n;
  for (let at = 8; at + 8 <= 4096; at += 8) sum ^= (out.readBigUInt64LE(at) * 0xbf58476d1ce4e5b9n) & mask;
  out.writeBigUInt64LE(sum, 0);
  return out;
}
