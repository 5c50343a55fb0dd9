/**
 * `npm run bench:footprint`: the service's memory while it ingests over HTTP, and idle before and
 * after. The real service (the bundle `npm start` runs) on an empty DATA_DIR; the demo generator's
 * events of all nine sources, sent as JSON arrays to `POST /api/logs` by `--concurrency` clients
 * (default 8); RSS (anonymous and file-backed) sampled from /proc every 50 ms, VmHWM at the end,
 * RSS `--settle` seconds (default 5) after the last request, and the service's CPU per event while
 * it ingested. Idle is read twice before the load: 2 s after "listening on", and once the service
 * has been idle `--idle` seconds (default 15): V8 gives back its young generation's pages after
 * about 8 s without work (its memory reducer), so the second is what an idle service holds.
 *
 *   node --import tsx bench/ingest-footprint.ts [--events 400000] [--batch 1000] [--concurrency 8] [--node-option=--max-old-space-size=192]…
 *
 * The environment passes through, so `DUCKDB_MEMORY_LIMIT=200MB npm run bench:footprint` measures a
 * setting. Bodies are generated before the service starts, and the client runs in this process.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { build, serviceEntry } from '../scripts/build.mjs';
import { generateBatches } from '../src/demo/generator.ts';
import { cpuMs, peakRssBytes } from './procs.ts';

const { values } = parseArgs({
  options: {
    events: { type: 'string' },
    batch: { type: 'string' },
    concurrency: { type: 'string' },
    settle: { type: 'string' },
    idle: { type: 'string' },
    'node-option': { type: 'string', multiple: true },
  },
});
const total = Number(values.events ?? 400_000);
const batch = Number(values.batch ?? 1000);
const concurrency = Number(values.concurrency ?? 8);
const settle = Number(values.settle ?? 5);
const idleSeconds = Number(values.idle ?? 15);
const bodies: { source: string; count: number; text: string }[] = [];
for (const b of generateBatches({ count: total, seed: 1 }, batch)) bodies.push({ source: b.source, count: b.events.length, text: JSON.stringify(b.events) });
build();

interface Rss {
  rss: number;
  anon: number;
  file: number;
}
function rssOf(pid: number): Rss {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) / 1024;
  return { rss: kib('VmRSS'), anon: kib('RssAnon'), file: kib('RssFile') };
}
const show = (r: Rss) => `${r.rss.toFixed(0)} MiB (anonymous ${r.anon.toFixed(0)}, files ${r.file.toFixed(0)})`;

const dir = mkdtempSync(path.join(tmpdir(), 'quarry-footprint-'));
const token = 'f'.repeat(32);
const child = spawn(process.execPath, [...(values['node-option'] ?? []), serviceEntry], {
  env: { ...process.env, PORT: '0', HOST: '127.0.0.1', DATA_DIR: dir, LOG_LEVEL: 'warn', LOGFLARE_PRIVATE_ACCESS_TOKEN: token },
  stdio: ['ignore', 'pipe', 'inherit'],
});
try {
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (\S+)/.exec(out);
      if (m) resolve(m[1] as string);
    });
    child.on('exit', (code) => reject(new Error(`the service exited (${code}) before listening`)));
  });
  const pid = child.pid as number;
  await new Promise((r) => setTimeout(r, 2000));
  const idleAtStart = rssOf(pid);
  await new Promise((r) => setTimeout(r, Math.max(0, idleSeconds - 2) * 1000));
  const idleBefore = rssOf(pid);
  let peak = idleBefore;
  const sampler = setInterval(() => {
    const r = rssOf(pid);
    if (r.rss > peak.rss) peak = r;
  }, 50);
  const started = performance.now();
  const cpuBefore = cpuMs(pid);
  let next = 0;
  let sent = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < bodies.length; i = next++) {
        const b = bodies[i] as (typeof bodies)[number];
        for (;;) {
          const r = await fetch(`${url}/api/logs?source_name=${encodeURIComponent(b.source)}`, {
            method: 'POST',
            headers: { 'x-api-key': token, 'content-type': 'application/json' },
            body: b.text,
          });
          await r.arrayBuffer();
          if (r.status === 200) break;
          if (r.status !== 503 && r.status !== 429) throw new Error(`ingest answered ${r.status}`);
          await new Promise((res) => setTimeout(res, 50));
        }
        sent += b.count;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const cpuPerEvent = ((cpuMs(pid) - cpuBefore) * 1000) / sent;
  clearInterval(sampler);
  await new Promise((r) => setTimeout(r, settle * 1000));
  const idleAfter = rssOf(pid);
  const hwm = peakRssBytes(pid) / 2 ** 20;
  console.log(
    `${sent} events in ${seconds.toFixed(1)} s = ${Math.round(sent / seconds)} events/s (${concurrency} clients × ${batch}-event bodies); the service's CPU ${cpuPerEvent.toFixed(0)} µs per event`,
  );
  console.log(`idle 2 s after start: ${show(idleAtStart)}`);
  console.log(`idle ${idleSeconds} s after start: ${show(idleBefore)}`);
  console.log(`peak sampled: ${show(peak)}; VmHWM ${hwm.toFixed(0)} MiB`);
  console.log(`idle ${settle} s after: ${show(idleAfter)}`);
} finally {
  child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
}
