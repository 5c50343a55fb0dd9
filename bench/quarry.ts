/**
 * The Quarry half of the benchmark: starts the real service as a child process on a temp DATA_DIR
 * and a free loopback port, ingests through the HTTP ingest API, asks the question set through the
 * endpoints API, and measures peak RSS and bytes on disk.
 */
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { build, serviceEntry } from '../scripts/build.mjs';
import type { CaseId, QueryContext } from './cases.ts';
import { LQL_QUERY, studioSql, windowFor } from './cases.ts';
import type { HttpAnswer } from './http.ts';
import { errorMessage, request } from './http.ts';
import { freePort, peakRssBytes, sleep } from './procs.ts';
import type { Summary } from './stats.ts';
import { summarise, timeRuns } from './stats.ts';

export interface QuarryService {
  url: string;
  token: string;
  dataDir: string;
  pid: number;
  /** Peak RSS so far (bytes). */
  peakRss(): number;
  stop(): Promise<void>;
}

/** Starts what `npm start` runs (dist/src/quarry.mjs, built from src/ first) on `dataDir`; `env` adds settings such as the engine. */
export async function startQuarry(repoRoot: string, dataDir: string, log: (line: string) => void, env: Record<string, string> = {}): Promise<QuarryService> {
  const port = await freePort();
  const token = randomBytes(24).toString('hex');
  build();
  const child: ChildProcess = spawn(process.execPath, [serviceEntry], {
    cwd: repoRoot,
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOGFLARE_PRIVATE_ACCESS_TOKEN: token },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4_000);
  });
  let exited: number | null = null;
  const exit = new Promise<void>((resolve) =>
    child.on('exit', (code) => {
      exited = code ?? -1;
      resolve();
    }),
  );
  const url = `http://127.0.0.1:${port}`;
  const agent = new http.Agent({ keepAlive: false });
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (exited !== null) throw new Error(`Quarry exited during start-up (code ${exited}): ${stderr.slice(-1_000)}`);
    try {
      const res = await request(agent, 'GET', `${url}/health`, {});
      if (res.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`Quarry did not become healthy within 60 s: ${stderr.slice(-1_000)}`);
    }
    await sleep(50);
  }
  log(`  Quarry is up at ${url} (pid ${child.pid}, data in ${dataDir})`);
  const pid = child.pid ?? -1;
  return {
    url,
    token,
    dataDir,
    pid,
    peakRss: () => peakRssBytes(pid),
    async stop() {
      if (exited !== null) return;
      child.kill('SIGTERM');
      // The fallback timer is cleared once the child exits: a pending 60 s timer would keep this
      // process alive for a minute after the run is over.
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), 60_000);
      });
      const outcome = await Promise.race([exit.then(() => 'exited' as const), timeout]);
      clearTimeout(timer);
      if (outcome === 'timeout') {
        child.kill('SIGKILL');
        await exit;
      }
    },
  };
}

/** Total size of the files under a directory, bytes. */
export function directoryBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) total += directoryBytes(p);
    else if (entry.isFile()) total += statSync(p).size;
  }
  return total;
}

export interface QuarryQueries {
  results: Partial<Record<CaseId, Summary>>;
  rows: Partial<Record<CaseId, number>>;
  errors: Partial<Record<CaseId, string>>;
}

export interface CacheHitResult {
  concurrency: number;
  requests: number;
  requestsPerSecond: number;
  latency: Summary;
  hitShare: number;
}

class QueryFailed extends Error {}

export class QuarryClient {
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

  constructor(private readonly service: QuarryService) {}

  close(): void {
    this.agent.destroy();
  }

  private async get(endpoint: string, params: Record<string, string>): Promise<HttpAnswer> {
    const qs = new URLSearchParams(params).toString();
    return request(this.agent, 'GET', `${this.service.url}/api/endpoints/query/${encodeURIComponent(endpoint)}?${qs}`, {
      'x-api-key': this.service.token,
    });
  }

  private async rows(endpoint: string, params: Record<string, string>): Promise<number> {
    const answer = await this.get(endpoint, params);
    if (answer.status !== 200) throw new QueryFailed(errorMessage(answer));
    const parsed = JSON.parse(answer.body) as { result?: unknown[] };
    return Array.isArray(parsed.result) ? parsed.result.length : 0;
  }

