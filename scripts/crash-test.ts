/**
 * `npm run crash-test -- --rounds 200`: kill -9 the real service at random moments and check that
 * everything it acknowledged is there after it starts again.
 *
 * Each round starts the service (`node --import tsx src/main.ts`, its own DATA_DIR, kept across
 * rounds), checks every event and management change acknowledged in earlier rounds, then runs
 * mixed ingest from several concurrent clients into several sources (events that keep adding
 * nested fields, top-level keys and type conflicts) beside a client making management changes
 * (create endpoint, create and revoke token, create source), and kills the process with SIGKILL:
 *
 * - `after-growth`: the moment a 200 arrives for a request that added a new nested field;
 * - `mid-request`: at a random moment while requests are in flight;
 * - `checkpoint`: the moment the database file starts changing (DuckDB writes it only while it
 *   checkpoints; these rounds run with a small `DUCKDB_CHECKPOINT_THRESHOLD` so checkpoints are
 *   frequent).
 *
 * Every other start runs with `INGEST_MAX_TYPED_FIELDS=12`, so new fields also go to the overflow
 * column, which is created and grown between kills.
 *
 * A restart that fails is counted, its acknowledged events counted as lost, and the next round
 * continues in a fresh directory (the failed one is kept with --keep). Events are read back over
 * HTTP through saved endpoints, as a user would.
 *
 * Options: --rounds N (default 50) · --clients N (default 4) · --seed N · --keep · --quiet.
 */
