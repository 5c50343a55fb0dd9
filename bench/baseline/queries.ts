/**
 * The benchmark's questions written the way Logflare's BigQuery → Postgres translator writes them
 * (logflare-behaviour.md §8.3): every field read out of `body` JSONB, `t.timestamp` converted from
 * integer microseconds with `to_timestamp(...) AT TIME ZONE 'UTC'`, UNNEST joins dropped in favour
 * of JSON paths, parameters bound as `$n::text`. The typed `timestamp` column and its BRIN index
 * exist but the translated queries never touch them, as upstream.
 *
 * `usage.api-counts` does not translate upstream (issue logflare#2892: `datetime()`, `dates[0]`);
 * it is completed here by hand in the same style so the baseline has a figure at all.
 */
import type pg from 'pg';
import type { CaseId, QueryContext } from '../cases.ts';
import type { Summary } from '../stats.ts';
import { timeRuns } from '../stats.ts';
import { baselineTable } from './load.ts';

const TS = (alias: string) => `(to_timestamp((${alias}.body ->> 'timestamp')::bigint / 1000000.0) AT TIME ZONE 'UTC')`;
const CTE_TS = (alias: string) => `(to_timestamp(CAST(${alias}.timestamp::TEXT AS BIGINT) / 1000000.0) AT TIME ZONE 'UTC')`;

/** One `logs.all` CTE as translated: project first, then the optional window, newest first. */
function cte(name: string, source: string): string {
  return `${name} AS (
  SELECT (t.body -> 'timestamp') AS timestamp, (t.body -> 'id') AS id, (t.body -> 'event_message') AS event_message,
         (t.body -> 'metadata') AS metadata
  FROM ${baselineTable(source)} t
  WHERE (t.body ->> 'project') = $1::text
    AND CASE WHEN COALESCE($2::text, '') = '' THEN TRUE ELSE CAST(${TS('t')} AS timestamp) > CAST($2::text AS timestamp) END
    AND CASE WHEN COALESCE($3::text, '') = '' THEN TRUE ELSE CAST(${TS('t')} AS timestamp) <= CAST($3::text AS timestamp) END
  ORDER BY CAST(${TS('t')} AS timestamp) DESC
)`;
}

const EDGE = cte('edge_logs', 'cloudflare.logs.prod');
const POSTGRES = cte('postgres_logs', 'postgres.logs');
const status = `((metadata #>> '{response,status_code}')::jsonb #>> '{}')::numeric`;

function chart(unit: string): string {
  return `WITH ${EDGE}
SELECT date_trunc('${unit}', ${CTE_TS('t')}) AS timestamp,
  count(CASE WHEN ${status} >= 500 THEN 1 ELSE NULL END) AS error_count,
  count(CASE WHEN ${status} >= 400 AND ${status} < 500 THEN 1 ELSE NULL END) AS warning_count,
  count(CASE WHEN ${status} < 400 THEN 1 ELSE NULL END) AS ok_count
FROM edge_logs t
WHERE ${CTE_TS('t')} > $4::text::timestamp
GROUP BY 1 ORDER BY 1 ASC`;
}

function usage(): string {
  const edge = baselineTable('cloudflare.logs.prod');
  const area = (a: string) => `count(*) FILTER (WHERE (f0.body #>> '{metadata,request,path}') ~ '/${a}')`;
  return `WITH dates AS (
  SELECT CASE WHEN $1::text = 'hourly' THEN current_timestamp - interval '1 hour'
              WHEN $1::text = 'daily' THEN current_timestamp - interval '7 day'
              WHEN $1::text = 'minutely' THEN current_timestamp - interval '60 minute' END AS start
), chart_counts AS (
  SELECT CASE WHEN $1::text = 'hourly' THEN date_trunc('hour', ${TS('f0')})
              WHEN $1::text = 'daily' THEN date_trunc('day', ${TS('f0')})
              WHEN $1::text = 'minutely' THEN date_trunc('minute', ${TS('f0')}) END AS timestamp,
    ${area('rest')} AS total_rest_requests,
    ${area('storage')} AS total_storage_requests,
    ${area('auth')} AS total_auth_requests,
    ${area('realtime')} AS total_realtime_requests
  FROM dates, ${edge} f0
  WHERE ${TS('f0')} >= (dates.start AT TIME ZONE 'UTC') AND (f0.body #>> '{metadata,request,url}') ~ $2::text
  GROUP BY 1
)
SELECT chart_counts.timestamp AS timestamp,
  COALESCE(SUM(total_rest_requests), 0) AS total_rest_requests,
  COALESCE(SUM(total_storage_requests), 0) AS total_storage_requests,
  COALESCE(SUM(total_auth_requests), 0) AS total_auth_requests,
  COALESCE(SUM(total_realtime_requests), 0) AS total_realtime_requests
FROM chart_counts GROUP BY chart_counts.timestamp ORDER BY chart_counts.timestamp ASC`;
}

