/**
 * The "limit" reference: hand-written, optimal DuckDB SQL against Quarry's own tables, in-process,
 * no HTTP. Opens the service's database file read-only after the service has stopped.
 */
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { CaseId, QueryContext } from './cases.ts';
import type { Summary } from './stats.ts';
import { timeRuns } from './stats.ts';

function lit(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}

function ident(s: string): string {
  return `"${s.replace(/"/g, '""')}"`;
}

/** Optimal DuckDB SQL per case; `edge` and `pg` are the physical tables. */
export function limitSql(id: CaseId, q: QueryContext, edge: string, pg: string): string {
  const project = lit(q.project);
  const hour = `timestamp > ${lit(q.hourAgoIso)}::TIMESTAMP AND timestamp <= ${lit(q.nowIso)}::TIMESTAMP`;
  const preview = (extra: string) => `SELECT id, timestamp, event_message, metadata.request.method AS method,
  metadata.request.path AS path, metadata.request.search AS search, metadata.response.status_code AS status_code
FROM ${edge} WHERE project = ${project} AND ${hour}${extra} ORDER BY timestamp DESC LIMIT 100`;
  const chart = (unit: string, since: string) => `SELECT date_trunc('${unit}', timestamp) AS timestamp,
  count_if(metadata.response.status_code >= 500) AS error_count,
  count_if(metadata.response.status_code >= 400 AND metadata.response.status_code < 500) AS warning_count,
  count_if(metadata.response.status_code < 400) AS ok_count
FROM ${edge} WHERE project = ${project} AND timestamp > ${lit(since)}::TIMESTAMP AND timestamp <= ${lit(q.nowIso)}::TIMESTAMP
GROUP BY 1 ORDER BY 1`;
  const usage = (unit: string, back: string) => `SELECT date_trunc('${unit}', timestamp) AS timestamp,
  count_if(contains(metadata.request.path, '/rest')) AS total_rest_requests,
  count_if(contains(metadata.request.path, '/storage')) AS total_storage_requests,
  count_if(contains(metadata.request.path, '/auth')) AS total_auth_requests,
  count_if(contains(metadata.request.path, '/realtime')) AS total_realtime_requests
FROM ${edge} WHERE timestamp >= now()::TIMESTAMP - INTERVAL ${back} AND regexp_matches(metadata.request.url, ${project})
GROUP BY 1 ORDER BY 1`;
  switch (id) {
    case 'logs_all_default':
      return `SELECT id, timestamp, event_message, metadata FROM ${edge} WHERE project = ${project} ORDER BY timestamp DESC LIMIT 100`;
    case 'edge_preview':
      return preview('');
    case 'edge_preview_search':
      return preview(` AND regexp_matches(event_message, ${lit(q.search)})`);
    case 'postgres_preview_errors':
      return `SELECT timestamp, id, event_message, metadata.parsed.error_severity AS error_severity,
  metadata.parsed.detail AS detail, metadata.parsed.hint AS hint
FROM ${pg} WHERE project = ${project} AND ${hour} AND metadata.parsed.error_severity IN ('ERROR', 'FATAL', 'PANIC')
ORDER BY timestamp DESC LIMIT 100`;
    case 'count_last_hour':
      return `SELECT count(*) AS count FROM ${edge} WHERE project = ${project} AND ${hour}`;
    case 'chart_minute_last_hour':
      return chart('minute', q.hourAgoIso);
    case 'chart_hour_24h':
      return chart('hour', q.dayAgoIso);
    case 'single_log_by_id':
      return `SELECT id, timestamp, event_message, metadata FROM ${edge} WHERE project = ${project} AND id = ${lit(q.lookupId)} LIMIT 1`;
    case 'usage_minutely_miss':
      return usage('minute', '60 MINUTE');
    case 'usage_hourly_miss':
      return usage('hour', '1 HOUR');
    case 'usage_daily_miss':
      return usage('day', '7 DAY');
    case 'lql_errors_per_minute':
      return `SELECT date_trunc('minute', timestamp) AS timestamp, count(*) AS count FROM ${edge}
WHERE project = ${project} AND ${hour} AND metadata.response.status_code >= 500 GROUP BY 1 ORDER BY 1`;
  }
}

export interface LimitRun {
  results: Partial<Record<CaseId, Summary>>;
  rows: Partial<Record<CaseId, number>>;
}

async function tableOf(conn: DuckDBConnection, source: string): Promise<string> {
  const reader = await conn.runAndReadAll(`SELECT "table" FROM quarry_metadata._quarry_sources WHERE name = ${lit(source)}`);
  const row = reader.getRows()[0];
  if (row === undefined) throw new Error(`the database has no source named ${source}`);
  return ident(String(row[0]));
}

/** Runs every case against the database file, read-only. */
export async function runLimit(databaseFile: string, cases: readonly CaseId[], q: QueryContext, runs: number, log: (line: string) => void): Promise<LimitRun> {
  const instance = await DuckDBInstance.create(databaseFile, { access_mode: 'READ_ONLY' });
  const conn = await instance.connect();
  try {
    await conn.run("SET TimeZone = 'UTC'");
    // Sources live in the metadata store's own file beside the event database.
    await conn.run(`ATTACH ${lit(path.join(path.dirname(databaseFile), 'metadata.duckdb'))} AS quarry_metadata (READ_ONLY)`);
    const edge = await tableOf(conn, 'cloudflare.logs.prod');
    const pg = await tableOf(conn, 'postgres.logs');
    const out: LimitRun = { results: {}, rows: {} };
    for (const id of cases) {
      const sql = limitSql(id, q, edge, pg);
      let rows = 0;
      out.results[id] = await timeRuns(async () => {
        const reader = await conn.runAndReadAll(sql);
        rows = reader.getRowObjectsJson().length;
      }, runs);
      out.rows[id] = rows;
      log(`  limit    ${id.padEnd(26)} p50 ${out.results[id]?.p50.toFixed(1).padStart(8)} ms  (${rows} rows)`);
    }
    return out;
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}
