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
 * A share of the rounds (--second-share, chosen by the seeded generator) are second-instance
 * rounds, the operator's mistake of issue 19 (`npm start` twice on one DATA_DIR): while the first
 * instance serves and ingest runs, a second one is started on the same DATA_DIR with the same
 * tokens, and the kill is armed only once it is over. The second must exit by itself with a
 * non-zero status within 5 s, its stderr naming the first's PID and saying `another DATA_DIR`; no
 * file whose name holds `unreplayable` may appear in the folder meanwhile; and afterwards the first
 * must still answer /health with 200 and acknowledge ingest. A share of those (--second-kill-share)
 * instead kill -9 the second while it is still starting (if it has not exited by then), and check the
 * same of the folder and the first. Either way the first is then killed as in any other round, and
 * the next start must find everything acknowledged. Every broken rule is a problem (non-zero exit).
 *
 * A restart that fails is counted, its acknowledged events counted as lost, and the next round
 * continues in a fresh directory (the failed one is kept with --keep). Events are read back over
 * HTTP through saved endpoints, as a user would.
 *
 * Options: --rounds N (default 50) · --clients N (default 4) · --seed N · --keep · --quiet ·
 * --second-share F (share of rounds with a second instance, default 0.2) · --second-kill-share F
 * (share of those in which the second is killed with SIGKILL while starting, default 0.25).
 */
import type { ChildProcess } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
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
/** How long a second instance on a held DATA_DIR may take to give up (issue 19). */
const SECOND_EXIT_MS = 5000;

export type KillMode = 'after-growth' | 'mid-request' | 'checkpoint';
const MODES: readonly KillMode[] = ['after-growth', 'mid-request', 'checkpoint'];

