/**
 * `node --import tsx bench/clickhouse-json-read.ts`: CPU per event of chDB reading 30,000 demo edge
 * events into a `JSON` column from JSONEachRow text, from RowBinary, and from Native (the rows
 * written by ClickHouse itself from a table holding them), one file each, three rounds. The
 * insert's parsing cost without the part writing: why embedded chDB inserts RowBinary
 * (src/engines/clickhouse/rows-binary.ts, docs/PERFORMANCE.md "Ingest: binary rows").
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createClient } from '@clickhouse/client';
import { createChdbConnection } from 'chdb/connection';
import { generateEvents } from '../src/demo/generator.ts';
const dir = mkdtempSync(path.join(os.tmpdir(), 'q-bin-'));
const N = 30000;
const lines: string[] = [];
for (const { event } of generateEvents({ count: N, now: Date.now(), days: 1, sources: ['cloudflare.logs.prod'], projects: ['default', 'p2'] })) {
  const { timestamp, event_message, id, ...fields } = event as Record<string, unknown>;
  lines.push(`{"id":"x","fields":${JSON.stringify(fields)}}`);
}
const connection = createChdbConnection({ path: dir });
const client = createClient({ connection } as unknown as Parameters<typeof createClient>[0]);
const file = path.join(dir, 'rows.ndjson');
writeFileSync(file, lines.join('\n'));
await client.command({ query: `CREATE TABLE src (id String, fields JSON) ENGINE = MergeTree ORDER BY id` });
await client.command({ query: `INSERT INTO src SELECT * FROM file('${file}', JSONEachRow, 'id String, fields JSON')` });
const bin = path.join(dir, 'rows.bin');
await client.command({
  query: `SELECT * FROM src INTO OUTFILE '${bin}' FORMAT RowBinary`,
  clickhouse_settings: { output_format_binary_write_json_as_string: 0 },
});
const native = path.join(dir, 'rows.native');
await client.command({ query: `SELECT * FROM src INTO OUTFILE '${native}' FORMAT Native` });
console.log('bin bytes/ev', readFileSync(bin).length / N, 'text bytes/ev', readFileSync(file).length / N);
const forms: [string, string, string][] = [
  ['text', 'JSONEachRow', file],
  ['rowbinary', 'RowBinary', bin],
  ['native', 'Native', native],
];
for (let rep = 0; rep < 3; rep++)
  for (const [name, fmt, f] of forms) {
    const cpu = process.cpuUsage();
    const t = performance.now();
    const r = await client.query({
      query: `SELECT count(), sum(isNull(fields.project)) FROM file('${f}', ${fmt}, 'id String, fields JSON')`,
      format: 'JSONEachRow',
      clickhouse_settings: { input_format_parallel_parsing: 0 },
    });
    await r.json();
    const u = process.cpuUsage(cpu);
    console.log(name.padEnd(12), (((performance.now() - t) * 1000) / N).toFixed(1), 'wall µs/ev', ((u.user + u.system) / N).toFixed(1), 'cpu µs/ev');
  }
await client.close();
rmSync(dir, { recursive: true, force: true });
