/**
 * Queries shaped like the ones Supabase Studio sends to `logs.all` (peers.md §2.1, appendix A of
 * logflare-behaviour.md): previews through UNNEST chains, counts, charts with count(CASE ...),
 * single-log lookups and keyset pagination, for each of the nine CTEs.
 */
import { type CorpusCase, rows, us } from './types.ts';

export const studioCases: CorpusCase[] = [
  // edge_logs -------------------------------------------------------------------------------
  {
    name: 'edge preview through the unnest chain (missing request.search reads NULL; the bare event without metadata drops out)',
    sql: `-- edge logs preview
select id, timestamp, event_message, request.method, request.path, request.search, response.status_code
from edge_logs
cross join unnest(metadata) as m
cross join unnest(m.request) as request
cross join unnest(m.response) as response
order by timestamp desc
limit 3;`,
    expect: rows(
      ['id', 'timestamp', 'event_message', 'method', 'path', 'search', 'status_code'],
      ['e7', us('10:05:00'), 'DELETE | 503 | 10.0.0.7 | /rest/v1/z', 'DELETE', '/rest/v1/z', null, 503],
      ['e5', us('10:04:00'), 'GET | 200 | 10.0.0.5 | /rest/v1/auth/x', 'GET', '/rest/v1/auth/x', null, 200],
      ['e4', us('10:03:00'), 'GET | 101 | 10.0.0.4 | /realtime/v1/websocket', 'GET', '/realtime/v1/websocket', null, 101],
    ),
    warnings: ['request.search'],
  },
  {
    name: 'edge count with a where on a nested field',
    sql: `SELECT count(*) as count FROM edge_logs cross join unnest(metadata) as m cross join unnest(m.response) as response where response.status_code >= 400`,
    expect: rows(['count'], [3]),
  },
  {
    name: 'edge per-minute chart with count(CASE ...) and a trailing comma',
    sql: `SELECT
  timestamp_trunc(t.timestamp, minute) as timestamp,
  count(CASE WHEN NOT (response.status_code >= 500) AND NOT (response.status_code >= 400) THEN 1 ELSE null END) as ok_count,
  count(CASE WHEN response.status_code >= 500 THEN 1 ELSE null END) as error_count,
  count(CASE WHEN response.status_code >= 400 AND response.status_code < 500 THEN 1 ELSE null END) as warning_count,
FROM edge_logs t
  cross join unnest(metadata) as m
  cross join unnest(m.response) as response
WHERE t.timestamp > '2026-11-21T10:00:30.000Z'
GROUP BY timestamp
ORDER BY timestamp ASC`,
    expect: rows(
      ['timestamp', 'ok_count', 'error_count', 'warning_count'],
      [us('10:01:00'), 0, 0, 1],
      [us('10:02:00'), 0, 1, 0],
      [us('10:03:00'), 1, 0, 0],
      [us('10:04:00'), 1, 0, 0],
      [us('10:05:00'), 0, 1, 0],
    ),
  },
  {
    name: 'edge hourly chart',
    sql: `select timestamp_trunc(t.timestamp, hour) as timestamp, count(t.id) as count from edge_logs t group by timestamp order by timestamp asc`,
    expect: rows(['timestamp', 'count'], [us('10:00:00'), 6], [us('11:00:00'), 1]),
  },
  {
    name: 'edge daily chart',
    sql: `select timestamp_trunc(t.timestamp, day) as timestamp, count(t.id) as count from edge_logs t group by timestamp order by timestamp`,
    expect: rows(['timestamp', 'count'], [us('00:00:00'), 7]),
  },
  {
    name: 'edge single log lookup',
    sql: `select id, timestamp, event_message, metadata from edge_logs where id = 'e4' limit 1`,
    expect: [
      {
        id: 'e4',
        timestamp: us('10:03:00'),
        event_message: 'GET | 101 | 10.0.0.4 | /realtime/v1/websocket',
        metadata: [
          {
            tags: ['c'],
            request: [
              {
                method: 'GET',
                path: '/realtime/v1/websocket',
                url: 'http://kong:8000/realtime/v1/websocket',
                headers: [{ cf_connecting_ip: '10.0.0.4', user_agent: 'curl/8.5.0' }],
              },
            ],
            response: [{ status_code: 101, origin_time: 1.5 }],
          },
        ],
      },
    ],
  },
  {
    name: 'edge keyset pagination (timestamp, id)',
    sql: `select id, timestamp from edge_logs
where timestamp < '2026-11-21T10:05:00Z' or (timestamp = '2026-11-21T10:05:00Z' and id < 'e8')
order by timestamp desc, id desc limit 3`,
    expect: rows(['id', 'timestamp'], ['e7', us('10:05:00')], ['e5', us('10:04:00')], ['e4', us('10:03:00')]),
  },
  {
    name: 'edge filter with regexp_contains on the path',
    sql: `select id from edge_logs cross join unnest(metadata) as m cross join unnest(m.request) as request
where regexp_contains(request.path, '^/rest') order by id`,
    expect: rows(['id'], ['e1'], ['e5'], ['e7']),
  },
  {
    name: 'edge headers two records deep',
    sql: `select h.cf_connecting_ip as ip from edge_logs
cross join unnest(metadata) as m cross join unnest(m.request) as r cross join unnest(r.headers) as h
where h.cf_connecting_ip is not null order by ip limit 2`,
    expect: rows(['ip'], ['10.0.0.1'], ['10.0.0.2']),
  },
  {
    name: 'edge backtick-quoted CTE and column names',
    sql: "select `id` from `edge_logs` where `edge_logs`.`id` = 'e2'",
    expect: rows(['id'], ['e2']),
  },
  // postgres_logs ---------------------------------------------------------------------------
  {
    name: 'postgres preview with parsed fields (hint missing)',
    sql: `select postgres_logs.timestamp, id, event_message, parsed.error_severity, parsed.hint
from postgres_logs
cross join unnest(metadata) as m
cross join unnest(m.parsed) as parsed
order by timestamp desc
limit 2`,
    expect: rows(
      ['timestamp', 'id', 'event_message', 'error_severity', 'hint'],
      [us('10:30:00'), 'p4', '2026-11-21 10:30:00.000 UTC [42] FATAL:  cron job 7 failed', 'FATAL', null],
      [us('10:20:00'), 'p3', '2026-11-21 10:20:00.000 UTC [42] WARNING:  there is no transaction in progress', 'WARNING', null],
    ),
    warnings: ['parsed.hint'],
  },
  {
    name: 'postgres chart by severity',
    sql: `select timestamp_trunc(t.timestamp, hour) as timestamp,
count(case when parsed.error_severity in ('ERROR', 'FATAL', 'PANIC') then 1 else null end) as error_count,
count(case when parsed.error_severity = 'WARNING' then 1 else null end) as warning_count,
count(case when parsed.error_severity not in ('ERROR', 'FATAL', 'PANIC', 'WARNING') then 1 else null end) as ok_count,
from postgres_logs t cross join unnest(t.metadata) as m cross join unnest(m.parsed) as parsed
group by timestamp order by timestamp asc`,
    expect: rows(['timestamp', 'error_count', 'warning_count', 'ok_count'], [us('10:00:00'), 2, 1, 1]),
  },
  {
    name: 'postgres pg_cron subset',
    sql: `select id from postgres_logs cross join unnest(metadata) as m cross join unnest(m.parsed) as parsed
where parsed.application_name = 'pg_cron' or regexp_contains(event_message, 'cron job')`,
    expect: rows(['id'], ['p4']),
  },
  {
    name: 'postgres count',
    sql: 'select count(*) as count from postgres_logs',
    expect: rows(['count'], [4]),
  },
  {
    name: 'postgres single log',
    sql: `select id, timestamp, event_message from postgres_logs where id = 'p2' limit 1`,
    expect: rows(['id', 'timestamp', 'event_message'], ['p2', us('10:10:00'), '2026-11-21 10:10:00.000 UTC [42] ERROR:  relation "x" does not exist']),
  },
  // function_edge_logs ----------------------------------------------------------------------
  {
    name: 'function edge preview',
    sql: `select id, function_edge_logs.timestamp, event_message, response.status_code, request.method, m.function_id, m.execution_time_ms, m.deployment_id, m.version
from function_edge_logs
cross join unnest(metadata) as m
cross join unnest(m.response) as response
cross join unnest(m.request) as request
order by timestamp desc limit 10`,
    expect: rows(
      ['id', 'timestamp', 'event_message', 'status_code', 'method', 'function_id', 'execution_time_ms', 'deployment_id', 'version'],
      ['f2', us('10:01:00'), 'POST | 500 | http://kong:8000/functions/v1/fn1', 500, 'POST', 'fn1', 120, 'fn1_1', null],
      ['f1', us('10:00:00'), 'POST | 200 | http://kong:8000/functions/v1/fn1', 200, 'POST', 'fn1', 35, 'fn1_1', null],
    ),
    warnings: ['m.version'],
  },
  {
    name: 'function edge chart',
    sql: `select timestamp_trunc(t.timestamp, minute) as timestamp,
count(case when response.status_code >= 500 then 1 else null end) as error_count,
count(case when response.status_code < 400 then 1 else null end) as ok_count
from function_edge_logs t cross join unnest(metadata) as m cross join unnest(m.response) as response
group by timestamp order by timestamp`,
    expect: rows(['timestamp', 'error_count', 'ok_count'], [us('10:00:00'), 0, 1], [us('10:01:00'), 1, 0]),
  },
  {
    name: 'function edge filter by function id',
    sql: "select count(*) as count from function_edge_logs cross join unnest(metadata) as m where m.function_id = 'fn1'",
    expect: rows(['count'], [2]),
  },
  {
    name: 'function edge average execution time',
    sql: 'select avg(m.execution_time_ms) as avg_ms, max(m.execution_time_ms) as max_ms from function_edge_logs cross join unnest(metadata) as m',
    expect: rows(['avg_ms', 'max_ms'], [77.5, 120]),
  },
  // function_logs ---------------------------------------------------------------------------
  {
    name: 'function logs preview',
    sql: `select id, function_logs.timestamp, event_message, metadata.event_type, metadata.function_id, metadata.level
from function_logs cross join unnest(metadata) as metadata
order by timestamp desc limit 100`,
    expect: rows(
      ['id', 'timestamp', 'event_message', 'event_type', 'function_id', 'level'],
      ['fl2', us('10:01:00'), 'UncaughtException error', 'UncaughtException', 'fn1', 'error'],
      ['fl1', us('10:00:00'), 'Log info', 'Log', 'fn1', 'info'],
    ),
  },
  {
    name: 'function logs severity chart',
    sql: `select timestamp_trunc(t.timestamp, minute) as timestamp,
count(case when metadata.level in ('error', 'fatal') then 1 else null end) as error_count,
count(case when metadata.level = 'warning' then 1 else null end) as warning_count,
count(case when metadata.level not in ('error', 'fatal', 'warning') then 1 else null end) as ok_count
from function_logs t cross join unnest(t.metadata) as metadata group by timestamp order by timestamp`,
    expect: rows(['timestamp', 'error_count', 'warning_count', 'ok_count'], [us('10:00:00'), 0, 0, 1], [us('10:01:00'), 1, 0, 0]),
  },
  {
    name: 'function logs by execution id',
    sql: "select id from function_logs cross join unnest(metadata) as m where m.execution_id = 'x-fl1'",
    expect: rows(['id'], ['fl1']),
  },
  // auth_logs -------------------------------------------------------------------------------
  {
    name: 'auth preview (metadata aliased as itself)',
    sql: `select id, auth_logs.timestamp, event_message, metadata.level, metadata.status, metadata.path, metadata.msg as msg, metadata.error
from auth_logs cross join unnest(metadata) as metadata
order by timestamp desc limit 100`,
    expect: rows(
      ['id', 'timestamp', 'event_message', 'level', 'status', 'path', 'msg', 'error'],
      ['a2', us('10:05:00'), '{"msg":"signup failed","status":500}', 'error', 500, '/signup', 'signup failed', 'database error'],
      ['a1', us('10:00:00'), '{"msg":"request completed","status":200}', 'info', 200, '/token', 'request completed', null],
    ),
  },
  {
    name: 'auth errors with safe_cast of the status',
    sql: `select id from auth_logs cross join unnest(metadata) as metadata
where SAFE_CAST(metadata.status AS INT64) >= 500 or metadata.level = 'error'`,
    expect: rows(['id'], ['a2']),
  },
  {
    name: 'auth cast(status as int64) comparison',
    sql: 'select count(*) as n from auth_logs cross join unnest(metadata) as metadata where cast(metadata.status as int64) = 200',
    expect: rows(['n'], [1]),
  },
  {
    name: 'auth json_value over the event message',
    sql: `select json_value(event_message, '$.msg') as msg from auth_logs order by timestamp`,
    expect: rows(['msg'], ['request completed'], ['signup failed']),
  },
  // realtime / storage / postgrest / pgbouncer ----------------------------------------------
  {
    name: 'realtime preview',
    sql: 'select id, event_message, m.level, m.external_id from realtime_logs cross join unnest(metadata) as m order by timestamp desc',
    expect: rows(['id', 'event_message', 'level', 'external_id'], ['r1', 'Billing metrics', 'info', 'default']),
  },
  {
    name: 'realtime count',
    sql: 'select count(*) as count from realtime_logs',
    expect: rows(['count'], [1]),
  },
  {
    name: 'storage preview with the context array',
    sql: `select id, m.level, ctx.host, ctx.pid from storage_logs
cross join unnest(metadata) as m cross join unnest(m.context) as ctx order by id, host`,
    expect: rows(['id', 'level', 'host', 'pid'], ['s1', 'info', 'h1', 1], ['s2', 'warn', 'h2', 2], ['s2', 'warn', 'h3', 3]),
  },
  {
    name: 'storage left join unnest keeps rows with an empty array',
    sql: `select id, ctx.host from storage_logs
cross join unnest(metadata) as m left join unnest(m.context) as ctx on true order by id, host`,
    expect: rows(['id', 'host'], ['s1', 'h1'], ['s2', 'h2'], ['s2', 'h3'], ['s3', null]),
  },
  {
    name: 'storage chart by level',
    sql: `select m.level, count(*) as n from storage_logs cross join unnest(metadata) as m group by m.level order by n desc, level`,
    expect: rows(['level', 'n'], ['error', 1], ['info', 1], ['warn', 1]),
  },
  {
    name: 'postgrest preview: a row without metadata drops out of the cross join (BigQuery)',
    sql: 'select id, m.host from postgrest_logs cross join unnest(metadata) as m order by timestamp desc',
    expect: rows(['id', 'host'], ['pr1', 'default']),
  },
  {
    name: 'postgrest preview: LEFT JOIN UNNEST keeps the row without metadata',
    sql: 'select id, m.host from postgrest_logs left join unnest(metadata) as m on true order by timestamp desc',
    expect: rows(['id', 'host'], ['pr2', null], ['pr1', 'default']),
  },
  {
    name: 'postgrest count',
    sql: 'select count(*) as count from postgrest_logs',
    expect: rows(['count'], [2]),
  },
  {
    name: 'pgbouncer preview: metadata never carried reads NULL',
    sql: 'select id, event_message, metadata from pgbouncer_logs',
    expect: rows(['id', 'event_message', 'metadata'], ['pb1', 'stats: 0 xacts/s', null]),
    warnings: ['t.metadata'],
  },
  {
    name: 'pgbouncer: cross join of a record no event carried gives no row',
    sql: 'select id, m.host from pgbouncer_logs cross join unnest(metadata) as m',
    expect: [],
  },
  {
    name: 'pgbouncer: left join of a record no event carried reads NULL',
    sql: 'select id, m.host from pgbouncer_logs left join unnest(metadata) as m on true',
    expect: rows(['id', 'host'], ['pb1', null]),
  },
  // cross-CTE -------------------------------------------------------------------------------
  {
    name: 'union of two CTEs',
    sql: `select id, timestamp from auth_logs union all select id, timestamp from realtime_logs order by timestamp desc, id`,
    expect: rows(['id', 'timestamp'], ['a2', us('10:05:00')], ['a1', us('10:00:00')], ['r1', us('10:00:00')]),
  },
  {
    name: 'counts across all nine CTEs',
    sql: `select 'edge' as s, count(*) as n from edge_logs
union all select 'postgres', count(*) from postgres_logs
union all select 'function_edge', count(*) from function_edge_logs
union all select 'function', count(*) from function_logs
union all select 'auth', count(*) from auth_logs
union all select 'realtime', count(*) from realtime_logs
union all select 'storage', count(*) from storage_logs
union all select 'postgrest', count(*) from postgrest_logs
union all select 'pgbouncer', count(*) from pgbouncer_logs`,
    expect: rows(
      ['s', 'n'],
      ['edge', 7],
      ['postgres', 4],
      ['function_edge', 2],
      ['function', 2],
      ['auth', 2],
      ['realtime', 1],
      ['storage', 3],
      ['postgrest', 2],
      ['pgbouncer', 1],
    ),
    unordered: true,
  },
  {
    name: 'timestamp window given by the caller parameters',
    sql: 'select id from edge_logs order by timestamp',
    params: { project: 'default', iso_timestamp_start: '2026-11-21T10:02:30Z', iso_timestamp_end: '2026-11-21T10:05:00Z' },
    expect: rows(['id'], ['e4'], ['e5'], ['e7']),
  },
];
