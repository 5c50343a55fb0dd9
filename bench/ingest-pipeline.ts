/**
 * Ingest throughput of the pipeline alone (no HTTP): the demo generator's events of all nine
 * sources mixed (or `--edge` for the edge source only), each request parsed from its JSON text and
 * handed over with it as the HTTP route does, durable commits. `npm run bench` measures the whole
 * service; this isolates the ingest pipeline. Prints events/s and this process's CPU per event.
 *   node --import tsx bench/ingest-pipeline.ts [events=200000] [perRequest=500] [concurrency=8] [--edge]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateBatches } from '../src/demo/generator.ts';
import { openDuckDb } from '../src/embedded-db/database.ts';
import { openDuckDbSourceStorage } from '../src/engines/duckdb/storage-open.ts';
import { parseBody } from '../src/ingest/body.ts';
import { IngestService } from '../src/ingest/pipeline.ts';

const args = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const edgeOnly = process.argv.includes('--edge');
const total = Number(args[0] ?? 200_000);
const perRequest = Number(args[1] ?? 500);
const concurrency = Number(args[2] ?? 8);
const dir = mkdtempSync(join(tmpdir(), 'quarry-bench-'));
const db = await openDuckDb({ path: join(dir, 'q.duckdb') });
const stack = await openDuckDbSourceStorage(db);
const ingest = new IngestService({ sources: stack.sources, storage: stack.storage });
const bodies: { source: { id: string; name: string }; text: string }[] = [];
const refs = new Map<string, { id: string; name: string }>();
for (const batch of generateBatches({ count: total, seed: 1, ...(edgeOnly ? { sources: ['cloudflare.logs.prod'] } : {}) }, perRequest)) {
  let ref = refs.get(batch.source);
  if (ref === undefined) {
    ref = { id: `00000000-0000-4000-8000-${String(refs.size + 1).padStart(12, '0')}`, name: batch.source };
    refs.set(batch.source, ref);
  }
  bodies.push({ source: ref, text: JSON.stringify(batch.events) });
}
const cpuBefore = process.cpuUsage();
const started = performance.now();
let next = 0;
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (next < bodies.length) {
      const body = bodies[next++] as (typeof bodies)[number];
      const { events, arrayText } = parseBody(body.text, 'json');
      await ingest.ingest(body.source, events, arrayText);
    }
  }),
);
const seconds = (performance.now() - started) / 1000;
const cpu = process.cpuUsage(cpuBefore);
const conn = await db.connect();
let count = 0;
for (const ref of refs.values()) {
  const table = stack.sources.catalog.sourceById(ref.id)?.table;
  count += Number((await conn.runAndReadAll(`SELECT count(*) FROM ${table}`)).getRows()[0]?.[0]);
}
console.log(
  `${total} events (${refs.size} sources) in ${seconds.toFixed(2)} s = ${Math.round(total / seconds)} events/s durable; cpu ${((cpu.user + cpu.system) / total).toFixed(1)} µs/event (user ${(cpu.user / total).toFixed(1)}, sys ${(cpu.system / total).toFixed(1)}) (stored ${count}, ${ingest.committedGroups} transactions, rss ${Math.round(process.memoryUsage().rss / 2 ** 20)} MiB)`,
);
await ingest.close();
await stack.close();
db.close();
rmSync(dir, { recursive: true, force: true });
