/**
 * `npm run bench -- --events 1000000`: Quarry against Logflare's Postgres layout (baseline) and
 * hand-written SQL on the engine's own tables (limit) on the same generated data and the same
 * questions. `--engine duckdb` (default) runs the service on DuckDB, `--engine clickhouse` on
 * embedded chDB (`CLICKHOUSE_URL=chdb:`), `--engine both` one after the other on the same data.
 *
 * Flags: --engine duckdb|clickhouse|both, --events N (default 1,000,000), --runs N (timed runs per query, default 20),
 * --baseline-runs N (default min(runs, 5)), --no-baseline (skip PostgreSQL), --json-only (the
 * result JSON on stdout, progress on stderr), --concurrency N and --batch N (ingest client),
 * --hit-requests N (cache-hit phase), --warmup-ms N (least warm-up per question and side, default
 * 1000), --quiet-ms N (the service counts as quiet after ingest once two samples this long in a row
 * each used under a tenth of a core; default 1000), --seed N, --results-dir DIR, --no-docs, --keep (keep the temp directory).
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { GenerateOptions } from '../src/demo/generator.ts';
import { ingestRequests } from '../src/demo/ingest-client.ts';
import { loadBaseline, pgClient } from './baseline/load.ts';
import { readBodies, writeBodies } from './bodies.ts';
import { runBaseline } from './baseline/queries.ts';
import { startPostgres } from './baseline/server.ts';
import type { CaseId, QueryContext } from './cases.ts';
import { CASES } from './cases.ts';
import type { LimitRun } from './limit.ts';
import { runLimit } from './limit.ts';
import { runClickHouseLimit } from './limit-clickhouse.ts';
import type { IngestLimitResult } from './ingest-limit.ts';
import { cpuMs, waitQuiet } from './procs.ts';
import { directoryBytes, QuarryClient, startQuarry } from './quarry.ts';
import type { BenchEngine, BenchResult, CaseResult } from './report.ts';
import { markdownTable, scaleTarget, updatePerformanceDoc } from './report.ts';
import type { Summary } from './stats.ts';
import { geometricMean, summarise, warmUp } from './stats.ts';
import { lockFolder } from '../src/data-dir/lock.ts';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const PROJECTS = ['default', 'rzwtqkxbnpcmhdvalsye', 'qpjhmfkzxtrwbvnylcog', 'hbxwkqnjrtzvlcmdpysa'];

function count(raw: string | undefined, name: string, fallback: number): number {
  if (raw === undefined) return fallback;
  const n = Number(raw.replace(/_/g, ''));
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} must be a positive number, got "${raw}"`);
  return Math.floor(n);
}

function versionOf(pkg: string): string {
  try {
    const file = path.join(repoRoot, 'node_modules', ...pkg.split('/'), 'package.json');
    return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

const ENGINES: Record<string, readonly BenchEngine[]> = { duckdb: ['duckdb'], clickhouse: ['clickhouse'], both: ['duckdb', 'clickhouse'] };

/** The service's environment for an engine (chDB in DATA_DIR/clickhouse for ClickHouse). */
function engineEnv(engine: BenchEngine): Record<string, string> {
  return engine === 'clickhouse' ? { QUARRY_ENGINE: 'clickhouse', CLICKHOUSE_URL: 'chdb:', CLICKHOUSE_DATABASE: 'quarry' } : { QUARRY_ENGINE: 'duckdb' };
}

/** What one engine's half of the run measured. */
interface EngineRun {
  ingest: BenchResult['ingest'];
  /** How long the service took to go quiet after ingest, before the queries (ms). */
  settleMs?: number;
  ours: Partial<Record<CaseId, Summary>>;
  oursRows: Partial<Record<CaseId, number>>;
  oursErrors: Partial<Record<CaseId, string>>;
  limit: LimitRun | undefined;
  ingestLimit: NonNullable<BenchResult['ingestLimit']>;
  cacheHit: BenchResult['cacheHit'];
  peakRssBytes: number | null;
  notes: string[];
}

interface EngineRunOptions {
  engine: BenchEngine;
  workDir: string;
  bodies: string;
  q: QueryContext;
  runs: number;
  concurrency: number;
  hitRequests: number;
  /** waitQuiet's sample length (ms). */
  quietMs: number;
  log: (line: string) => void;
}