export interface CrashTestOptions {
  rounds: number;
  clients?: number;
  seed?: number;
  keep?: boolean;
  /** Share of the rounds, 0..1, that start a second instance on the same DATA_DIR (default 0.2). */
  secondShare?: number;
  /** Share of those, 0..1, in which the second is killed with SIGKILL while starting (default 0.25). */
  secondKillShare?: number;
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
  /** Rounds that started a second instance on the DATA_DIR the first was serving from. */
  secondStarts: number;
  /** Second instances that exited by themselves as required: non-zero, within 5 s, naming the first's PID. */
  secondStartsRefused: number;
  /** Second instances killed with SIGKILL while still starting (before they exited by themselves). */
  secondStartsKilled: number;
  /** Second-instance rounds that broke a rule (each also in `problems`). */
  secondStartProblems: number;
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
    for (const [round, ids] of rounds)
      rounds.set(
        round,
        ids.filter((id) => !lost.has(`${source}/${id}`)),
      );
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

/** A second-instance round's plan, drawn from its own generator so other rounds stay as they were. */
interface SecondPlan {
  /** After this long into the round (and at least one acknowledged ingest) the second is started. */
  delayMs: number;
  /** Kill the second with SIGKILL this long after it was started, if it is still running then. */
  killAfterMs?: number;
}

interface SecondOutcome {
  /** `refused`: it exited by itself; `killed`: we killed it while it was starting. */
  ended: 'refused' | 'killed';
  ms: number;
  /** Each rule it or the first broke. */
  problems: string[];
}

interface RoundResult {
  acked: number;
  killedBy: KillMode;
  second?: SecondOutcome;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Names under `dir` (recursively) that hold `unreplayable`. */
function unreplayableFiles(dir: string): string[] {
  try {
    return readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((n) => n.includes('unreplayable'));
  } catch {
    // A folder vanished mid-listing (the service removes scratch folders): the next look sees it.
    return [];
  }
}

/**
 * Starts a second instance on `dataDir` while `svc` serves from it, and checks the rule of issue 19:
 * it exits by itself, non-zero, within 5 s, its stderr naming the first's PID and `another DATA_DIR`;
 * nothing named `*unreplayable*` appears; the first still answers /health and acknowledges ingest.
 * With `plan.killAfterMs` it is killed with SIGKILL at that moment if it is still starting. Never throws.
 */
async function secondInstance(svc: Service, dataDir: string, env: Record<string, string>, plan: SecondPlan, ackedSoFar: () => number): Promise<SecondOutcome> {
  const problems: string[] = [];
  const firstPid = svc.child.pid;
  const already = new Set(unreplayableFiles(dataDir));
  const appeared = new Set<string>();
  const look = () => {
    for (const n of unreplayableFiles(dataDir)) if (!already.has(n)) appeared.add(n);
  };
  // A moved-aside log stays where it was put, so a look every 25 ms (and one at the end) finds it.
  const watch = setInterval(look, 25);
  let ended: SecondOutcome['ended'] = 'refused';
  let ms = 0;
  try {
    const child = spawnChild(dataDir, env, { private: TOKEN });
    const started = Date.now();
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    const closed = new Promise<void>((r) => child.once('close', () => r()));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
      child.once('exit', (code, signal) => {
        ms = Date.now() - started;
        r({ code, signal });
      }),
    );
    let killedByUs = false;
    /** Still running at 5 s: a problem; it is then given until 20 s (to say what it was doing) unless it serves. */
    let late = false;
    let stoppedLate: string | undefined;
    const running = () => child.exitCode === null && child.signalCode === null;
    const stopLate = (why: string) => {
      if (!running()) return;
      stoppedLate = why;
      child.kill('SIGKILL');
    };
    const timers: NodeJS.Timeout[] = [];
    if (plan.killAfterMs !== undefined) {
      timers.push(
        setTimeout(() => {
          if (!running()) return;
          killedByUs = true;
          child.kill('SIGKILL');
        }, plan.killAfterMs),
      );
    }
    timers.push(
      setTimeout(() => {
        if (!running()) return;
        late = true;
        const serving = /listening on (http:\/\/\S+)/.exec(out)?.[1];
        if (serving !== undefined) stopLate(`it was serving at ${serving}; killed with SIGKILL`);
        else timers.push(setTimeout(() => stopLate(`still running at ${4 * SECOND_EXIT_MS} ms; killed with SIGKILL`), 3 * SECOND_EXIT_MS));
      }, SECOND_EXIT_MS),
    );
    const { code, signal } = await exited;
    for (const t of timers) clearTimeout(t);
    // Its output is complete once its pipes close (give them a moment at most).
    await Promise.race([closed, sleep(1000)]);
    const said = err.trim().split('\n').slice(-3).join(' | ').slice(0, 300);
    if (killedByUs && signal === 'SIGKILL') {
      ended = 'killed';
    } else if (stoppedLate !== undefined) {
      problems.push(`did not exit within ${SECOND_EXIT_MS} ms (${stoppedLate}). It said: ${said || '(nothing)'}`);
    } else {
      if (late) problems.push(`did not exit within ${SECOND_EXIT_MS} ms (it exited by itself after ${ms} ms)`);
      if (signal !== null) problems.push(`ended by ${signal} instead of exiting non-zero`);
      else if (code === 0) problems.push(`exited with status 0 (expected non-zero) after ${ms} ms. It said: ${said}`);
      if (!new RegExp(`\\bPID ${firstPid}\\b`).test(err)) problems.push(`its stderr does not name the first instance's PID ${firstPid}: ${said}`);
      if (!err.includes('another DATA_DIR')) problems.push(`its stderr does not say "another DATA_DIR": ${said}`);
    }
    // A rename or a new file just before the exit shows up a moment later at most.
    await sleep(100);
    look();
    clearInterval(watch);
    if (appeared.size > 0) problems.push(`files appeared in ${dataDir}: ${[...appeared].join(', ')}`);
    // The first must still work: /health, and at least one more acknowledged ingest.
    try {
      const health = await fetch(`${svc.url}/health`);
      const text = await health.text();
      if (health.status !== 200) problems.push(`the first instance's /health answered ${health.status} afterwards: ${text.slice(0, 200)}`);
    } catch (e) {
      problems.push(`the first instance's /health did not answer afterwards: ${(e as Error).message}`);
    }
    const before = ackedSoFar();
    const until = Date.now() + 5000;
    while (ackedSoFar() === before && Date.now() < until) await sleep(10);
    if (ackedSoFar() === before) problems.push('the first instance acknowledged no ingest within 5 s afterwards');
  } catch (e) {
    problems.push(`could not be run: ${(e as Error).message}`);
  } finally {
    clearInterval(watch);
  }
  return { ended, ms, problems };
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
  second?: { plan: SecondPlan; env: Record<string, string> },
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
  // In a second-instance round the kill waits until the second instance is over.
  let armed = false;

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
          if (req.grows && mode === 'after-growth' && armed && ++growthAcks >= minGrowthAcks) await kill();
        } else if (!killed && res.status !== 503) {
          await new Promise((r) => setTimeout(r, 500));
          const serviceLog = svc
            .stderr()
            .split('\n')
            .filter((l) => /error|fail/i.test(l))
            .slice(-5)
            .join('\n');
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
  // Drawn here, in the order they always were, so a seed gives the same rounds as before.
  const midRequestMs = mode === 'mid-request' ? rng.range(100, 2500) : 0;
  const checkpointWaitMs = mode === 'checkpoint' ? rng.range(50, 500) : 0;
  const arm = (): void => {
    armed = true;
    if (killed) return;
    if (mode === 'mid-request') timers.push(setTimeout(() => void kill(), midRequestMs));
    if (mode === 'after-growth') timers.push(setTimeout(() => void kill(), 6000));
    if (mode === 'checkpoint') {
      const file = path.join(dataDir, 'quarry.duckdb');
      const first = statSync(file, { throwIfNoEntry: false });
      const before = `${first?.size}:${first?.mtimeMs}`;
      const startAt = Date.now() + checkpointWaitMs;
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
  };
  let secondDone: Promise<SecondOutcome> | undefined;
  if (second === undefined) arm();
  else {
    const { plan, env } = second;
    secondDone = (async () => {
      await sleep(plan.delayMs);
      // Ingest is running: wait for its first 200 (a few seconds at most).
      const until = Date.now() + 5000;
      while (ackedNow === 0 && !killed && Date.now() < until) await sleep(10);
      return secondInstance(svc, dataDir, env, plan, () => ackedNow);
    })().finally(arm);
  }
  const work = [...Array.from({ length: clients }, (_, c) => ingestClient(c)), managementClient()];
  const results = await Promise.allSettled(work);
  for (const t of timers) clearTimeout(t);
  await kill();
  const secondOutcome = await secondDone;
  const failure = results.find((r) => r.status === 'rejected');
  if (failure !== undefined) throw (failure as PromiseRejectedResult).reason;
  return { acked: ackedNow, killedBy: mode, ...(secondOutcome ? { second: secondOutcome } : {}) };
}

/**
 * Which rounds start a second instance, and in which of those it is killed while starting: a
 * share of the rounds (rounded), picked by a generator of their own so the other rounds' draws stay
 * what they were for a seed.
 */
function planSecondInstances(seed: number, rounds: number, share: number, killShare: number): Map<number, SecondPlan> {
  const srng = new Rng((seed ^ 0x2ec0d1a5) >>> 0);
  const clamp = (x: number) => Math.min(1, Math.max(0, Number.isFinite(x) ? x : 0));
  const order = Array.from({ length: rounds }, (_, i) => i + 1);
  for (let i = order.length - 1; i > 0; i--) {
    const j = srng.int(i + 1);
    [order[i], order[j]] = [order[j] as number, order[i] as number];
  }
  const chosen = order.slice(0, Math.round(clamp(share) * rounds));
  const killed = new Set(chosen.slice(0, Math.round(clamp(killShare) * chosen.length)));
  const plans = new Map<number, SecondPlan>();
  for (const round of chosen) {
    const plan: SecondPlan = { delayMs: srng.range(100, 1500) };
    // While it is still loading or opening the folder (a start takes a few seconds while the first
    // one is busy); if it has exited by then, it is judged as a refusal.
    if (killed.has(round)) plan.killAfterMs = srng.range(30, 3000);
    plans.set(round, plan);
  }
  return plans;
}

export async function runCrashTest(options: CrashTestOptions): Promise<CrashTestSummary> {
  const log = options.log ?? ((line: string) => console.log(line));
  const seed = options.seed ?? Date.now() % 2 ** 31;
  const rng = new Rng(seed);
  const clients = options.clients ?? 4;
  // The modes take turns, so even a short run has each.
  const modeOffset = rng.int(MODES.length);
  const seconds = planSecondInstances(seed, options.rounds, options.secondShare ?? 0.2, options.secondKillShare ?? 0.25);
  const summary: CrashTestSummary = {
    rounds: 0,
    restartsFailed: 0,
    ackedEvents: 0,
    lostEvents: 0,
    ackedChanges: 0,
    lostChanges: 0,
    recoveredStarts: 0,
    kills: { 'after-growth': 0, 'mid-request': 0, checkpoint: 0 },
    secondStarts: 0,
    secondStartsRefused: 0,
    secondStartsKilled: 0,
    secondStartProblems: 0,
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
      const plan = seconds.get(round);
      const result = await runRound(svc, dataDir, round, mode, rng, clients, acked, shapes, plan ? { plan, env } : undefined);
      summary.rounds++;
      summary.kills[result.killedBy]++;
      let secondNote = '';
      if (result.second !== undefined) {
        const s = result.second;
        summary.secondStarts++;
        if (s.problems.length > 0) {
          summary.secondStartProblems++;
          const line = `round ${round}: SECOND INSTANCE on the same DATA_DIR (${s.ended === 'killed' ? `killed with SIGKILL while starting after ${s.ms} ms` : `ended after ${s.ms} ms`}): ${s.problems.join('; ')}`;
          summary.problems.push(line);
          log(line);
          secondNote = '; second instance on the same DATA_DIR: PROBLEMS (above)';
        } else if (s.ended === 'killed') {
          summary.secondStartsKilled++;
          secondNote = `; second instance on the same DATA_DIR killed with SIGKILL while starting (${s.ms} ms), first unharmed`;
        } else {
          summary.secondStartsRefused++;
          secondNote = `; second instance on the same DATA_DIR refused in ${s.ms} ms, first unharmed`;
        }
      }
      log(
        `round ${round}/${options.rounds}: started in ${startMs} ms${recovered ? ' (log replayed by the second route)' : ''}, ` +
          `all acknowledged so far present; ${result.acked} events acknowledged this round${secondNote}; killed ${result.killedBy}`,
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
      'second-share': { type: 'string', default: '0.2' },
      'second-kill-share': { type: 'string', default: '0.25' },
    },
  });
  const share = (name: 'second-share' | 'second-kill-share'): number => {
    const v = Number(values[name]);
    if (!Number.isFinite(v) || v < 0 || v > 1) throw new Error(`--${name} must be a number from 0 to 1, not ${values[name]}`);
    return v;
  };
  const secondShare = share('second-share');
  const secondKillShare = share('second-kill-share');
  const seed = values.seed === undefined ? Date.now() % 2 ** 31 : Number(values.seed);
  const rounds = Number(values.rounds);
  console.log(`crash test: ${rounds} rounds, ${values.clients} ingest clients, seed ${seed}`);
  const started = Date.now();
  const summary = await runCrashTest({
    rounds,
    clients: Number(values.clients),
    seed,
    keep: values.keep,
    secondShare,
    secondKillShare,
    log: values.quiet ? () => undefined : (l) => console.log(l),
  });
  console.log(
    [
      '',
      `rounds: ${summary.rounds}`,
      `kills: ${summary.kills['after-growth']} right after a 200 that grew the schema, ${summary.kills['mid-request']} mid-request, ${summary.kills.checkpoint} during a checkpoint`,
      `restarts failed: ${summary.restartsFailed} (restarts that replayed the log by the second route: ${summary.recoveredStarts})`,
      `second instances on a held DATA_DIR: ${summary.secondStarts} started, ${summary.secondStartsRefused} refused as required, ` +
        `${summary.secondStartsKilled} killed with SIGKILL while starting, ${summary.secondStartProblems} broke the rule`,
      `acknowledged events: ${summary.ackedEvents}, lost: ${summary.lostEvents}`,
      `acknowledged management changes: ${summary.ackedChanges}, lost: ${summary.lostChanges}`,
      `time: ${Math.round((Date.now() - started) / 1000)} s`,
    ].join('\n'),
  );
  for (const p of summary.problems) console.log(`  ${p}`);
  const ok = summary.restartsFailed === 0 && summary.lostEvents === 0 && summary.lostChanges === 0 && summary.secondStartProblems === 0;
  process.exit(ok ? 0 : 1);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((e: unknown) => {
    console.error('crash test failed to run:', e instanceof Error ? e.message : e);
    process.exit(2);
  });
}
