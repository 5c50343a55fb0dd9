/**
 * `node --import tsx bench/clickhouse-layout.ts [events]`: the measurements behind the ClickHouse
 * engine's storage choices (docs/SCALING.md), on embedded chDB with the demo generator's edge logs:
 *
 * 1. the nested fields as one `JSON` column vs typed `Tuple`/`Array` columns: insert time, bytes on
 *    disk, two Studio-like queries, and what a new nested field and a type conflict cost;
 * 2. `async_insert = 1, wait_for_async_insert = 1` with small inserts vs one client-side batch;
 * 3. which parts and granules a one-hour window and a project filter read (`EXPLAIN indexes = 1`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createClient } from '@clickhouse/client';
import { createChdbConnection } from 'chdb/connection';
import { generateEvents } from '../src/demo/generator.ts';
import { timestampText } from '../src/engines/clickhouse/storage.ts';
import type { JsonObject } from '../src/storage/event.ts';
import { inferFields } from '../src/storage/infer.ts';
import type { FieldType } from '../src/storage/schema.ts';

const N = Number(process.argv[2] ?? 200_000);
const dir = mkdtempSync(path.join(os.tmpdir(), 'quarry-ch-layout-'));
const client = createClient({ connection: createChdbConnection({ path: dir }) } as unknown as Parameters<typeof createClient>[0]);
const now = Date.UTC(2026, 10, 21, 12);

function typed(t: FieldType): string {
  switch (t.kind) {
    case 'scalar':
      return `Nullable(${{ string: 'String', int: 'Int64', float: 'Float64', bool: 'Bool', timestamp: "DateTime64(6, 'UTC')" }[t.type]})`;
    case 'list':
      return `Array(${typed(t.element)})`;
    case 'record':
      return `Tuple(${Object.entries(t.fields)
        .map(([k, v]) => `\`${k}\` ${typed(v)}`)
        .join(', ')})`;
  }
}

async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const t = performance.now();
  const r = await fn();
  return [r, performance.now() - t];
}

async function rows(sql: string): Promise<Record<string, unknown>[]> {
  const r = await client.query({ query: sql, format: 'JSONEachRow' });
  return (await r.json()) as Record<string, unknown>[];
}

async function median(sql: string, runs = 7): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) times.push((await timed(() => rows(sql)))[1]);
  times.sort((a, b) => a - b);
  return times[Math.floor(runs / 2)] as number;
}

const events: { id: string; timestamp: string; event_message: string; fields: JsonObject }[] = [];
let fields: Record<string, FieldType> | undefined;
let k = 0;
for (const { event } of generateEvents({ count: N, now, days: 3, sources: ['cloudflare.logs.prod'], projects: ['default', 'p2', 'p3', 'p4'] })) {
  const { timestamp, event_message, id, ...rest } = event as Record<string, unknown>;
  fields = inferFields(rest as JsonObject, fields);
  events.push({
    id: String(id ?? `e${k++}`),
    timestamp: timestampText(BigInt(Date.parse(String(timestamp))) * 1000n),
    event_message: String(event_message),
    fields: rest as JsonObject,
  });
}
const columns = fields ?? {};

const settings =
  'PARTITION BY toYYYYMMDD(timestamp) ORDER BY timestamp SETTINGS non_replicated_deduplication_window = 10000, fsync_after_insert = 1, fsync_part_directory = 1';
await client.command({
  query: `CREATE TABLE j (id String, timestamp DateTime64(6, 'UTC'), event_message Nullable(String), fields JSON) ENGINE = MergeTree ${settings}`,
});
const typedColumns = Object.entries(columns).map(([n, t]) => `\`${n}\` ${typed(t)}`);
await client.command({
  query: `CREATE TABLE t (id String, timestamp DateTime64(6, 'UTC'), event_message Nullable(String), ${typedColumns.join(', ')}) ENGINE = MergeTree ${settings}`,
});

const batch = 10_000;
const insertJ = async () => {
  for (let i = 0; i < events.length; i += batch) {
    await client.insert({
      table: 'j',
      values: events.slice(i, i + batch),
      format: 'JSONEachRow',
      clickhouse_settings: { input_format_try_infer_dates: 0, input_format_try_infer_datetimes: 0 },
    });
  }
};
const insertT = async () => {
  for (let i = 0; i < events.length; i += batch) {
    const values = events.slice(i, i + batch).map(({ fields: f, ...base }) => ({ ...base, ...f }));
    await client.insert({ table: 't', values, format: 'JSONEachRow', clickhouse_settings: { input_format_skip_unknown_fields: 1 } });
  }
};
const [, jInsert] = await timed(insertJ);
const [, tInsert] = await timed(insertT);
const bytes = async (table: string) => Number((await rows(`SELECT sum(bytes_on_disk) AS b FROM system.parts WHERE table = '${table}' AND active`))[0]?.b ?? 0);

const q1j =
  "SELECT CAST(fields.metadata.request.method AS Nullable(String)) AS m, count() FROM j WHERE CAST(fields.project AS Nullable(String)) = 'default' GROUP BY m";
const q1t = "SELECT metadata.request.method AS m, count() FROM t WHERE project = 'default' GROUP BY m";
const q2j =
  "SELECT count() FROM j WHERE CAST(fields.metadata.request.path AS Nullable(String)) LIKE '%/rest/%' AND CAST(fields.metadata.response.status_code AS Nullable(Int64)) >= 400";
const q2t = "SELECT count() FROM t WHERE metadata.request.path LIKE '%/rest/%' AND metadata.response.status_code >= 400";
const same1 = JSON.stringify((await rows(q1j)).map((r) => Object.values(r)).sort()) === JSON.stringify((await rows(q1t)).map((r) => Object.values(r)).sort());

// A new nested field: free for JSON (the next insert carries it); a Tuple column must be retyped.
const [, jAdd] = await timed(() =>
  client.insert({
    table: 'j',
    values: [{ id: 'x', timestamp: timestampText(BigInt(now) * 1000n), event_message: 'x', fields: { metadata: { request: { brand_new: 'v' } } } }],
    format: 'JSONEachRow',
  }),
);
const metadataType = columns.metadata as Extract<FieldType, { kind: 'record' }>;
const request = metadataType.fields.request as Extract<FieldType, { kind: 'record' }>;
const grown: FieldType = {
  kind: 'record',
  fields: { ...metadataType.fields, request: { kind: 'record', fields: { ...request.fields, brand_new: { kind: 'scalar', type: 'string' } } } },
};
const [, tAdd] = await timed(() => client.command({ query: `ALTER TABLE t MODIFY COLUMN metadata ${typed(grown)} SETTINGS mutations_sync = 2` }));
const tMutations = (await rows("SELECT count() AS n FROM system.mutations WHERE table = 't'"))[0]?.n;

// async_insert with the client waiting, 100 inserts of 100 events, vs one insert of 10,000.
await client.command({ query: `CREATE TABLE a1 AS j` });
await client.command({ query: `CREATE TABLE a2 AS j` });
const small = events.slice(0, 10_000);
const [, asyncSmall] = await timed(async () => {
  for (let i = 0; i < small.length; i += 100) {
    await client.insert({
      table: 'a1',
      values: small.slice(i, i + 100),
      format: 'JSONEachRow',
      clickhouse_settings: { async_insert: 1, wait_for_async_insert: 1 },
    });
  }
});
const [, oneBatch] = await timed(() => client.insert({ table: 'a2', values: small, format: 'JSONEachRow' }));
const partsA1 = (await rows("SELECT count() AS n FROM system.parts WHERE table = 'a1' AND active"))[0]?.n;

const explain = async (sql: string) =>
  (await rows(`EXPLAIN indexes = 1 ${sql}`)).map((r) => (typeof r === 'string' ? r : String(Object.values(r)[0]))).join('\n');
const window = await explain(`SELECT count() FROM j WHERE timestamp > fromUnixTimestamp64Micro(${(now - 3_600_000) * 1000}, 'UTC')`);
const project = await explain("SELECT count() FROM j WHERE CAST(fields.project AS Nullable(String)) = 'p4'");
const granules = (text: string) => /Granules: (\d+\/\d+)/g.exec(text.split('PrimaryKey')[1] ?? text)?.[1] ?? text.match(/Granules: \d+\/\d+/g)?.join(' → ');

const out = {
  events: N,
  json: {
    insertMs: Math.round(jInsert),
    bytesPerEvent: +((await bytes('j')) / N).toFixed(1),
    q1Ms: await median(q1j),
    q2Ms: await median(q2j),
    newFieldMs: Math.round(jAdd),
  },
  typed: {
    insertMs: Math.round(tInsert),
    bytesPerEvent: +((await bytes('t')) / N).toFixed(1),
    q1Ms: await median(q1t),
    q2Ms: await median(q2t),
    newFieldMs: Math.round(tAdd),
    mutations: tMutations,
  },
  sameAnswers: same1,
  asyncInsert100x100Ms: Math.round(asyncSmall),
  asyncInsertParts: partsA1,
  clientBatch1x10000Ms: Math.round(oneBatch),
  oneHourWindowGranules: granules(window),
  projectFilterGranules: granules(project),
};
console.log(JSON.stringify(out, null, 2));
await client.close();
rmSync(dir, { recursive: true, force: true });
