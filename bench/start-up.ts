/**
 * `npm run bench:start`: how long the service takes from spawn to "listening on", the CPU it spent
 * until then (user + system) and its resident memory then (both from /proc), on an empty DATA_DIR:
 *
 *   node --import tsx bench/start-up.ts [--runs N] [--engine duckdb|clickhouse] [--entry FILE]…
 *
 * Each `--entry` (default: the bundle `npm start` runs, dist/src/quarry.mjs, and the module tree
 * the compiled tests import, dist/src/main.js, one file per module with shared chunks, as the
 * baseline) is started `--runs` times (default 7), the entries taking
 * turns so a change of load touches all alike; medians are printed with the ratio to the first.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { build, serviceEntry } from '../scripts/build.mjs';
import { engineDefinition } from '../src/engines/registry.ts';

interface Sample {
  ms: number;
  cpuMs: number;
  /** Resident memory once listening, MiB. */
  rssMiB: number;
}

const { values } = parseArgs({ options: { runs: { type: 'string' }, engine: { type: 'string' }, entry: { type: 'string', multiple: true } } });
const runs = Number(values.runs ?? 7);
const engine = values.engine ?? 'duckdb';
const definition = engineDefinition(engine);
if (definition === undefined) throw new Error(`--engine: no engine named ${engine}`);
build({ tests: true });
const root = path.resolve(import.meta.dirname, '..');
const entries = values.entry ?? [path.relative(root, serviceEntry), 'dist/src/main.js'];
const ticks = 100; // USER_HZ on Linux

/** Resident memory of a running process, MiB. */
function rssOf(pid: number): number {
  const kib = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kib) / 1024;
}

/** CPU milliseconds of a running process so far. */
function cpuOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticks;
}

function startOnce(entry: string): Promise<Sample> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'quarry-start-'));
  const t0 = performance.now();
  const child = spawn(process.execPath, [entry], {
    cwd: root,
    env: {
      ...process.env,
      ...definition?.selfContained.env,
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      LOGFLARE_PRIVATE_ACCESS_TOKEN: 'x'.repeat(32),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  return new Promise<Sample>((resolve, reject) => {
    child.stderr.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.on('exit', (code) => reject(new Error(`${entry} exited (${code}) before listening: ${out}`)));
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (!/listening on/.test(out)) return;
      const sample = { ms: performance.now() - t0, cpuMs: cpuOf(child.pid as number), rssMiB: rssOf(child.pid as number) };
      child.removeAllListeners('exit');
      child.once('exit', () => {
        rmSync(dataDir, { recursive: true, force: true });
        resolve(sample);
      });
      child.kill('SIGKILL');
    });
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
const samples = new Map<string, Sample[]>(entries.map((e) => [e, []]));
for (let i = 0; i < runs; i++) for (const e of entries) samples.get(e)?.push(await startOnce(e));
console.log(`start to "listening on", ${engine}, empty DATA_DIR, ${runs} runs each, medians (load average ${os.loadavg()[0]?.toFixed(2)}):`);
const first = samples.get(entries[0] as string) ?? [];
for (const [entry, s] of samples) {
  const ms = median(s.map((x) => x.ms));
  const cpu = median(s.map((x) => x.cpuMs));
  const rss = median(s.map((x) => x.rssMiB));
  const ratio = entry === entries[0] ? '' : `  (${(ms / median(first.map((x) => x.ms))).toFixed(2)}× the first)`;
  console.log(`  ${entry.padEnd(22)} ${Math.round(ms)} ms, CPU ${Math.round(cpu)} ms, RSS ${Math.round(rss)} MiB${ratio}`);
}
