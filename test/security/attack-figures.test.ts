/**
 * Issue 20's attacks against the real service as a separate process (so its memory is the
 * service's alone), on every engine, one, two and four at once, with MEMORY_BUDGET 1 GiB: each is
 * answered with its refusal, the service answers a probe at once afterwards, and the peak RSS
 * (VmHWM, reset before each round) stays under MEMORY_BUDGET + 256 MiB. Times and peaks are
 * printed as a table for docs/API.md; only the answers and the memory bound are asserted.
 *
 *   node --import tsx --test test/security/attack-figures.test.ts
 *
 * The engines' services are processes of their own (each measured alone): they run side by side.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { engineEnv, engines } from '../support/engines.ts';
import { type ServiceProcess, spawnService } from '../support/process.ts';
import { PRIVATE_TOKEN } from '../support/tokens.ts';
import { growthBombs, queryBombs } from './query-bombs.ts';

const BUDGET_MIB = 1024;
const OVERHEAD_MIB = 256;
const ROWS = 6000;
// (and 600 rows of 60 KB, for the stored-rows result)
const SOURCE = 'cloudflare.logs.prod';
const headers = { 'x-api-key': PRIVATE_TOKEN, 'content-type': 'application/json' };

interface Attack {
  name: string;
  sql: string;
  /** Where the attack is sent: logs.all, or the wide endpoint (10,000 rows allowed). */
  endpoint: 'logs.all' | 'wide';
  statuses: readonly number[];
}

const attacks: Attack[] = [
  ...[...queryBombs, ...growthBombs].map((b): Attack => ({ name: b.name, sql: b.sql, endpoint: 'logs.all', statuses: [400] })),
  {
    // 6,000 rows of 60 KB built from the query's text: refused before it runs (a row computed for
    // every row may build 16 KiB); before, 360 MB against the response cap.
    name: 'a 360 MB result built by the query',
    sql: `select concat(event_message, '${'x'.repeat(60_000)}') as s from wide`,
    endpoint: 'wide',
    statuses: [400],
  },
  {
    // The stored rows themselves: 600 of 60 KB among 6,000 small ones, 36 MB against
    // QUERY_MAX_RESPONSE_BYTES (32 MiB at this budget); several at once may also meet the memory
    // kept for results in flight (503).
    name: 'a 36 MB result of stored rows',
    sql: 'select event_message as s from wide',
    endpoint: 'wide',
    statuses: [400, 503],
  },
];

function memoryMiB(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { rss: Math.round(kib('VmRSS') / 1024), peak: Math.round(kib('VmHWM') / 1024) };
}

/** Resets the process's VmHWM to its current RSS; false where Linux does not let us. */
function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

describe('attacks against service processes, one per engine, side by side', { concurrency: true }, () => {
  for (const engine of engines) {
    describe(`${engine}: attacks against a service process with MEMORY_BUDGET ${BUDGET_MIB} MiB (figures)`, { concurrency: 1 }, () => {
      let svc: ServiceProcess;
      let dir: string;
      let wideId: string;
      const table: string[] = [];

      async function ask(attack: Attack): Promise<{ status: number; ms: number; code: string | undefined }> {
        const started = performance.now();
        const target = attack.endpoint === 'logs.all' ? 'logs.all' : wideId;
        const r = await fetch(`${svc.url}/api/endpoints/query/${target}`, { method: 'POST', headers, body: JSON.stringify({ sql: attack.sql, project: 'a' }) });
        const body = (await r.json()) as { error?: { code: string } };
        return { status: r.status, ms: performance.now() - started, code: body.error?.code };
      }

      before(async () => {
        dir = await mkdtemp(path.join(os.tmpdir(), 'quarry-attacks-'));
        svc = await spawnService(dir, { ...engineEnv(engine), MEMORY_BUDGET: `${BUDGET_MIB}MiB`, LOG_LEVEL: 'error' });
        const now = Date.now();
        for (let i = 0; i < ROWS; i += 2000) {
          const batch = Array.from({ length: 2000 }, (_, j) => ({
            id: `own-${i + j}`,
            timestamp: new Date(now - 60_000 + i + j).toISOString(),
            message: `m${i + j}`,
            project: 'a',
          }));
          const r = await fetch(`${svc.url}/api/logs?source_name=${SOURCE}`, { method: 'POST', headers, body: JSON.stringify(batch) });
          const text = await r.text();
          assert.equal(r.status, 200, text);
        }
        for (let i = 0; i < 600; i += 100) {
          const batch = Array.from({ length: 100 }, (_, j) => ({
            id: `big-${i + j}`,
            timestamp: new Date(now - 30_000 + i + j).toISOString(),
            message: 'y'.repeat(60_000),
            project: 'a',
          }));
          const r = await fetch(`${svc.url}/api/logs?source_name=${SOURCE}`, { method: 'POST', headers, body: JSON.stringify(batch) });
          const text = await r.text();
          assert.equal(r.status, 200, text);
        }
        const created = await fetch(`${svc.url}/api/endpoints`, {
          method: 'POST',
          headers,
          body: JSON.stringify({
            name: 'attacks.wide',
            query: `with wide as (select event_message, timestamp from \`${SOURCE}\`) select event_message from wide`,
            sandboxable: true,
            max_limit: 10_000,
          }),
        });
        const text = await created.text();
        assert.ok(created.ok, text);
        wideId = (JSON.parse(text) as { id: string }).id;
      });

      after(async () => {
        console.log(`# ${engine}, MEMORY_BUDGET ${BUDGET_MIB} MiB, ${ROWS} rows; at once → answers, slowest answer, probe after, peak RSS (MiB)`);
        for (const line of table) console.log(`# ${line}`);
        await svc?.kill9();
        if (dir) await rm(dir, { recursive: true, force: true });
      });

      for (const attack of attacks) {
        test(`${attack.name}: 1, 2 and 4 at once`, async () => {
          const cells: string[] = [];
          const over: string[] = [];
          for (const n of [1, 2, 4]) {
            const start = memoryMiB(svc.child.pid as number);
            const reset = resetPeak(svc.child.pid as number);
            const answers = await Promise.all(Array.from({ length: n }, () => ask(attack)));
            const probeStart = performance.now();
            const probe = await fetch(`${svc.url}/api/endpoints/query/logs.all?sql=${encodeURIComponent('select count(*) as n from edge_logs')}&project=a`, {
              headers,
            });
            const probeMs = performance.now() - probeStart;
            const { peak } = memoryMiB(svc.child.pid as number);
            for (const a of answers) assert.ok(attack.statuses.includes(a.status), `${attack.name}: ${a.status} ${a.code}`);
            assert.equal(probe.status, 200);
            if (reset && peak >= BUDGET_MIB + OVERHEAD_MIB) over.push(`×${n}: peak RSS ${peak} MiB`);
            const slowest = Math.max(...answers.map((a) => a.ms));
            const statuses = [...new Set(answers.map((a) => `${a.status}${a.code ? ` ${a.code}` : ''}`))].join(' / ');
            cells.push(`×${n}: ${statuses}, ${slowest.toFixed(0)} ms, probe ${probeMs.toFixed(0)} ms, peak ${reset ? peak : '?'} (from ${start.rss})`);
          }
          table.push(`${attack.name} | ${cells.join(' | ')}`);
          assert.deepEqual(over, [], `${attack.name} went past MEMORY_BUDGET + ${OVERHEAD_MIB} MiB`);
        });
      }
    });
  }
});
