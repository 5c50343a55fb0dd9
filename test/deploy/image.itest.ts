/**
 * The container image, for real (docs/DEPLOY.md): builds it with `npm run image`, runs it with
 * podman on a named volume, ingests as Supabase's Vector does, queries `logs.all`, kills it with
 * SIGKILL, starts it again on the same volume and finds every acknowledged event, stops it with
 * SIGTERM (exit 0, well inside `podman stop`'s 10 s), and prints the image's figures.
 *
 * Needs podman (apt-get install podman runc uidmap debootstrap) and root, so it is not one of
 * `npm test`'s files: `npm run test:image` runs it, and .ci/run does after `npm test`.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { megabytes, podman, podmanVersion, run, seconds } from '../../scripts/image/podman.ts';
import { PRIVATE_TOKEN, PUBLIC_TOKEN } from '../support/tokens.ts';

const root = path.resolve(import.meta.dirname, '../..');
const IMAGE = 'localhost/quarry:dev';
const tag = `quarry-image-test-${process.pid}`;
const VOLUME = tag;
const FIRST = `${tag}-a`;
const SECOND = `${tag}-b`;

/** Figures printed at the end (docs/DEPLOY.md, "Figures"). */
const figures: Record<string, string> = {};
/** Markers of the events the service acknowledged (200), per logs.all CTE. */
const acked = { edge_logs: new Set<string>(), auth_logs: new Set<string>(), postgres_logs: new Set<string>() };
type Cte = keyof typeof acked;
let port = 0;
let base = '';
let failed = false;

/** A step of the scenario: the later ones are skipped once one fails, as they build on it. */
function step(name: string, fn: () => Promise<void>, timeoutMs = 180_000): void {
  test(name, { timeout: timeoutMs }, async (t) => {
    if (failed) {
      t.skip('an earlier step failed');
      return;
    }
    try {
      await fn();
    } catch (e) {
      failed = true;
      throw e;
    }
  });
}

// ------------------------------------------------------------------ containers

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/**
 * `podman run -d` of the image on the test's volume and port, as `podman create` then `podman start`:
 * resolves with the time the create took (with vfs, a copy of the whole image) and the time from the
 * start until /health answered 200.
 */
async function runContainer(name: string): Promise<{ createMs: number; healthyMs: number }> {
  const created = performance.now();
  await podman([
    'create',
    '--name',
    name,
    '-p',
    `127.0.0.1:${port}:4000`,
    '-v',
    `${VOLUME}:/data`,
    '-e',
    `LOGFLARE_PUBLIC_ACCESS_TOKEN=${PUBLIC_TOKEN}`,
    '-e',
    `LOGFLARE_PRIVATE_ACCESS_TOKEN=${PRIVATE_TOKEN}`,
    IMAGE,
  ]);
  const createMs = performance.now() - created;
  return { createMs, healthyMs: await startContainer(name) };
}

/** `podman start` of a container; resolves with the time until /health answered 200. */
async function startContainer(name: string): Promise<number> {
  const started = performance.now();
  await podman(['start', name]);
  await waitHealthy(name);
  return performance.now() - started;
}

async function waitHealthy(name: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    const r = await fetch(`${base}/health`, { signal: AbortSignal.timeout(2000) }).catch(() => undefined);
    if (r?.status === 200) return;
    await r?.body?.cancel();
    if ((await state(name)).status === 'exited') assert.fail(`the container exited while starting:\n${await logs(name)}`);
    await sleep(100);
  }
  assert.fail(`no 200 from /health within 120 s:\n${await logs(name)}`);
}

async function state(name: string): Promise<{ status: string; exitCode: number; pid: number }> {
  const out = await podman(['inspect', name, '--format', '{{.State.Status}} {{.State.ExitCode}} {{.State.Pid}}']);
  const [status = '', exitCode = '', pid = ''] = out.trim().split(' ');
  return { status, exitCode: Number(exitCode), pid: Number(pid) };
}

async function logs(name: string): Promise<string> {
  const r = await run('podman', ['logs', '--tail', '40', name]);
  return `${r.stdout}${r.stderr}`;
}

/** `podman stop` (SIGTERM, then SIGKILL after 10 s); resolves with how long it took and the exit code. */
async function stopContainer(name: string): Promise<{ ms: number; exitCode: number }> {
  const started = performance.now();
  await podman(['stop', '--time', '10', name]);
  const ms = performance.now() - started;
  return { ms, exitCode: (await state(name)).exitCode };
}

