/**
 * SQL that Supabase Studio's pages (outside the reports, the unified logs view and the Logs
 * Explorer's own templates) send to `logs.all`, instantiated the way Studio's code does, with
 * expectations written from pages-fixture.ts by plain code over its arrays (BigQuery semantics).
 *
 * Sources in supabase/supabase (path @ commit read):
 * - apps/studio/data/edge-functions/edge-functions-last-hour-stats-query.ts
 *     @ 07a67b3827b235f10ea10bc7ea5331a88d2813c9 (current, executeAnalyticsSql + analyticsLiteral)
 *     @ 1f5328efb4f3ea0277667ecd7693073a3816f094 (older, POST body + quoteLiteral; same SQL)
 * - apps/studio/components/interfaces/Functions/EdgeFunctionDetails/EdgeFunctionInvocationsPageContent.tsx
 *     @ 37f219c11a7f67cc215e11778bbfc054509a527a (LogsPreviewer fn_edge, filterOverride { function_id })
 * - apps/studio/components/interfaces/Functions/EdgeFunctionDetails/EdgeFunctionRuntimeLogsPageContent.tsx
 *     @ 37f219c11a7f67cc215e11778bbfc054509a527a (LogsPreviewer functions, { 'metadata.function_id' })
 * - apps/studio/components/interfaces/Functions/EdgeFunctionOverview/EdgeFunctionRecentErrors.utils.ts
 *     @ e8d2b598084f32a3375cc436d41707181e72df79 (BigQuery shape: genDefaultQuery / genCountQuery /
 *       hand-written function_logs query; the current 0bb6d0ce9e17a8dd6083d3c8dcaf6780cbd23a96 reads
 *       the OTEL `logs` table through another endpoint, not logs.all)
 * - apps/studio/components/interfaces/Auth/Users/UserJourney.utils.ts
 *     @ c6c642edccd1df93d76d734daa6b5b4e8286ab35 (buildAuthLogsSql / buildEdgeLogsSql, BigQuery branch)
 * - apps/studio/components/interfaces/Auth/Users/UserLogs.tsx
 *     @ 01ae8d77f349dca9eb5baf8930e6b418cc036c9a (useLogsPreview auth, search_query = user id, limit 5)
 * - apps/studio/components/ui/ProjectSettings/DisplayApiSettings.utils.ts
 *     @ 3cd87afe45020f5ceae109135898497da896430c (and 9a1f02be07fa8493dae8aec34938c94fb2446675; same SQL)
 * - apps/studio/hooks/analytics/useProjectDdlLogs.ts
 *     @ 4a354dc589c29d6dfa22e597c44fd49f6cd4dbcc (commandTags = TABLE_DDL_COMMANDS of the table audit card)
 * - apps/studio/hooks/analytics/useProjectUsageStats.tsx
 *     @ 0a83958295e31bed1d56002ec6202f528d8a6f67 (project home service charts: genChartQuery/genCountQuery)
 * - apps/studio/components/interfaces/Auth/Overview/OverviewErrors.constants.ts
 *     @ 8c986c82fec1ccd751a87f285e778fd06e7ea751 (Auth overview's top errors, sent through
 *       report.utils fetchLogs with the last 24 hours)
 * - apps/studio/hooks/analytics/useCombinedLogsStats.tsx
 *     @ 039c277e964f48d56c2f135fe9b3c2fe76843234 (combined counts and charts)
 * - the generators those call: apps/studio/components/interfaces/Settings/Logs/Logs.utils.ts
 *     @ 0116d668b748d85af74af129726f86a56702d6b9 (current: safeSql, limits, IS_PLATFORM branches,
 *       auth severity conditions) and @ e4c90793cb4ab16eecc698f9577fe4eedd56c8db (older: plain
 *       `key = 'value'` filters, `count(t.timestamp)` charts, fixed limit 100), with
 *       Logs.constants.ts @ 0116d668b748d85af74af129726f86a56702d6b9 (SQL_FILTER_TEMPLATES,
 *       previewer/explorer default "last hour", no end).
 *
 * An unknown filter key (a page's filterOverride) is written bare by the older generator
 * (`function_id = '...'`); the current one passes it through `quotedIdent`, whose source the index
 * did not hold: these cases assume it backticks each dotted part (`` `metadata`.`function_id` ``).
 *
 * 27 cases.
 */
import {
  authEvents,
  edgeEvents,
  fnLogEvents,
  isoAgo,
  OTHER_USER,
  pgEvents,
  realtimeEvents,
  relayEvents,
  restEvents,
  storageEvents,
  USER,
} from './pages-fixture.ts';
import type { PageCase, Row } from './harness.ts';

