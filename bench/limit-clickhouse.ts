/**
 * The ClickHouse "limit": hand-written ClickHouse SQL for each question, run on the service's own
 * chDB tables in the bench process, no HTTP, no translation, no encoding beyond the client's JSON
 * rows. chDB binds one data directory per process and the service holds its directory while it
 * runs, so the limit opens the same directory after the service has stopped (as the DuckDB limit
 * opens the service's file read-only afterwards): same parts, same layout, warmed up as the
 * service's questions are (stats.ts, timeRuns).
 */
import { createRequire } from 'node:module';
import { type ClickHouseClient, createClient } from '@clickhouse/client';
import type { CaseId, QueryContext } from './cases.ts';
import type { LimitRun } from './limit.ts';
import { timeRuns } from './stats.ts';

function lit(s: string): string {
  return `'${s.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
}

function ident(s: string): string {
  return `\`${s.replaceAll('\\', '\\\\').replaceAll('`', '\\`')}\``;
}

const str = (path: string) => `CAST(fields.${path} AS Nullable(String))`;
const int = (path: string) => `CAST(fields.${path} AS Nullable(Int64))`;
const at = (iso: string) => `parseDateTime64BestEffort(${lit(iso)}, 6, 'UTC')`;

/** Optimal ClickHouse SQL per case; `edge` and `pg` are the qualified physical tables. */
export function clickHouseLimitSql(id: CaseId, q: QueryContext, edge: string, pg: string): string {
  // The project predicate is written as the sorting key's expression, so the primary index prunes.
  const project = `${str('project')} = ${lit(q.project)}`;
  const window = (since: string) => `timestamp > ${at(since)} AND timestamp <= ${at(q.nowIso)}`;
  const preview = (extra: string) => `SELECT id, timestamp, event_message, ${str('metadata.request.method')} AS method,
  ${str('metadata.request.path')} AS path, ${str('metadata.request.search')} AS search, ${int('metadata.response.status_code')} AS status_code
FROM ${edge} WHERE ${project} AND ${window(q.hourAgoIso)}${extra} ORDER BY timestamp DESC LIMIT 100`;
  const status = int('metadata.response.status_code');
  const chart = (unit: string, since: string) => `SELECT toStartOfInterval(timestamp, INTERVAL 1 ${unit}, 'UTC') AS t,
  countIf(${status} >= 500) AS error_count,
  countIf(${status} >= 400 AND ${status} < 500) AS warning_count,
  countIf(${status} < 400) AS ok_count
FROM ${edge} WHERE ${project} AND ${window(since)}
GROUP BY t ORDER BY t`;
  const path = str('metadata.request.path');
  const usage = (bucket: string, back: string) => `SELECT ${bucket}(timestamp, 'UTC') AS t,
  countIf(position(${path}, '/rest') > 0) AS total_rest_requests,
  countIf(position(${path}, '/storage') > 0) AS total_storage_requests,
  countIf(position(${path}, '/auth') > 0) AS total_auth_requests,
  countIf(position(${path}, '/realtime') > 0) AS total_realtime_requests
FROM ${edge} WHERE timestamp >= now64(6, 'UTC') - INTERVAL ${back} AND match(${str('metadata.request.url')}, ${lit(q.project)})
GROUP BY t ORDER BY t`;
  switch (id) {
    case 'logs_all_default':
      return `SELECT id, timestamp, event_message, fields.^metadata AS metadata FROM ${edge} WHERE ${project} ORDER BY timestamp DESC LIMIT 100`;
    case 'edge_preview':
      return preview('');
    case 'edge_preview_search':
      return preview(` AND match(event_message, ${lit(q.search)})`);
    case 'postgres_preview_errors':
      return `SELECT timestamp, id, event_message, ${str('metadata.parsed.error_severity')} AS error_severity,
  ${str('metadata.parsed.detail')} AS detail, ${str('metadata.parsed.hint')} AS hint
FROM ${pg} WHERE ${project} AND ${window(q.hourAgoIso)} AND ${str('metadata.parsed.error_severity')} IN ('ERROR', 'FATAL', 'PANIC')
ORDER BY timestamp DESC LIMIT 100`;
    case 'count_last_hour':
      return `SELECT count() AS count FROM ${edge} WHERE ${project} AND ${window(q.hourAgoIso)}`;
    case 'chart_minute_last_hour':
      return chart('MINUTE', q.hourAgoIso);
    case 'chart_hour_24h':
      return chart('HOUR', q.dayAgoIso);
    case 'single_log_by_id':
      return `SELECT id, timestamp, event_message, fields.^metadata AS metadata FROM ${edge} WHERE ${project} AND id = ${lit(q.lookupId)} LIMIT 1`;
    case 'usage_minutely_miss':
      return usage('toStartOfMinute', '60 MINUTE');
    case 'usage_hourly_miss':
      return usage('toStartOfHour', '1 HOUR');
    case 'usage_daily_miss':
      return usage('toStartOfDay', '7 DAY');
    case 'lql_errors_per_minute':
      return `SELECT toStartOfMinute(timestamp, 'UTC') AS t, count() AS count FROM ${edge}
WHERE ${project} AND ${window(q.hourAgoIso)} AND ${status} >= 500 GROUP BY t ORDER BY t`;
  }
}