import type { ChildProcess } from 'node:child_process';
import { statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { Rng } from '../src/demo/random.ts';
import { kill9, spawnChild } from '../test/support/process.ts';

const TOKEN = 'crash-test-private-token-0123456789';
const DATA_SOURCES = ['crash.edge', 'crash.auth', 'crash.storage', 'crash.functions'] as const;
/** Rounds per read-back query (keeps each answer small). */
const ROUNDS_PER_BLOCK = 25;

export type KillMode = 'after-growth' | 'mid-request' | 'checkpoint';
const MODES: readonly KillMode[] = ['after-growth', 'mid-request', 'checkpoint'];

export interface CrashTestOptions {
  rounds: number;
  clients?: number;
  seed?: number;
  keep?: boolean;
  log?: (line: string) => void;
}

export interface CrashTestSummary {
  rounds: number;
  restartsFailed: number;
  ackedEvents: number;
  lostEvents: number;
  ackedChanges: number;
  lostChanges: number;
  /** Restarts that had to replay the log through the second route (src/engines/duckdb/recovery.ts). */
  recoveredStarts: number;
  kills: Record<KillMode, number>;
  /** The first lines of what each failed restart said, and each loss. */
  problems: string[];
}

interface Service {
  child: ChildProcess;
  url: string;
  stderr: () => string;
}

/** What the service acknowledged and must still have after any crash. */
interface Acked {
  /** source name → round → ids */
  events: Map<string, Map<number, string[]>>;
  endpoints: Set<string>;
  tokens: Set<string>;
  revoked: Set<string>;
  sources: Set<string>;
  /** Events still looked for. */
  count: number;
  /** Events ever acknowledged in this directory (lost ones included). */
  total: number;
}

function emptyAcked(): Acked {
  return { events: new Map(), endpoints: new Set(), tokens: new Set(), revoked: new Set(), sources: new Set(), count: 0, total: 0 };
}

/** Drops lost ids and changes from what later rounds check (ids are `source/id`). */
function forget(acked: Acked, lostEvents: string[], lostChanges: string[]): void {
  const lost = new Set(lostEvents);
  for (const [source, rounds] of acked.events) {
    for (const [round, ids] of rounds) rounds.set(round, ids.filter((id) => !lost.has(`${source}/${id}`)));
  }
  acked.count -= lostEvents.length;
  for (const line of lostChanges) {
    const id = line.split(' ')[1] as string;
    acked.endpoints.delete(id);
    acked.tokens.delete(id);
    acked.revoked.delete(id);
    acked.sources.delete(id);
  }
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

function roundPrefix(round: number): string {
  return `r${pad(round, 5)}`;
}

async function startService(dataDir: string, env: Record<string, string>): Promise<Service> {
  const child = spawnChild(dataDir, env, { private: TOKEN });
  let out = '';
  let err = '';
  child.stderr?.on('data', (d: Buffer) => {
    err += d.toString();
  });
  return new Promise<Service>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the service did not start within 90 s: ${err.slice(0, 2000)}`));
    }, 90_000);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`the service exited during start-up (${code ?? signal}): ${err.trim().slice(0, 2000)}`));
    });
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m?.[1]) {
        clearTimeout(timer);
        child.removeAllListeners('exit');
        resolve({ child, url: m[1], stderr: () => `${err}\n${out}` });
      }
    });
  });
}

async function api(url: string, method: string, p: string, body?: unknown): Promise<{ status: number; json: unknown }> {
  const init: RequestInit = { method, headers: { 'x-api-key': TOKEN } };
  if (body !== undefined) {
    init.headers = { 'x-api-key': TOKEN, 'content-type': 'application/json' };
    init.body = JSON.stringify(body);
  }
  const res = await fetch(`${url}${p}`, init);
  const text = await res.text();
  let json: unknown = null;
  try {
    json = text === '' ? null : JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: res.status, json };
}

function listOf(json: unknown): { id: string; name?: string }[] {
  if (Array.isArray(json)) return json as { id: string }[];
  const o = json as { data?: unknown; result?: unknown };
  if (Array.isArray(o?.data)) return o.data as { id: string }[];
  if (Array.isArray(o?.result)) return o.result as { id: string }[];
  return [];
}

/** One-time set-up on a fresh data directory: the data sources and one read-back endpoint each. */
async function setUp(url: string): Promise<void> {
  const existing = new Set(listOf((await api(url, 'GET', '/api/sources')).json).map((s) => s.name));
  for (const name of DATA_SOURCES) {
    if (!existing.has(name)) {
      const r = await api(url, 'POST', '/api/sources', { name });
      if (r.status !== 201 && r.status !== 200) throw new Error(`create source ${name}: ${r.status} ${JSON.stringify(r.json)}`);
    }
    const ep = await api(url, 'POST', '/api/endpoints', {
      name: verifyEndpoint(name),
      query: `select string_agg(id, ',') as ids, count(*) as n from \`${name}\` where id >= @lo and id < @hi`,
      cache_duration_seconds: 0,
      proactive_requerying_seconds: 0,
    });
    if (ep.status !== 201) throw new Error(`create endpoint for ${name}: ${ep.status} ${JSON.stringify(ep.json)}`);
  }
}

function verifyEndpoint(source: string): string {
  return `crash_ids_${source.replace(/[^a-z]/g, '_')}`;
}