// helpers over the fixture -----------------------------------------------------------------------

function get(e: Row, path: string): unknown {
  let v: unknown = e;
  for (const k of path.split('.')) {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return undefined;
    v = (v as Record<string, unknown>)[k];
  }
  return v;
}
const has = (e: Row, path: string) => get(e, path) !== undefined;
const status = (e: Row) => get(e, 'metadata.response.status_code') as number;
const ms = (e: Row) => Date.parse(e.timestamp as string);
const us = (e: Row) => ms(e) * 1000;
const newestFirst = (a: Row, b: Row) => ms(b) - ms(a);
const orNull = (v: unknown) => (v === undefined ? null : v);

/** logs.all's window: start exclusive, end inclusive, '' = unbounded. */
function within(e: Row, start: string, end: string): boolean {
  return (start === '' || ms(e) > Date.parse(start)) && (end === '' || ms(e) <= Date.parse(end));
}
const topProject = (e: Row) => e.project === 'default';
const refProject = (e: Row) => get(e, 'metadata.project_ref') === 'default';
const mdProject = (e: Row) => get(e, 'metadata.project') === 'default';

/** Studio's windows. */
const lastHourOpen = { iso_timestamp_start: isoAgo(60), iso_timestamp_end: '' };
const lastHour = { iso_timestamp_start: isoAgo(60), iso_timestamp_end: isoAgo(0) };
const lastDay = { iso_timestamp_start: isoAgo(24 * 60), iso_timestamp_end: isoAgo(0) };
const lastWeek = { iso_timestamp_start: isoAgo(7 * 24 * 60), iso_timestamp_end: isoAgo(0) };
/** "since last deploy": the function was updated 45 minutes ago. */
const sinceDeploy = { iso_timestamp_start: isoAgo(45), iso_timestamp_end: isoAgo(0) };
type Window = { iso_timestamp_start: string; iso_timestamp_end: string };
const inWindow = (w: Window) => (e: Row) => within(e, w.iso_timestamp_start, w.iso_timestamp_end);

function truncMs(t: number, unit: 'minute' | 'hour'): number {
  const size = unit === 'minute' ? 60_000 : 3_600_000;
  return Math.floor(t / size) * size;
}

/** Rows of a timestamp_trunc chart: one per bucket, ascending, counts from `classify`. */
function chart<K extends string>(events: Row[], unit: 'minute' | 'hour', keys: readonly K[], classify: (e: Row) => K[]): Row[] {
  const buckets = new Map<number, Record<K, number>>();
  for (const e of events) {
    const b = truncMs(ms(e), unit);
    let counts = buckets.get(b);
    if (!counts) {
      counts = Object.fromEntries(keys.map((k) => [k, 0])) as Record<K, number>;
      buckets.set(b, counts);
    }
    for (const k of classify(e)) counts[k] += 1;
  }
  return [...buckets.entries()].sort(([a], [b]) => a - b).map(([b, counts]) => ({ timestamp: b * 1000, ...counts }));
}

// the events each CTE yields ---------------------------------------------------------------------

const edge = (w: Window) => edgeEvents.filter((e) => topProject(e) && inWindow(w)(e));
const auth = (w: Window) => authEvents.filter((e) => topProject(e) && inWindow(w)(e));
const relay = (w: Window) => relayEvents.filter((e) => refProject(e) && inWindow(w)(e));
const fnLogs = (w: Window) => fnLogEvents.filter((e) => refProject(e) && inWindow(w)(e));
const pg = (w: Window) => pgEvents.filter((e) => topProject(e) && inWindow(w)(e));
const rest = (w: Window) => restEvents.filter((e) => topProject(e) && inWindow(w)(e));
const realtime = (w: Window) => realtimeEvents.filter((e) => mdProject(e) && inWindow(w)(e));
const storage = (w: Window) => storageEvents.filter((e) => mdProject(e) && inWindow(w)(e));

/** BigQuery: CROSS JOIN UNNEST of a record the event did not carry drops the event. */
const carries =
  (...paths: string[]) =>
  (e: Row) =>
    paths.every((p) => has(e, p));

// Edge Functions ---------------------------------------------------------------------------------

const lastHourStatsSql = (ids: string[]) => `
-- edge-functions-last-hour-stats
select
  function_id,
  count(distinct id) as requests_count,
  count(distinct case when response.status_code >= 500 then id end) as server_err_count
from
  function_edge_logs
  cross join unnest(metadata) as m
  cross join unnest(m.response) as response
where
  function_id is not null
  and function_id in (${ids.map((id) => `'${id}'`).join(', ')})
group by
  function_id
`;

