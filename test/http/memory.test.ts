/**
 * Bounded memory, measured on the real service in a child process with the default memory
 * settings: abusive caller queries (cross joins, aggregates of everything, huge string_agg and
 * array_agg, results of several MB per row) answer a clear error or a result, never a 500, and the
 * process's resident memory never passes the default budget (2 GiB) plus 512 MiB.
 *
 * The abusive queries run two at a time (the per-token limit, so neither waits in the queue), which
 * only adds to the memory they press on the service at once; the one whose answer must be
 * RESULT_TOO_LARGE runs alone, as another result being sent may make it OVERLOADED instead.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type ServiceProcess, spawnService } from '../support/process.ts';
import { PRIVATE_TOKEN } from '../support/server.ts';

const BUDGET = 2 * 2 ** 30;
let dir: string;
let service: ServiceProcess;
let peakRss = 0;
let sampler: NodeJS.Timeout | undefined;

function rssOf(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

async function post(pathAndQuery: string, body: unknown): Promise<number> {
  const r = await fetch(`${service.url}${pathAndQuery}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': PRIVATE_TOKEN },
    body: JSON.stringify(body),
  });
  await r.arrayBuffer();
  return r.status;
}

before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'quarry-memory-'));
  // Default memory settings; a shorter query limit only keeps the test quick.
  service = await spawnService(dir, { QUERY_TIMEOUT_MS: '8000' });
  const pid = service.child.pid as number;
  sampler = setInterval(() => {
    peakRss = Math.max(peakRss, rssOf(pid));
  }, 25);
  // 4,000 events of ~750 bytes: a self-join has 16M pairs, 12 GB of concatenated text.
  const statuses = await Promise.all(
    Array.from({ length: 4 }, (_, batch) => {
      const events = Array.from({ length: 1000 }, (_, i) => ({
        project: 'p',
        event_message: `${batch}-${i} ${'abcdefghij'.repeat(75)}`,
        metadata: { request: { path: `/rest/v1/t${i % 97}` } },
      }));
      return post('/api/logs?source_name=cloudflare.logs.prod', events);
    }),
  );
  assert.deepEqual(statuses, [200, 200, 200, 200]);
});

after(async () => {
  clearInterval(sampler);
  await service?.kill9();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const abusive: [string, string][] = [
  ['string_agg of a cross join', "select length(string_agg(concat(a.event_message, b.event_message), ',')) as n from edge_logs a cross join edge_logs b"],
  ['array_agg per row of a cross join', 'select a.id, array_agg(b.event_message) as l from edge_logs a cross join edge_logs b group by a.id'],
  [
    '3 MB string per row for 250 rows',
    "select a.id, string_agg(b.event_message, '') as s from (select id from edge_logs limit 250) a cross join edge_logs b group by a.id",
  ],
  [
    '3 MB string per row for 30 rows (90 MB)',
    "select a.id, string_agg(b.event_message, '') as s from (select id from edge_logs limit 30) a cross join edge_logs b group by a.id",
  ],
  ['distinct of everything', 'select count(distinct concat(a.event_message, b.id)) as n from edge_logs a cross join edge_logs b'],
  ['sort of a cross join', 'select concat(a.event_message, b.event_message) as s from edge_logs a cross join edge_logs b order by s desc limit 1000'],
];

async function abusiveQuery(name: string, sql: string): Promise<void> {
  const qs = new URLSearchParams({ project: 'p', sql });
  const started = performance.now();
  const r = await fetch(`${service.url}/api/endpoints/query/logs.all?${qs}`, { headers: { 'x-api-key': PRIVATE_TOKEN } });
  const text = await r.text();
  const ms = performance.now() - started;
  const rss = rssOf(service.child.pid as number);
  console.log(
    `${name}: ${r.status} ${text.slice(0, 160)} in ${ms.toFixed(0)} ms; peak RSS so far ${(peakRss / 2 ** 20).toFixed(0)} MiB, now ${(rss / 2 ** 20).toFixed(0)} MiB`,
  );
  assert.notEqual(r.status, 500, text.slice(0, 300));
  if (name.includes('90 MB')) {
    assert.equal(r.status, 400, text.slice(0, 300));
    assert.match(text, /RESULT_TOO_LARGE/);
    assert.match(text, /64 MiB/);
  }
  if (r.status !== 200) {
    const body = JSON.parse(text) as { error: { code: string } };
    assert.ok(['OVERLOADED', 'RESULT_TOO_LARGE', 'QUERY_TIMEOUT'].includes(body.error.code), text.slice(0, 300));
  }
  assert.ok(peakRss < BUDGET + 512 * 2 ** 20, `peak RSS ${(peakRss / 2 ** 20).toFixed(0)} MiB`);
}

const alone = (name: string) => name.includes('90 MB');

describe('abusive queries, two at a time', { concurrency: 2 }, () => {
  for (const [name, sql] of abusive.filter(([n]) => !alone(n))) {
    test(`abusive query: ${name} answers a clear status, within the memory budget`, () => abusiveQuery(name, sql));
  }
});

for (const [name, sql] of abusive.filter(([n]) => alone(n))) {
  test(`abusive query: ${name} answers a clear status, within the memory budget`, () => abusiveQuery(name, sql));
}

test('the service still answers afterwards', async () => {
  const r = await fetch(`${service.url}/api/endpoints/query/logs.all?project=p`, { headers: { 'x-api-key': PRIVATE_TOKEN } });
  assert.equal(r.status, 200);
  assert.ok(peakRss < BUDGET + 512 * 2 ** 20, `peak RSS ${(peakRss / 2 ** 20).toFixed(0)} MiB`);
});
