/**
 * docs/API.md §1: health, bootstrap tokens (incl. LOGFLARE_API_KEY), first start seeding, restarts,
 * the generated private token, graceful shutdown. The engines run side by side, each in its own
 * order.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import { serviceArgs } from '../support/process.ts';
import { type TestServer, startTestServer, tempDataDir } from '../support/server.ts';
import { engineEnv, engines } from '../support/engines.ts';
import { repoRoot } from '../support/repo.ts';
import { SUPABASE_SOURCES, assertError, call, json, mustIngest, result, run } from './support.ts';

const SEED_LOGS_ALL = {
  name: 'logs.all',
  language: 'bq_sql',
  sandboxable: true,
  max_limit: 1000,
  cache_duration_seconds: 0,
  redact_pii: false,
  enable_auth: true,
};
const SEED_USAGE = {
  name: 'usage.api-counts',
  language: 'bq_sql',
  sandboxable: true,
  max_limit: 1000,
  cache_duration_seconds: 900,
  proactive_requerying_seconds: 300,
  redact_pii: false,
  enable_auth: true,
};

function pick(o: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.map((k) => [k, o[k]]));
}

// The engines side by side: each engine's steps stay in order (one chDB per process, and its
// restarts follow its first start), while the other engine's run beside them.
describe('every engine, side by side', { concurrency: true }, () => {
  for (const engine of engines) {
    describe(engine, { concurrency: 1 }, () => {
      // One first start (a start is most of these tests' cost): the health and seeding checks read
      // it, then the restart test makes its edits on it, stops it and starts on its folder again.
      let s: TestServer;
      before(async () => {
        s = await startTestServer({ ...engineEnv(engine), LOGFLARE_API_KEY: 'legacy-api-key-abcdef123456' });
      });
      after(() => s.close());

      describe('§1 health and seeding', () => {
        test('GET /health → 200 {"status":"ok"} without any token', async () => {
          const r = await call(s, 'GET', '/health', { token: null });
          assert.equal(r.status, 200);
          assert.deepEqual(r.body, { status: 'ok' });
        });

        test('first start creates exactly the nine Supabase sources', async () => {
          const list = (await call(s, 'GET', '/api/sources')).body as { name: string; id: string }[];
          assert.deepEqual(list.map((x) => x.name).sort(), [...SUPABASE_SOURCES].sort());
          for (const x of list) assert.match(x.id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i);
        });

        test('first start creates logs.all and usage.api-counts with the seed configuration', async () => {
          const list = (await call(s, 'GET', '/api/endpoints')).body as Record<string, unknown>[];
          assert.deepEqual(list.map((e) => e.name).sort(), ['logs.all', 'usage.api-counts']);
          const logs = list.find((e) => e.name === 'logs.all')!;
          const usage = list.find((e) => e.name === 'usage.api-counts')!;
          assert.deepEqual(pick(logs, Object.keys(SEED_LOGS_ALL)), SEED_LOGS_ALL);
          assert.deepEqual(pick(usage, Object.keys(SEED_USAGE)), SEED_USAGE);
          // Nine CTEs in logs.all, dates and chart_counts in usage.api-counts.
          for (const cte of [
            'edge_logs',
            'postgres_logs',
            'function_edge_logs',
            'function_logs',
            'auth_logs',
            'realtime_logs',
            'storage_logs',
            'postgrest_logs',
            'pgbouncer_logs',
          ]) {
            assert.match(logs.query as string, new RegExp(`\\b${cte}\\s+as\\s*\\(`, 'i'), cte);
          }
          assert.match(usage.query as string, /\bdates\s+as\s*\(/i);
          assert.match(usage.query as string, /\bchart_counts\s+as\s*\(/i);
        });

        test('LOGFLARE_API_KEY is honoured for ingest and query on every transport, not for management', async () => {
          const key = 'legacy-api-key-abcdef123456';
          // Vector's older config: ?api_key= in the URL.
          const viaUrl = await call(s, 'POST', `/api/logs?source_name=postgres.logs&api_key=${key}`, {
            body: { event_message: 'legacy', project: 'legacy' },
            token: null,
          });
          assert.equal(viaUrl.status, 200, viaUrl.text);
          assert.deepEqual(viaUrl.body, { message: 'Logged!' });
          const viaHeader = await call(s, 'POST', '/api/logs?source_name=postgres.logs', {
            body: { event_message: 'legacy2', project: 'legacy' },
            token: key,
          });
          assert.equal(viaHeader.status, 200);
          const viaBearer = await call(s, 'POST', '/logs?source_name=postgres.logs', {
            body: { event_message: 'legacy3', project: 'legacy' },
            headers: { authorization: `Bearer ${key}` },
            token: null,
          });
          assert.equal(viaBearer.status, 200);

          const q = await run(s, 'logs.all', { project: 'legacy', sql: 'select event_message from postgres_logs', api_key: key }, { token: null });
          assert.deepEqual(
            result(q)
              .map((r) => r.event_message)
              .sort(),
            ['legacy', 'legacy2', 'legacy3'],
          );
          assertError(await call(s, 'GET', '/api/endpoints', { token: key }), 403, 'FORBIDDEN');
          assertError(await call(s, 'GET', '/api/access-tokens', { token: key }), 403, 'FORBIDDEN');
        });
      });

      describe('§1 restarts never duplicate or overwrite the seeded sources and endpoints', () => {
        test('edits to the seeded endpoints and sources survive a restart; ids are stable', async () => {
          // The first start, after the seeding checks above (its folder is removed by s.close()).
          const first = s;
          const dir = s.dataDir;
          const sources1 = (await call(first, 'GET', '/api/sources')).body as { id: string; name: string }[];
          const eps1 = (await call(first, 'GET', '/api/endpoints')).body as Record<string, unknown>[];
          const logs = eps1.find((e) => e.name === 'logs.all')!;
          const usage = eps1.find((e) => e.name === 'usage.api-counts')!;
          const myQuery = 'with edge_logs as (select t.id, t.timestamp from `cloudflare.logs.prod` as t) select id from edge_logs';
          const patched = await call(first, 'PATCH', `/api/endpoints/${logs.id}`, {
            body: { query: myQuery, description: 'mine', max_limit: 7 },
          });
          assert.equal(patched.status, 200, patched.text);
          const patchedUsage = await call(first, 'PATCH', `/api/endpoints/${usage.id}`, { body: { cache_duration_seconds: 5 } });
          assert.equal(patchedUsage.status, 200, patchedUsage.text);
          const pg = sources1.find((x) => x.name === 'postgres.logs')!;
          assert.equal((await call(first, 'PATCH', `/api/sources/${pg.id}`, { body: { retention_days: 3 } })).status, 200);
          await mustIngest(first, 'postgres.logs', [{ event_message: 'before restart', project: 'r' }]);
          await first.stop();

          for (let round = 0; round < 2; round++) {
            const again = await startTestServer(engineEnv(engine), dir);
            try {
              const sources = (await call(again, 'GET', '/api/sources')).body as { id: string; name: string; retention_days: number }[];
              assert.equal(sources.length, 9);
              assert.deepEqual(sources.map((x) => `${x.name}=${x.id}`).sort(), sources1.map((x) => `${x.name}=${x.id}`).sort());
              assert.equal(sources.find((x) => x.name === 'postgres.logs')?.retention_days, 3);
              const eps = (await call(again, 'GET', '/api/endpoints')).body as Record<string, unknown>[];
              assert.equal(eps.length, 2);
              const l = eps.find((e) => e.name === 'logs.all')!;
              assert.equal(l.id, logs.id);
              assert.equal(l.query, myQuery);
              assert.equal(l.description, 'mine');
              assert.equal(l.max_limit, 7);
              assert.equal(eps.find((e) => e.name === 'usage.api-counts')?.cache_duration_seconds, 5);
              const kept = await run(again, 'logs.all', { project: 'r', sql: 'select id from edge_logs' });
              assert.equal(kept.status, 200, kept.text);
            } finally {
              await again.stop();
            }
          }
        });
      });

      /** Runs the service (`npm start`'s `node dist/src/quarry.mjs`) with all its output captured. */
      function spawnMain(dataDir: string, env: Record<string, string>) {
        const child: ChildProcess = spawn(process.execPath, serviceArgs(), {
          cwd: repoRoot,
          stdio: ['ignore', 'pipe', 'pipe'],
          env: { ...process.env, NODE_TEST_CONTEXT: undefined, PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, ...env },
        });
        let out = '';
        child.stdout?.on('data', (d: Buffer) => {
          out += d.toString();
        });
        child.stderr?.on('data', (d: Buffer) => {
          out += d.toString();
        });
        const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
        const listening = new Promise<string>((resolve, reject) => {
          const timer = setInterval(() => {
            const m = /listening on (http:\/\/[0-9.:[\]]+)/i.exec(out);
            if (m?.[1]) {
              clearInterval(timer);
              resolve(m[1]);
            }
          }, 20);
          void exited.then((code) => {
            clearInterval(timer);
            reject(new Error(`exited early (${code}): ${out}`));
          });
        });
        return { child, output: () => out, exited, listening };
      }

      describe('§1 generated private token and shutdown (real process)', () => {
        test('no private token configured: the first start prints a generated one once; SIGTERM finishes in-flight work and exits 0', async () => {
          const dir = await tempDataDir();
          try {
            const env = {
              ...(engineEnv(engine) as Record<string, string>),
              LOGFLARE_PRIVATE_ACCESS_TOKEN: '',
              LOGFLARE_PUBLIC_ACCESS_TOKEN: '',
              LOGFLARE_API_KEY: '',
              LOG_LEVEL: 'warn',
            };
            const p1 = spawnMain(dir, env);
            const url = await p1.listening;
            // Find the printed token: some long token-like word that authenticates as private.
            const candidates = [...new Set(p1.output().match(/[A-Za-z0-9_-]{24,}/g) ?? [])];
            let token: string | undefined;
            for (const c of candidates) {
              const r = await fetch(`${url}/api/sources`, { headers: { 'x-api-key': c } });
              if (r.status === 200) token = c;
            }
            assert.ok(token, `a generated private token is printed on first start:\n${p1.output()}`);

            // An in-flight ingest request when SIGTERM arrives still completes.
            const events = Array.from({ length: 20_000 }, (_, i) => ({ event_message: `shutdown ${i}`, project: 'sd', metadata: { i } }));
            const inflight = fetch(`${url}/api/logs?source_name=postgres.logs`, {
              method: 'POST',
              headers: { ...json, 'x-api-key': token },
              body: JSON.stringify(events),
            }).then(async (r) => ({ status: r.status, body: await r.text() }));
            await new Promise((r) => setTimeout(r, 30));
            const sigterm = Date.now();
            p1.child.kill('SIGTERM');
            const answered = await inflight.catch((e: Error) => ({ status: -1, body: String(e) }));
            assert.equal(answered.status, 200, `in-flight request finished: ${answered.body}`);
            // A supervisor (docker stop, systemd) gives ~10 s before SIGKILL: a clean stop must fit in it,
            // even with the (keep-alive) connection of the request that was in flight still open.
            const GRACE_MS = 10_000;
            // The grace timer is cleared once the process exits: left running, it held this test file's
            // process open for the rest of the 10 s after the tests were over.
            let grace: NodeJS.Timeout | undefined;
            const code = await Promise.race([p1.exited, new Promise<'timeout'>((r) => (grace = setTimeout(() => r('timeout'), GRACE_MS)))]);
            clearTimeout(grace);
            const tookMs = Date.now() - sigterm;
            if (code === 'timeout') {
              p1.child.kill('SIGKILL');
              await p1.exited;
            }
            const stopProblem = code === 0 ? undefined : `after SIGTERM: ${code === 'timeout' ? `still running after ${tookMs} ms` : `exit code ${code}`}`;

            const p2 = spawnMain(dir, env);
            const url2 = await p2.listening;
            try {
              assert.ok(!p2.output().includes(token), 'the token is printed only on the first start');
              const r = await fetch(`${url2}/api/sources`, { headers: { 'x-api-key': token } });
              assert.equal(r.status, 200, 'the generated token still works after a restart');
              const q = await fetch(`${url2}/api/endpoints/query/logs.all?project=sd&sql=${encodeURIComponent('select count(id) as n from postgres_logs')}`, {
                headers: { 'x-api-key': token },
              });
              assert.deepEqual(await q.json(), { result: [{ n: 20_000 }] }, 'the acknowledged request is durable');
            } finally {
              p2.child.kill('SIGKILL');
              await p2.exited;
            }
            assert.equal(stopProblem, undefined, 'SIGTERM → exit 0 within the grace period');
          } finally {
            await rm(dir, { recursive: true, force: true });
          }
        });
      });
    });
  }
});