function lastHourStats(ids: string[]): Row[] {
  const rows: Row[] = [];
  for (const id of ids) {
    const events = relay(lastHour).filter((e) => carries('metadata.response')(e) && get(e, 'metadata.function_id') === id);
    if (events.length === 0) continue;
    rows.push({
      function_id: id,
      requests_count: events.length,
      server_err_count: events.filter((e) => (get(e, 'metadata.response.status_code') as number) >= 500).length,
    });
  }
  return rows;
}

const fnEdgeJoins = `cross join unnest(metadata) as m
  cross join unnest(m.response) as response
  cross join unnest(m.request) as request`;
const withRequestAndResponse = carries('metadata.response', 'metadata.request');

function invocationRow(e: Row, extra: boolean): Row {
  const row: Row = {
    timestamp: us(e),
    event_message: e.event_message,
    status_code: get(e, 'metadata.response.status_code'),
    method: get(e, 'metadata.request.method'),
    function_id: get(e, 'metadata.function_id'),
    execution_time_ms: get(e, 'metadata.execution_time_ms'),
    deployment_id: get(e, 'metadata.deployment_id'),
    version: get(e, 'metadata.version'),
  };
  if (extra) {
    row.pathname = get(e, 'metadata.request.pathname');
    row.execution_id = get(e, 'metadata.execution_id');
  }
  return row;
}

function fnLogRow(e: Row, withExecutionId: boolean): Row {
  const row: Row = {
    timestamp: us(e),
    event_message: e.event_message,
    event_type: get(e, 'metadata.event_type'),
    function_id: get(e, 'metadata.function_id'),
    level: get(e, 'metadata.level'),
  };
  if (withExecutionId) row.execution_id = orNull(get(e, 'metadata.execution_id'));
  return row;
}

const fnEdgePlatformSelect = `select id, function_edge_logs.timestamp, event_message, response.status_code, request.method, request.pathname, m.function_id, m.execution_id, m.execution_time_ms, m.deployment_id, m.version from function_edge_logs`;

/** Execution ids of the recent-error groups, as getRecentErrorGroupsBase collects them. */
const recentErrors = relay(sinceDeploy)
  .filter(withRequestAndResponse)
  .filter((e) => get(e, 'metadata.function_id') === 'fn-pay' && (get(e, 'metadata.response.status_code') as number) >= 500)
  .sort(newestFirst);
const errorExecutionIds = recentErrors.map((e) => get(e, 'metadata.execution_id') as string);

// Users page -------------------------------------------------------------------------------------

const mentionsUser = (e: Row) => has(e, 'metadata') && (e.event_message as string).includes(USER);
const userAuthLogs = auth(lastHourOpen).filter(mentionsUser).sort(newestFirst);

function authRow(e: Row, withError: boolean): Row {
  const row: Row = {
    timestamp: us(e),
    event_message: e.event_message,
    level: orNull(get(e, 'metadata.level')),
    status: orNull(get(e, 'metadata.status')),
    path: orNull(get(e, 'metadata.path')),
    msg: orNull(get(e, 'metadata.msg')),
  };
  if (withError) row.error = orNull(get(e, 'metadata.error'));
  return row;
}

const authPreviewSql = (
  where: string,
) => `select id, auth_logs.timestamp, event_message, metadata.level, metadata.status, metadata.path, metadata.msg as msg, metadata.error from auth_logs
  cross join unnest(metadata) as metadata
  ${where}
  order by timestamp desc
  limit 5
    `;

// API keys ---------------------------------------------------------------------------------------

function lastUsedKeys(): Row[] {
  const groups = new Map<string, Row>();
  for (const e of edge(lastDay)) {
    const payload = get(e, 'metadata.request.sb.jwt.apikey.payload');
    if (payload === undefined || has(e, 'metadata.request.sb.jwt.apikey.invalid')) continue;
    const role = get(e, 'metadata.request.sb.jwt.apikey.payload.role') as string;
    const prefix = get(e, 'metadata.request.sb.jwt.apikey.payload.signature_prefix') as string;
    if (get(e, 'metadata.request.sb.jwt.apikey.payload.issuer') !== 'supabase') continue;
    if (get(e, 'metadata.request.sb.jwt.apikey.payload.algorithm') !== 'HS256') continue;
    if (role !== 'anon' && role !== 'service_role') continue;
    const key = `${role}/${prefix}`;
    const previous = groups.get(key);
    if (!previous || (previous.timestamp as number) < ms(e)) groups.set(key, { timestamp: ms(e), role, signature_prefix: prefix });
  }
  return [...groups.values()];
}

// Auth overview ----------------------------------------------------------------------------------

