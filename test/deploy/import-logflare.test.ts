/**
 * `npm run import-logflare` end to end: a real PostgreSQL holding Logflare's Postgres-backend
 * layout (test/support/logflare-postgres.ts), a real Quarry on loopback, and the CLI run as a
 * child process the way a person runs it (`node --import tsx scripts/import-logflare.ts`).
 *
 * Checked: every event arrives with its id, timestamp and fields (rows read back through
 * `logs.all`); a second run adds nothing; a run killed with SIGKILL mid-way and run again ends
 * with exactly the right events and no duplicate; --since, --sources and --dry-run; bad bodies
 * are skipped and reported; the errors a person meets say what to do. The core runs on each
 * engine of test/support/engines.ts (DuckDB, and ClickHouse through chDB when installed).
 * The 50k-event import prints its rate and peak memory. The engines run side by side, each
 * one's tests in order; their Quarries start while PostgreSQL is being set up.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { freePort } from '../../bench/procs.ts';
import { runCommand } from '../../src/import/command.ts';
import type { JsonReport } from '../../src/import/report.ts';
import { type EngineName, engineEnv, engines } from '../support/engines.ts';
import { createLogflareLayout, fillPostgresLogs, type LogflareRow, type LogflareSourceFixture, logflareRows } from '../support/logflare-postgres.ts';
import { startTestPostgres, type TestPostgres } from '../support/postgres.ts';
import { PRIVATE_TOKEN, PUBLIC_TOKEN, startTestServer, type TestServer } from '../support/server.ts';
import { entryArgs, repoRoot } from '../support/repo.ts';

const root = repoRoot;
const SCHEMA = '_analytics';
const NOW = Date.now();
const BIG = 50_000;

interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  report: JsonReport | undefined;
}

function spawnCli(args: string[]): ChildProcess {
  return spawn(process.execPath, [...entryArgs('scripts/import-logflare.ts'), ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NODE_TEST_CONTEXT: undefined, LOGFLARE_PRIVATE_ACCESS_TOKEN: undefined, POSTGRES_BACKEND_URL: undefined, DATA_DIR: '/nonexistent' },
  });
}

function finished(child: ChildProcess): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      let report: JsonReport | undefined;
      try {
        report = JSON.parse(stdout) as JsonReport;
      } catch {
        report = undefined;
      }
      resolve({ code, signal, stdout, stderr, report });
    });
  });
}

/** The CLI as a child process, as a person runs it. */
const cli = (args: string[]) => finished(spawnCli(args));

/** The same command in this process (src/import/command.ts): no start-up cost. */
async function cliIn(args: string[], env: Record<string, string> = { DATA_DIR: '/nonexistent/quarry-data' }): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const sink = (add: (s: string) => void) =>
    new Writable({
      write(chunk: Buffer, _enc, done) {
        add(chunk.toString());
        done();
      },
    });
  const code = await runCommand(args, env, {
    stdout: sink((t) => {
      stdout += t;
    }),
    stderr: sink((t) => {
      stderr += t;
    }),
    tty: false,
    handleSignals: false,
  });
  let report: JsonReport | undefined;
  try {
    report = JSON.parse(stdout) as JsonReport;
  } catch {
    report = undefined;
  }
  return { code, signal: null, stdout, stderr, report };
}

function source(r: JsonReport | undefined, name: string) {
  const s = r?.sources.find((x) => x.name === name);
  assert.ok(s, `no report for ${name}`);
  return s;
}

/** An event's value as logs.all returns it: records as one-element arrays, nulls left out. */
function asRead(v: unknown): unknown {
  if (Array.isArray(v)) return v.map((e) => (e !== null && typeof e === 'object' && !Array.isArray(e) ? recordFields(e as object) : asRead(e)));
  if (v !== null && typeof v === 'object') return [recordFields(v)];
  return v;
}

function recordFields(o: object): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (v !== null) out[k] = asRead(v);
  return out;
}

interface ReadRow {
  id: string;
  timestamp: number;
  event_message: string | null;
  metadata: unknown;
}

function expectedRows(rows: LogflareRow[]): ReadRow[] {
  return rows
    .map((r) => {
      const b = r.body as { id: string; timestamp: number; event_message?: string; metadata?: unknown };
      const row: ReadRow = { id: b.id, timestamp: b.timestamp, event_message: b.event_message ?? null, metadata: asRead(b.metadata) };
      return row;
    })
    .sort((a, b) => (a.id < b.id ? -1 : 1));
}

