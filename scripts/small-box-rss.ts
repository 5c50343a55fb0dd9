/**
 * How much memory Quarry holds as Supabase's `analytics` service on a small box: starts the service
 * (`node dist/src/quarry.mjs`, what `npm start` runs) with the environment of
 * deploy/supabase/docker-compose.quarry.yml, preloads a week of Supabase-shaped logs, then for a
 * few minutes ingests like Vector (one JSON-array POST per source every second, public token in
 * `x-api-key`) while Studio-like readers run the Logs Explorer's queries (test/corpus/studio.ts,
 * plus `logs.all` as saved and `usage.api-counts`) through `logs.all` with the private token.
 * Prints the service's peak and mean RSS for each phase. Reports figures; asserts nothing.
 *
 *   node --import tsx scripts/small-box-rss.ts                       # the override's settings
 *   node --import tsx scripts/small-box-rss.ts --set MEMORY_BUDGET=1GiB --set DUCKDB_THREADS=2
 *   node --import tsx scripts/small-box-rss.ts --quarry-defaults      # Quarry's own defaults
 *
 * Options: --minutes N (2), --preload N events (1000000), --preload-days N (7), --ingest-rate N
 * events/s (100), --readers N concurrent Studio-like readers (2), --set NAME=VALUE (repeatable),
 * --quarry-defaults, --keep (keep the data dir).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { freePort } from '../bench/procs.ts';
import { directoryBytes } from '../bench/quarry.ts';
import { generateBatches } from '../src/demo/generator.ts';
import { serviceArgs } from '../test/support/process.ts';
import { ingestBatches } from '../src/demo/ingest-client.ts';
import { studioCases } from '../test/corpus/studio.ts';
import { composeInterpolate, isMap, parseYamlSubset } from '../test/deploy/supabase-yaml.ts';

const root = path.resolve(import.meta.dirname, '..');
const overridePath = path.join(root, 'deploy/supabase/docker-compose.quarry.yml');
const MiB = 2 ** 20;

/** The `analytics` service's environment in the override, interpolated as Compose would with `vars` as .env. */
function overrideEnvironment(vars: Record<string, string | undefined>): Record<string, string> {
  const doc = parseYamlSubset(readFileSync(overridePath, 'utf8'));
  const services = isMap(doc) ? doc.services : undefined;
  const analytics = isMap(services) ? services.analytics : undefined;
  const env = isMap(analytics) ? analytics.environment : undefined;
  if (!isMap(env)) throw new Error(`${overridePath} has no services.analytics.environment mapping`);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    if (typeof v !== 'string') throw new Error(`environment ${k} is not a string`);
    out[k] = composeInterpolate(v, vars);
  }
  return out;
}