const authErrorEvents = () =>
  edge(lastDay).filter((e) => (get(e, 'metadata.request.path') as string).includes('auth/v1') && status(e) >= 400 && status(e) <= 599);

/** Groups by `key`, counts, newest-first by count (the fixture keeps counts distinct). */
function countBy(events: Row[], key: (e: Row) => Row): Row[] {
  const groups = new Map<string, Row>();
  for (const e of events) {
    const k = key(e);
    const id = JSON.stringify(k);
    const g = groups.get(id) ?? { ...k, count: 0 };
    g.count = (g.count as number) + 1;
    groups.set(id, g);
  }
  return [...groups.values()].sort((a, b) => (b.count as number) - (a.count as number)).slice(0, 10);
}
const topAuthErrors = () =>
  countBy(authErrorEvents(), (e) => ({ method: get(e, 'metadata.request.method'), path: get(e, 'metadata.request.path'), status_code: status(e) }));
const topAuthErrorCodes = () =>
  countBy(
    authErrorEvents().filter((e) => has(e, 'metadata.response.headers.x_sb_error_code')),
    (e) => ({ error_code: get(e, 'metadata.response.headers.x_sb_error_code') }),
  );

// DDL logs ---------------------------------------------------------------------------------------

const TABLE_DDL_COMMANDS = [
  'CREATE TABLE',
  'ALTER TABLE',
  'DROP TABLE',
  'CREATE VIEW',
  'ALTER VIEW',
  'DROP VIEW',
  'CREATE MATERIALIZED VIEW',
  'DROP MATERIALIZED VIEW',
];

// charts -----------------------------------------------------------------------------------------

const CHART_KEYS = ['ok_count', 'error_count', 'warning_count'] as const;
type ChartKey = (typeof CHART_KEYS)[number];
const severity = (error: boolean, warning: boolean): ChartKey[] => {
  const out: ChartKey[] = [];
  if (!(error || warning)) out.push('ok_count');
  if (error) out.push('error_count');
  if (warning) out.push('warning_count');
  return out;
};
/** `genChartQuery` extends the lower bound by six hours on a one-hour range. */
const chartFloor = new Date(Date.parse(isoAgo(60)) - 6 * 3_600_000).toISOString();

const AUTH_ERROR = `IFNULL(metadata.level, '') IN ('error', 'fatal') OR IFNULL(SAFE_CAST(metadata.status AS INT64), 0) >= 500`;
const AUTH_WARNING = `IFNULL(metadata.level, '') = 'warning' OR IFNULL(SAFE_CAST(metadata.status AS INT64), 0) BETWEEN 400 AND 499`;

const chartSql = (table: string, joins: string, error: string, warning: string) => `
SELECT
-- log-event-chart
  timestamp_trunc(t.timestamp, minute) as timestamp,
  count(CASE WHEN NOT (${error} OR ${warning}) THEN 1 END) as ok_count,
  count(CASE WHEN ${error} THEN 1 END) as error_count,
  count(CASE WHEN ${warning} THEN 1 END) as warning_count,
FROM
  ${table} t
  ${joins}
  where t.timestamp > '${chartFloor}'
GROUP BY
timestamp
ORDER BY
  timestamp ASC
  `;

const combinedChartSql = (table: string, unit: string, w: Window) => `
              SELECT
                timestamp_trunc(t.timestamp, ${unit}) as timestamp,
                count(CASE WHEN NOT (false OR false) THEN 1 END) as ok_count,
                count(CASE WHEN false THEN 1 END) as error_count,
                count(CASE WHEN false THEN 1 END) as warning_count
              FROM ${table} t 
              WHERE t.timestamp >= '${w.iso_timestamp_start}' AND t.timestamp <= '${w.iso_timestamp_end}'
              GROUP BY timestamp ORDER BY timestamp ASC
            `;

const authStatus = (e: Row) => {
  const s = get(e, 'metadata.status');
  return typeof s === 'number' ? s : 0;
};
const authLevel = (e: Row) => (get(e, 'metadata.level') as string | undefined) ?? '';
const pgSeverity = (e: Row) => get(e, 'metadata.parsed.error_severity') as string;

// the cases --------------------------------------------------------------------------------------

