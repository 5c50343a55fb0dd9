/**
 * Ingest throughput of the pipeline alone (no HTTP): the demo generator's edge events, durable
 * commits. `npm run bench` measures the whole service; this isolates the ingest pipeline.
 *   node --import tsx bench/ingest-pipeline.ts [events=200000] [perRequest=500] [concurrency=8]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateEvents } from '../src/demo/generator.ts';
import { openDuckDb } from '../src/engines/duckdb/database.ts';
import { openDuckDbSourceStorage } from '../src/engines/duckdb/storage-open.ts';
import { IngestService } from '../src/ingest/pipeline.ts';

const total = Number(process.argv[2] ?? 200_000);
const perRequest = Number(process.argv[3] ?? 500);
const concurrency = Number(process.argv[4] ?? 8);
const dir = mkdtempSync(join(tmpdir(), 'quarry-bench-'));
const db = await openDuckDb({ path: join(dir, 'q.duckdb') });
const stack = await openDuckDbSourceStorage(db);
const ingest = new IngestService({ sources: stack.sources, storage: stack.storage });
const source = { id: '00000000-0000-4000-8000-000000000001', name: 'cloudflare.logs.prod' };
const events = [...generateEvents({ count: total, seed: 1, sources: ['cloudflare.logs.prod'] })].map((g) => g.event);
const bodies: string[] = [];
for (let i = 0; i < total; i += perRequest) bodies.push(JSON.stringify(events.slice(i, i + perRequest)));
const started = performance.now();
let next = 0;
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (next < bodies.length) {
      const body = bodies[next++] as string;
      await ingest.ingest(source, JSON.parse(body));
    }
  }),
);
const seconds = (performance.now() - started) / 1000;
const conn = await db.connect();
const count = (await conn.runAndReadAll(`SELECT count(*) FROM ${stack.sources.catalog.sourceById(source.id)?.table}`)).getRows()[0]?.[0];
console.log(
  `${total} events in ${seconds.toFixed(2)} s = ${Math.round(total / seconds)} events/s durable (stored ${count}, ${ingest.committedGroups} transactions, rss ${Math.round(process.memoryUsage().rss / 2 ** 20)} MiB)`,
);
await ingest.close();
await stack.close();
db.close();
rmSync(dir, { recursive: true, force: true });