/** Quarry on one engine: ingest over HTTP, the questions over HTTP, stop, disk, then the limit. */
async function measureEngine(o: EngineRunOptions): Promise<EngineRun> {
  const { engine, log, q } = o;
  const out: EngineRun = {
    ingest: null,
    ours: {},
    oursRows: {},
    oursErrors: {},
    limit: undefined,
    ingestLimit: { grouped: null, bulk: null },
    cacheHit: null,
    peakRssBytes: null,
    notes: [],
  };
  const caseIds = CASES.map((c) => c.id);
  const dataDir = path.join(o.workDir, `quarry-data-${engine}`);
  const name = engine === 'duckdb' ? 'DuckDB' : 'ClickHouse (chDB)';
  log(`Quarry on ${name}: starting the service ...`);
  const service = await startQuarry(repoRoot, dataDir, log, engineEnv(engine));
  let ingested = false;
  try {
    let shown = 0;
    const cpuBefore = cpuMs(service.pid);
    const ing = await ingestRequests(readBodies(o.bodies), {
      baseUrl: service.url,
      token: service.token,
      concurrency: o.concurrency,
      onProgress: (p) => {
        if (p.elapsedMs - shown < 5_000) return;
        shown = p.elapsedMs;
        log(`  ingested ${p.events.toLocaleString('en')} events (${Math.round(p.events / (p.elapsedMs / 1000)).toLocaleString('en')}/s)`);
      },
    });
    ingested = true;
    const eps = Math.round(ing.events / (ing.elapsedMs / 1000));
    log(`  ingest: ${ing.events.toLocaleString('en')} events in ${(ing.elapsedMs / 1000).toFixed(1)} s = ${eps.toLocaleString('en')} events/s`);
    out.ingest = {
      events: ing.events,
      elapsedMs: Math.round(ing.elapsedMs),
      eventsPerSecond: eps,
      requests: ing.requests,
      requestLatency: summarise(ing.latenciesMs),
      retries: ing.retries,
      bytesOnDisk: 0,
      bytesPerEvent: 0,
    };
    // Queries are timed once the service's background work after ingest (merges, checkpoints) is
    // done, as the limit finds the data after the service has stopped.
    const cpuIngest = cpuMs(service.pid) - cpuBefore;
    const waited = await waitQuiet(service.pid, 120_000, 0.1, o.quietMs);
    const cpuSettled = cpuMs(service.pid) - cpuBefore;
    log(`  the service was quiet after ${(waited / 1000).toFixed(1)} s`);
    out.settleMs = waited;
    if (Number.isFinite(cpuSettled)) {
      out.ingest.cpuMicrosPerEvent = Math.round((cpuIngest * 1000) / ing.events);
      out.ingest.cpuMicrosPerEventSettled = Math.round((cpuSettled * 1000) / ing.events);
      const line = `The service used ${out.ingest.cpuMicrosPerEvent} µs of CPU per event while the client sent, ${out.ingest.cpuMicrosPerEventSettled} µs counting its work until quiet after (the limit's CPU per event is in its row).`;
      out.notes.push(line);
      log(`  ${line}`);
    }
    const client = new QuarryClient(service);
    try {
      log(`Quarry on ${name}: ${o.runs} runs per question ...`);
      const run = await client.runCases(caseIds, q, o.runs, log);
      Object.assign(out.ours, run.results);
      Object.assign(out.oursRows, run.rows);
      Object.assign(out.oursErrors, run.errors);
      try {
        log(`Quarry on ${name}: usage.api-counts cache hits at concurrency 32 (${o.hitRequests} requests) ...`);
        out.cacheHit = await client.cacheHits(q, 32, o.hitRequests);
        log(
          `  ${out.cacheHit.requestsPerSecond.toLocaleString('en')} req/s, p50 ${out.cacheHit.latency.p50} ms, p99 ${out.cacheHit.latency.p99} ms, ${Math.round(out.cacheHit.hitShare * 100)}% X-Cache: HIT`,
        );
      } catch (e) {
        out.notes.push(`Cache-hit phase not measured: ${(e as Error).message}`);
        log(`  cache hits not measured: ${(e as Error).message}`);
      }
    } finally {
      client.close();
    }
  } catch (e) {
    out.notes.push(`Quarry half stopped early: ${(e as Error).message}`);
    log(`  Quarry half stopped early: ${(e as Error).message}`);
  } finally {
    out.peakRssBytes = Number.isFinite(service.peakRss()) ? service.peakRss() : null;
    await service.stop();
  }
  if (out.ingest !== null) {
    out.ingest.bytesOnDisk = directoryBytes(dataDir);
    out.ingest.bytesPerEvent = Math.round(out.ingest.bytesOnDisk / Math.max(1, out.ingest.events));
    log(`  on disk after a clean stop: ${(out.ingest.bytesOnDisk / 2 ** 20).toFixed(1)} MiB = ${out.ingest.bytesPerEvent} bytes/event`);
  }
  if (!ingested) return out;
  for (const mode of ['grouped', 'bulk'] as const) {
    log(`Ingest limit (${mode}): the same requests straight into ${name}'s storage, in a process of its own ...`);
    try {
      const r = ingestLimit(engine, o.bodies, o.workDir, path.join(dataDir, 'quarry.duckdb'), o.concurrency, mode === 'bulk');
      out.ingestLimit[mode] = r;
      log(`  limit    ingest (${mode}) ${r.eventsPerSecond.toLocaleString('en')} events/s, ${Math.round((r.cpuMs * 1000) / r.events)} µs CPU per event`);
    } catch (e) {
      out.notes.push(`Ingest limit (${mode}) not measured: ${(e as Error).message}`);
      log(`  ingest limit (${mode}) not measured: ${(e as Error).message}`);
    }
  }
  // The limit reads the service's files directly, so it claims the folder as the service does.
  const folders = lockFolder(dataDir, { what: 'DATA_DIR', purpose: 'the benchmark' });
  try {
    if (engine === 'duckdb') {
      log('Limit: hand-written DuckDB on the same tables, in-process ...');
      out.limit = await runLimit(path.join(dataDir, 'quarry.duckdb'), caseIds, q, o.runs, log);
    } else {
      log('Limit: hand-written ClickHouse SQL on the same chDB tables, in-process ...');
      const limit = await runClickHouseLimit(path.join(dataDir, 'clickhouse'), 'quarry', caseIds, q, o.runs, log);
      out.limit = limit;
      if (out.ingest !== null) {
        out.notes.push(
          `Bytes on disk count the whole DATA_DIR (chDB's own files and the metadata store included); the event tables' active parts alone: ${Math.round(limit.partBytes / Math.max(1, out.ingest.events))} bytes/event.`,
        );
      }
    }
  } catch (e) {
    out.notes.push(`Limit not measured: ${(e as Error).message}`);
    log(`  limit not measured: ${(e as Error).message}`);
  } finally {
    folders.release();
  }
  return out;
}