/** Ids acknowledged but not readable now, and management changes acknowledged but missing. */
async function verify(url: string, acked: Acked): Promise<{ lostEvents: string[]; lostChanges: string[] }> {
  const lostEvents: string[] = [];
  for (const [source, rounds] of acked.events) {
    const blocks = new Map<number, string[]>();
    for (const [round, ids] of rounds) {
      const b = Math.floor(round / ROUNDS_PER_BLOCK);
      const list = blocks.get(b) ?? [];
      for (const id of ids) list.push(id);
      blocks.set(b, list);
    }
    for (const [b, ids] of blocks) {
      const lo = roundPrefix(b * ROUNDS_PER_BLOCK);
      const hi = roundPrefix((b + 1) * ROUNDS_PER_BLOCK);
      const r = await api(url, 'GET', `/api/endpoints/query/${verifyEndpoint(source)}?lo=${lo}&hi=${hi}`);
      if (r.status !== 200) throw new Error(`read back ${source} ${lo}..${hi}: ${r.status} ${JSON.stringify(r.json).slice(0, 300)}`);
      const row = (r.json as { result: { ids: string | null }[] }).result[0];
      const stored = new Set((row?.ids ?? '').split(','));
      for (const id of ids) if (!stored.has(id)) lostEvents.push(`${source}/${id}`);
    }
  }
  const lostChanges: string[] = [];
  const endpoints = new Set(listOf((await api(url, 'GET', '/api/endpoints')).json).map((e) => e.id));
  for (const id of acked.endpoints) if (!endpoints.has(id)) lostChanges.push(`endpoint ${id} created but missing`);
  const tokens = new Set(listOf((await api(url, 'GET', '/api/access-tokens')).json).map((t) => t.id));
  for (const id of acked.tokens) {
    if (acked.revoked.has(id)) {
      if (tokens.has(id)) lostChanges.push(`token ${id} revoked but live again`);
    } else if (!tokens.has(id)) lostChanges.push(`token ${id} created but missing`);
  }
  const sources = new Set(listOf((await api(url, 'GET', '/api/sources')).json).map((s) => s.id));
  for (const id of acked.sources) if (!sources.has(id)) lostChanges.push(`source ${id} created but missing`);
  return { lostEvents, lostChanges };
}

/** Per-source shape state shared by the clients: counters of the fields introduced so far. */
interface Shapes {
  nested: number;
  top: number;
  list: number;
}

interface BuiltRequest {
  body: unknown[];
  ids: string[];
  grows: boolean;
}

function buildRequest(rng: Rng, shapes: Shapes, round: number, client: number, seq: { n: number }): BuiltRequest {
  const n = 1 + Math.floor(rng.next() * 40);
  const body: unknown[] = [];
  const ids: string[] = [];
  let grows = false;
  const r = rng.next();
  let extra: 'nested' | 'top' | 'list' | 'conflict' | 'none' = 'none';
  if (r < 0.08) extra = 'nested';
  else if (r < 0.11) extra = 'top';
  else if (r < 0.13) extra = 'list';
  else if (r < 0.18) extra = 'conflict';
  let nestedName: string | undefined;
  if (extra === 'nested') {
    shapes.nested++;
    nestedName = `f${shapes.nested}`;
    grows = true;
  }
  if (extra === 'top') shapes.top++;
  if (extra === 'list') {
    shapes.list++;
    grows = true;
  }
  for (let i = 0; i < n; i++) {
    seq.n++;
    const id = `${roundPrefix(round)}c${client}n${pad(seq.n, 7)}`;
    ids.push(id);
    const request: Record<string, unknown> = {
      method: rng.next() < 0.7 ? 'GET' : 'POST',
      path: `/rest/v1/items/${Math.floor(rng.next() * 1000)}`,
      headers: { user_agent: 'crash-test', cf_ray: `ray${Math.floor(rng.next() * 1e9)}` },
    };
    const event: Record<string, unknown> = {
      id,
      timestamp: new Date().toISOString(),
      event_message: `crash test round ${round} client ${client} event ${seq.n}`,
      project: 'crash',
      metadata: {
        request,
        response: { status_code: rng.next() < 0.9 ? 200 : 500, duration_ms: Math.round(rng.next() * 1000) / 10 },
        items: [{ kind: 'a', size: 1 }],
      },
    };
    if (nestedName !== undefined && i === n - 1) {
      // Deeper each time in a while: metadata.request.fN, metadata.response.detail.fN, ...
      const where = shapes.nested % 3;
      if (where === 0) request[nestedName] = `v${seq.n}`;
      else if (where === 1) (event.metadata as Record<string, unknown>).response = { status_code: 200, detail: { [nestedName]: seq.n } };
      else (event.metadata as Record<string, unknown>)[`section_${nestedName}`] = { inner: { [nestedName]: true } };
    }
    if (extra === 'top' && i === 0) event[`top_${shapes.top}`] = `t${seq.n}`;
    if (extra === 'list' && i === 0) {
      (event.metadata as Record<string, unknown>).items = [{ kind: 'b', [`l${shapes.list}`]: 'x' }];
    }
    if (extra === 'conflict' && i === 0) {
      const c = rng.next();
      if (c < 0.33) (event.metadata as { response: Record<string, unknown> }).response.status_code = 'teapot';
      else if (c < 0.66) event.project = { name: 'crash', id: 7 };
      else event[`top_${Math.max(1, shapes.top)}`] = 12345;
    }
    body.push(event);
  }
  return { body, ids, grows };
}