describe('npm run import-logflare', () => {
  let pgServer: TestPostgres;
  let url = '';
  const tokenOf: Record<string, string> = {};
  const rows: Record<string, LogflareRow[]> = {};
  /** Each engine's Quarry, started while PostgreSQL is being set up. */
  const quarries = new Map<string, Promise<TestServer>>();

  before(async () => {
    for (const engine of engines) {
      const starting = startTestServer(engineEnv(engine as EngineName));
      starting.catch(() => undefined);
      quarries.set(engine, starting);
    }
    pgServer = await startTestPostgres();
    url = await pgServer.createDatabase('_supabase');
    rows['cloudflare.logs.prod'] = logflareRows('cloudflare.logs.prod', 400, { seed: 1, now: NOW });
    rows['storage.logs.prod.2'] = logflareRows('storage.logs.prod.2', 150, { seed: 2, now: NOW });
    rows['gotrue.logs.prod'] = logflareRows('gotrue.logs.prod', 150, { seed: 3, now: NOW });
    rows['realtime.logs.prod'] = logflareRows('realtime.logs.prod', 200, { seed: 4, now: NOW, days: 10 });
    rows['my-app.logs'] = logflareRows('cloudflare.logs.prod', 40, { seed: 5, now: NOW });
    rows['deno-relay-logs'] = logflareRows('deno-relay-logs', 300, { seed: 6, now: NOW });
    // 20 small events and one with 100 fields, for a Quarry that takes 50 fields per source.
    rows['wide.logs'] = Array.from({ length: 21 }, (_, i) => {
      const id = randomUUID();
      const timestampUs = BigInt(NOW - 60_000 + i * 1000) * 1000n;
      const metadata = i === 10 ? Object.fromEntries(Array.from({ length: 100 }, (_, k) => [`field_${k}`, k])) : { level: 'info', n: i };
      return { id, timestampUs, eventMessage: `event ${i}`, body: { id, timestamp: Number(timestampUs), event_message: `event ${i}`, metadata } };
    });
    // What Logflare's table may also hold: bodies that are not objects, and one too large to send.
    const bad: LogflareRow[] = [
      { id: 'not-an-object-1', timestampUs: BigInt(NOW) * 1000n, eventMessage: null, body: [1, 2, 3] },
      { id: 'not-an-object-2', timestampUs: BigInt(NOW) * 1000n + 1n, eventMessage: 'x', body: 'just text' },
      {
        id: 'too-large-1',
        timestampUs: BigInt(NOW) * 1000n + 2n,
        eventMessage: 'big',
        body: { id: 'too-large-1', timestamp: NOW * 1000 + 2, event_message: 'big', project: 'default', metadata: { blob: 'x'.repeat(1_200_000) } },
      },
    ];
    const fixtures: LogflareSourceFixture[] = [];
    for (const name of [
      'cloudflare.logs.prod',
      'storage.logs.prod.2',
      'gotrue.logs.prod',
      'realtime.logs.prod',
      'postgres.logs',
      'pgbouncer.logs.prod',
      'my-app.logs',
      'deno-relay-logs',
      'wide.logs',
    ]) {
      tokenOf[name] = randomUUID();
      const r = name === 'gotrue.logs.prod' ? [...rows[name]!, ...bad] : name === 'postgres.logs' ? [] : rows[name];
      fixtures.push({ name, token: tokenOf[name]!, rows: r });
    }
    await createLogflareLayout(url, SCHEMA, fixtures);
    await fillPostgresLogs(url, SCHEMA, tokenOf['postgres.logs']!, BIG, (BigInt(NOW) - 86_400_000n) * 1000n, 1_500_000n);
  });
  after(async () => {
    await pgServer?.stop();
    // Each engine's `after` closes its Quarry; this one is for a set-up that failed before them.
    for (const starting of quarries.values()) await (await starting.catch(() => undefined))?.close();
  });

  const CORE = ['cloudflare.logs.prod', 'storage.logs.prod.2', 'gotrue.logs.prod'];
  const CTE: Record<string, string> = {
    'cloudflare.logs.prod': 'edge_logs',
    'storage.logs.prod.2': 'storage_logs',
    'gotrue.logs.prod': 'auth_logs',
    'realtime.logs.prod': 'realtime_logs',
    'postgres.logs': 'postgres_logs',
    'deno-relay-logs': 'function_edge_logs',
  };

  // The engines side by side, each one's tests in order.
  describe('every engine, side by side', { concurrency: true }, () => {
    for (const engine of engines) {
      describe(`into Quarry on ${engine}`, { concurrency: 1 }, () => {
        let quarry: TestServer;
        const base = () => ['--from', url, '--to', quarry.url, '--token', PRIVATE_TOKEN, '--json'];

        async function sql(query: string): Promise<Record<string, unknown>[]> {
          const res = await quarry.fetch(`/api/endpoints/query/logs.all?project=default&sql=${encodeURIComponent(query)}`);
          const text = await res.text();
          assert.equal(res.status, 200, text);
          return (JSON.parse(text) as { result: Record<string, unknown>[] }).result;
        }
        const count = async (name: string) => {
          const [r] = await sql(`select count(*) as n, count(distinct id) as d from ${CTE[name]}`);
          return { n: Number(r!.n), distinct: Number(r!.d) };
        };
        const readRows = async (name: string) =>
          ((await sql(`select id, timestamp, event_message, metadata from ${CTE[name]} order by id limit 1000`)) as unknown as ReadRow[]).sort((a, b) =>
            a.id < b.id ? -1 : 1,
          );

        before(async () => {
          quarry = await (quarries.get(engine) as Promise<TestServer>);
        });
        after(async () => {
          await quarry?.close();
        });

        test('every event arrives with its id, timestamp and fields; bad bodies are skipped and named', async () => {
          const args = [...base(), '--sources', CORE.join(','), '--max-event-bytes', '1048576'];
          const r = engine === 'duckdb' ? await cli(args) : await cliIn(args);
          assert.equal(r.code, 0, r.stderr);
          for (const name of CORE) {
            const s = source(r.report, name);
            assert.equal(s.sent, rows[name]!.length, name);
            assert.equal(s.failed, 0);
            assert.deepEqual(await readRows(name), expectedRows(rows[name]!), `${name}: rows read back differ`);
          }
          const auth = source(r.report, 'gotrue.logs.prod');
          assert.equal(auth.skipped, 3);
          assert.deepEqual(auth.problems.map((p) => p.id).sort(), ['not-an-object-1', 'not-an-object-2', 'too-large-1']);
          assert.match(auth.problems.find((p) => p.id === 'too-large-1')!.reason, /over --max-event-bytes/);
          assert.match(auth.problems.find((p) => p.id === 'not-an-object-1')!.reason, /JSON array, not an object/);
          // --sources: nothing else was touched.
          assert.equal((await count('realtime.logs.prod')).n, 0);
          assert.equal((await count('postgres.logs')).n, 0);
          // The lookup endpoints are gone.
          const eps = (await (await quarry.fetch('/api/endpoints')).json()) as { name: string }[];
          assert.deepEqual(
            eps.map((e) => e.name).filter((n) => n.startsWith('import-logflare.')),
            [],
          );
        });

        test('a second run adds nothing', async () => {
          const r = await cliIn([...base(), '--sources', CORE.join(','), '--max-event-bytes', '1048576']);
          assert.equal(r.code, 0, r.stderr);
          for (const name of CORE) {
            const s = source(r.report, name);
            assert.equal(s.sent, 0, name);
            assert.equal(s.present, rows[name]!.length, name);
            assert.deepEqual(await count(name), { n: rows[name]!.length, distinct: rows[name]!.length });
          }
        });

        if (engine !== 'duckdb') return;

        test('--dry-run sends nothing; --since takes only later events; the rest follow on the next run', async () => {
          const name = 'realtime.logs.prod';
          const dry = await cliIn([...base(), '--sources', name, '--dry-run']);
          assert.equal(dry.code, 0, dry.stderr);
          assert.equal(source(dry.report, name).sent, rows[name]!.length);
          assert.equal((await count(name)).n, 0);

          const sorted = [...rows[name]!].sort((a, b) => (a.timestampUs < b.timestampUs ? -1 : 1));
          const cut = sorted[120]!.timestampUs;
          const since = new Date(Number(cut / 1000n)).toISOString();
          const later = sorted.filter((r) => r.timestampUs >= BigInt(Date.parse(since)) * 1000n);
          const r1 = await cliIn([...base(), '--sources', name, '--since', since]);
          assert.equal(r1.code, 0, r1.stderr);
          assert.equal(source(r1.report, name).total, later.length);
          assert.deepEqual(await readRows(name), expectedRows(later));

          const r2 = await cliIn([...base(), '--sources', name]);
          assert.equal(r2.code, 0, r2.stderr);
          assert.equal(source(r2.report, name).present, later.length);
          assert.equal(source(r2.report, name).sent, rows[name]!.length - later.length);
          assert.deepEqual(await readRows(name), expectedRows(rows[name]!));
        });

        test(`killed with SIGKILL mid-way, then run again: exactly ${BIG.toLocaleString('en')} events, none twice`, async () => {
          const name = 'postgres.logs';
          const args = [...base(), '--sources', name, '--batch-size', '1000', '--concurrency', '2'];
          const child = spawnCli(args);
          const done = finished(child);
          let atKill = 0;
          for (;;) {
            atKill = (await count(name)).n;
            if (atKill >= 5000 || child.exitCode !== null) break;
            await new Promise((r) => setTimeout(r, 50));
          }
          child.kill('SIGKILL');
          const killed = await done;
          assert.equal(killed.signal, 'SIGKILL', `the first run ended before it could be killed: ${killed.stderr}`);
          assert.ok(atKill < BIG, `the first run had already sent everything (${atKill})`);

          // Killed, it could not delete its lookup endpoint; the next run takes it over.
          const lookups = async () =>
            ((await (await quarry.fetch('/api/endpoints')).json()) as { name: string }[]).filter((e) => e.name.startsWith('import-logflare.')).length;
          assert.equal(await lookups(), 1);

          // SIGTERM: the batches in flight finish, the report says so, exit status 143.
          const termed = spawnCli(args);
          const termDone = finished(termed);
          for (;;) {
            const n = (await count(name)).n;
            if (n >= atKill + 3000 || termed.exitCode !== null) break;
            await new Promise((r) => setTimeout(r, 50));
          }
          termed.kill('SIGTERM');
          const term = await termDone;
          assert.equal(term.code, 143, term.stderr);
          assert.equal(term.report?.interrupted, true);
          assert.match(term.stderr, /SIGTERM: finishing the batches in flight/);
          const afterTerm = await count(name);
          assert.equal(afterTerm.n, afterTerm.distinct);
          assert.equal(await lookups(), 0);

          const again = await cli(args);
          assert.equal(again.code, 0, again.stderr);
          const s = source(again.report, name);
          assert.equal(s.present + s.sent, BIG);
          assert.equal(s.present, afterTerm.n);
          assert.deepEqual(await count(name), { n: BIG, distinct: BIG });
          const rss = again.report!.peak_rss_bytes / 1048576;
          console.log(
            `import-logflare: ${BIG.toLocaleString('en')}-event source, killed after ${atKill.toLocaleString('en')} stored, stopped by SIGTERM after ${afterTerm.n.toLocaleString('en')}; ` +
              `re-run: ${s.present.toLocaleString('en')} already there, ${s.sent.toLocaleString('en')} sent in ${(again.report!.elapsed_ms / 1000).toFixed(1)} s ` +
              `(${again.report!.events_per_second.toLocaleString('en')} events/s), peak RSS ${rss.toFixed(0)} MiB`,
          );
          // Not a timing: a table held whole would take several times this.
          assert.ok(rss < 512, `peak RSS ${rss} MiB`);
        });

        test('an ingest answer lost after Quarry stored the batch: looked up again, not sent twice', async () => {
          // A proxy that passes everything on, but loses the answers of the first two ingest requests
          // once Quarry has stored them: the first by cutting the connection, the second with a 502.
          let ingests = 0;
          const proxy = http.createServer((req, res) => {
            const chunks: Buffer[] = [];
            req.on('data', (c: Buffer) => chunks.push(c));
            req.on('end', async () => {
              const up = await fetch(`${quarry.url}${req.url}`, {
                method: req.method,
                headers: Object.fromEntries(Object.entries(req.headers).filter(([k]) => k !== 'host' && k !== 'content-length')) as Record<string, string>,
                ...(chunks.length > 0 ? { body: Buffer.concat(chunks) } : {}),
              });
              const body = Buffer.from(await up.arrayBuffer());
              if (req.url?.startsWith('/api/logs') && ++ingests <= 2) {
                assert.equal(up.status, 200);
                if (ingests === 1) return req.socket.destroy();
                res.writeHead(502).end('bad gateway');
                return;
              }
              res.writeHead(up.status, { 'content-type': up.headers.get('content-type') ?? 'application/json' }).end(body);
            });
          });
          await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
          try {
            const to = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
            const name = 'deno-relay-logs';
            const r = await cliIn([
              '--from',
              url,
              '--to',
              to,
              '--token',
              PRIVATE_TOKEN,
              '--json',
              '--sources',
              name,
              '--batch-size',
              '100',
              '--concurrency',
              '1',
              '--settle',
              '0.2',
            ]);
            assert.equal(r.code, 0, r.stderr);
            assert.ok(ingests >= 3, `${ingests} ingest requests`);
            const s = source(r.report, name);
            assert.equal(s.sent, rows[name]!.length);
            assert.equal(s.present, 0);
            assert.deepEqual(await count(name), { n: rows[name]!.length, distinct: rows[name]!.length });
          } finally {
            proxy.closeAllConnections();
            await new Promise((r) => proxy.close(r));
          }
        });

        test('events Quarry refuses are found, named and counted; the rest of their batch is stored', async () => {
          const narrow = await startTestServer({ INGEST_MAX_FIELDS: '50' });
          try {
            const r = await cliIn(['--from', url, '--to', narrow.url, '--token', PRIVATE_TOKEN, '--json', '--sources', 'wide.logs', '--create-sources']);
            assert.equal(r.code, 1, r.stderr);
            const s = source(r.report, 'wide.logs');
            assert.deepEqual([s.sent, s.failed, s.skipped], [20, 1, 0]);
            assert.equal(s.problems[0]?.id, (rows['wide.logs']![10]!.body as { id: string }).id);
            assert.match(s.problems[0]!.reason, /Quarry refused it \(400\): .*INGEST_MAX_FIELDS/);
          } finally {
            await narrow.close();
          }
        });

        test('errors say what to do', async () => {
          const closed = await freePort();
          // As a person sees them: on stderr of the command, with its exit status.
          const [unreachable, badToken] = await Promise.all([
            cli(['--from', `postgres://postgres@127.0.0.1:${closed}/_supabase`, '--to', quarry.url, '--token', PRIVATE_TOKEN]),
            cli(['--from', url, '--to', quarry.url, '--token', 'not-a-token']),
          ]);
          // The others through the same command in this process.
          const noDb = await cliIn(['--from', pgServer.url('logflare'), '--to', quarry.url, '--token', PRIVATE_TOKEN]);
          const noSchema = await cliIn(['--from', url, '--schema', 'logflare', '--to', quarry.url, '--token', PRIVATE_TOKEN]);
          const publicToken = await cliIn(['--from', url, '--to', quarry.url, '--token', PUBLIC_TOKEN]);
          const noQuarry = await cliIn(['--from', url, '--to', `http://127.0.0.1:${closed}`, '--token', PRIVATE_TOKEN]);
          const unknown = await cliIn(['--from', url, '--to', quarry.url, '--token', PRIVATE_TOKEN, '--sources', 'nope.logs']);
          const missing = await cliIn(['--from', url, '--to', quarry.url, '--token', PRIVATE_TOKEN, '--sources', 'my-app.logs']);
          const badUrl = await cliIn(['--from', 'postgres://postgres@127.0.0.1:notaport/x', '--to', quarry.url, '--token', PRIVATE_TOKEN]);
          const noToken = await cliIn(['--from', url, '--to', quarry.url]);
          const says = (r: CliResult, re: RegExp, code = 1) => {
            assert.equal(r.code, code, r.stderr);
            assert.match(r.stderr, re);
            assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
          };
          says(unreachable, /Cannot reach PostgreSQL at 127\.0\.0\.1:\d+\/_supabase as postgres \(ECONNREFUSED\)\. Check the host and port in --from/);
          says(badToken, /Quarry refused the access token \(401.*--token/);
          says(noDb, /no database .*"logflare" does not exist.*"_supabase"/);
          says(noSchema, /has no schema "logflare"\. Schemas here with a "sources" table: _analytics; pass the right one with --schema/);
          says(publicToken, /too narrow a scope \(403.*"private"/);
          says(noQuarry, /Quarry does not answer at http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\)\. Start it/);
          says(unknown, /Logflare has no source named "nope\.logs"\. Its sources: .*"my-app\.logs"/);
          says(missing, /Quarry has no source named "my-app\.logs"\. Create it first .* or run again with --create-sources/);
          says(badUrl, /--from is not a usable PostgreSQL URL|Cannot reach PostgreSQL/, badUrl.code === 2 ? 2 : 1);
          says(noToken, /No Quarry access token: pass Quarry's private token with --token/);

          const created = await cliIn([...base(), '--sources', 'my-app.logs', '--create-sources']);
          assert.equal(created.code, 0, created.stderr);
          assert.equal(source(created.report, 'my-app.logs').sent, rows['my-app.logs']!.length);
          assert.equal(source(created.report, 'my-app.logs').note, 'created in Quarry');
        });
      });
    }
  });
});