const STATS = 'apps/studio/data/edge-functions/edge-functions-last-hour-stats-query.ts';
const INVOCATIONS = 'apps/studio/components/interfaces/Functions/EdgeFunctionDetails/EdgeFunctionInvocationsPageContent.tsx';
const RUNTIME = 'apps/studio/components/interfaces/Functions/EdgeFunctionDetails/EdgeFunctionRuntimeLogsPageContent.tsx';
const RECENT_ERRORS = 'apps/studio/components/interfaces/Functions/EdgeFunctionOverview/EdgeFunctionRecentErrors.utils.ts';
const JOURNEY = 'apps/studio/components/interfaces/Auth/Users/UserJourney.utils.ts';
const USER_LOGS = 'apps/studio/components/interfaces/Auth/Users/UserLogs.tsx';
const API_KEYS = 'apps/studio/components/ui/ProjectSettings/DisplayApiSettings.utils.ts';
const DDL = 'apps/studio/hooks/analytics/useProjectDdlLogs.ts';
const USAGE = 'apps/studio/hooks/analytics/useProjectUsageStats.tsx';
const COMBINED = 'apps/studio/hooks/analytics/useCombinedLogsStats.tsx';
const AUTH_OVERVIEW = 'apps/studio/components/interfaces/Auth/Overview/OverviewErrors.constants.ts';
const LOGS_UTILS = 'apps/studio/components/interfaces/Settings/Logs/Logs.utils.ts';

const LOGS_UTILS_NOW = '0116d668b748d85af74af129726f86a56702d6b9';
const LOGS_UTILS_OLD = 'e4c90793cb4ab16eecc698f9577fe4eedd56c8db';

