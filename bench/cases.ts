/**
 * The question set the benchmark asks of all three systems (Quarry over HTTP, the Logflare-layout
 * Postgres baseline, hand-written DuckDB as the limit), with the targets at 1M and 10M.
 */

export type CaseId =
  | 'logs_all_default'
  | 'edge_preview'
  | 'edge_preview_search'
  | 'postgres_preview_errors'
  | 'count_last_hour'
  | 'chart_minute_last_hour'
  | 'chart_hour_24h'
  | 'single_log_by_id'
  | 'usage_minutely_miss'
  | 'usage_hourly_miss'
  | 'usage_daily_miss'
  | 'lql_errors_per_minute';

export interface BenchCase {
  id: CaseId;
  label: string;
  /** p50 target in ms at 1M and at 10M events (undefined: no target in the issue). */
  target?: { at1M: number; at10M: number };
}

export const CASES: readonly BenchCase[] = [
  { id: 'logs_all_default', label: '`logs.all` default (newest 100 of a project)', target: { at1M: 25, at10M: 40 } },
  { id: 'edge_preview', label: 'Studio edge preview (3 UNNESTs, newest 100, last hour)', target: { at1M: 30, at10M: 50 } },
  { id: 'edge_preview_search', label: 'edge preview + `regexp_contains` search' },
  { id: 'postgres_preview_errors', label: 'postgres preview, `parsed.error_severity` filter' },
  { id: 'count_last_hour', label: 'count, last hour', target: { at1M: 10, at10M: 20 } },
  { id: 'chart_minute_last_hour', label: 'per-minute chart, last hour', target: { at1M: 25, at10M: 50 } },
  { id: 'chart_hour_24h', label: 'per-hour chart, last 24 h' },
  { id: 'single_log_by_id', label: 'single log by id', target: { at1M: 40, at10M: 60 } },
  { id: 'usage_minutely_miss', label: '`usage.api-counts` minutely, cache miss', target: { at1M: 60, at10M: 150 } },
  { id: 'usage_hourly_miss', label: '`usage.api-counts` hourly, cache miss' },
  { id: 'usage_daily_miss', label: '`usage.api-counts` daily, cache miss', target: { at1M: 150, at10M: 1500 } },
  { id: 'lql_errors_per_minute', label: '`lql` filter + chart (5xx per minute, last hour)' },
];

/** Everything a query needs to know about the data set and the moment it describes. */
export interface QueryContext {
  /** The project the questions are about. */
  project: string;
  /** Upper end of the generated data (ISO). */
  nowIso: string;
  hourAgoIso: string;
  dayAgoIso: string;
  /** An edge event id from the middle of the data, for the single-log lookup. */
  lookupId: string;
  /** Search term for the edge preview with `regexp_contains`. */
  search: string;
}

/** Studio-shaped BigQuery SQL, sent to Quarry as `sql=` on `logs.all`. */
export function studioSql(id: CaseId, q: QueryContext): string | undefined {
  const edgeJoins = 'cross join unnest(metadata) as m\n  cross join unnest(m.request) as request\n  cross join unnest(m.response) as response';
  const chart = (unit: string, since: string) => `select
  timestamp_trunc(t.timestamp, ${unit}) as timestamp,
  count(case when response.status_code >= 500 then 1 else null end) as error_count,
  count(case when response.status_code >= 400 and response.status_code < 500 then 1 else null end) as warning_count,
  count(case when response.status_code < 400 then 1 else null end) as ok_count,
from edge_logs t
  cross join unnest(t.metadata) as m
  cross join unnest(m.response) as response
where t.timestamp > '${since}'
group by timestamp
order by timestamp asc`;
  switch (id) {
    case 'edge_preview':
      return `select id, timestamp, event_message, request.method, request.path, request.search, response.status_code
from edge_logs
  ${edgeJoins}
order by timestamp desc
limit 100`;
    case 'edge_preview_search':
      return `select id, timestamp, event_message, request.method, request.path, request.search, response.status_code
from edge_logs
  ${edgeJoins}
where regexp_contains(event_message, '${q.search}')
order by timestamp desc
limit 100`;
    case 'postgres_preview_errors':
      return `select postgres_logs.timestamp, id, event_message, parsed.error_severity, parsed.detail, parsed.hint
from postgres_logs
  cross join unnest(metadata) as m
  cross join unnest(m.parsed) as parsed
where parsed.error_severity in ('ERROR', 'FATAL', 'PANIC')
order by timestamp desc
limit 100`;
    case 'count_last_hour':
      return `select count(*) as count from edge_logs\n  ${edgeJoins}`;
    case 'chart_minute_last_hour':
      return chart('minute', q.hourAgoIso);
    case 'chart_hour_24h':
      return chart('hour', q.dayAgoIso);
    case 'single_log_by_id':
      return `select id, timestamp, event_message, metadata from edge_logs where id = '${q.lookupId}' limit 1`;
    default:
      return undefined;
  }
}

/** The `logs.all` time window a case is asked with (Studio always sends one, except the lookup). */
export function windowFor(id: CaseId, q: QueryContext): { start?: string; end?: string } {
  switch (id) {
    case 'logs_all_default':
    case 'single_log_by_id':
      return {};
    case 'chart_hour_24h':
      return { start: q.dayAgoIso, end: q.nowIso };
    default:
      return { start: q.hourAgoIso, end: q.nowIso };
  }
}

export const LQL_QUERY = 'f:edge_logs m.response.status_code:>=500 c:count(*) c:group_by(t::minute)';