function chdbClient(chdbPath: string): ClickHouseClient {
  const { createChdbConnection } = createRequire(import.meta.url)('chdb/connection') as { createChdbConnection(o: { path: string }): unknown };
  return createClient({ connection: createChdbConnection({ path: chdbPath }) } as unknown as Parameters<typeof createClient>[0]);
}

async function rows(client: ClickHouseClient, query: string): Promise<Record<string, unknown>[]> {
  const result = await client.query({ query, format: 'JSONEachRow' });
  return (await result.json()) as Record<string, unknown>[];
}

/** Bytes of the active parts of Quarry's tables (the events, without chDB's own files). */
export async function clickHousePartBytes(client: ClickHouseClient, database: string): Promise<number> {
  const r = await rows(client, `SELECT sum(bytes_on_disk) AS b FROM system.parts WHERE database = ${lit(database)} AND active`);
  return Number(r[0]?.b ?? 0);
}

/** Runs every case on the chDB directory the service left behind. */
export async function runClickHouseLimit(
  chdbPath: string,
  database: string,
  cases: readonly CaseId[],
  q: QueryContext,
  runs: number,
  log: (line: string) => void,
): Promise<LimitRun & { partBytes: number }> {
  const client = chdbClient(chdbPath);
  try {
    const tableOf = async (source: string) => {
      const r = await rows(
        client,
        `SELECT table_name FROM ${ident(database)}._quarry_catalog WHERE source_name = ${lit(source)} AND deleted = 0 ORDER BY version DESC LIMIT 1`,
      );
      const table = r[0]?.table_name;
      if (typeof table !== 'string') throw new Error(`the ClickHouse database has no source named ${source}`);
      return `${ident(database)}.${ident(table)}`;
    };
    const edge = await tableOf('cloudflare.logs.prod');
    const pg = await tableOf('postgres.logs');
    const out: LimitRun & { partBytes: number } = { results: {}, rows: {}, partBytes: await clickHousePartBytes(client, database) };
    for (const id of cases) {
      const sql = clickHouseLimitSql(id, q, edge, pg);
      let n = 0;
      out.results[id] = await timeRuns(async () => {
        n = (await rows(client, sql)).length;
      }, runs);
      out.rows[id] = n;
      log(`  limit    ${id.padEnd(26)} p50 ${out.results[id]?.p50.toFixed(1).padStart(8)} ms  (${n} rows)`);
    }
    return out;
  } finally {
    await client.close();
  }
}
