/**
 * Ingest throughput of the pipeline (no HTTP): Supabase-shaped edge events, durable commits.
 *   node --import tsx test/ingest/throughput.bench.ts [events=200000] [perRequest=500] [concurrency=8]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDuckDb } from '../../src/engines/duckdb/database.ts';
import { openDuckDbSourceStorage } from '../../src/engines/duckdb/storage-open.ts';
import { IngestService } from '../../src/ingest/pipeline.ts';
import { edgeEvent } from './fixtures.ts';

const total = Number(process.argv[2] ?? 200_000);
const perRequest = Number(process.argv[3] ?? 500);
const concurrency = Number(process.argv[4] ?? 8);
const dir = mkdtempSync(join(tmpdir(), 'quarry-bench-'));
const db = await openDuckDb({ path: join(dir, 'q.duckdb') });
const stack = await openDuckDbSourceStorage(db);
const ingest = new IngestService({ sources: stack.sources, storage: stack.storage });
const source = { id: '00000000-0000-4000-8000-000000000001', name: 'cloudflare.logs.prod' };
const requests: Record<string, unknown>[][] = [];
for (let i = 0; i < total; i += perRequest) {
  requests.push(Array.from({ length: Math.min(perRequest, total - i) }, (_, j) => edgeEvent(i + j)));
}
const bodies = requests.map((r) => JSON.stringify(r));
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