export const pageCases: PageCase[] = [
  // Edge Functions list: last-hour stats ----------------------------------------------------------
  {
    name: 'functions list: last-hour stats of three functions (a cut-short invocation has no response)',
    from: { path: STATS, commit: '07a67b3827b235f10ea10bc7ea5331a88d2813c9' },
    sql: lastHourStatsSql(['fn-hello', 'fn-pay', 'fn-resize']),
    params: lastHour,
    expect: lastHourStats(['fn-hello', 'fn-pay', 'fn-resize']),
    unordered: true,
  },
  {
    name: 'functions list: last-hour stats of one function (older POST shape)',
    from: { path: STATS, commit: '1f5328efb4f3ea0277667ecd7693073a3816f094' },
    sql: lastHourStatsSql(['fn-pay']),
    params: lastHour,
    expect: lastHourStats(['fn-pay']),
  },

  // Function detail: invocations ------------------------------------------------------------------
  {
    name: 'function invocations page, self-hosted (filters dropped, console lines included)',
    from: { path: INVOCATIONS, commit: '37f219c11a7f67cc215e11778bbfc054509a527a' },
    sql: `
select id, function_edge_logs.timestamp, event_message
from function_edge_logs
order by timestamp desc
limit 100
`,
    params: lastHourOpen,
    expect: relay(lastHourOpen)
      .sort(newestFirst)
      .map((e) => ({ timestamp: us(e), event_message: e.event_message })),
  },
  {
    name: 'function invocations page, older generator (bare function_id filter)',
    from: { path: LOGS_UTILS, commit: LOGS_UTILS_OLD },
    sql: `select id, function_edge_logs.timestamp, event_message, response.status_code, request.method, m.function_id, m.execution_time_ms, m.deployment_id, m.version from function_edge_logs
  ${fnEdgeJoins}
  where (function_id = 'fn-hello')
  order by timestamp desc
  limit 100
  `,
    params: lastHourOpen,
    expect: relay(lastHourOpen)
      .filter(withRequestAndResponse)
      .filter((e) => get(e, 'metadata.function_id') === 'fn-hello')
      .sort(newestFirst)
      .map((e) => invocationRow(e, false)),
  },
  {
    name: 'function invocations page, platform generator (quoted function_id; no-response invocation drops)',
    from: { path: INVOCATIONS, commit: '37f219c11a7f67cc215e11778bbfc054509a527a' },
    sql: `${fnEdgePlatformSelect}
  ${fnEdgeJoins}
  where (\`function_id\` = 'fn-pay')
  order by timestamp desc
  limit 100
  `,
    params: lastHourOpen,
    expect: relay(lastHourOpen)
      .filter(withRequestAndResponse)
      .filter((e) => get(e, 'metadata.function_id') === 'fn-pay')
      .sort(newestFirst)
      .map((e) => invocationRow(e, true)),
  },

  // Function detail: runtime logs -----------------------------------------------------------------
  {
    name: 'function runtime logs page, older generator (metadata.function_id filter)',
    from: { path: LOGS_UTILS, commit: LOGS_UTILS_OLD },
    sql: `select id, function_logs.timestamp, event_message, metadata.event_type, metadata.function_id, metadata.level from function_logs
  cross join unnest(metadata) as metadata
  where (metadata.function_id = 'fn-pay')
  order by timestamp desc
  limit 100
    `,
    params: lastHourOpen,
    expect: fnLogs(lastHourOpen)
      .filter((e) => get(e, 'metadata.function_id') === 'fn-pay')
      .sort(newestFirst)
      .map((e) => fnLogRow(e, false)),
  },
  {
    name: 'function runtime logs page, current generator (quoted metadata.function_id, boot event without execution id)',
    from: { path: RUNTIME, commit: '37f219c11a7f67cc215e11778bbfc054509a527a' },
    sql: `select id, function_logs.timestamp, event_message, metadata.event_type, metadata.function_id, metadata.execution_id, metadata.level from function_logs
  cross join unnest(metadata) as metadata
  where (\`metadata\`.\`function_id\` = 'fn-hello')
  order by timestamp desc
  limit 100
    `,
    params: lastHourOpen,
    expect: fnLogs(lastHourOpen)
      .filter((e) => get(e, 'metadata.function_id') === 'fn-hello')
      .sort(newestFirst)
      .map((e) => fnLogRow(e, true)),
  },

  // Function overview: errors since last deploy ---------------------------------------------------
  {
    name: 'function overview: 5xx invocations since last deploy',
    from: { path: RECENT_ERRORS, commit: 'e8d2b598084f32a3375cc436d41707181e72df79' },
    sql: `${fnEdgePlatformSelect}
  ${fnEdgeJoins}
  where (\`function_id\` = 'fn-pay') and (response.status_code between 500 and 599)
  order by timestamp desc
  limit 50
  `,
    params: sinceDeploy,
    expect: recentErrors.map((e) => invocationRow(e, true)),
  },
  {
    name: 'function overview: invocation count since last deploy (the no-response invocation drops)',
    from: { path: RECENT_ERRORS, commit: 'e8d2b598084f32a3375cc436d41707181e72df79' },
    sql: `SELECT count(*) as count FROM function_edge_logs ${fnEdgeJoins} where (\`function_id\` = 'fn-pay')`,
    params: sinceDeploy,
    expect: [
      {
        count: relay(sinceDeploy)
          .filter(withRequestAndResponse)
          .filter((e) => get(e, 'metadata.function_id') === 'fn-pay').length,
      },
    ],
  },
  {
    name: 'function overview: runtime logs of the error groups',
    from: { path: RECENT_ERRORS, commit: 'e8d2b598084f32a3375cc436d41707181e72df79' },
    sql: `select id, function_logs.timestamp, event_message, metadata.event_type, metadata.function_id, metadata.execution_id, metadata.level from function_logs
cross join unnest(metadata) as metadata
where metadata.function_id = 'fn-pay' and metadata.execution_id in (${errorExecutionIds.map((id) => `'${id}'`).join(', ')})
order by timestamp desc
limit 100`,
    params: sinceDeploy,
    expect: fnLogs(sinceDeploy)
      .filter((e) => get(e, 'metadata.function_id') === 'fn-pay' && errorExecutionIds.includes(get(e, 'metadata.execution_id') as string))
      .sort(newestFirst)
      .map((e) => fnLogRow(e, true)),
  },

  // Users page: User Journey and user logs --------------------------------------------------------
  {
    name: 'user journey: auth events naming the user (metadata carries its own timestamp)',
    from: { path: JOURNEY, commit: 'c6c642edccd1df93d76d734daa6b5b4e8286ab35' },
    sql: `select
  id,
  timestamp,
  event_message,
  metadata.level as level,
  metadata.status as status,
  metadata.path as path,
  metadata.msg as msg
from auth_logs
cross join unnest(metadata) as metadata
where regexp_contains(event_message, '${USER}')
order by timestamp desc
limit 50`,
    params: lastHourOpen,
    expect: userAuthLogs.map((e) => authRow(e, false)),
  },
  {
    name: 'user journey: API requests made with the user token',
    from: { path: JOURNEY, commit: 'c6c642edccd1df93d76d734daa6b5b4e8286ab35' },
    sql: `select
  id,
  timestamp,
  request.method as method,
  request.path as path,
  response.status_code as status_code
from edge_logs
cross join unnest(metadata) as m
cross join unnest(m.request) as request
cross join unnest(m.response) as response
cross join unnest(request.sb) as sb
where sb.auth_user = '${USER}'
order by timestamp desc
limit 50`,
    params: lastHourOpen,
    expect: edge(lastHourOpen)
      .filter((e) => get(e, 'metadata.request.sb.auth_user') === USER)
      .sort(newestFirst)
      .map((e) => ({ timestamp: us(e), method: get(e, 'metadata.request.method'), path: get(e, 'metadata.request.path'), status_code: status(e) })),
  },
  {
    name: 'user journey: API requests of a user with none in range',
    from: { path: JOURNEY, commit: 'c6c642edccd1df93d76d734daa6b5b4e8286ab35' },
    sql: `select
  id,
  timestamp,
  request.method as method,
  request.path as path,
  response.status_code as status_code
from edge_logs
cross join unnest(metadata) as m
cross join unnest(m.request) as request
cross join unnest(m.response) as response
cross join unnest(request.sb) as sb
where sb.auth_user = '${OTHER_USER}'
order by timestamp desc
limit 50`,
    params: { iso_timestamp_start: isoAgo(10), iso_timestamp_end: '' },
    expect: [],
  },
  {
    name: 'user logs tab: show all (latest five)',
    from: { path: USER_LOGS, commit: '01ae8d77f349dca9eb5baf8930e6b418cc036c9a' },
    sql: authPreviewSql(`where (regexp_contains(event_message, '${USER}'))`),
    params: lastHourOpen,
    expect: userAuthLogs.slice(0, 5).map((e) => authRow(e, true)),
  },
  {
    name: 'user logs tab: error only (4xx or 5xx status)',
    from: { path: USER_LOGS, commit: '01ae8d77f349dca9eb5baf8930e6b418cc036c9a' },
    sql: authPreviewSql(
      `where (regexp_contains(event_message, '${USER}')) and (cast(metadata.status as int64) between 400 and 499 or cast(metadata.status as int64) between 500 and 599)`,
    ),
    params: lastHourOpen,
    expect: userAuthLogs
      .filter((e) => authStatus(e) >= 400 && authStatus(e) <= 599)
      .slice(0, 5)
      .map((e) => authRow(e, true)),
  },

  // API keys: last used ---------------------------------------------------------------------------
  {
    name: 'API keys: last use of the anon and service_role keys in the last 24 hours',
    from: { path: API_KEYS, commit: '3cd87afe45020f5ceae109135898497da896430c' },
    sql: "-- last-used-anon--service_role-api-keys\nSELECT unix_millis(max(timestamp)) as timestamp, payload.role, payload.signature_prefix FROM edge_logs cross join unnest(metadata) as m cross join unnest(m.request) as request cross join unnest(request.sb) as sb cross join unnest(sb.jwt) as jwt cross join unnest(jwt.apikey) as apikey cross join unnest(apikey.payload) as payload WHERE apikey.invalid is null and payload.issuer = 'supabase' and payload.algorithm = 'HS256' and payload.role in ('anon', 'service_role') GROUP BY payload.role, payload.signature_prefix",
    params: lastDay,
    expect: lastUsedKeys(),
    unordered: true,
  },

  // DDL logs --------------------------------------------------------------------------------------
  {
    name: 'table audit activity: DDL statements of the last 7 days',
    from: { path: DDL, commit: '4a354dc589c29d6dfa22e597c44fd49f6cd4dbcc' },
    sql: [
      'select',
      '  id,',
      '  timestamp,',
      '  event_message,',
      '  metadata[0].parsed[0].command_tag as command_tag,',
      '  metadata[0].parsed[0].user_name as db_user',
      'from postgres_logs',
      `where metadata[0].parsed[0].command_tag IN (${TABLE_DDL_COMMANDS.map((t) => `'${t}'`).join(', ')})`,
      'order by timestamp desc',
      'limit 10',
    ].join('\n'),
    params: lastWeek,
    expect: pg(lastWeek)
      .filter((e) => TABLE_DDL_COMMANDS.includes(get(e, 'metadata.parsed.command_tag') as string))
      .sort(newestFirst)
      .slice(0, 10)
      .map((e) => ({
        timestamp: us(e),
        event_message: e.event_message,
        command_tag: get(e, 'metadata.parsed.command_tag'),
        db_user: get(e, 'metadata.parsed.user_name'),
      })),
  },

  // Project home: service charts ------------------------------------------------------------------
  {
    name: 'project home: auth chart by minute (a line without metadata drops)',
    from: { path: LOGS_UTILS, commit: LOGS_UTILS_NOW },
    sql: chartSql('auth_logs', 'cross join unnest(metadata) as metadata', AUTH_ERROR, AUTH_WARNING),
    params: lastHour,
    expect: chart(auth(lastHour).filter(carries('metadata')), 'minute', CHART_KEYS, (e) => {
      const error = ['error', 'fatal'].includes(authLevel(e)) || authStatus(e) >= 500;
      const warning = authLevel(e) === 'warning' || (authStatus(e) >= 400 && authStatus(e) <= 499);
      return severity(error, warning);
    }),
  },
  {
    name: 'project home: edge functions chart by minute (console lines drop)',
    from: { path: USAGE, commit: '0a83958295e31bed1d56002ec6202f528d8a6f67' },
    sql: chartSql('function_edge_logs', fnEdgeJoins, 'response.status_code >= 500', 'response.status_code >= 400 AND response.status_code < 500'),
    params: lastHour,
    expect: chart(relay(lastHour).filter(withRequestAndResponse), 'minute', CHART_KEYS, (e) => severity(status(e) >= 500, status(e) >= 400 && status(e) < 500)),
  },
  {
    name: 'project home: database chart by minute',
    from: { path: LOGS_UTILS, commit: LOGS_UTILS_NOW },
    sql: chartSql(
      'postgres_logs',
      `cross join unnest(metadata) as m
  cross join unnest(m.parsed) as parsed`,
      `parsed.error_severity IN ('ERROR', 'FATAL', 'PANIC')`,
      `parsed.error_severity IN ('WARNING')`,
    ),
    params: lastHour,
    expect: chart(pg(lastHour), 'minute', CHART_KEYS, (e) => severity(['ERROR', 'FATAL', 'PANIC'].includes(pgSeverity(e)), pgSeverity(e) === 'WARNING')),
  },
  {
    name: 'project home: edge functions chart, older count(t.timestamp) shape',
    from: { path: LOGS_UTILS, commit: LOGS_UTILS_OLD },
    sql: `
SELECT
-- log-event-chart
  timestamp_trunc(t.timestamp, minute) as timestamp,
  count(t.timestamp) as count
FROM
  function_edge_logs t
  ${fnEdgeJoins}
  where t.timestamp > '${chartFloor}'
GROUP BY
timestamp
ORDER BY
  timestamp ASC
  `,
    params: lastHour,
    expect: chart(relay(lastHour).filter(withRequestAndResponse), 'minute', ['count'] as const, () => ['count']),
  },

  // Auth overview: errors of the last 24 hours --------------------------------------------------
  {
    name: 'auth overview: top response errors of /auth/v1',
    from: { path: AUTH_OVERVIEW, commit: '8c986c82fec1ccd751a87f285e778fd06e7ea751' },
    sql: `
  select
    request.method as method,
    request.path as path,
    response.status_code as status_code,
    count(*) as count
  from edge_logs
    cross join unnest(metadata) as m
    cross join unnest(m.request) as request
    cross join unnest(m.response) as response
  where path like '%auth/v1%'
    and response.status_code between 400 and 599
  group by method, path, status_code
  order by count desc
  limit 10
`,
    params: lastDay,
    expect: topAuthErrors(),
  },
  {
    name: 'auth overview: top error codes of /auth/v1 (response.headers unnested)',
    from: { path: AUTH_OVERVIEW, commit: '8c986c82fec1ccd751a87f285e778fd06e7ea751' },
    sql: `
  select
    h.x_sb_error_code as error_code,
    count(*) as count
  from edge_logs
    cross join unnest(metadata) as m
    cross join unnest(m.request) as request
    cross join unnest(m.response) as response
    cross join unnest(response.headers) as h
  where path like '%auth/v1%'
    and response.status_code between 400 and 599
    and h.x_sb_error_code is not null
  group by error_code
  order by count desc
  limit 10
`,
    params: lastDay,
    expect: topAuthErrorCodes(),
  },

  // combined log stats ----------------------------------------------------------------------------
  {
    name: 'combined stats: storage chart by hour',
    from: { path: COMBINED, commit: '039c277e964f48d56c2f135fe9b3c2fe76843234' },
    sql: combinedChartSql('storage_logs', 'HOUR', lastHour),
    params: lastHour,
    expect: chart(storage(lastHour), 'hour', CHART_KEYS, () => ['ok_count']),
  },
  {
    name: 'combined stats: realtime chart by minute',
    from: { path: COMBINED, commit: '039c277e964f48d56c2f135fe9b3c2fe76843234' },
    sql: combinedChartSql('realtime_logs', 'MINUTE', lastHour),
    params: lastHour,
    expect: chart(realtime(lastHour), 'minute', CHART_KEYS, () => ['ok_count']),
  },
  {
    name: 'combined stats: PostgREST count',
    from: { path: COMBINED, commit: '039c277e964f48d56c2f135fe9b3c2fe76843234' },
    sql: 'SELECT count(*) as count FROM postgrest_logs  ',
    params: lastHour,
    expect: [{ count: rest(lastHour).length }],
  },
  {
    name: 'combined stats: auth count (a line without metadata drops)',
    from: { path: COMBINED, commit: '039c277e964f48d56c2f135fe9b3c2fe76843234' },
    sql: 'SELECT count(*) as count FROM auth_logs cross join unnest(metadata) as metadata ',
    params: lastHour,
    expect: [{ count: auth(lastHour).filter(carries('metadata')).length }],
  },
];