interface RoundResult {
  acked: number;
  killedBy: KillMode;
}

async function runRound(
  svc: Service,
  dataDir: string,
  round: number,
  mode: KillMode,
  rng: Rng,
  clients: number,
  acked: Acked,
  shapes: Map<string, Shapes>,
): Promise<RoundResult> {
  let killed = false;
  let killing: Promise<void> | undefined;
  const kill = (): Promise<void> => {
    killed = true;
    killing ??= kill9(svc.child);
    return killing;
  };
  let ackedNow = 0;
  const seqs = Array.from({ length: clients }, () => ({ n: 0 }));
  const minGrowthAcks = 1 + Math.floor(rng.next() * 3);
  let growthAcks = 0;

  const ingestClient = async (client: number): Promise<void> => {
    const crng = new Rng(rng.range(0, 2 ** 31));
    while (!killed) {
      const source = DATA_SOURCES[crng.int(DATA_SOURCES.length)] as string;
      let s = shapes.get(source);
      if (s === undefined) {
        s = { nested: 0, top: 0, list: 0 };
        shapes.set(source, s);
      }
      const req = buildRequest(crng, s, round, client, seqs[client] as { n: number });
      try {
        const res = await fetch(`${svc.url}/api/logs?source_name=${encodeURIComponent(source)}`, {
          method: 'POST',
          headers: { 'x-api-key': TOKEN, 'content-type': 'application/json' },
          body: JSON.stringify(req.body),
        });
        const text = await res.text();
        if (res.status === 200) {
          let bySource = acked.events.get(source);
          if (bySource === undefined) {
            bySource = new Map();
            acked.events.set(source, bySource);
          }
          const list = bySource.get(round) ?? [];
          for (const id of req.ids) list.push(id);
          bySource.set(round, list);
          acked.count += req.ids.length;
          acked.total += req.ids.length;
          ackedNow += req.ids.length;
          if (req.grows && mode === 'after-growth' && ++growthAcks >= minGrowthAcks) await kill();
        } else if (!killed && res.status !== 503) {
          await new Promise((r) => setTimeout(r, 500));
          const serviceLog = svc.stderr().split('\n').filter((l) => /error|fail/i.test(l)).slice(-5).join('\n');
          throw new Error(`ingest answered ${res.status}: ${text.slice(0, 300)}\nservice log: ${serviceLog.slice(0, 3000)}`);
        }
      } catch (e) {
        if (killed) return;
        throw e;
      }
    }
  };

  const managementClient = async (): Promise<void> => {
    const mrng = new Rng(rng.range(0, 2 ** 31));
    let n = 0;
    const live: string[] = [];
    while (!killed) {
      await new Promise((r) => setTimeout(r, mrng.range(20, 200)));
      if (killed) return;
      n++;
      const what = mrng.int(4);
      try {
        if (what === 0) {
          const r = await api(svc.url, 'POST', '/api/endpoints', {
            name: `crash_ep_${round}_${n}`,
            query: `select count(*) as n from \`${DATA_SOURCES[0]}\``,
          });
          if (r.status === 201) acked.endpoints.add((r.json as { id: string }).id);
        } else if (what === 1) {
          const r = await api(svc.url, 'POST', '/api/access-tokens', { scopes: ['ingest'], description: `crash ${round}.${n}` });
          if (r.status === 201) {
            const id = (r.json as { id: string }).id;
            acked.tokens.add(id);
            live.push(id);
          }
        } else if (what === 2 && live.length > 0) {
          const id = live.splice(mrng.int(live.length), 1)[0] as string;
          // Until the answer arrives, the token may be gone or not: it is checked no more.
          acked.tokens.delete(id);
          const r = await api(svc.url, 'DELETE', `/api/access-tokens/${id}`);
          if (r.status === 204) {
            acked.tokens.add(id);
            acked.revoked.add(id);
          }
        } else {
          const r = await api(svc.url, 'POST', '/api/sources', { name: `crash.extra.${round}.${n}` });
          if (r.status === 201) acked.sources.add((r.json as { id: string }).id);
        }
      } catch (e) {
        if (killed) return;
        throw e;
      }
    }
  };

  const timers: NodeJS.Timeout[] = [];
  if (mode === 'mid-request') timers.push(setTimeout(() => void kill(), rng.range(100, 2500)));
  if (mode === 'after-growth') timers.push(setTimeout(() => void kill(), 6000));
  if (mode === 'checkpoint') {
    const file = path.join(dataDir, 'quarry.duckdb');
    const first = statSync(file, { throwIfNoEntry: false });
    const before = `${first?.size}:${first?.mtimeMs}`;
    const startAt = Date.now() + rng.range(50, 500);
    const poll = setInterval(() => {
      if (Date.now() < startAt) return;
      const now = statSync(file, { throwIfNoEntry: false });
      if (`${now?.size}:${now?.mtimeMs}` !== before) {
        clearInterval(poll);
        void kill();
      }
    }, 1);
    timers.push(poll);
    timers.push(setTimeout(() => void kill(), 8000));
  }
  const work = [...Array.from({ length: clients }, (_, c) => ingestClient(c)), managementClient()];
  const results = await Promise.allSettled(work);
  for (const t of timers) clearTimeout(t);
  await kill();
  const failure = results.find((r) => r.status === 'rejected');
  if (failure !== undefined) throw (failure as PromiseRejectedResult).reason;
  return { acked: ackedNow, killedBy: mode };
}

