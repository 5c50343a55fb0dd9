/**
 * The bench's request bodies file: one line per request, `source<TAB>event count<TAB>JSON array`.
 * bench/run.ts writes it before the timed ingest and its client reads it back; bench/ingest-limit.ts
 * reads the same file for the ingest limit.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import readline from 'node:readline';
import type { GenerateOptions } from '../src/demo/generator.ts';
import { generateBatches } from '../src/demo/generator.ts';
import type { IngestRequest } from '../src/demo/ingest-client.ts';

/** Pre-generates the ingest bodies to a file, so the client spends no CPU generating during the timed ingest. */
export async function writeBodies(file: string, gen: GenerateOptions, batch: number): Promise<{ lookupId: string; requests: number }> {
  const out = createWriteStream(file);
  let lookupId = '';
  let written = 0;
  let requests = 0;
  const middle = Math.floor(gen.count * 0.4);
  for (const b of generateBatches(gen, batch)) {
    written += b.events.length;
    if (lookupId === '' && written >= middle && b.source === 'cloudflare.logs.prod') {
      const hit = b.events.find((e) => e.project === gen.projects?.[0]);
      if (hit !== undefined) lookupId = String(hit.id);
    }
    requests++;
    if (!out.write(`${b.source}\t${b.events.length}\t${JSON.stringify(b.events)}\n`)) {
      await new Promise<void>((r) => out.once('drain', () => r()));
    }
  }
  await new Promise<void>((resolve, reject) => out.end((e?: Error | null) => (e ? reject(e) : resolve())));
  return { lookupId, requests };
}

/** The requests of a bodies file in order, one line (one request, at most a few MB) at a time. */
export async function* readBodies(file: string): AsyncGenerator<IngestRequest> {
  const lines = readline.createInterface({ input: createReadStream(file, { highWaterMark: 1 << 20 }), crlfDelay: Number.POSITIVE_INFINITY });
  for await (const line of lines) {
    const tab1 = line.indexOf('\t');
    const tab2 = line.indexOf('\t', tab1 + 1);
    yield { source: line.slice(0, tab1), events: Number(line.slice(tab1 + 1, tab2)), body: line.slice(tab2 + 1) };
  }
}