export function baselineQuery(id: CaseId, q: QueryContext): { text: string; values: (string | null)[] } {
  const window = [q.project, q.hourAgoIso, q.nowIso];
  const preview = (extra: string) => `WITH ${EDGE}
SELECT id, timestamp, event_message, (metadata #> '{request,method}') AS method, (metadata #> '{request,path}') AS path,
  (metadata #> '{request,search}') AS search, (metadata #> '{response,status_code}') AS status_code
FROM edge_logs ${extra}
ORDER BY timestamp DESC LIMIT 100`;
  switch (id) {
    case 'logs_all_default':
      return { text: `WITH ${EDGE}\nSELECT id, timestamp, event_message, metadata FROM edge_logs LIMIT 100`, values: [q.project, null, null] };
    case 'edge_preview':
      return { text: preview(''), values: window };
    case 'edge_preview_search':
      return { text: preview(`WHERE (event_message::jsonb #>> '{}') ~ $4::text`), values: [...window, q.search] };
    case 'postgres_preview_errors':
      return {
        text: `WITH ${POSTGRES}
SELECT timestamp, id, event_message, (metadata #> '{parsed,error_severity}') AS error_severity,
  (metadata #> '{parsed,detail}') AS detail, (metadata #> '{parsed,hint}') AS hint
FROM postgres_logs WHERE (metadata #>> '{parsed,error_severity}') IN ('ERROR', 'FATAL', 'PANIC')
ORDER BY timestamp DESC LIMIT 100`,
        values: window,
      };
    case 'count_last_hour':
      return { text: `WITH ${EDGE}\nSELECT count(*) AS count FROM edge_logs`, values: window };
    case 'chart_minute_last_hour':
      return { text: chart('minute'), values: [...window, q.hourAgoIso] };
    case 'chart_hour_24h':
      return { text: chart('hour'), values: [q.project, q.dayAgoIso, q.nowIso, q.dayAgoIso] };
    case 'single_log_by_id':
      return {
        text: `WITH ${EDGE}\nSELECT id, timestamp, event_message, metadata FROM edge_logs WHERE (cast(id as jsonb) #>> '{}') = $4::text LIMIT 1`,
        values: [q.project, null, null, q.lookupId],
      };
    case 'usage_minutely_miss':
      return { text: usage(), values: ['minutely', q.project] };
    case 'usage_hourly_miss':
      return { text: usage(), values: ['hourly', q.project] };
    case 'usage_daily_miss':
      return { text: usage(), values: ['daily', q.project] };
    case 'lql_errors_per_minute':
      return {
        text: `WITH ${EDGE}
SELECT date_trunc('minute', ${CTE_TS('t')}) AS timestamp, count(t.timestamp) AS count
FROM edge_logs t WHERE ${status} >= 500 GROUP BY 1 ORDER BY 1`,
        values: window,
      };
  }
}

export interface BaselineRun {
  results: Partial<Record<CaseId, Summary>>;
  rows: Partial<Record<CaseId, number>>;
}

export async function runBaseline(
  client: pg.Client,
  cases: readonly CaseId[],
  q: QueryContext,
  runs: number,
  log: (line: string) => void,
): Promise<BaselineRun> {
  const out: BaselineRun = { results: {}, rows: {} };
  for (const id of cases) {
    const { text, values } = baselineQuery(id, q);
    let rows = 0;
    out.results[id] = await timeRuns(
      async () => {
        const res = await client.query(text, values);
        rows = res.rowCount ?? res.rows.length;
        // One warm-up: its queries take seconds each.
      },
      runs,
      1,
      0,
    );
    out.rows[id] = rows;
    log(`  baseline ${id.padEnd(26)} p50 ${out.results[id]?.p50.toFixed(1).padStart(8)} ms  (${rows} rows)`);
  }
  return out;
}