/** bench/ingest-limit.ts in a process of its own (chDB binds one data directory per process). */
function ingestLimit(engine: BenchEngine, bodies: string, workDir: string, schemaFrom: string, group: number, bulk: boolean): IngestLimitResult {
  // Beside this file: bench/ingest-limit.ts, or its compiled .js when the tests run the bench from dist/.
  const here = fileURLToPath(import.meta.url);
  const script = path.join(path.dirname(here), `ingest-limit${path.extname(here)}`);
  const args = [
    ...(script.endsWith('.ts') ? ['--import', 'tsx'] : []),
    script,
    '--engine',
    engine,
    '--bodies',
    bodies,
    '--work',
    workDir,
    '--group',
    String(group),
  ];
  if (engine === 'duckdb') args.push('--schema-from', schemaFrom);
  if (bulk) args.push('--bulk');
  const out = execFileSync(process.execPath, args, { cwd: repoRoot, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 20 });
  return JSON.parse(out.trim().split('\n').at(-1) as string) as IngestLimitResult;
}

/** One engine's result: its measurements beside the shared baseline, with ratios and checks. */
function engineResult(base: BenchResult, engine: BenchEngine, run: EngineRun, baseline: Awaited<ReturnType<typeof runBaseline>> | undefined): BenchResult {
  const events = Number(base.params.events);
  const notes = [...base.notes, ...run.notes];
  const result: BenchResult = {
    ...base,
    engine,
    versions: { ...base.versions, ...(engine === 'clickhouse' ? { chdb: versionOf('chdb'), '@clickhouse/client': versionOf('@clickhouse/client') } : {}) },
    ingest: run.ingest === null ? null : { ...run.ingest, ...(run.settleMs === undefined ? {} : { settleMs: run.settleMs }) },
    ingestLimit: run.ingestLimit,
    cacheHit: run.cacheHit,
    peakRssBytes: run.peakRssBytes,
    queries: {},
    summary: { geomeanOursOverBaseline: null, maxOursOverLimit: null },
    notes,
  };
  const overBaseline: number[] = [];
  let maxOverLimit: number | null = null;
  for (const c of CASES) {
    const o = run.ours[c.id] ?? null;
    const b = baseline?.results[c.id] ?? null;
    const l = run.limit?.results[c.id] ?? null;
    const target = scaleTarget(c.target, events);
    const r: CaseResult = {
      label: c.label,
      ours: o,
      baseline: b,
      limit: l,
      rows: { ours: run.oursRows[c.id], baseline: baseline?.rows[c.id], limit: run.limit?.rows[c.id] },
      oursOverBaseline: o !== null && b !== null ? o.p50 / b.p50 : null,
      oursOverLimit: o !== null && l !== null ? o.p50 / l.p50 : null,
      met: o === null || target === undefined ? null : o.p50 <= target,
    };
    if (c.target !== undefined) r.target = c.target;
    const err = run.oursErrors[c.id];
    if (err !== undefined) r.error = err;
    if (r.oursOverBaseline !== null) overBaseline.push(r.oursOverBaseline);
    if (r.oursOverLimit !== null) maxOverLimit = Math.max(maxOverLimit ?? 0, r.oursOverLimit);
    const { ours: ro, limit: rl, baseline: rb } = r.rows;
    if (!c.id.startsWith('usage_') && ro !== undefined && rl !== undefined && ro !== rl) {
      notes.push(`${c.id}: Quarry returned ${ro} rows, the limit query ${rl}${rb === undefined ? '' : `, the baseline ${rb}`}.`);
    }
    result.queries[c.id] = r;
  }
  result.summary.geomeanOursOverBaseline = overBaseline.length > 0 ? geometricMean(overBaseline) : null;
  result.summary.maxOursOverLimit = maxOverLimit;
  return result;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      engine: { type: 'string' },
      events: { type: 'string' },
      runs: { type: 'string' },
      'baseline-runs': { type: 'string' },
      'no-baseline': { type: 'boolean' },
      'json-only': { type: 'boolean' },
      concurrency: { type: 'string' },
      batch: { type: 'string' },
      'hit-requests': { type: 'string' },
      'warmup-ms': { type: 'string' },
      'quiet-ms': { type: 'string' },
      seed: { type: 'string' },
      'results-dir': { type: 'string' },
      'no-docs': { type: 'boolean' },
      keep: { type: 'boolean' },
    },
  });
  const engines = ENGINES[values.engine ?? 'duckdb'];
  if (engines === undefined) throw new Error(`--engine must be duckdb, clickhouse or both, got "${values.engine}"`);
  const events = count(values.events, 'events', 1_000_000);
  const runs = count(values.runs, 'runs', 20);
  const baselineRuns = count(values['baseline-runs'], 'baseline-runs', Math.min(runs, 5));
  const concurrency = count(values.concurrency, 'concurrency', 8);
  const batch = count(values.batch, 'batch', 1_000);
  const hitRequests = count(values['hit-requests'], 'hit-requests', 6_000);
  const quietMs = count(values['quiet-ms'], 'quiet-ms', 1_000);
  const seed = count(values.seed, 'seed', 1);
  warmUp.ms = values['warmup-ms'] === '0' ? 0 : count(values['warmup-ms'], 'warmup-ms', warmUp.ms);
  const jsonOnly = values['json-only'] === true;
  const withBaseline = values['no-baseline'] !== true;
  const resultsDir = path.resolve(values['results-dir'] ?? path.join(repoRoot, 'bench', 'results'));
  const log = (line: string) => (jsonOnly ? process.stderr : process.stdout).write(`${line}\n`);

  const now = Date.now();
  const q: QueryContext = {
    project: PROJECTS[0] as string,
    nowIso: new Date(now).toISOString(),
    hourAgoIso: new Date(now - 3_600_000).toISOString(),
    dayAgoIso: new Date(now - 86_400_000).toISOString(),
    lookupId: '',
    search: 'search_products',
  };
  const gen: GenerateOptions = { count: events, seed, now, days: 8, burstFraction: 0.1, projects: PROJECTS, withIds: true };
  const workDir = mkdtempSync(path.join(os.tmpdir(), 'quarry-bench-'));
  // The baseline's PostgreSQL runs as the `postgres` user and must be able to reach its directory.
  chmodSync(workDir, 0o755);
  const caseIds = CASES.map((c) => c.id);
  const base: BenchResult = {
    date: new Date(now).toISOString(),
    engine: 'duckdb',
    command: `npm run bench -- ${process.argv.slice(2).join(' ')}`.trim(),
    machine: {
      cores: os.cpus().length,
      memoryGiB: Math.round(os.totalmem() / 2 ** 30),
      cpu: os.cpus()[0]?.model ?? 'unknown',
      os: `${os.type()} ${os.release()}`,
      loadAverage: os.loadavg().map((l) => Math.round(l * 100) / 100),
    },
    versions: { node: process.version, '@duckdb/node-api': versionOf('@duckdb/node-api'), fastify: versionOf('fastify') },
    params: { events, runs, baselineRuns, concurrency, batch, seed, days: 8, burstFraction: 0.1, projects: PROJECTS, hitRequests, baseline: withBaseline },
    ingest: null,
    baselineLoad: null,
    queries: {},
    cacheHit: null,
    peakRssBytes: null,
    summary: { geomeanOursOverBaseline: null, maxOursOverLimit: null },
    notes: [],
  };
  const measured = new Map<BenchEngine, EngineRun>();
  let baseline: Awaited<ReturnType<typeof runBaseline>> | undefined;

  try {
    log(`Generating ${events.toLocaleString('en')} events (8 days, dense last hour, ${PROJECTS.length} projects) ...`);
    const t0 = performance.now();
    const bodies = path.join(workDir, 'bodies.ndjson');
    const written = await writeBodies(bodies, gen, batch);
    q.lookupId = written.lookupId;
    log(`  ${written.requests.toLocaleString('en')} request bodies ready in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

    for (const engine of engines) {
      measured.set(engine, await measureEngine({ engine, workDir, bodies, q, runs, concurrency, hitRequests, quietMs, log }));
    }

    if (withBaseline) {
      log("Baseline: PostgreSQL in Logflare's layout ...");
      const pg = await startPostgres(path.join(workDir, 'pg'), log);
      base.versions.postgres = pg.version;
      base.versions.pg = versionOf('pg');
      try {
        const load = await loadBaseline(pg, gen, log);
        base.baselineLoad = {
          events: load.events,
          eventsPerSecond: Math.round(load.events / (load.loadMs / 1000)),
          bytes: load.bytes,
          bytesPerEvent: Math.round(load.bytes / Math.max(1, load.events)),
          indexMs: Math.round(load.indexMs),
        };
        log(
          `  loaded ${load.events.toLocaleString('en')} events with COPY in ${(load.loadMs / 1000).toFixed(1)} s, indexes ${(load.indexMs / 1000).toFixed(1)} s, ${base.baselineLoad.bytesPerEvent} bytes/event`,
        );
        const client = await pgClient(pg);
        try {
          baseline = await runBaseline(client, caseIds, q, baselineRuns, log);
        } finally {
          await client.end();
        }
      } finally {
        await pg.stop();
      }
    }
  } finally {
    if (values.keep === true) log(`(kept ${workDir})`);
    else rmSync(workDir, { recursive: true, force: true });
  }

  const results = [...measured].map(([engine, run]) => engineResult(base, engine, run, baseline));
  const duck = results.find((r) => r.engine === 'duckdb');
  mkdirSync(resultsDir, { recursive: true });
  for (const result of results) {
    if (result.engine === 'clickhouse' && duck?.ingest) result.compareIngestEventsPerSecond = duck.ingest.eventsPerSecond;
    const file = path.join(resultsDir, `${result.date.slice(0, 10)}-${events}${result.engine === 'duckdb' ? '' : `-${result.engine}`}.json`);
    writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
    if (!jsonOnly) {
      log('');
      log(`${result.engine === 'duckdb' ? 'DuckDB' : 'ClickHouse (chDB)'}:`);
      log(markdownTable(result, CASES));
      if (result.notes.length > 0) log(`\nNotes:\n${result.notes.map((n) => `- ${n}`).join('\n')}`);
      log(`\nResults written to ${path.relative(process.cwd(), file)}`);
    }
    if (values['no-docs'] !== true && !jsonOnly) {
      const doc = path.join(repoRoot, 'docs', 'PERFORMANCE.md');
      updatePerformanceDoc(doc, result, CASES);
      log(`Table written to ${path.relative(process.cwd(), doc)}`);
    }
  }
  // One engine: its result object; several: an array of them.
  if (jsonOnly) process.stdout.write(`${JSON.stringify(results.length === 1 ? results[0] : results)}\n`);
}

main().catch((e: unknown) => {
  console.error(`Benchmark failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
  process.exit(1);
});