  /** Makes an uncached copy of `usage.api-counts` so cache misses can be timed repeatedly. */
  async uncachedUsageEndpoint(): Promise<string> {
    const headers = { 'x-api-key': this.service.token };
    const list = await request(this.agent, 'GET', `${this.service.url}/api/endpoints`, headers);
    if (list.status !== 200) throw new QueryFailed(`cannot list endpoints: ${errorMessage(list)}`);
    const parsed = JSON.parse(list.body) as unknown;
    const items = (Array.isArray(parsed) ? parsed : ((parsed as { result?: unknown[] }).result ?? [])) as { name?: string; query?: string }[];
    const usage = items.find((e) => e.name === 'usage.api-counts');
    if (usage?.query === undefined) throw new QueryFailed('usage.api-counts is not among the endpoints');
    const name = 'bench.usage-api-counts-uncached';
    const body = JSON.stringify({ name, query: usage.query, sandboxable: true, max_limit: 1000, cache_duration_seconds: 0 });
    const created = await request(this.agent, 'POST', `${this.service.url}/api/endpoints`, headers, body);
    if (created.status !== 201 && created.status !== 200) throw new QueryFailed(`cannot create ${name}: ${errorMessage(created)}`);
    return name;
  }

  paramsFor(id: CaseId, q: QueryContext): { endpoint: string; params: Record<string, string> } | undefined {
    const window = windowFor(id, q);
    const base: Record<string, string> = { project: q.project };
    if (window.start !== undefined) base.iso_timestamp_start = window.start;
    if (window.end !== undefined) base.iso_timestamp_end = window.end;
    if (id === 'logs_all_default') return { endpoint: 'logs.all', params: base };
    if (id === 'lql_errors_per_minute') return { endpoint: 'logs.all', params: { ...base, lql: LQL_QUERY } };
    const sql = studioSql(id, q);
    if (sql !== undefined) return { endpoint: 'logs.all', params: { ...base, sql } };
    return undefined;
  }

  async runCases(cases: readonly CaseId[], q: QueryContext, runs: number, log: (line: string) => void): Promise<QuarryQueries> {
    const out: QuarryQueries = { results: {}, rows: {}, errors: {} };
    let usageEndpoint: string | undefined;
    let usageError: string | undefined;
    for (const id of cases) {
      let call = this.paramsFor(id, q);
      if (call === undefined && id.startsWith('usage_')) {
        if (usageEndpoint === undefined && usageError === undefined) {
          try {
            usageEndpoint = await this.uncachedUsageEndpoint();
          } catch (e) {
            usageError = (e as Error).message;
          }
        }
        if (usageEndpoint !== undefined) {
          call = { endpoint: usageEndpoint, params: { interval: id.split('_')[1] ?? 'minutely', project: q.project } };
        } else {
          out.errors[id] = usageError;
        }
      }
      if (call === undefined) continue;
      const { endpoint, params } = call;
      try {
        let rows = 0;
        out.results[id] = await timeRuns(async () => {
          rows = await this.rows(endpoint, params);
        }, runs);
        out.rows[id] = rows;
        log(`  quarry   ${id.padEnd(26)} p50 ${out.results[id]?.p50.toFixed(1).padStart(8)} ms  (${rows} rows)`);
      } catch (e) {
        if (!(e instanceof QueryFailed)) throw e;
        out.errors[id] = e.message;
        log(`  quarry   ${id.padEnd(26)} failed: ${e.message}`);
      }
    }
    return out;
  }

  /** Cache hits on the real `usage.api-counts`: `concurrency` clients for `total` requests. */
  async cacheHits(q: QueryContext, concurrency: number, total: number): Promise<CacheHitResult> {
    const intervals = ['minutely', 'hourly', 'daily'];
    for (const interval of intervals) {
      const warm = await this.get('usage.api-counts', { interval, project: q.project });
      if (warm.status !== 200) throw new QueryFailed(errorMessage(warm));
    }
    // An untimed warm-up at the same concurrency (as every other question gets a warm-up run):
    // without it, a short phase measures the JIT compiling the request path, not the service.
    await this.hitPhase(q, concurrency, Math.min(total, 2_000), intervals);
    const started = performance.now();
    const { latencies, hits } = await this.hitPhase(q, concurrency, total, intervals);
    const seconds = (performance.now() - started) / 1000;
    return {
      concurrency,
      requests: latencies.length,
      requestsPerSecond: Math.round(latencies.length / seconds),
      latency: summarise(latencies),
      hitShare: latencies.length === 0 ? 0 : hits / latencies.length,
    };
  }

  /** `total` requests to `usage.api-counts` from `concurrency` clients; latencies in ms. */
  private async hitPhase(q: QueryContext, concurrency: number, total: number, intervals: readonly string[]): Promise<{ latencies: number[]; hits: number }> {
    const latencies: number[] = [];
    let hits = 0;
    let issued = 0;
    const worker = async () => {
      while (issued < total) {
        const interval = intervals[issued++ % intervals.length] as string;
        const t0 = performance.now();
        const answer = await this.get('usage.api-counts', { interval, project: q.project });
        latencies.push(performance.now() - t0);
        if (answer.status !== 200) throw new QueryFailed(errorMessage(answer));
        if (String(answer.headers['x-cache'] ?? '').toUpperCase() === 'HIT') hits++;
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    return { latencies, hits };
  }
}
