/**
 * `node --import tsx bench/clickhouse-insert.ts <variant> [batch]`: CPU per event of inserting
 * 20,000 demo edge events into one chDB table, one variant per process (run each variant several
 * times, alternating; on a shared machine CPU per event holds better than events/s). Variants:
 * `client` (the client's JSONEachRow stream), `hints` (typed path hints for the known edge paths),
 * `key` (the project leading the sorting key), `raw` / `rawkey` (chDB's byte pass-through insert),
 * `nofsync` (without fsync_after_insert). docs/SCALING.md has the figures.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createClient } from '@clickhouse/client';
import { createChdbConnection } from 'chdb/connection';
import { generateEvents } from '../src/demo/generator.ts';
import { insertSettings, sortingKey } from '../src/engines/clickhouse/ddl.ts';
import { timestampText } from '../src/engines/clickhouse/storage.ts';

const variant = process.argv[2] ?? 'client';
const batch = Number(process.argv[3] ?? 1000);
const dir = mkdtempSync(path.join(os.tmpdir(), 'quarry-ch-insert-'));
const connection = createChdbConnection({ path: dir }) as unknown as {
  chdb: { rawInsert(p: { table: string; values: Buffer; format: 'JSONEachRow'; settings: Record<string, string | number> }): Promise<unknown> };
};
const client = createClient({ connection } as unknown as Parameters<typeof createClient>[0]);
const events: Record<string, unknown>[] = [];
for (const { event } of generateEvents({
  count: 20_000,
  now: Date.now(),
  days: 1,
  sources: ['cloudflare.logs.prod'],
  projects: ['default', 'p2', 'p3', 'p4'],
})) {
  const { timestamp, event_message, id, ...fields } = event as Record<string, unknown>;
  events.push({ id: String(id ?? ''), timestamp: timestampText(BigInt(Date.parse(String(timestamp))) * 1000n), event_message: String(event_message), fields });
}
const known = ['project', 'appname', ...['method', 'path', 'search', 'url', 'host', 'protocol'].map((p) => `metadata.request.${p}`)];
const headers = ['cf_connecting_ip', 'x_real_ip', 'user_agent', 'referer', 'accept', 'x_client_info', 'x_forwarded_proto', 'host'].map(
  (h) => `metadata.request.headers.${h}`,
);
const hints = `${[...known, ...headers].map((p) => `\`${p}\` Nullable(String)`).join(', ')}, \`metadata.response.status_code\` Nullable(Int64)`;
const withKey = variant === 'key' || variant === 'rawkey';
const json = variant === 'hints' ? `JSON(${hints})` : 'JSON';
const settings =
  variant === 'nofsync'
    ? 'non_replicated_deduplication_window = 10000'
    : 'non_replicated_deduplication_window = 10000, fsync_after_insert = 1, fsync_part_directory = 1';
await client.command({
  query: `CREATE TABLE t (id String, timestamp DateTime64(6, 'UTC'), event_message Nullable(String), fields ${json}) ENGINE = MergeTree
    PARTITION BY toYYYYMMDD(timestamp) ORDER BY ${sortingKey(withKey ? 'cloudflare.logs.prod' : undefined)} SETTINGS ${settings}${withKey ? ', allow_nullable_key = 1' : ''}`,
});
const base = insertSettings({ database: 'default' });
const started = performance.now();
const cpu = process.cpuUsage();
for (let i = 0, k = 0; i < events.length; i += batch, k++) {
  const rows = events.slice(i, i + batch);
  const s = { ...base, insert_deduplication_token: `t${k}` };
  if (variant.startsWith('raw'))
    await connection.chdb.rawInsert({ table: 't', format: 'JSONEachRow', values: Buffer.from(rows.map((r) => JSON.stringify(r)).join('\n')), settings: s });
  else await client.insert({ table: 't', values: rows, format: 'JSONEachRow', clickhouse_settings: s });
}
const ms = performance.now() - started;
const used = process.cpuUsage(cpu);
const count = ((await (await client.query({ query: 'SELECT count() AS n FROM t', format: 'JSONEachRow' })).json()) as { n: number }[])[0]?.n;
console.log(
  JSON.stringify({
    variant,
    batch,
    events: count,
    eventsPerSecond: Math.round((events.length / ms) * 1000),
    cpuMicrosPerEvent: Math.round((used.user + used.system) / events.length),
    loadAverage: os.loadavg()[0],
  }),
);
await client.close();
rmSync(dir, { recursive: true, force: true });