function rssBytes(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  try {
    const m = new RegExp(`${field}:\\s+(\\d+)\\s+kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m === null ? Number.NaN : Number(m[1]) * 1024;
  } catch {
    return Number.NaN;
  }
}

/** RSS samples of one phase. */
class Sampler {
  private samples: number[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly pid: number) {}

  start(everyMs = 250): void {
    this.samples = [];
    this.timer = setInterval(() => {
      const v = rssBytes(this.pid, 'VmRSS');
      if (Number.isFinite(v)) this.samples.push(v);
    }, everyMs);
  }

  stop(): { peak: number; mean: number; last: number; n: number } {
    clearInterval(this.timer);
    const n = this.samples.length;
    const peak = n === 0 ? Number.NaN : Math.max(...this.samples);
    const mean = n === 0 ? Number.NaN : this.samples.reduce((a, b) => a + b, 0) / n;
    return { peak, mean, last: this.samples[n - 1] ?? Number.NaN, n };
  }
}

interface Answer {
  status: number;
  body: string;
}

function get(agent: http.Agent, url: string, token: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent, headers: { 'x-api-key': token, accept: 'application/json' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

/** One Studio-like read: the case's SQL over the last hour, as Studio's Logs Explorer sends it. */
function studioRequests(base: string): ((now: number) => string)[] {
  const window = (now: number) =>
    `iso_timestamp_start=${encodeURIComponent(new Date(now - 3_600_000).toISOString())}&iso_timestamp_end=${encodeURIComponent(new Date(now).toISOString())}`;
  const list: ((now: number) => string)[] = studioCases
    .filter((c) => c.sql !== undefined)
    .map((c) => (now: number) => `${base}/api/endpoints/query/logs.all?project=default&${window(now)}&sql=${encodeURIComponent(c.sql as string)}`);
  list.push((now) => `${base}/api/endpoints/query/logs.all?project=default&${window(now)}`);
  list.push(() => `${base}/api/endpoints/query/usage.api-counts?project=default&interval=minutely`);
  list.push(() => `${base}/api/endpoints/query/usage.api-counts?project=default&interval=daily`);
  return list;
}

async function waitHealthy(url: string, child: ChildProcess, stderr: () => string): Promise<void> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`Quarry exited during start-up: ${stderr().slice(-1_000)}`);
    try {
      const res = await fetch(`${url}/health`);
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`Quarry was not healthy within 120 s: ${stderr().slice(-1_000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const mib = (b: number) => `${(b / MiB).toFixed(0)} MiB`;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      minutes: { type: 'string', default: '2' },
      preload: { type: 'string', default: '1000000' },
      'preload-days': { type: 'string', default: '7' },
      'ingest-rate': { type: 'string', default: '100' },
      readers: { type: 'string', default: '2' },
      set: { type: 'string', multiple: true, default: [] },
      'quarry-defaults': { type: 'boolean', default: false },
      keep: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help === true) {
    console.log(readFileSync(import.meta.filename, 'utf8').split('*/')[0]);
    return;
  }
  const minutes = Number(values.minutes);
  const preload = Math.floor(Number(values.preload));
  const preloadDays = Number(values['preload-days']);
  const rate = Math.floor(Number(values['ingest-rate']));
  const readers = Math.floor(Number(values.readers));
  for (const [name, v] of Object.entries({ minutes, preload, preloadDays, rate, readers })) {
    if (!Number.isFinite(v) || v < 0) throw new Error(`--${name} must be a number ≥ 0`);
  }

  const privateToken = randomBytes(24).toString('hex');
  const publicToken = randomBytes(24).toString('hex');
  const dotEnv = { ...process.env, LOGFLARE_PRIVATE_ACCESS_TOKEN: privateToken, LOGFLARE_PUBLIC_ACCESS_TOKEN: publicToken };
  const settings: Record<string, string> = values['quarry-defaults'] === true ? {} : overrideEnvironment(dotEnv);
  for (const s of values.set as string[]) {
    const i = s.indexOf('=');
    if (i <= 0) throw new Error(`--set wants NAME=VALUE, got "${s}"`);
    settings[s.slice(0, i)] = s.slice(i + 1);
  }
  const dataDir = mkdtempSync(path.join(tmpdir(), 'quarry-small-box-'));
  const port = await freePort();
  const env: Record<string, string | undefined> = {
    ...process.env,
    ...settings,
    // Loopback and a scratch folder instead of the container's 0.0.0.0 and /data.
    HOST: '127.0.0.1',
    PORT: String(port),
    DATA_DIR: dataDir,
    LOGFLARE_PRIVATE_ACCESS_TOKEN: privateToken,
    LOGFLARE_PUBLIC_ACCESS_TOKEN: publicToken,
    NODE_TEST_CONTEXT: undefined,
  };
  const shown = Object.entries(settings)
    .filter(([k, v]) => v !== '' && !/TOKEN|API_KEY|^HOST$|^PORT$|^DATA_DIR$/.test(k))
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
  console.log(`Settings: ${shown || "(Quarry's defaults)"}`);
  console.log(`Machine: ${(await import('node:os')).cpus().length} cores; data in ${dataDir}`);

  const child = spawn(process.execPath, serviceArgs(), { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  // The service's own log (stdout and stderr), for when something fails.
  let stderr = '';
  const keep = (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-8_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const url = `http://127.0.0.1:${port}`;
  const pid = child.pid ?? -1;
  const sampler = new Sampler(pid);
  try {
    sampler.start();
    await waitHealthy(url, child, () => stderr);
    const idle = sampler.stop();
    console.log(`Started: RSS ${mib(idle.last)}`);

    if (preload > 0) {
      sampler.start();
      const t0 = performance.now();
      const batches = generateBatches({ count: preload, days: preloadDays, burstFraction: 0.02, seed: 7 }, 500);
      await ingestBatches(batches, { baseUrl: url, token: publicToken, concurrency: 2 });
      const p = sampler.stop();
      console.log(
        `Preload: ${preload.toLocaleString('en')} events over ${preloadDays} days in ${((performance.now() - t0) / 1000).toFixed(0)} s; RSS peak ${mib(p.peak)}, mean ${mib(p.mean)}`,
      );
    }

    // The measured phase: Vector-like ingest and Studio-like reads at once.
    sampler.start();
    const until = Date.now() + minutes * 60_000;
    let ingested = 0;
    const ingestFailures: string[] = [];
    const vector = (async () => {
      let seed = 100;
      while (Date.now() < until) {
        const tick = Date.now();
        if (rate > 0) {
          // One request per source per second, as Vector's sinks batch (events of the last second).
          const batches = [...generateBatches({ count: rate, now: tick, days: 1, burstFraction: 1, seed: seed++ }, 10_000)];
          try {
            const r = await ingestBatches(batches, { baseUrl: url, token: publicToken, concurrency: 7 });
            ingested += r.events;
          } catch (e) {
            ingestFailures.push((e as Error).message);
          }
        }
        await new Promise((r) => setTimeout(r, Math.max(0, 1_000 - (Date.now() - tick))));
      }
    })();
    const statuses = new Map<number, number>();
    const errors = new Map<string, number>();
    const requests = studioRequests(url);
    let reads = 0;
    const reader = async (offset: number) => {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      for (let i = offset; Date.now() < until; i++) {
        const make = requests[i % requests.length] as (now: number) => string;
        const a = await get(agent, make(Date.now()), privateToken);
        reads++;
        statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
        if (a.status !== 200) {
          const code = /"code":"([A-Z_]+)"/.exec(a.body)?.[1] ?? a.body.slice(0, 80);
          errors.set(`${a.status} ${code}`, (errors.get(`${a.status} ${code}`) ?? 0) + 1);
        }
      }
      agent.destroy();
    };
    await Promise.all([vector, ...Array.from({ length: readers }, (_, i) => reader(i * 7))]);
    const run = sampler.stop();
    const hwm = rssBytes(pid, 'VmHWM');
    console.log(
      `Load (${minutes} min): ${ingested.toLocaleString('en')} events ingested (${rate}/s target), ${reads.toLocaleString('en')} Studio-like queries by ${readers} reader(s); answers ${[...statuses].map(([s, n]) => `${s}×${n}`).join(', ')}`,
    );
    if (errors.size > 0) {
      console.log(`  non-200: ${[...errors].map(([k, n]) => `${k} ×${n}`).join(', ')}`);
      console.log(`  the service's log ends with:\n${stderr.trim().split('\n').slice(-5).join('\n').slice(-2_000)}`);
    }
    if (ingestFailures.length > 0) console.log(`  ingest failures: ${ingestFailures.length}, first: ${ingestFailures[0]}`);
    console.log(`  RSS during load: peak ${mib(run.peak)}, mean ${mib(run.mean)} (${run.n} samples every 250 ms)`);
    console.log(`Process peak RSS (VmHWM, whole run): ${mib(hwm)}; data dir ${mib(directoryBytes(dataDir))}`);
  } finally {
    sampler.stop();
    if (child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(timer);
    }
    if (values.keep !== true) rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  console.error((e as Error).message);
  process.exit(1);
});
