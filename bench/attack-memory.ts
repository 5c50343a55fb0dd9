/**
 * Peak memory under concurrent large-result attacks (issue 20, docs/API.md §4 "Response size"):
 * starts the service of a source tree as a child process (`node --import tsx src/main.ts`) for each
 * engine and MEMORY_BUDGET asked for, ingests ROWS edge events, then runs 1, 2 and 4 identical
 * caller queries at once through `logs.all` and prints, for each round, the answers' statuses, the
 * child's peak resident memory (VmHWM, reset before each round), the longest `/health` wait
 * meanwhile, and whether a small query still answers afterwards.
 *
 *   node --import tsx bench/attack-memory.ts [options]
 *     --tree DIR        source tree to start (default: this repository)
 *     --engines LIST    duckdb,clickhouse (default both; clickhouse runs on embedded chDB)
 *     --budgets LIST    MEMORY_BUDGET values (default 1GiB,2GiB)
 *     --rounds LIST     queries at once per round (default 1,2,4)
 *     --sql SQL         the attack (default: 1,000 rows of 30 KB, a 30 MB response)
 *     --rows N          events ingested (default 10000)
 *     --message-bytes N pad each event's message to N bytes (default: `m00000`, 6 bytes); with
 *                       `--sql "select event_message as s from edge_logs"` the attack reads stored
 *                       values instead of building them (QUERY_MAX_VALUE_BYTES bounds what it builds)
 *     --tokens N        callers the queries of a round are spread over (default 1: one token may run
 *                       QUERY_MAX_PER_TOKEN, 2, at once and the rest wait; 4 runs 4 at once)
 *     --env K=V         extra environment for the service (repeatable), e.g. QUERY_RESULT_MEMORY=64MiB
 *
 * Linux only (/proc). Each line is also printed as JSON at the end, for a table.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    tree: { type: 'string', default: path.resolve(import.meta.dirname, '..') },
    engines: { type: 'string', default: 'duckdb,clickhouse' },
    budgets: { type: 'string', default: '1GiB,2GiB' },
    rounds: { type: 'string', default: '1,2,4' },
    sql: { type: 'string', default: 'select repeat(event_message, 5000) as s from edge_logs' },
    rows: { type: 'string', default: '10000' },
    'message-bytes': { type: 'string', default: '0' },
    tokens: { type: 'string', default: '1' },
    env: { type: 'string', multiple: true, default: [] },
  },
});

const TOKEN = 'attack-memory-token-0123456789abcdef';
const SOURCE = 'cloudflare.logs.prod';

interface Service {
  child: ChildProcess;
  url: string;
  dir: string;
}

interface Round {
  engine: string;
  budget: string;
  k: number;
  statuses: string[];
  allMs: number;
  startMiB: number;
  peakMiB: number;
  healthMaxMs: number;
  after: number;
}

function status(pid: number): { rssMiB: number; peakMiB: number } {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(text)?.[1] ?? Number.NaN) / 1024;
  return { rssMiB: Math.round(field('VmRSS')), peakMiB: Math.round(field('VmHWM')) };
}

function start(engine: string, budget: string): Promise<Service> {
  const dir = mkdtempSync(path.join(tmpdir(), 'attack-memory-'));
  const extra: Record<string, string> = {};
  for (const kv of values.env) {
    const at = kv.indexOf('=');
    if (at > 0) extra[kv.slice(0, at)] = kv.slice(at + 1);
  }
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: values.tree,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dir,
      LOG_LEVEL: 'warn',
      LOGFLARE_PRIVATE_ACCESS_TOKEN: TOKEN,
      MEMORY_BUDGET: budget,
      ...(engine === 'clickhouse' ? { QUARRY_ENGINE: 'clickhouse', CLICKHOUSE_URL: 'chdb:' } : {}),
      ...extra,
    },
  });
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stderr?.on('data', (d: Buffer) => {
      err += d.toString();
    });
    child.on('exit', (code) => reject(new Error(`the service exited (${code}): ${err}`)));
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m?.[1]) resolve({ child, url: m[1], dir });
    });
  });
}

async function stop(service: Service): Promise<void> {
  await new Promise<void>((done) => {
    service.child.removeAllListeners('exit');
    service.child.once('exit', () => done());
    service.child.kill('SIGKILL');
  });
  rmSync(service.dir, { recursive: true, force: true });
}

const headers = { 'x-api-key': TOKEN, 'content-type': 'application/json' };

async function ask(service: Service, sql: string, token = TOKEN): Promise<{ status: number; code: string; ms: number }> {
  const started = performance.now();
  const r = await fetch(`${service.url}/api/endpoints/query/logs.all`, {
    method: 'POST',
    headers: { ...headers, 'x-api-key': token },
    body: JSON.stringify({ sql, project: 'a' }),
  });
  const body = await r.text();
  const code = r.status === 200 ? '' : (/"code":"(\w+)"/.exec(body)?.[1] ?? '');
  return { status: r.status, code, ms: Math.round(performance.now() - started) };
}

async function measure(engine: string, budget: string): Promise<Round[]> {
  const service = await start(engine, budget);
  const pid = service.child.pid as number;
  try {
    const rows = Number(values.rows);
    const messageBytes = Number(values['message-bytes']);
    // Batches stay under the default ingest body limit (10 MiB).
    const perBatch = Math.max(1, Math.min(2000, Math.floor(8_000_000 / Math.max(messageBytes, 100))));
    const now = Date.now();
    for (let i = 0; i < rows; i += perBatch) {
      const batch = Array.from({ length: Math.min(perBatch, rows - i) }, (_, j) => ({
        message: `m${String(i + j).padStart(5, '0')}`.padEnd(messageBytes, 'x'),
        timestamp: new Date(now - 60_000).toISOString(),
        project: 'a',
      }));
      const r = await fetch(`${service.url}/api/logs?source_name=${SOURCE}`, { method: 'POST', headers, body: JSON.stringify({ batch }) });
      if (r.status !== 200) throw new Error(`ingest answered ${r.status}: ${await r.text()}`);
    }
    const tokens = [TOKEN];
    while (tokens.length < Number(values.tokens)) {
      const r = await fetch(`${service.url}/api/access-tokens`, { method: 'POST', headers, body: JSON.stringify({ scopes: ['query'] }) });
      if (r.status !== 201) throw new Error(`token creation answered ${r.status}: ${await r.text()}`);
      tokens.push(((await r.json()) as { token: string }).token);
    }
    const rounds: Round[] = [];
    for (const k of values.rounds.split(',').map(Number)) {
      const startMiB = status(pid).rssMiB;
      // VmHWM back to the current RSS: the round's own peak.
      writeFileSync(`/proc/${pid}/clear_refs`, '5');
      let healthMaxMs = 0;
      let probing = true;
      const prober = (async () => {
        while (probing) {
          const t = performance.now();
          await (await fetch(`${service.url}/health`)).text();
          healthMaxMs = Math.max(healthMaxMs, performance.now() - t);
          await new Promise((r) => setTimeout(r, 50));
        }
      })();
      const started = performance.now();
      const answers = await Promise.all(Array.from({ length: k }, (_, i) => ask(service, values.sql, tokens[i % tokens.length])));
      const allMs = Math.round(performance.now() - started);
      probing = false;
      await prober;
      const { peakMiB } = status(pid);
      const after = await ask(service, 'select count(*) as n from edge_logs');
      const round: Round = {
        engine,
        budget,
        k,
        statuses: answers.map((a) => `${a.status}${a.code ? ` ${a.code}` : ''} ${a.ms}ms`),
        allMs,
        startMiB,
        peakMiB,
        healthMaxMs: Math.round(healthMaxMs),
        after: after.status,
      };
      console.log(
        `${engine} ${budget} k=${k}: ${round.statuses.join(', ')}; all ${allMs} ms; RSS ${startMiB} → peak ${peakMiB} MiB; /health max ${round.healthMaxMs} ms; then count: ${after.status}`,
      );
      rounds.push(round);
    }
    return rounds;
  } finally {
    await stop(service);
  }
}

const all: Round[] = [];
for (const engine of values.engines.split(',')) {
  for (const budget of values.budgets.split(',')) all.push(...(await measure(engine, budget)));
}
console.log(JSON.stringify(all));