/** Resident memory of the container's node process (PID 1 inside; the test runs on podman's host). */
async function rssOf(name: string): Promise<number> {
  const { pid } = await state(name);
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kib = /^VmRSS:\s+(\d+) kB/m.exec(status)?.[1];
  assert.ok(kib, `no VmRSS for pid ${pid}`);
  return Number(kib) * 1024;
}

// ------------------------------------------------------------------ Vector's requests

const now = () => new Date().toISOString();

/** An event as Vector's `kong_logs` transform makes it (docs: /work/shared/reference/supabase-sources.md). */
function kongEvent(marker: string): object {
  const path = `/rest/v1/todos?select=*&qseq=${marker}`;
  return {
    timestamp: now(),
    project: 'default',
    appname: 'supabase-kong',
    event_message: `172.18.0.1 - - [${new Date().toUTCString()}] "GET ${path} HTTP/1.1" 200 321 "-" "curl/8.5.0"`,
    metadata: {
      request: { headers: { referer: '-', user_agent: 'curl/8.5.0', cf_connecting_ip: '172.18.0.1' }, method: 'GET', path, protocol: 'HTTP/1.1' },
      response: { status_code: 200 },
    },
  };
}

function authEvent(marker: string): object {
  const line = {
    component: 'api',
    duration: 1234567,
    level: 'info',
    method: 'POST',
    msg: 'request completed',
    path: `/token?qseq=${marker}`,
    status: 200,
    time: now(),
  };
  return { timestamp: now(), project: 'default', appname: 'supabase-auth', event_message: JSON.stringify(line), metadata: { timestamp: now(), ...line } };
}

function postgresEvent(marker: string): object {
  return {
    timestamp: now(),
    project: 'default',
    appname: 'supabase-db',
    event_message: `${now()} UTC [42] LOG:  statement: select 1 -- qseq=${marker}`,
    metadata: { host: 'db-default', parsed: { timestamp: now(), error_severity: 'LOG' } },
  };
}

const SOURCES: Record<Cte, { source: string; event: (marker: string) => object }> = {
  edge_logs: { source: 'cloudflare.logs.prod', event: kongEvent },
  auth_logs: { source: 'gotrue.logs.prod', event: authEvent },
  postgres_logs: { source: 'postgres.logs', event: postgresEvent },
};