export async function runCrashTest(options: CrashTestOptions): Promise<CrashTestSummary> {
  const log = options.log ?? ((line: string) => console.log(line));
  const rng = new Rng(options.seed ?? Date.now() % 2 ** 31);
  const clients = options.clients ?? 4;
  // The modes take turns, so even a short run has each.
  const modeOffset = rng.int(MODES.length);
  const summary: CrashTestSummary = {
    rounds: 0,
    restartsFailed: 0,
    ackedEvents: 0,
    lostEvents: 0,
    ackedChanges: 0,
    lostChanges: 0,
    recoveredStarts: 0,
    kills: { 'after-growth': 0, 'mid-request': 0, checkpoint: 0 },
    problems: [],
  };
  const dirs: string[] = [];
  const newDir = async () => {
    const d = await mkdtemp(path.join(tmpdir(), 'quarry-crash-'));
    dirs.push(d);
    return d;
  };
  let dataDir = await newDir();
  let acked = emptyAcked();
  let shapes = new Map<string, Shapes>();
  let fresh = true;
  const finish = (a: Acked) => {
    summary.ackedEvents += a.total;
    summary.ackedChanges += a.endpoints.size + a.tokens.size + a.revoked.size + a.sources.size;
  };
  try {
    for (let round = 1; round <= options.rounds + 1; round++) {
      const last = round === options.rounds + 1;
      const mode = MODES[(round + modeOffset) % MODES.length] as KillMode;
      const env: Record<string, string> = mode === 'checkpoint' ? { DUCKDB_CHECKPOINT_THRESHOLD: '256KiB' } : {};
      // Every other start keeps only a dozen typed fields per source, so new fields go to the
      // overflow column (docs/INGEST.md, "Limits"): its creation and growth are killed too.
      if (round % 2 === 0) env.INGEST_MAX_TYPED_FIELDS = '12';
      const started = Date.now();
      let svc: Service;
      try {
        svc = await startService(dataDir, env);
      } catch (e) {
        summary.restartsFailed++;
        summary.lostEvents += acked.count;
        finish(acked);
        const message = ((e as Error).message.split('\n')[0] ?? '').slice(0, 400);
        summary.problems.push(`round ${round}: restart failed, ${acked.count} acknowledged events out of reach in ${dataDir}: ${message}`);
        log(`round ${round}: RESTART FAILED (${acked.count} acknowledged events out of reach): ${message}`);
        if (!options.keep) dirs.pop();
        if (!options.keep) await rm(dataDir, { recursive: true, force: true });
        dataDir = await newDir();
        acked = emptyAcked();
        shapes = new Map();
        fresh = true;
        if (last) break;
        svc = await startService(dataDir, env);
      }
      const startMs = Date.now() - started;
      const recovered = /replayed and checkpointed/.test(svc.stderr());
      if (recovered) summary.recoveredStarts++;
      if (fresh) {
        await setUp(svc.url);
        fresh = false;
      } else {
        const { lostEvents, lostChanges } = await verify(svc.url, acked);
        if (lostEvents.length > 0 || lostChanges.length > 0) {
          summary.lostEvents += lostEvents.length;
          summary.lostChanges += lostChanges.length;
          const line = `round ${round}: LOST ${lostEvents.length} acknowledged event(s) and ${lostChanges.length} change(s), e.g. ${[...lostEvents, ...lostChanges].slice(0, 3).join(', ')}`;
          summary.problems.push(line);
          log(line);
          // Count each loss once: what was lost is not looked for again.
          forget(acked, lostEvents, lostChanges);
        }
      }
      if (last) {
        await kill9(svc.child);
        break;
      }
      const result = await runRound(svc, dataDir, round, mode, rng, clients, acked, shapes);
      summary.rounds++;
      summary.kills[result.killedBy]++;
      log(
        `round ${round}/${options.rounds}: started in ${startMs} ms${recovered ? ' (log replayed by the second route)' : ''}, ` +
          `all acknowledged so far present; ${result.acked} events acknowledged this round; killed ${result.killedBy}`,
      );
    }
  } finally {
    finish(acked);
    if (!options.keep) for (const d of dirs) await rm(d, { recursive: true, force: true });
    else log(`data directories kept: ${dirs.join(' ')}`);
  }
  return summary;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      rounds: { type: 'string', default: '50' },
      clients: { type: 'string', default: '4' },
      seed: { type: 'string' },
      keep: { type: 'boolean', default: false },
      quiet: { type: 'boolean', default: false },
    },
  });
  const seed = values.seed === undefined ? Date.now() % 2 ** 31 : Number(values.seed);
  const rounds = Number(values.rounds);
  console.log(`crash test: ${rounds} rounds, ${values.clients} ingest clients, seed ${seed}`);
  const started = Date.now();
  const summary = await runCrashTest({
    rounds,
    clients: Number(values.clients),
    seed,
    keep: values.keep,
    log: values.quiet ? () => undefined : (l) => console.log(l),
  });
  console.log(
    [
      '',
      `rounds: ${summary.rounds}`,
      `kills: ${summary.kills['after-growth']} right after a 200 that grew the schema, ${summary.kills['mid-request']} mid-request, ${summary.kills.checkpoint} during a checkpoint`,
      `restarts failed: ${summary.restartsFailed} (restarts that replayed the log by the second route: ${summary.recoveredStarts})`,
      `acknowledged events: ${summary.ackedEvents}, lost: ${summary.lostEvents}`,
      `acknowledged management changes: ${summary.ackedChanges}, lost: ${summary.lostChanges}`,
      `time: ${Math.round((Date.now() - started) / 1000)} s`,
    ].join('\n'),
  );
  for (const p of summary.problems) console.log(`  ${p}`);
  process.exit(summary.restartsFailed === 0 && summary.lostEvents === 0 && summary.lostChanges === 0 ? 0 : 1);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((e: unknown) => {
    console.error('crash test failed to run:', e instanceof Error ? e.message : e);
    process.exit(2);
  });
}
