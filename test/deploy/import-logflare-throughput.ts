/**
 * Measures `npm run import-logflare`: a real PostgreSQL with one Logflare source of N Kong edge
 * events (about 1 KB of JSON each), the real service started as `node --import tsx src/main.ts`,
 * and the CLI as a child process. Prints the first run (everything sent) and a second run
 * (everything already there: lookups only), with events/s and the CLI's peak RSS.
 *
 *   node --import tsx test/deploy/import-logflare-throughput.ts [--events 200000] [--engine duckdb|clickhouse]
 *        [--batch-size 2000] [--concurrency 3]
 *
 * Not part of `npm test` (its name does not end in .test.ts).
 */
import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { run } from '../../bench/procs.ts';
import type { JsonReport } from '../../src/import/report.ts';
import { createLogflareLayout, fillEdgeLogs } from '../support/logflare-postgres.ts';
import { startTestPostgres } from '../support/postgres.ts';
import { spawnService } from '../support/process.ts';
import { PRIVATE_TOKEN } from '../support/tokens.ts';

const root = path.resolve(import.meta.dirname, '../..');
const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '200000' },
    engine: { type: 'string', default: 'duckdb' },
    'batch-size': { type: 'string', default: '2000' },
    concurrency: { type: 'string', default: '3' },
  },
});
const events = Number(values.events);

/** CPU seconds (user + system) a process has used so far, from /proc. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

async function runCli(args: string[]): Promise<{ code: number; report: JsonReport; stderr: string }> {
  const { code, stdout, stderr } = await run(process.execPath, ['--import', 'tsx', path.join(root, 'scripts/import-logflare.ts'), ...args], undefined, {
    cwd: root,
    env: { ...process.env, NODE_TEST_CONTEXT: undefined },
  });
  try {
    return { code, report: JSON.parse(stdout) as JsonReport, stderr };
  } catch {
    throw new Error(`the import failed (${code}): ${stderr}`);
  }
}

const pg = await startTestPostgres();
const dataDir = await mkdtemp(path.join(os.tmpdir(), 'quarry-import-bench-'));
let service: Awaited<ReturnType<typeof spawnService>> | undefined;
try {
  const url = await pg.createDatabase('_supabase');
  const token = randomUUID();
  await createLogflareLayout(url, '_analytics', [{ name: 'cloudflare.logs.prod', token, rows: [] }]);
  const t0 = performance.now();
  await fillEdgeLogs(url, '_analytics', token, events, (BigInt(Date.now()) - 7n * 86_400_000n) * 1000n, (7n * 86_400_000_000n) / BigInt(events));
  console.log(`Logflare table: ${events.toLocaleString('en')} edge events, filled in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  service = await spawnService(dataDir, values.engine === 'clickhouse' ? { QUARRY_ENGINE: 'clickhouse', CLICKHOUSE_URL: 'chdb:' } : {});
  const args = [
    '--from',
    url,
    '--to',
    service.url,
    '--token',
    PRIVATE_TOKEN,
    '--json',
    '--batch-size',
    String(values['batch-size']),
    '--concurrency',
    String(values.concurrency),
  ];
  for (const label of ['first run (all sent)', 'second run (all already there)']) {
    const quarryCpu = cpuSeconds(service.child.pid!);
    const { code, report } = await runCli(args);
    const quarryUs = ((cpuSeconds(service.child.pid!) - quarryCpu) * 1e6) / events;
    const s = report.sources[0]!;
    console.log(
      `${label}: exit ${code}, ${s.sent.toLocaleString('en')} sent, ${s.present.toLocaleString('en')} already there, ` +
        `${(report.elapsed_ms / 1000).toFixed(1)} s, ${report.events_per_second.toLocaleString('en')} events/s, ` +
        `peak RSS ${(report.peak_rss_bytes / 1048576).toFixed(0)} MiB; CPU per event: importer ${((report.cpu_ms * 1000) / events).toFixed(0)} µs, ` +
        `Quarry ${quarryUs.toFixed(0)} µs`,
    );
  }
  console.log(
    `engine ${values.engine}, batch size ${values['batch-size']}, concurrency ${values.concurrency}, ${os.cpus().length} cores, load ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
} finally {
  await service?.kill9();
  await pg.stop();
  await rm(dataDir, { recursive: true, force: true });
}
process.exit(0);