/** One request as Vector's http sink sends it: a JSON array, the public token in x-api-key. Records the markers when answered 200. */
async function ship(cte: Cte, markers: string[]): Promise<number> {
  const { source, event } = SOURCES[cte];
  const r = await fetch(`${base}/api/logs?source_name=${encodeURIComponent(source)}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': PUBLIC_TOKEN, 'user-agent': 'Vector/0.53.0' },
    body: JSON.stringify(markers.map(event)),
    signal: AbortSignal.timeout(20_000),
  });
  const body = await r.text();
  if (r.status === 200) {
    assert.deepEqual(JSON.parse(body), { message: 'Logged!' });
    for (const m of markers) acked[cte].add(m);
  }
  return r.status;
}

function markers(prefix: string, n: number): string[] {
  return Array.from({ length: n }, (_, i) => `${prefix}-${i}`);
}

/** The markers `logs.all` finds in a CTE, through a sandboxed `sql` as Studio sends it. */
async function found(cte: Cte): Promise<Set<string>> {
  const url = new URL(`${base}/api/endpoints/query/logs.all`);
  url.searchParams.set('project', 'default');
  url.searchParams.set('sql', `select event_message from ${cte} limit 1000`);
  const r = await fetch(url, { headers: { 'x-api-key': PRIVATE_TOKEN }, signal: AbortSignal.timeout(60_000) });
  const body = (await r.json()) as { result?: { event_message: string }[]; error?: unknown };
  assert.equal(r.status, 200, JSON.stringify(body));
  assert.ok(Array.isArray(body.result), JSON.stringify(body));
  const seen = new Set<string>();
  for (const row of body.result) {
    const m = /qseq=([\w-]+)/.exec(row.event_message);
    if (m?.[1]) seen.add(m[1]);
  }
  assert.ok(seen.size < 1000, 'more rows than one logs.all answer holds: the test ships too many events');
  return seen;
}

/** Every acknowledged event is found, per CTE; resolves with how many unacknowledged ones were stored too. */
async function assertEveryAckedEventFound(): Promise<number> {
  let extra = 0;
  for (const cte of Object.keys(acked) as Cte[]) {
    const seen = await found(cte);
    const missing = [...acked[cte]].filter((m) => !seen.has(m));
    assert.deepEqual(missing, [], `${cte}: acknowledged events missing (${missing.length} of ${acked[cte].size})`);
    extra += seen.size - acked[cte].size;
  }
  return extra;
}

const ackedCount = () => Object.values(acked).reduce((n, s) => n + s.size, 0);

// ------------------------------------------------------------------ the scenario

describe('the container image (podman)', () => {
  before(async () => {
    const version = podmanVersion();
    assert.ok(version, 'podman is not installed: apt-get install podman runc uidmap debootstrap (docs/DEPLOY.md, "Building it")');
    port = await freePort();
    base = `http://127.0.0.1:${port}`;
  });

  after(async () => {
    if (podmanVersion()) {
      await run('podman', ['rm', '--force', '--time', '0', FIRST, SECOND]);
      await run('podman', ['volume', 'rm', '--force', VOLUME]);
    }
    const lines = Object.entries(figures).map(([k, v]) => `${k.padEnd(48)} ${v}`);
    console.log(['', 'Figures of the container image (docs/DEPLOY.md, "Figures"):', ...lines.map((l) => `  ${l}`), ''].join('\n'));
  });

  step(
    'npm run image builds localhost/quarry:dev',
    async () => {
      const started = performance.now();
      const output = await new Promise<string>((resolve, reject) => {
        const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'scripts/image.ts')], {
          cwd: root,
          stdio: ['ignore', 'pipe', 'pipe'],
          env: { ...process.env, NODE_TEST_CONTEXT: undefined },
        });
        let out = '';
        const take = (d: Buffer) => {
          out += d.toString();
          process.stderr.write(d);
        };
        child.stdout.on('data', take);
        child.stderr.on('data', take);
        child.on('error', reject);
        child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`npm run image failed (exit ${code})`))));
      });
      const ms = performance.now() - started;
      const how = /is up to date/.test(output)
        ? 'up to date, not built again'
        : /making a local base/.test(output)
          ? 'cold: local base made, then built'
          : 'built';
      figures['npm run image'] = `${seconds(ms)} (${how})`;
      const info = JSON.parse(await podman(['image', 'inspect', IMAGE]))[0];
      figures['image size'] = `${megabytes(info.Size)} (${info.RootFS.Layers.length} layers)`;
      const baseImage = (await podman(['image', 'inspect', IMAGE, '--format', '{{index .Labels "org.opencontainers.image.description"}}'])).trim();
      if (baseImage && baseImage !== '<no value>') figures['base image'] = baseImage;
    },
    25 * 60_000,
  );

  step('the image: a non-root user, the settings, port 4000, the /data volume, a health check without curl', async () => {
    const info = JSON.parse(await podman(['image', 'inspect', IMAGE]))[0];
    const config = info.Config;
    assert.equal(config.User, 'quarry');
    for (const e of ['HOST=0.0.0.0', 'PORT=4000', 'DATA_DIR=/data']) assert.ok(config.Env.includes(e), `ENV ${e}: ${config.Env}`);
    assert.ok(config.ExposedPorts['4000/tcp'], 'EXPOSE 4000');
    assert.ok(config.Volumes['/data'], 'VOLUME /data');
    const check = info.Healthcheck?.Test ?? config.Healthcheck?.Test;
    assert.deepEqual(check?.slice(0, 3), ['CMD', 'node', '-e'], `HEALTHCHECK: ${JSON.stringify(check)}`);
  });

  step('it starts on a fresh volume and answers /health', async () => {
    const { createMs, healthyMs } = await runContainer(FIRST);
    figures['podman create (vfs: a copy of the image)'] = seconds(createMs);
    figures['start to healthy (fresh volume)'] = seconds(healthyMs);
    const inside = await podman(['exec', FIRST, 'sh', '-c', 'id -u; command -v curl || echo no-curl; test -e node_modules/chdb && echo chdb || echo no-chdb']);
    assert.deepEqual(inside.trim().split('\n'), ['10001', 'no-curl', 'no-chdb']);
    // The image's own HEALTHCHECK, run by podman.
    const hc = await run('podman', ['healthcheck', 'run', FIRST]);
    assert.equal(hc.code, 0, `podman healthcheck run: ${hc.stdout}${hc.stderr}`);
    await sleep(5000);
    figures['idle RSS after start (fresh volume)'] = megabytes(await rssOf(FIRST));
    const stats = await run('podman', ['stats', '--no-stream', '--format', '{{.MemUsage}}', FIRST]);
    if (stats.code === 0) figures['podman stats memory (fresh volume)'] = stats.stdout.trim();
  });

  step('it takes events as Supabase’s Vector sends them and logs.all returns them', async () => {
    for (let i = 0; i < 4; i++) assert.equal(await ship('edge_logs', markers(`a${i}`, 50)), 200);
    for (let i = 0; i < 2; i++) assert.equal(await ship('auth_logs', markers(`a${i}`, 25)), 200);
    for (let i = 0; i < 2; i++) assert.equal(await ship('postgres_logs', markers(`a${i}`, 25)), 200);
    assert.equal(await assertEveryAckedEventFound(), 0);
    // A wrong token is refused, as Logflare does.
    const r = await fetch(`${base}/api/logs?source_name=cloudflare.logs.prod`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'not-a-token' },
      body: '[]',
    });
    assert.equal(r.status, 401);
  });

  step('SIGKILL while Vector ships, a start on the same volume: every acknowledged event is there', async () => {
    const before = acked.edge_logs.size;
    let answers = 0;
    let refused = 0;
    const killed = { done: false };
    let killing: Promise<void> | undefined;
    // Two Vector sinks shipping batches of 20 until the kill; after 6 acknowledged batches, SIGKILL.
    const sink = async (lane: number) => {
      for (let i = 0; i < 15 && !killed.done; i++) {
        const status = await ship('edge_logs', markers(`b${lane}-${i}`, 20)).catch(() => 0);
        if (status === 0) break;
        answers++;
        if (status !== 200) refused++;
        if (acked.edge_logs.size - before >= 6 * 20 && !killing) {
          killing = podman(['kill', '--signal', 'KILL', FIRST]).then(() => {
            killed.done = true;
          });
        }
      }
    };
    await Promise.all([sink(0), sink(1)]);
    await (killing ?? podman(['kill', '--signal', 'KILL', FIRST]));
    await podman(['wait', FIRST]);
    assert.equal((await state(FIRST)).exitCode, 137, 'killed by SIGKILL');
    assert.equal(refused, 0, 'no request was refused before the kill');
    figures['events acknowledged before SIGKILL'] = `${ackedCount()} (${acked.edge_logs.size - before} while shipping at the kill; ${answers} answers)`;

    const ms = await startContainer(FIRST);
    figures['start to healthy (after SIGKILL, podman start)'] = seconds(ms);
    const extra = await assertEveryAckedEventFound();
    figures['acknowledged events found after restart'] = `${ackedCount()} of ${ackedCount()} (+${extra} stored but not acknowledged)`;
  });

  step('podman stop (SIGTERM) ends it with exit 0, well inside 10 s', async () => {
    await sleep(3000);
    figures['idle RSS (after restart with data)'] = megabytes(await rssOf(FIRST));
    const { ms, exitCode } = await stopContainer(FIRST);
    figures['podman stop (SIGTERM)'] = `${seconds(ms)}, exit ${exitCode}`;
    assert.equal(exitCode, 0, `exit code after SIGTERM:\n${await logs(FIRST)}`);
    assert.ok(ms < 8000, `podman stop took ${ms} ms`);
    assert.match(await logs(FIRST), /Quarry stopped cleanly/);
  });

  step('a new container on the same volume has every event; stopped during its start, it still exits 0 at once', async () => {
    await podman(['rm', FIRST]);
    const { healthyMs } = await runContainer(SECOND);
    figures['start to healthy (new container, same volume)'] = seconds(healthyMs);
    await assertEveryAckedEventFound();
    const stopped = await stopContainer(SECOND);
    assert.equal(stopped.exitCode, 0);

    // Stopped while starting: node is PID 1, and a signal it has no handler for would be ignored
    // until SIGKILL. The lock file under DATA_DIR changes hands once the service's code runs.
    const volume = (await podman(['volume', 'inspect', VOLUME, '--format', '{{.Mountpoint}}'])).trim();
    const lockFile = path.join(volume, 'quarry.lock');
    const previous = await readFile(lockFile, 'utf8');
    await podman(['start', SECOND]);
    const deadline = Date.now() + 60_000;
    while ((await readFile(lockFile, 'utf8').catch(() => previous)) === previous) {
      assert.ok(Date.now() < deadline, 'the restarted service never claimed DATA_DIR');
      await sleep(20);
    }
    const early = await stopContainer(SECOND);
    figures['podman stop during start-up'] = `${seconds(early.ms)}, exit ${early.exitCode}`;
    assert.equal(early.exitCode, 0, `exit code after SIGTERM during start-up:\n${await logs(SECOND)}`);
    assert.ok(early.ms < 8000, `podman stop during start-up took ${early.ms} ms`);
  });
});
