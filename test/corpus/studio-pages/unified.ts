/**
 * Studio's unified logs page, as it queries `logs.all` (BigQuery path). Templates read in
 * supabase/supabase:
 *
 * - apps/studio/components/interfaces/UnifiedLogs/UnifiedLogs.queries.bq.ts
 *   @ 051c828c368ec4ccf30c4e0c4ad9785cfaf6e2bd: the current BigQuery shapes (kept beside the OTEL /
 *   ClickHouse `FROM logs` version behind a feature flag): the unified CTE built from the effective
 *   log types (default: postgres + postgrest), `filter` URL params (`col:eq|neq|ilike|notilike:v`),
 *   the bundled COUNTIF count query with its facet CTEs, and the chart.
 * - apps/studio/components/interfaces/UnifiedLogs/UnifiedLogs.queries.ts
 *   @ ec8927ecc4b67f6bcd14c10fbffbd5d9ff2cd0d1: an older shape (five sources always unioned, filters
 *   taken from the search params, edge function logs joined on execution_id with an ARRAY_AGG of
 *   STRUCTs, auth rows keyed by the auth id, a separate count CTE that also carries edge rows).
 * - apps/studio/data/logs/unified-logs-infinite-query.ts @ e6c5c435ed46e68a21fe4230da0f21ea1637a6c5:
 *   appends `ORDER BY timestamp DESC, id DESC LIMIT 50`; pages by moving iso_timestamp_end to the
 *   last row's timestamp (microseconds / 1000, as a millisecond ISO string); live mode moves it to now
 *   and keeps iso_timestamp_start.
 * - apps/studio/data/logs/unified-logs-facet-count-query.ts @ e6c5c435ed46e68a21fe4230da0f21ea1637a6c5:
 *   the single-facet query (`<cte>, <facet>_count AS (...) SELECT dimension, value, count from
 *   <facet>_count;`), with the older getFacetCountCTE.
 * - apps/studio/components/interfaces/UnifiedLogs/Queries/ServiceFlowQueries/ServiceFlow.sql.ts
 *   @ afb45a7ed42eb1aaa750632485894641bc7d5738: the service-flow (detail) queries by log id, sent by
 *   apps/studio/data/logs/unified-log-inspection-query.ts @ 282be037f13f7c943d973d2273d998d837e0ff9d.
 *
 * The OTEL queries (UnifiedLogs.queries.ts at its newest, UnifiedLogs.queries.traced.ts, the request
 * timeline and attributes queries) read ClickHouse's `logs` table through another endpoint and are not
 * sent to logs.all, so they are not here.
 *
 * 38 cases. Expected rows are computed by plain code over the fixture (BigQuery's semantics: CROSS
 * JOIN UNNEST of a record an event lacks drops the event, DESC puts NULLs last, ASC first).
 */
import type { PageCase, Row } from './harness.ts';
import { unifiedFixture as F } from './unified-fixture.ts';

// ---------------------------------------------------------------------------------------------
// where each template comes from

const BQ = {
  path: 'apps/studio/components/interfaces/UnifiedLogs/UnifiedLogs.queries.bq.ts',
  commit: '051c828c368ec4ccf30c4e0c4ad9785cfaf6e2bd',
};
const OLD = {
  path: 'apps/studio/components/interfaces/UnifiedLogs/UnifiedLogs.queries.ts',
  commit: 'ec8927ecc4b67f6bcd14c10fbffbd5d9ff2cd0d1',
};
const FACET = {
  path: 'apps/studio/data/logs/unified-logs-facet-count-query.ts',
  commit: 'e6c5c435ed46e68a21fe4230da0f21ea1637a6c5',
};
const FLOW = {
  path: 'apps/studio/components/interfaces/UnifiedLogs/Queries/ServiceFlowQueries/ServiceFlow.sql.ts',
  commit: 'afb45a7ed42eb1aaa750632485894641bc7d5738',
};

// ---------------------------------------------------------------------------------------------
// time

/** Unix microseconds of an ISO text with up to six fractional digits. */
function us(iso: string): number {
  const m = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d+))?Z$/.exec(iso);
  if (!m) throw new Error(`not an ISO timestamp: ${iso}`);
  return Date.parse(`${m[1]}Z`) * 1000 + Number((m[2] ?? '').padEnd(6, '0').slice(0, 6));
}

/** Studio's cursor: a row's microseconds turned into a millisecond ISO string. */
const cursorIso = (micros: number) => new Date(micros / 1000).toISOString();

const START = '2025-01-15T11:00:00.000Z';
const END = '2025-01-15T12:00:00.000Z';
const HOUR_START = '2025-01-14T23:00:00.000Z'; // 13 hours: HOUR buckets
const DAY_START = '2025-01-12T12:00:00.000Z'; // 3 days: DAY buckets
const LIVE_END = '2025-01-15T12:30:00.000Z'; // "now" when live mode asks for newer rows

interface Window {
  start: string;
  end: string;
}
const W: Window = { start: START, end: END };
const params = (w: Window): Record<string, string> => ({ iso_timestamp_start: w.start, iso_timestamp_end: w.end });

// ---------------------------------------------------------------------------------------------
// the fixture as logs.all's CTEs see it

type Rec = Record<string, unknown>;
const rec = (v: unknown): Rec | undefined => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Rec) : undefined);
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const num = (v: unknown): number | null => (typeof v === 'number' ? v : null);

const TOP_PROJECT = new Set(['cloudflare.logs.prod', 'postgres.logs', 'gotrue.logs.prod', 'postgREST.logs.prod', 'pgbouncer.logs.prod']);

/** The events a logs.all CTE gives: this project, start < timestamp <= end. */
function cte(source: string, w: Window): Row[] {
  return (F[source] ?? []).filter((e) => {
    const m = rec(e.metadata);
    const project = TOP_PROJECT.has(source) ? e.project : source.startsWith('deno-') ? m?.project_ref : m?.project;
    const t = us(e.timestamp as string);
    return project === 'default' && t > us(w.start) && t <= us(w.end);
  });
}

const httpLevel = (code: number | null) =>
  code !== null && code >= 200 && code <= 299
    ? 'success'
    : code !== null && code >= 400 && code <= 499
      ? 'warning'
      : code !== null && code >= 500
        ? 'error'
        : 'success';

const pgLevel = (severity: string | null) =>
  severity === 'LOG' ? 'success' : severity === 'WARNING' ? 'warning' : severity === 'FATAL' || severity === 'ERROR' ? 'error' : null;

/** One row of the unified CTE (every column but `logs`). */
interface U {
  id: string | null;
  source_id: string | null;
  timestamp: number | null;
  log_type: string;
  status: string | null;
  level: string | null;
  pathname: string | null;
  event_message: string | null;
  method: string | null;
  log_count: number | null;
}

/** edge_logs through `cross join unnest(metadata) / (request) / (response)`: events lacking one drop. */
function edgeRows(w: Window, kind: 'edge' | 'postgrest' | 'storage'): U[] {
  const out: U[] = [];
  for (const e of cte('cloudflare.logs.prod', w)) {
    const req = rec(rec(e.metadata)?.request);
    const res = rec(rec(e.metadata)?.response);
    if (!req || !res) continue;
    const path = str(req.path);
    if (path === null) continue;
    const rest = path.includes('/rest/');
    const storage = path.includes('/storage/');
    if (kind === 'postgrest' ? !rest : kind === 'storage' ? !storage : rest || storage) continue;
    const code = num(res.status_code);
    out.push({
      id: e.id as string,
      source_id: null,
      timestamp: us(e.timestamp as string),
      log_type: kind,
      status: code === null ? null : String(code),
      level: httpLevel(code),
      pathname: path,
      event_message: null,
      method: str(req.method),
      log_count: null,
    });
  }
  return out;
}

function postgresRows(w: Window): U[] {
  const out: U[] = [];
  for (const e of cte('postgres.logs', w)) {
    const parsed = rec(rec(e.metadata)?.parsed);
    if (!parsed) continue;
    out.push({
      id: e.id as string,
      source_id: null,
      timestamp: us(e.timestamp as string),
      log_type: 'postgres',
      status: str(parsed.sql_state_code),
      level: pgLevel(str(parsed.error_severity)),
      pathname: null,
      event_message: e.event_message as string,
      method: null,
      log_count: null,
    });
  }
  return out;
}

/** function_logs grouped by a metadata key (rows without it left out). */
function functionLogGroups(w: Window, key: 'request_id' | 'execution_id'): Map<string, { count: number; message: string }> {
  const groups = new Map<string, { count: number; messages: Set<string> }>();
  for (const e of cte('deno-subhosting-events', w)) {
    const k = str(rec(e.metadata)?.[key]);
    if (k === null) continue;
    const g = groups.get(k) ?? { count: 0, messages: new Set<string>() };
    g.count++;
    g.messages.add(e.event_message as string);
    groups.set(k, g);
  }
  const out = new Map<string, { count: number; message: string }>();
  for (const [k, g] of groups) {
    // ANY_VALUE: the fixture gives every group one message so the answer is determined
    if (g.messages.size !== 1) throw new Error(`function log group ${k} has several messages`);
    out.set(k, { count: g.count, message: [...g.messages][0]! });
  }
  return out;
}

/** function_edge_logs through `cross join unnest(response) / (request)`: console lines drop. */
function edgeFunctionRows(w: Window, key: 'request_id' | 'execution_id' | null): U[] {
  const groups = key === null ? new Map<string, { count: number; message: string }>() : functionLogGroups(w, key);
  const out: U[] = [];
  for (const e of cte('deno-relay-logs', w)) {
    const m = rec(e.metadata);
    const req = rec(m?.request);
    const res = rec(m?.response);
    if (!req || !res) continue;
    const code = num(res.status_code);
    const agg = key === null ? undefined : groups.get(str(m?.[key]) ?? '');
    out.push({
      id: e.id as string,
      source_id: null,
      timestamp: us(e.timestamp as string),
      log_type: 'edge function',
      status: code === null ? null : String(code),
      level: httpLevel(code),
      pathname: str(req.pathname),
      event_message: agg?.message ?? '',
      method: str(req.method),
      log_count: agg?.count ?? null,
    });
  }
  return out;
}

/**
 * auth_logs with request_id, LEFT JOIN (edge_logs × metadata × response × response.headers ×
 * request) ON request_id = cf_ray. `bq`: id is the edge row's (NULL when none matched), source_id
 * the auth row's; `old`: id is the auth row's.
 */
function authRows(w: Window, variant: 'bq' | 'old'): U[] {
  const edges = cte('cloudflare.logs.prod', w).filter((e) => {
    const m = rec(e.metadata);
    return rec(m?.request) && rec(m?.response) && rec(rec(m?.response)?.headers);
  });
  const out: U[] = [];
  for (const a of cte('gotrue.logs.prod', w)) {
    const requestId = str(rec(a.metadata)?.request_id);
    if (requestId === null) continue;
    const matches = edges.filter((e) => str(rec(rec(rec(e.metadata)?.response)?.headers)?.cf_ray) === requestId);
    for (const e of matches.length > 0 ? matches : [undefined]) {
      const req = rec(rec(e?.metadata)?.request);
      const code = num(rec(rec(e?.metadata)?.response)?.status_code);
      out.push({
        id: variant === 'bq' ? ((e?.id as string | undefined) ?? null) : (a.id as string),
        source_id: variant === 'bq' ? (a.id as string) : null,
        timestamp: e ? us(e.timestamp as string) : null,
        log_type: 'auth',
        status: code === null ? null : String(code),
        level: httpLevel(code),
        pathname: str(req?.path),
        event_message: null,
        method: str(req?.method),
        log_count: null,
      });
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// relational helpers over expected rows

const cmpDescNullsLast = (a: string | number | null, b: string | number | null) => (a === b ? 0 : a === null ? 1 : b === null ? -1 : a > b ? -1 : 1);

/** ORDER BY timestamp DESC, id DESC LIMIT 50 */
const page = (rows: U[]) => [...rows].sort((a, b) => cmpDescNullsLast(a.timestamp, b.timestamp) || cmpDescNullsLast(a.id, b.id)).slice(0, 50);

const bqOut = (r: U): Row => ({ ...r });
const oldOut = (r: U): Row => {
  const { source_id: _, ...rest } = r;
  return rest;
};

/** `SELECT '<dim>' as dimension, <col> as value, COUNT(*) as count ... WHERE <col> IS NOT NULL GROUP BY <col>` */
function facet(rows: readonly U[], dim: keyof U): Row[] {
  const counts = new Map<unknown, number>();
  for (const r of rows) if (r[dim] !== null) counts.set(r[dim], (counts.get(r[dim]) ?? 0) + 1);
  return [...counts].map(([value, count]) => ({ dimension: dim, value, count }));
}

const trunc = (t: number | null, unit: 'MINUTE' | 'HOUR' | 'DAY') => {
  if (t === null) return null;
  const size = unit === 'MINUTE' ? 60e6 : unit === 'HOUR' ? 3600e6 : 86400e6;
  return Math.floor(t / size) * size;
};

/** The chart: per bucket COUNTIF(level = ...) and COUNT(*), buckets ascending (NULL first). */
function chart(rows: readonly U[], unit: 'MINUTE' | 'HOUR' | 'DAY', bucketName: string, total: boolean): Row[] {
  const buckets = new Map<number | null, U[]>();
  for (const r of rows) {
    const b = trunc(r.timestamp, unit);
    buckets.set(b, [...(buckets.get(b) ?? []), r]);
  }
  return [...buckets]
    .sort(([a], [b]) => (a === b ? 0 : a === null ? -1 : b === null ? 1 : a - b))
    .map(([b, rs]) => ({
      [bucketName]: b,
      success: rs.filter((r) => r.level === 'success').length,
      warning: rs.filter((r) => r.level === 'warning').length,
      error: rs.filter((r) => r.level === 'error').length,
      ...(total ? { total_per_bucket: rs.length } : {}),
    }));
}

const lower = (s: string | null) => (s === null ? null : s.toLowerCase());

// ---------------------------------------------------------------------------------------------
// UnifiedLogs.queries.bq.ts: templates

const BQ_EDGE = `
    select
      id,
      null as source_id,
      el.timestamp as timestamp,
      'edge' as log_type,
      CAST(edge_logs_response.status_code AS STRING) as status,
      CASE
          WHEN edge_logs_response.status_code BETWEEN 200 AND 299 THEN 'success'
          WHEN edge_logs_response.status_code BETWEEN 400 AND 499 THEN 'warning'
          WHEN edge_logs_response.status_code >= 500 THEN 'error'
          ELSE 'success'
      END as level,
      edge_logs_request.path as pathname,
      null as event_message,
      edge_logs_request.method as method,
      null as log_count,
      null as logs
    from edge_logs as el
    cross join unnest(metadata) as edge_logs_metadata
    cross join unnest(edge_logs_metadata.request) as edge_logs_request
    cross join unnest(edge_logs_metadata.response) as edge_logs_response

    -- ONLY include logs where the path does not include /rest/
    WHERE edge_logs_request.path NOT LIKE '%/rest/%'
    AND edge_logs_request.path NOT LIKE '%/storage/%'
  `;

const BQ_POSTGREST = `
    select
      id,
      null as source_id,
      el.timestamp as timestamp,
      'postgrest' as log_type,
      CAST(edge_logs_response.status_code AS STRING) as status,
      CASE
          WHEN edge_logs_response.status_code BETWEEN 200 AND 299 THEN 'success'
          WHEN edge_logs_response.status_code BETWEEN 400 AND 499 THEN 'warning'
          WHEN edge_logs_response.status_code >= 500 THEN 'error'
          ELSE 'success'
      END as level,
      edge_logs_request.path as pathname,
      null as event_message,
      edge_logs_request.method as method,
      null as log_count,
      null as logs
    from edge_logs as el
    cross join unnest(metadata) as edge_logs_metadata
    cross join unnest(edge_logs_metadata.request) as edge_logs_request
    cross join unnest(edge_logs_metadata.response) as edge_logs_response

    -- ONLY include logs where the path includes /rest/
    WHERE edge_logs_request.path LIKE '%/rest/%'
  `;

const BQ_POSTGRES = `
    select
      id,
      null as source_id,
      pgl.timestamp as timestamp,
      'postgres' as log_type,
      CAST(pgl_parsed.sql_state_code AS STRING) as status,
      CASE
          WHEN pgl_parsed.error_severity = 'LOG' THEN 'success'
          WHEN pgl_parsed.error_severity = 'WARNING' THEN 'warning'
          WHEN pgl_parsed.error_severity = 'FATAL' THEN 'error'
          WHEN pgl_parsed.error_severity = 'ERROR' THEN 'error'
          ELSE null
      END as level,
      null as pathname,
      event_message as event_message,
      null as method,
      null as log_count,
      null as logs
    from postgres_logs as pgl
    cross join unnest(pgl.metadata) as pgl_metadata
    cross join unnest(pgl_metadata.parsed) as pgl_parsed
  `;

const BQ_EDGE_FUNCTION = `
    select
      id,
      null as source_id,
      fel.timestamp as timestamp,
      'edge function' as log_type,
      CAST(fel_response.status_code AS STRING) as status,
      CASE
          WHEN fel_response.status_code BETWEEN 200 AND 299 THEN 'success'
          WHEN fel_response.status_code BETWEEN 400 AND 499 THEN 'warning'
          WHEN fel_response.status_code >= 500 THEN 'error'
          ELSE 'success'
      END as level,
      fel_request.pathname as pathname,
      COALESCE(function_logs_agg.last_event_message, '') as event_message,
      fel_request.method as method,
      function_logs_agg.function_log_count as log_count,
      null as logs
    from function_edge_logs as fel
    cross join unnest(metadata) as fel_metadata
    cross join unnest(fel_metadata.response) as fel_response
    cross join unnest(fel_metadata.request) as fel_request
    left join (
    SELECT
        fl_metadata.request_id,
        COUNT(fl.id) as function_log_count,
        ANY_VALUE(fl.event_message) as last_event_message
    FROM function_logs as fl
    CROSS JOIN UNNEST(fl.metadata) as fl_metadata
    WHERE fl_metadata.request_id IS NOT NULL
    GROUP BY fl_metadata.request_id
    ) as function_logs_agg on fel_metadata.request_id = function_logs_agg.request_id
  `;

const BQ_AUTH = `
    select
      el_in_al.id as id,
      al.id as source_id,
      el_in_al.timestamp as timestamp,
      'auth' as log_type,
      CAST(el_in_al_response.status_code AS STRING) as status,
      CASE
          WHEN el_in_al_response.status_code BETWEEN 200 AND 299 THEN 'success'
          WHEN el_in_al_response.status_code BETWEEN 400 AND 499 THEN 'warning'
          WHEN el_in_al_response.status_code >= 500 THEN 'error'
          ELSE 'success'
      END as level,
      el_in_al_request.path as pathname,
      null as event_message,
      el_in_al_request.method as method,
      null as log_count,
      null as logs
    from auth_logs as al
    cross join unnest(metadata) as al_metadata
    left join (
    edge_logs as el_in_al
        cross join unnest (metadata) as el_in_al_metadata
        cross join unnest (el_in_al_metadata.response) as el_in_al_response
        cross join unnest (el_in_al_response.headers) as el_in_al_response_headers
        cross join unnest (el_in_al_metadata.request) as el_in_al_request
    )
    on al_metadata.request_id = el_in_al_response_headers.cf_ray
    WHERE al_metadata.request_id is not null
  `;

const BQ_STORAGE = `
    select
      id,
      null as source_id,
      el.timestamp as timestamp,
      'storage' as log_type,
      CAST(edge_logs_response.status_code AS STRING) as status,
      CASE
          WHEN edge_logs_response.status_code BETWEEN 200 AND 299 THEN 'success'
          WHEN edge_logs_response.status_code BETWEEN 400 AND 499 THEN 'warning'
          WHEN edge_logs_response.status_code >= 500 THEN 'error'
          ELSE 'success'
      END as level,
      edge_logs_request.path as pathname,
      null as event_message,
      edge_logs_request.method as method,
      null as log_count,
      null as logs
    from edge_logs as el
    cross join unnest(metadata) as edge_logs_metadata
    cross join unnest(edge_logs_metadata.request) as edge_logs_request
    cross join unnest(edge_logs_metadata.response) as edge_logs_response
    -- ONLY include logs where the path includes /storage/
    WHERE edge_logs_request.path LIKE '%/storage/%'
  `;

const BQ_FRAGMENTS: Record<string, string> = {
  edge: BQ_EDGE,
  postgrest: BQ_POSTGREST,
  postgres: BQ_POSTGRES,
  'edge function': BQ_EDGE_FUNCTION,
  auth: BQ_AUTH,
  storage: BQ_STORAGE,
};

/** UnifiedLogs.constants DEFAULT_LOG_TYPES: postgres + postgrest ("the cheap two-source set"). */
const DEFAULT_TYPES = ['postgres', 'postgrest'];
const ALL_TYPES = ['edge', 'postgrest', 'storage', 'postgres', 'edge function', 'auth'];

interface Filter {
  column: string;
  op: 'eq' | 'neq' | 'ilike' | 'notilike';
  value: string;
}
const parseFilters = (filter: readonly string[]): Filter[] =>
  filter.map((raw) => {
    const [column, op, ...rest] = raw.split(':');
    return { column: column!, op: op as Filter['op'], value: rest.join(':') };
  });

function effectiveTypes(filter: readonly string[]): string[] {
  const f = parseFilters(filter).filter((x) => x.column === 'log_type');
  if (f.length === 0) return [...DEFAULT_TYPES];
  const included = f.filter((x) => x.op === 'eq').map((x) => x.value);
  const excluded = new Set(f.filter((x) => x.op === 'neq').map((x) => x.value));
  return (included.length > 0 ? included : ALL_TYPES).filter((t) => !excluded.has(t));
}

const quote = (v: string) => `'${v.replaceAll("'", "''").replaceAll('\\', '\\\\')}'`;
const wrapIlike = (v: string) => (v.includes('%') ? v : `%${v}%`);

/** buildConditions: one predicate per column, grouped in order of first appearance. */
function bqConditions(filter: readonly string[], excludeKey?: string): string[] {
  const grouped = new Map<string, { op: Filter['op']; values: string[] }>();
  for (const f of parseFilters(filter)) {
    const g = grouped.get(f.column);
    if (g) {
      g.values.push(f.value);
      g.op = f.op;
    } else grouped.set(f.column, { op: f.op, values: [f.value] });
  }
  const out: string[] = [];
  for (const [key, { op, values }] of grouped) {
    if (key === excludeKey) continue;
    const col = `\`${key}\``;
    const neq = op === 'neq';
    if ((key === 'event_message' || key === 'pathname') && (op === 'ilike' || op === 'notilike')) {
      const kw = op === 'notilike' ? 'NOT LIKE' : 'LIKE';
      out.push(`(${values.map((v) => `LOWER(${col}) ${kw} LOWER(${quote(wrapIlike(v))})`).join(op === 'notilike' ? ' AND ' : ' OR ')})`);
    } else if (key === 'host' || key === 'pathname') {
      out.push(`(${values.map((v) => `${col} ${neq ? 'NOT LIKE' : 'LIKE'} ${quote(`%${v}%`)}`).join(neq ? ' AND ' : ' OR ')})`);
    } else {
      out.push(`${col} ${neq ? 'NOT IN' : 'IN'} (${values.map(quote).join(',')})`);
    }
  }
  return out;
}

const bqWhere = (c: string[]) => (c.length > 0 ? `WHERE ${c.join(' AND ')}` : '');

const bqCte = (types: string[]) => {
  const known = types.filter((t) => t in BQ_FRAGMENTS);
  const effective = known.length > 0 ? known : DEFAULT_TYPES;
  return `
WITH unified_logs AS (
    ${effective.map((t) => BQ_FRAGMENTS[t]).join(' union all ')}
)
  `;
};

const bqUnifiedQuery = (filter: readonly string[]) => `
${bqCte(effectiveTypes(filter))}
SELECT
    id,
    source_id,
    timestamp,
    log_type,
    status,
    level,
    pathname,
    event_message,
    method,
    log_count,
    logs
FROM unified_logs
${bqWhere(bqConditions(filter))}
`;

/** unified-logs-infinite-query: the page query. */
const bqPage = (filter: readonly string[]) => `${bqUnifiedQuery(filter)} ORDER BY timestamp DESC, id DESC LIMIT 50`;

function bqFacetCte(filter: readonly string[], facetName: string, cteName: string): string {
  const col = `\`${facetName}\``;
  const base = bqConditions(filter, facetName);
  const where = base.length > 0 ? `WHERE ${base.join(' AND ')} AND ${col} IS NOT NULL` : `WHERE ${col} IS NOT NULL`;
  return `
${cteName} AS (
  SELECT '${facetName}' as dimension, ${col} as value, COUNT(*) as count
  FROM unified_logs
  ${where}
  
  GROUP BY ${col}
  LIMIT 20
)
`;
}

function bqCountQuery(filter: readonly string[]): string {
  const logTypeConditions = bqConditions(filter, 'log_type');
  const levelConditions = bqConditions(filter, 'level');
  const logTypeWhere = logTypeConditions.length > 0 ? `WHERE ${logTypeConditions.join(' AND ')}` : 'WHERE log_type IS NOT NULL';
  const levelWhere = levelConditions.length > 0 ? `WHERE ${levelConditions.join(' AND ')}` : 'WHERE level IS NOT NULL';
  return `
${bqCte(effectiveTypes(filter))},

-- Single COUNTIF pass for all log_type buckets + total (no GROUP BY / sort needed)
log_type_counts AS (
  SELECT
    COUNT(*) AS total,
    COUNTIF(log_type = 'edge') AS edge_count,
    COUNTIF(log_type = 'postgrest') AS postgrest_count,
    COUNTIF(log_type = 'storage') AS storage_count,
    COUNTIF(log_type = 'postgres') AS postgres_count,
    COUNTIF(log_type = 'edge function') AS edge_function_count,
    COUNTIF(log_type = 'auth') AS auth_count
  FROM unified_logs
  ${logTypeWhere}
),

-- Single COUNTIF pass for all level buckets
level_counts AS (
  SELECT
    COUNTIF(level = 'success') AS success_count,
    COUNTIF(level = 'warning') AS warning_count,
    COUNTIF(level = 'error') AS error_count
  FROM unified_logs
  ${levelWhere}
),

-- Variable facets: open-ended values still need GROUP BY
${bqFacetCte(filter, 'method', 'method_count')},
${bqFacetCte(filter, 'status', 'status_count')},
${bqFacetCte(filter, 'pathname', 'pathname_count')}

SELECT 'total' AS dimension, 'all' AS value, total AS count FROM log_type_counts
UNION ALL SELECT 'log_type', 'edge', edge_count FROM log_type_counts
UNION ALL SELECT 'log_type', 'postgrest', postgrest_count FROM log_type_counts
UNION ALL SELECT 'log_type', 'storage', storage_count FROM log_type_counts
UNION ALL SELECT 'log_type', 'postgres', postgres_count FROM log_type_counts
UNION ALL SELECT 'log_type', 'edge function', edge_function_count FROM log_type_counts
UNION ALL SELECT 'log_type', 'auth', auth_count FROM log_type_counts
UNION ALL SELECT 'level', 'success', success_count FROM level_counts
UNION ALL SELECT 'level', 'warning', warning_count FROM level_counts
UNION ALL SELECT 'level', 'error', error_count FROM level_counts
UNION ALL SELECT dimension, value, count FROM method_count
UNION ALL SELECT dimension, value, count FROM status_count
UNION ALL SELECT dimension, value, count FROM pathname_count
`;
}

const bqChartQuery = (filter: readonly string[], unit: 'MINUTE' | 'HOUR' | 'DAY') => `
${bqCte(effectiveTypes(filter))}
SELECT
  TIMESTAMP_TRUNC(timestamp, ${unit}) as time_bucket,
  COUNTIF(level = 'success') as success,
  COUNTIF(level = 'warning') as warning,
  COUNTIF(level = 'error') as error,
  COUNT(*) as total_per_bucket
FROM unified_logs
${bqWhere(bqConditions(filter))}
GROUP BY time_bucket
ORDER BY time_bucket ASC
`;

// UnifiedLogs.queries.bq.ts: expected rows

function bqRows(w: Window, types: readonly string[]): U[] {
  const known = types.filter((t) => t in BQ_FRAGMENTS);
  const out: U[] = [];
  for (const t of known.length > 0 ? known : DEFAULT_TYPES) {
    if (t === 'edge' || t === 'postgrest' || t === 'storage') out.push(...edgeRows(w, t));
    else if (t === 'postgres') out.push(...postgresRows(w));
    else if (t === 'edge function') out.push(...edgeFunctionRows(w, 'request_id'));
    else if (t === 'auth') out.push(...authRows(w, 'bq'));
  }
  return out;
}

/** The predicate bqConditions writes, evaluated as BigQuery would (NULL never passes). */
function bqMatches(r: U, filter: readonly string[], excludeKey?: string): boolean {
  const grouped = new Map<string, { op: Filter['op']; values: string[] }>();
  for (const f of parseFilters(filter)) {
    const g = grouped.get(f.column);
    if (g) {
      g.values.push(f.value);
      g.op = f.op;
    } else grouped.set(f.column, { op: f.op, values: [f.value] });
  }
  for (const [key, { op, values }] of grouped) {
    if (key === excludeKey) continue;
    const v = (r as unknown as Record<string, string | null>)[key];
    if (v === undefined) throw new Error(`no column ${key}`);
    if (v === null) return false;
    if ((key === 'event_message' || key === 'pathname') && (op === 'ilike' || op === 'notilike')) {
      const has = (p: string) => lower(v)!.includes(p.replaceAll('%', '').toLowerCase());
      if (op === 'ilike' ? !values.some(has) : values.some(has)) return false;
    } else if (key === 'host' || key === 'pathname') {
      const has = (p: string) => v.includes(p);
      if (op === 'neq' ? values.some(has) : !values.some(has)) return false;
    } else if (op === 'neq' ? values.includes(v) : !values.includes(v)) return false;
  }
  return true;
}

function bqListing(name: string, filter: string[], w: Window = W, unordered = false): PageCase {
  const rows = bqRows(w, effectiveTypes(filter)).filter((r) => bqMatches(r, filter));
  return {
    name,
    from: BQ,
    sql: bqPage(filter),
    params: params(w),
    expect: page(rows).map(bqOut),
    ...(unordered ? { unordered: true } : {}),
  };
}

function bqCountExpect(w: Window, filter: readonly string[]): Row[] {
  const all = bqRows(w, effectiveTypes(filter));
  const byType = all.filter((r) => bqMatches(r, filter, 'log_type') && r.log_type !== null);
  const byLevel = all.filter((r) => bqMatches(r, filter, 'level') && r.level !== null);
  const countType = (t: string) => byType.filter((r) => r.log_type === t).length;
  const countLevel = (l: string) => byLevel.filter((r) => r.level === l).length;
  return [
    { dimension: 'total', value: 'all', count: byType.length },
    ...ALL_TYPES.map((t) => ({ dimension: 'log_type', value: t, count: countType(t) })),
    ...['success', 'warning', 'error'].map((l) => ({ dimension: 'level', value: l, count: countLevel(l) })),
    ...(['method', 'status', 'pathname'] as const).flatMap((f) =>
      facet(
        all.filter((r) => bqMatches(r, filter, f)),
        f,
      ),
    ),
  ];
}

function bqChart(name: string, filter: string[], w: Window, unit: 'MINUTE' | 'HOUR' | 'DAY'): PageCase {
  const rows = bqRows(w, effectiveTypes(filter)).filter((r) => bqMatches(r, filter));
  return { name, from: BQ, sql: bqChartQuery(filter, unit), params: params(w), expect: chart(rows, unit, 'time_bucket', true) };
}

// ---------------------------------------------------------------------------------------------
// UnifiedLogs.queries.ts @ ec8927ec: templates

const OLD_POSTGREST = `
    select 
      id,
      el.timestamp as timestamp,
      'postgrest' as log_type,
      CAST(edge_logs_response.status_code AS STRING) as status,
      CASE
          WHEN edge_logs_response.status_code BETWEEN 200 AND 299 THEN 'success'
          WHEN edge_logs_response.status_code BETWEEN 400 AND 499 THEN 'warning'
          WHEN edge_logs_response.status_code >= 500 THEN 'error'
          ELSE 'success'
      END as level,
      edge_logs_request.path as pathname,
      null as event_message,
      edge_logs_request.method as method,
      null as log_count,
      null as logs
    from edge_logs as el
    cross join unnest(metadata) as edge_logs_metadata
    cross join unnest(edge_logs_metadata.request) as edge_logs_request
    cross join unnest(edge_logs_metadata.response) as edge_logs_response

    -- ONLY include logs where the path includes /rest/
    WHERE edge_logs_request.path LIKE '%/rest/%'
  `;

const OLD_POSTGRES = `
    select 
      id,
      pgl.timestamp as timestamp,
      'postgres' as log_type,
      CAST(pgl_parsed.sql_state_code AS STRING) as status,
      CASE
          WHEN pgl_parsed.error_severity = 'LOG' THEN 'success'
          WHEN pgl_parsed.error_severity = 'WARNING' THEN 'warning'
          WHEN pgl_parsed.error_severity = 'FATAL' THEN 'error'
          WHEN pgl_parsed.error_severity = 'ERROR' THEN 'error'
          ELSE null
      END as level,
      null as pathname,
      event_message as event_message,
      null as method,
      null as log_count,
      null as logs
    from postgres_logs as pgl
    cross join unnest(pgl.metadata) as pgl_metadata
    cross join unnest(pgl_metadata.parsed) as pgl_parsed
  `;

const OLD_EDGE_FUNCTION = `
    select 
      id, 
      fel.timestamp as timestamp,
      'edge function' as log_type,
      CAST(fel_response.status_code AS STRING) as status,
      CASE
          WHEN fel_response.status_code BETWEEN 200 AND 299 THEN 'success'
          WHEN fel_response.status_code BETWEEN 400 AND 499 THEN 'warning'
          WHEN fel_response.status_code >= 500 THEN 'error'
          ELSE 'success'
      END as level,
      fel_request.pathname as pathname,
      COALESCE(function_logs_agg.last_event_message, '') as event_message,
      fel_request.method as method,
      function_logs_agg.function_log_count as log_count,
      function_logs_agg.logs as logs
    from function_edge_logs as fel
    cross join unnest(metadata) as fel_metadata
    cross join unnest(fel_metadata.response) as fel_response
    cross join unnest(fel_metadata.request) as fel_request
    left join (
    SELECT
        fl_metadata.execution_id,
        COUNT(fl.id) as function_log_count,
        ANY_VALUE(fl.event_message) as last_event_message,
        ARRAY_AGG(STRUCT(fl.id, fl.timestamp, fl.event_message, fl_metadata.level, fl_metadata.event_type)) as logs
    FROM function_logs as fl
    CROSS JOIN UNNEST(fl.metadata) as fl_metadata
    WHERE fl_metadata.execution_id IS NOT NULL
    GROUP BY fl_metadata.execution_id
    ) as function_logs_agg on fel_metadata.execution_id = function_logs_agg.execution_id
  `;

const OLD_AUTH = `
    select
      al.id as id, 
      el_in_al.timestamp as timestamp, 
      'auth' as log_type,
      CAST(el_in_al_response.status_code AS STRING) as status,
      CASE
          WHEN el_in_al_response.status_code BETWEEN 200 AND 299 THEN 'success'
          WHEN el_in_al_response.status_code BETWEEN 400 AND 499 THEN 'warning'
          WHEN el_in_al_response.status_code >= 500 THEN 'error'
          ELSE 'success'
      END as level,
      el_in_al_request.path as pathname,
      null as event_message,
      el_in_al_request.method as method,
      null as log_count,
      null as logs
    from auth_logs as al
    cross join unnest(metadata) as al_metadata 
    left join (
    edge_logs as el_in_al
        cross join unnest (metadata) as el_in_al_metadata 
        cross join unnest (el_in_al_metadata.response) as el_in_al_response 
        cross join unnest (el_in_al_response.headers) as el_in_al_response_headers 
        cross join unnest (el_in_al_metadata.request) as el_in_al_request
    )
    on al_metadata.request_id = el_in_al_response_headers.cf_ray
    WHERE al_metadata.request_id is not null
  `;

const OLD_STORAGE = `
    select 
      id,
      el.timestamp as timestamp,
      'storage' as log_type,
      CAST(edge_logs_response.status_code AS STRING) as status,
      CASE
          WHEN edge_logs_response.status_code BETWEEN 200 AND 299 THEN 'success'
          WHEN edge_logs_response.status_code BETWEEN 400 AND 499 THEN 'warning'
          WHEN edge_logs_response.status_code >= 500 THEN 'error'
          ELSE 'success'
      END as level,
      edge_logs_request.path as pathname,
      null as event_message,
      edge_logs_request.method as method,
      null as log_count,
      null as logs
    from edge_logs as el
    cross join unnest(metadata) as edge_logs_metadata
    cross join unnest(edge_logs_metadata.request) as edge_logs_request
    cross join unnest(edge_logs_metadata.response) as edge_logs_response
    -- ONLY include logs where the path includes /storage/
    WHERE edge_logs_request.path LIKE '%/storage/%'
  `;

const OLD_CTE = `
WITH unified_logs AS (
    ${OLD_POSTGREST}
    union all
    ${OLD_POSTGRES}
    union all 
    ${OLD_EDGE_FUNCTION}
    union all
    ${OLD_AUTH}
    union all
    ${OLD_STORAGE}
)
  `;

const OLD_COUNT_CTE = `
WITH unified_logs AS (
    -- Edge logs (non-rest, non-storage)
    select 
      id,
      'edge' as log_type,
      CAST(edge_logs_response.status_code AS STRING) as status,
      CASE
          WHEN edge_logs_response.status_code BETWEEN 200 AND 299 THEN 'success'
          WHEN edge_logs_response.status_code BETWEEN 400 AND 499 THEN 'warning'
          WHEN edge_logs_response.status_code >= 500 THEN 'error'
          ELSE 'success'
      END as level,
      edge_logs_request.path as pathname,
      edge_logs_request.method as method
    from edge_logs as el
    cross join unnest(metadata) as edge_logs_metadata
    cross join unnest(edge_logs_metadata.request) as edge_logs_request
    cross join unnest(edge_logs_metadata.response) as edge_logs_response
    WHERE edge_logs_request.path NOT LIKE '%/rest/%'
    AND edge_logs_request.path NOT LIKE '%/storage/%'
    
    union all
    
    -- Postgrest logs
    select 
      id,
      'postgrest' as log_type,
      CAST(edge_logs_response.status_code AS STRING) as status,
      CASE
          WHEN edge_logs_response.status_code BETWEEN 200 AND 299 THEN 'success'
          WHEN edge_logs_response.status_code BETWEEN 400 AND 499 THEN 'warning'
          WHEN edge_logs_response.status_code >= 500 THEN 'error'
          ELSE 'success'
      END as level,
      edge_logs_request.path as pathname,
      edge_logs_request.method as method
    from edge_logs as el
    cross join unnest(metadata) as edge_logs_metadata
    cross join unnest(edge_logs_metadata.request) as edge_logs_request
    cross join unnest(edge_logs_metadata.response) as edge_logs_response
    WHERE edge_logs_request.path LIKE '%/rest/%'
    
    union all
    
    -- Postgres logs
    select 
      id,
      'postgres' as log_type,
      CAST(pgl_parsed.sql_state_code AS STRING) as status,
      CASE
          WHEN pgl_parsed.error_severity = 'LOG' THEN 'success'
          WHEN pgl_parsed.error_severity = 'WARNING' THEN 'warning'
          WHEN pgl_parsed.error_severity = 'FATAL' THEN 'error'
          WHEN pgl_parsed.error_severity = 'ERROR' THEN 'error'
          ELSE null
      END as level,
      null as pathname,
      null as method
    from postgres_logs as pgl
    cross join unnest(pgl.metadata) as pgl_metadata
    cross join unnest(pgl_metadata.parsed) as pgl_parsed
    
    union all
    
    -- Edge function logs
    select 
      id,
      'edge function' as log_type,
      CAST(fel_response.status_code AS STRING) as status,
      CASE
          WHEN fel_response.status_code BETWEEN 200 AND 299 THEN 'success'
          WHEN fel_response.status_code BETWEEN 400 AND 499 THEN 'warning'
          WHEN fel_response.status_code >= 500 THEN 'error'
          ELSE 'success'
      END as level,
      fel_request.pathname as pathname,
      fel_request.method as method
    from function_edge_logs as fel
    cross join unnest(metadata) as fel_metadata
    cross join unnest(fel_metadata.response) as fel_response
    cross join unnest(fel_metadata.request) as fel_request
    
    union all
    
    -- Auth logs
    select
      al.id as id,
      'auth' as log_type,
      CAST(el_in_al_response.status_code AS STRING) as status,
      CASE
          WHEN el_in_al_response.status_code BETWEEN 200 AND 299 THEN 'success'
          WHEN el_in_al_response.status_code BETWEEN 400 AND 499 THEN 'warning'
          WHEN el_in_al_response.status_code >= 500 THEN 'error'
          ELSE 'success'
      END as level,
      el_in_al_request.path as pathname,
      el_in_al_request.method as method
    from auth_logs as al
    cross join unnest(metadata) as al_metadata 
    left join (
    edge_logs as el_in_al
        cross join unnest (metadata) as el_in_al_metadata 
        cross join unnest (el_in_al_metadata.response) as el_in_al_response 
        cross join unnest (el_in_al_response.headers) as el_in_al_response_headers 
        cross join unnest (el_in_al_metadata.request) as el_in_al_request
    )
    on al_metadata.request_id = el_in_al_response_headers.cf_ray
    WHERE al_metadata.request_id is not null
    
    union all
    
    -- Storage logs
    select 
      id,
      'storage' as log_type,
      CAST(edge_logs_response.status_code AS STRING) as status,
      CASE
          WHEN edge_logs_response.status_code BETWEEN 200 AND 299 THEN 'success'
          WHEN edge_logs_response.status_code BETWEEN 400 AND 499 THEN 'warning'
          WHEN edge_logs_response.status_code >= 500 THEN 'error'
          ELSE 'success'
      END as level,
      edge_logs_request.path as pathname,
      edge_logs_request.method as method
    from edge_logs as el
    cross join unnest(metadata) as edge_logs_metadata
    cross join unnest(edge_logs_metadata.request) as edge_logs_request
    cross join unnest(edge_logs_metadata.response) as edge_logs_response
    WHERE edge_logs_request.path LIKE '%/storage/%'
)
  `;

/** The old page's search params: arrays give IN, host/pathname text gives LIKE, other text `=`. */
type OldSearch = Record<string, string | string[]>;

function oldConditions(search: OldSearch, excludeField?: string): string[] {
  const out: string[] = [];
  for (const [key, value] of Object.entries(search)) {
    if (key === excludeField) continue;
    if (Array.isArray(value)) {
      if (value.length > 0) out.push(`${key} IN (${value.map((v) => `'${v}'`).join(',')})`);
    } else if (key === 'host' || key === 'pathname') out.push(`${key} LIKE '%${value}%'`);
    else out.push(`${key} = '${value}'`);
  }
  return out;
}
const oldWhere = (c: string[]) => (c.length > 0 ? `WHERE ${c.join(' AND ')}` : '');

const oldUnifiedQuery = (search: OldSearch) => `
${OLD_CTE}
SELECT
    id,
    timestamp,
    log_type,
    status,
    level,
    pathname,
    event_message,
    method,
    log_count,
    logs
FROM unified_logs
${oldWhere(oldConditions(search))}
`;

function oldFacetCte(search: OldSearch, facetName: string, facetSearch?: string): string {
  const where = oldWhere(oldConditions(search, facetName));
  return `
${facetName}_count AS (
  SELECT '${facetName}' as dimension, ${facetName} as value, COUNT(*) as count
  FROM unified_logs
  ${where || `WHERE ${facetName} IS NOT NULL`}
  ${where ? ` AND ${facetName} IS NOT NULL` : ''}
  ${facetSearch ? `AND ${facetName} LIKE '%${facetSearch}%'` : ''}
  GROUP BY ${facetName}
  LIMIT 20
)
`.trim();
}

const oldCountQuery = (search: OldSearch) => `
${OLD_COUNT_CTE},
${oldFacetCte(search, 'log_type')},
${oldFacetCte(search, 'method')},
${oldFacetCte(search, 'level')},
${oldFacetCte(search, 'status')},
${oldFacetCte(search, 'pathname')}

-- Get total count
SELECT 'total' as dimension, 'all' as value, COUNT(*) as count
FROM unified_logs
${oldWhere(oldConditions(search))}

UNION ALL

-- Get counts by log_type (exclude log_type filter to avoid self-filtering)
SELECT dimension, value, count from log_type_count

UNION ALL

-- Get counts by method (exclude method filter to avoid self-filtering)  
SELECT dimension, value, count from method_count

UNION ALL

-- Get counts by level (exclude level filter to avoid self-filtering)
SELECT dimension, value, count from level_count

UNION ALL

-- Get counts by status (exclude status filter to avoid self-filtering)
SELECT dimension, value, count from status_count

UNION ALL

-- Get counts by pathname (exclude pathname filter to avoid self-filtering)
SELECT dimension, value, count from pathname_count

`;

/** unified-logs-facet-count-query with the getUnifiedLogsCTE / getFacetCountCTE of ec8927ec. */
const oldFacetQuery = (search: OldSearch, facetName: string, facetSearch?: string) =>
  `
${OLD_CTE},
${oldFacetCte(search, facetName, facetSearch)}
SELECT dimension, value, count from ${facetName}_count;
`.trim();

const oldChartQuery = (search: OldSearch, unit: 'MINUTE' | 'HOUR' | 'DAY') => `
${OLD_CTE}
SELECT
  TIMESTAMP_TRUNC(timestamp, ${unit}) as time_bucket,
  COUNTIF(level = 'success') as success,
  COUNTIF(level = 'warning') as warning,
  COUNTIF(level = 'error') as error,
  COUNT(*) as total_per_bucket
FROM unified_logs
${oldWhere(oldConditions(search))}
GROUP BY time_bucket
ORDER BY time_bucket ASC
`;

// UnifiedLogs.queries.ts @ ec8927ec: expected rows

const oldRows = (w: Window): U[] => [
  ...edgeRows(w, 'postgrest'),
  ...postgresRows(w),
  ...edgeFunctionRows(w, 'execution_id'),
  ...authRows(w, 'old'),
  ...edgeRows(w, 'storage'),
];

const oldCountRows = (w: Window): U[] => [
  ...edgeRows(w, 'edge'),
  ...edgeRows(w, 'postgrest'),
  ...postgresRows(w),
  ...edgeFunctionRows(w, null),
  ...authRows(w, 'old'),
  ...edgeRows(w, 'storage'),
];

function oldMatches(r: U, search: OldSearch, excludeField?: string): boolean {
  for (const [key, value] of Object.entries(search)) {
    if (key === excludeField) continue;
    const v = (r as unknown as Record<string, string | null>)[key];
    if (v === undefined) throw new Error(`no column ${key}`);
    if (v === null) return false;
    if (Array.isArray(value)) {
      if (value.length > 0 && !value.includes(v)) return false;
    } else if (key === 'host' || key === 'pathname') {
      if (!v.includes(value)) return false;
    } else if (v !== value) return false;
  }
  return true;
}

function oldListing(name: string, search: OldSearch, w: Window = W): PageCase {
  const rows = oldRows(w).filter((r) => oldMatches(r, search));
  return {
    name,
    from: OLD,
    sql: `${oldUnifiedQuery(search)} ORDER BY timestamp DESC, id DESC LIMIT 50`,
    params: params(w),
    expect: page(rows).map(oldOut),
  };
}

function oldCount(name: string, search: OldSearch): PageCase {
  const all = oldCountRows(W);
  return {
    name,
    from: OLD,
    sql: oldCountQuery(search),
    params: params(W),
    expect: [
      { dimension: 'total', value: 'all', count: all.filter((r) => oldMatches(r, search)).length },
      ...(['log_type', 'method', 'level', 'status', 'pathname'] as const).flatMap((f) =>
        facet(
          all.filter((r) => oldMatches(r, search, f)),
          f,
        ),
      ),
    ],
    unordered: true,
  };
}

// ---------------------------------------------------------------------------------------------
// ServiceFlow.sql.ts: templates

const flowEdge = (logId: string, serviceType: 'postgrest' | 'auth' | 'edge-function' | 'storage') => `
  select 
      id,
      el.timestamp as timestamp,
      '${serviceType}' as log_type,
      CAST(edge_logs_response.status_code AS STRING) as status,
      CASE
        WHEN edge_logs_response.status_code BETWEEN 200 AND 299 THEN 'success'
        WHEN edge_logs_response.status_code BETWEEN 400 AND 499 THEN 'warning'
        WHEN edge_logs_response.status_code >= 500 THEN 'error'
        ELSE 'success'
      END as level,
      
      -- Request data
      edge_logs_request.path as request_path,
      edge_logs_request.host as request_host, 
      edge_logs_request.method as request_method,
      edge_logs_request.url as request_url,
      edge_logs_request.search as request_search,
      
      -- Response data
      edge_logs_response.origin_time as response_origin_time,
      edge_logs_response_headers.content_type as response_content_type,
      edge_logs_response_headers.cf_cache_status as response_cache_status,
      
      -- Client location data
      edge_logs_cf.continent as client_continent,
      edge_logs_cf.country as client_country, 
      edge_logs_cf.city as client_city,
      edge_logs_cf.region as client_region,
      edge_logs_cf.regionCode as client_region_code,
      edge_logs_cf.latitude as client_latitude,
      edge_logs_cf.longitude as client_longitude, 
      edge_logs_cf.timezone as client_timezone,
      
      -- Network data
      edge_logs_cf.httpProtocol as network_protocol,
      edge_logs_cf.colo as network_datacenter,
      
      -- Request headers
      edge_logs_request_headers.user_agent as headers_user_agent,
      edge_logs_request_headers.x_client_info as headers_x_client_info,
      edge_logs_request_headers.x_forwarded_proto as headers_x_forwarded_proto,
      edge_logs_request_headers.x_real_ip as headers_x_real_ip,
      edge_logs_request_headers.referer as headers_referer,
      
      -- Auth data
      authorization_payload.role as api_role,
      COALESCE(sb.auth_user, null) as auth_user,
      
      -- JWT Key Authentication (old keys)
      CASE
          WHEN apikey_payload.algorithm = 'HS256' AND 
               apikey_payload.issuer = 'supabase' AND 
               apikey_payload.role IN ('anon', 'service_role')
          THEN apikey_payload.role
          WHEN apikey_payload IS NOT NULL THEN '<unrecognized>'
          ELSE NULL
      END as jwt_key_role,
      
      apikey_payload.signature_prefix as jwt_key_prefix,
      
      -- API Key Authentication (new keys from sb.apikey[0].apikey[0])
      CASE 
          WHEN sb_apikey_inner.prefix LIKE '%publishable%' THEN 'anon'
          WHEN sb_apikey_inner.prefix LIKE '%secret%' THEN 'service_role'
          WHEN sb_apikey_inner.prefix IS NOT NULL THEN 'unknown'
          ELSE NULL
      END as api_key_role,
      
      sb_apikey_inner.prefix as api_key_prefix,
      sb_apikey_inner.error as api_key_error,
      sb_apikey_inner.hash as api_key_hash,
      
      -- User Authorization 
      authorization_payload.role as authorization_role,
      null as user_id,
      null as user_email,
      
      -- Cloudflare Network Info
      edge_logs_response_headers.cf_ray as cf_ray,
      edge_logs_request_headers.cf_ipcountry as cf_country,
      edge_logs_cf.colo as cf_datacenter,
      edge_logs_request_headers.cf_connecting_ip as client_ip,
      
      -- JWT data
      apikey_payload.role as jwt_apikey_role,
      apikey_payload.algorithm as jwt_apikey_algorithm, 
      apikey_payload.expires_at as jwt_apikey_expires_at,
      apikey_payload.issuer as jwt_apikey_issuer,
      apikey_payload.signature_prefix as jwt_apikey_signature_prefix,
      null as jwt_apikey_key_id,
      null as jwt_apikey_session_id,
      apikey_payload.subject as jwt_apikey_subject,
      
      authorization_payload.role as jwt_auth_role,
      authorization_payload.algorithm as jwt_auth_algorithm,
      authorization_payload.expires_at as jwt_auth_expires_at, 
      authorization_payload.issuer as jwt_auth_issuer,
      authorization_payload.signature_prefix as jwt_auth_signature_prefix,
      authorization_payload.key_id as jwt_auth_key_id,
      authorization_payload.session_id as jwt_auth_session_id,
      authorization_payload.subject as jwt_auth_subject,
      
      -- Storage specific data (included for all but only populated for storage)
      edge_logs_response_headers.sb_gateway_mode as storage_edge_gateway_mode,
      edge_logs_response_headers.sb_gateway_version as storage_edge_gateway_version,
      edge_logs_response_headers.cf_ray as correlation_cf_ray,
      
      -- Raw data
      el as raw_log_data
      
    from edge_logs as el
    cross join unnest(metadata) as edge_logs_metadata
    cross join unnest(edge_logs_metadata.request) as edge_logs_request
    cross join unnest(edge_logs_metadata.response) as edge_logs_response
    left join unnest(edge_logs_response.headers) as edge_logs_response_headers
    left join unnest(edge_logs_request.headers) as edge_logs_request_headers
    left join unnest(edge_logs_request.cf) as edge_logs_cf
    left join unnest(edge_logs_request.sb) as sb
    left join unnest(sb.jwt) as jwt
    left join unnest(COALESCE(jwt.apikey, [])) as apikey
    left join unnest(COALESCE(apikey.payload, [])) as apikey_payload
    left join unnest(COALESCE(jwt.authorization, [])) as auth
    left join unnest(COALESCE(auth.payload, [])) as authorization_payload
    left join unnest(COALESCE(sb.apikey, [])) as sb_apikey_outer
    left join unnest(COALESCE(sb_apikey_outer.apikey, [])) as sb_apikey_inner

WHERE 
  el.id = '${logId}'
`;

const flowEdgeFunction = (logId: string) => `
  select 
      fel.id as id,
      fel.timestamp as timestamp,
      'edge-function' as log_type,
      CAST(fel_response.status_code AS STRING) as status,
      CASE
          WHEN fel_response.status_code BETWEEN 200 AND 299 THEN 'success'
          WHEN fel_response.status_code BETWEEN 400 AND 499 THEN 'warning'
          WHEN fel_response.status_code >= 500 THEN 'error'
          ELSE 'success'
      END as level,
      
      -- Request data
      fel_request.pathname as request_path,
      fel_request.host as request_host, 
      fel_request.method as request_method,
      fel_request.url as request_url,
      fel_request.search as request_search,
      fel_request.protocol as request_protocol,
      fel_request.port as request_port,
      
      -- Response data (no origin_time in function_edge_logs)
      fel_response_headers.content_type as response_content_type,
      fel_response_headers.content_length as response_content_length,
      fel_response_headers.date as response_date,
      fel_response_headers.server as response_server,
      fel_response_headers.x_sb_edge_region as response_edge_region,
      fel_response_headers.x_sb_compute_multiplier as response_compute_multiplier,
      fel_response_headers.x_sb_resource_multiplier as response_resource_multiplier,
      fel_response_headers.x_served_by as response_served_by,
      
      -- Function specific data
      fel_metadata.execution_id as execution_id,
      fel_metadata.function_id as function_id,
      fel_metadata.deployment_id as deployment_id,
      fel_metadata.execution_time_ms as execution_time_ms,
      fel_metadata.project_ref as project_ref,
      fel_metadata.version as function_version,
      
      -- Request headers
      fel_request_headers.user_agent as headers_user_agent,
      fel_request_headers.x_client_info as headers_x_client_info,
      fel_request_headers.accept as headers_accept,
      fel_request_headers.accept_encoding as headers_accept_encoding,
      fel_request_headers.connection as headers_connection,
      fel_request_headers.cookie as headers_cookie,
      fel_request_headers.host as headers_host,
      
      -- Auth data
      authorization_payload.role as api_role,
      COALESCE(sb.auth_user, null) as auth_user,
      
      -- JWT Key Authentication (old keys)
      CASE
          WHEN apikey_payload.algorithm = 'HS256' AND 
               apikey_payload.issuer = 'supabase' AND 
               apikey_payload.role IN ('anon', 'service_role')
          THEN apikey_payload.role
          WHEN apikey_payload IS NOT NULL THEN '<unrecognized>'
          ELSE NULL
      END as jwt_key_role,
      
      apikey_payload.signature_prefix as jwt_key_prefix,
      
      -- API Key Authentication (new keys from sb.apikey[0].apikey[0])
      CASE 
          WHEN sb_apikey_inner.prefix LIKE '%publishable%' THEN 'anon'
          WHEN sb_apikey_inner.prefix LIKE '%secret%' THEN 'service_role'
          WHEN sb_apikey_inner.prefix IS NOT NULL THEN 'unknown'
          ELSE NULL
      END as api_key_role,
      
      sb_apikey_inner.prefix as api_key_prefix,
      sb_apikey_inner.error as api_key_error,
      sb_apikey_inner.hash as api_key_hash,
      
      -- User Authorization 
      authorization_payload.role as authorization_role,
      null as user_id,
      null as user_email,
      
      -- JWT data
      apikey_payload.role as jwt_apikey_role,
      apikey_payload.algorithm as jwt_apikey_algorithm, 
      apikey_payload.expires_at as jwt_apikey_expires_at,
      apikey_payload.issuer as jwt_apikey_issuer,
      apikey_payload.signature_prefix as jwt_apikey_signature_prefix,
      null as jwt_apikey_key_id,
      null as jwt_apikey_session_id,
      apikey_payload.subject as jwt_apikey_subject,
      
      authorization_payload.role as jwt_auth_role,
      authorization_payload.algorithm as jwt_auth_algorithm,
      authorization_payload.expires_at as jwt_auth_expires_at, 
      authorization_payload.issuer as jwt_auth_issuer,
      authorization_payload.signature_prefix as jwt_auth_signature_prefix,
      authorization_payload.key_id as jwt_auth_key_id,
      authorization_payload.session_id as jwt_auth_session_id,
      authorization_payload.subject as jwt_auth_subject,
      
      -- Function logs aggregation
      function_logs_agg.function_log_count as function_log_count,
      function_logs_agg.logs as function_logs,
      function_logs_agg.last_event_message as last_event_message,
      
      -- Raw data
      fel as raw_log_data
      
    from function_edge_logs as fel
    cross join unnest(metadata) as fel_metadata
    cross join unnest(fel_metadata.response) as fel_response
    cross join unnest(fel_metadata.request) as fel_request
    left join unnest(fel_response.headers) as fel_response_headers
    left join unnest(fel_request.headers) as fel_request_headers
    left join unnest(fel_request.sb) as sb
    left join unnest(sb.jwt) as jwt
    left join unnest(COALESCE(jwt.apikey, [])) as apikey
    left join unnest(COALESCE(apikey.payload, [])) as apikey_payload
    left join unnest(COALESCE(jwt.authorization, [])) as auth
    left join unnest(COALESCE(auth.payload, [])) as authorization_payload
    left join unnest(COALESCE(sb.apikey, [])) as sb_apikey_outer
    left join unnest(COALESCE(sb_apikey_outer.apikey, [])) as sb_apikey_inner
    left join (
      SELECT
          fl_metadata.execution_id,
          COUNT(fl.id) as function_log_count,
          ANY_VALUE(fl.event_message) as last_event_message,
          ARRAY_AGG(STRUCT(fl.id, fl.timestamp, fl.event_message, fl_metadata.level, fl_metadata.event_type)) as logs
      FROM function_logs as fl
      CROSS JOIN UNNEST(fl.metadata) as fl_metadata
      WHERE fl_metadata.execution_id IS NOT NULL
      GROUP BY fl_metadata.execution_id
    ) as function_logs_agg on fel_metadata.execution_id = function_logs_agg.execution_id

WHERE 
  fel.id = '${logId}'
`;

const flowPostgres = (logId: string) => `
  select 
      pgl.id as id,
      pgl.timestamp as timestamp,
      'postgres' as log_type,
      pgl_parsed.sql_state_code as status,
      CASE
          WHEN pgl_parsed.error_severity = 'LOG' THEN 'success'
          WHEN pgl_parsed.error_severity = 'WARNING' THEN 'warning'
          WHEN pgl_parsed.error_severity = 'FATAL' THEN 'error'
          WHEN pgl_parsed.error_severity = 'ERROR' THEN 'error'
          ELSE 'success'
      END as level,
      
      -- Database connection details
      pgl_parsed.database_name as database_name,
      pgl_parsed.user_name as database_user,
      pgl_parsed.connection_from as connection_from,
      pgl_metadata.host as database_host,
      
      -- Query/Operation details
      pgl_parsed.command_tag as command_tag,
      pgl_parsed.backend_type as backend_type,
      pgl_parsed.query_id as query_id,
      
      -- Session details
      pgl_parsed.session_id as session_id,
      pgl_parsed.process_id as process_id,
      pgl_parsed.virtual_transaction_id as virtual_transaction_id,
      pgl_parsed.transaction_id as transaction_id,
      pgl_parsed.session_start_time as session_start_time,
      pgl_parsed.session_line_num as session_line_num,
      
      -- Error/Status details
      pgl_parsed.error_severity as error_severity,
      pgl_parsed.sql_state_code as sql_state_code,
      pgl.event_message as event_message,
      
      -- Timing
      pgl_parsed.timestamp as operation_timestamp,
      
      -- Raw data
      pgl as raw_log_data
      
    from postgres_logs as pgl
    cross join unnest(pgl.metadata) as pgl_metadata
    cross join unnest(pgl_metadata.parsed) as pgl_parsed
    
WHERE 
  pgl.id = '${logId}'
`;

// ServiceFlow.sql.ts: expected rows (the columns compared; raw_log_data and the aggregated
// function_logs list are left out)

const T = (id: string) => {
  for (const events of Object.values(F)) for (const e of events) if (e.id === id) return us(e.timestamp as string);
  throw new Error(`no event ${id}`);
};

const noAuth = {
  api_role: null,
  auth_user: null,
  jwt_key_role: null,
  jwt_key_prefix: null,
  api_key_role: null,
  api_key_prefix: null,
  authorization_role: null,
  jwt_apikey_role: null,
  jwt_auth_role: null,
  jwt_auth_subject: null,
  user_id: null,
};

const noCf = { client_continent: null, client_country: null, client_city: null, client_timezone: null, network_protocol: null, network_datacenter: null };

// ---------------------------------------------------------------------------------------------
// the cases

const firstPage = page(bqRows(W, DEFAULT_TYPES));
const cursor = firstPage.find((r) => r.id === 'e-rest-3')!.timestamp!;

export const unifiedCases: PageCase[] = [
  // --- UnifiedLogs.queries.bq.ts: the row list --------------------------------------------------
  bqListing('bq list: first page, default log types (postgres + postgrest)', []),
  {
    name: 'bq list: next page, iso_timestamp_end moved to a row with microseconds (cut at the millisecond)',
    from: BQ,
    sql: bqPage([]),
    params: { iso_timestamp_start: START, iso_timestamp_end: cursorIso(cursor) },
    expect: page(bqRows({ start: START, end: cursorIso(cursor) }, DEFAULT_TYPES)).map(bqOut),
  },
  bqListing('bq list: live mode, iso_timestamp_end moved to now', [], { start: START, end: LIVE_END }),
  bqListing('bq list: log_type = auth (LEFT JOIN of a parenthesised edge join; unmatched rows tie on NULL)', ['log_type:eq:auth'], W, true),
  bqListing('bq list: log_type = edge function (console lines without request/response drop)', ['log_type:eq:edge function']),
  bqListing('bq list: log_type = edge, storage', ['log_type:eq:edge', 'log_type:eq:storage']),
  bqListing('bq list: log_type <> postgres (five sources unioned)', ['log_type:neq:postgres'], W, true),
  bqListing('bq list: level = error', ['level:eq:error']),
  bqListing('bq list: level <> success (NULL levels drop)', ['level:neq:success']),
  bqListing('bq list: status = 42P01', ['status:eq:42P01']),
  bqListing('bq list: method = DELETE, GET', ['method:eq:DELETE', 'method:eq:GET']),
  bqListing('bq list: pathname ilike TODOS', ['pathname:ilike:TODOS']),
  bqListing('bq list: pathname = items (LIKE)', ['pathname:eq:items']),
  bqListing('bq list: event_message ilike Relation', ['event_message:ilike:Relation']),
  bqListing('bq list: event_message not ilike connection (NULL messages drop)', ['event_message:notilike:connection']),
  bqListing('bq list: log_type <> postgres and level = warning', ['log_type:neq:postgres', 'level:eq:warning'], W, true),
  {
    name: 'bq list: host filter names a column the unified CTE lacks',
    from: BQ,
    sql: bqPage(['host:eq:localhost']),
    params: params(W),
    expect: { error: 'INVALID_QUERY', message: /host/ },
  },

  // --- UnifiedLogs.queries.bq.ts: counts and chart ----------------------------------------------
  {
    name: 'bq count: total, log types, levels and facets, default log types',
    from: BQ,
    sql: bqCountQuery([]),
    params: params(W),
    expect: bqCountExpect(W, []),
    unordered: true,
  },
  {
    name: 'bq count: log_type <> postgres and method = GET',
    from: BQ,
    sql: bqCountQuery(['log_type:neq:postgres', 'method:eq:GET']),
    params: params(W),
    expect: bqCountExpect(W, ['log_type:neq:postgres', 'method:eq:GET']),
    unordered: true,
  },
  bqChart('bq chart: one hour, MINUTE buckets', [], W, 'MINUTE'),
  bqChart(
    'bq chart: 13 hours, HOUR buckets, log_type <> postgres (auth rows without an edge match bucket as NULL)',
    ['log_type:neq:postgres'],
    { start: HOUR_START, end: END },
    'HOUR',
  ),
  bqChart('bq chart: three days, DAY buckets, level = success', ['level:eq:success'], { start: DAY_START, end: END }, 'DAY'),

  // --- UnifiedLogs.queries.ts @ ec8927ec -------------------------------------------------------
  oldListing('old list: first page, five sources', {}),
  oldListing('old list: log_type IN (postgres, auth)', { log_type: ['postgres', 'auth'] }),
  oldListing('old list: level IN (warning, error)', { level: ['warning', 'error'] }),
  oldListing('old list: pathname LIKE rest', { pathname: 'rest' }),
  oldListing('old list: method IN (POST) and status IN (200)', { method: ['POST'], status: ['200'] }),
  oldCount('old count: total and five facets (count CTE carries edge rows)', {}),
  oldCount('old count: level IN (error)', { level: ['error'] }),
  {
    name: 'old facet count: status',
    from: FACET,
    sql: oldFacetQuery({}, 'status'),
    params: params(W),
    expect: facet(oldRows(W), 'status'),
    unordered: true,
  },
  {
    name: 'old facet count: pathname with a facet search and a method filter',
    from: FACET,
    sql: oldFacetQuery({ method: ['GET'] }, 'pathname', 'rest'),
    params: params(W),
    expect: facet(
      oldRows(W).filter((r) => r.method === 'GET' && r.pathname?.includes('rest')),
      'pathname',
    ),
    unordered: true,
  },
  {
    name: 'old chart: one hour, MINUTE buckets',
    from: OLD,
    sql: oldChartQuery({}, 'MINUTE'),
    params: params(W),
    expect: chart(oldRows(W), 'MINUTE', 'time_bucket', true),
  },

  // --- ServiceFlow.sql.ts ----------------------------------------------------------------------
  {
    name: 'service flow: postgrest request (self-hosted Kong event, no cf/sb/response headers)',
    from: FLOW,
    sql: flowEdge('e-rest-1', 'postgrest'),
    params: params(W),
    expect: [
      {
        id: 'e-rest-1',
        timestamp: T('e-rest-1'),
        log_type: 'postgrest',
        status: '200',
        level: 'success',
        request_path: '/rest/v1/todos?select=*',
        request_host: null,
        request_method: 'GET',
        request_url: null,
        request_search: null,
        response_origin_time: null,
        response_content_type: null,
        response_cache_status: null,
        ...noCf,
        headers_user_agent: 'curl/8.5.0',
        headers_x_client_info: null,
        headers_referer: '-',
        ...noAuth,
        cf_ray: null,
        cf_country: null,
        client_ip: '172.18.0.1',
        storage_edge_gateway_version: null,
      },
    ],
  },
  {
    name: 'service flow: auth request (platform-shaped event with cf and sb.jwt)',
    from: FLOW,
    sql: flowEdge('e-auth-1', 'auth'),
    params: params(W),
    expect: [
      {
        id: 'e-auth-1',
        timestamp: T('e-auth-1'),
        log_type: 'auth',
        status: '200',
        level: 'success',
        request_path: '/auth/v1/token?grant_type=password',
        request_host: 'localhost',
        request_method: 'POST',
        request_url: 'http://localhost:8000/auth/v1/token?grant_type=password',
        request_search: '?grant_type=password',
        response_origin_time: 87,
        response_content_type: 'application/json',
        response_cache_status: 'DYNAMIC',
        client_continent: 'EU',
        client_country: 'NL',
        client_city: 'Amsterdam',
        client_timezone: 'Europe/Amsterdam',
        network_protocol: 'HTTP/2',
        network_datacenter: 'AMS',
        headers_user_agent: 'Mozilla/5.0',
        headers_x_client_info: 'supabase-js-web/2.47.0',
        headers_referer: 'http://localhost:3000/',
        api_role: 'authenticated',
        auth_user: 'user-123',
        jwt_key_role: 'anon',
        jwt_key_prefix: 'abcd12',
        api_key_role: null,
        api_key_prefix: null,
        authorization_role: 'authenticated',
        jwt_apikey_role: 'anon',
        jwt_auth_role: 'authenticated',
        jwt_auth_subject: 'user-123',
        user_id: null,
        cf_ray: 'ray-auth-1',
        cf_country: 'NL',
        client_ip: '172.18.0.1',
        storage_edge_gateway_version: null,
      },
    ],
  },
  {
    name: 'service flow: storage request',
    from: FLOW,
    sql: flowEdge('e-stor-1', 'storage'),
    params: params(W),
    expect: [
      {
        id: 'e-stor-1',
        timestamp: T('e-stor-1'),
        log_type: 'storage',
        status: '404',
        level: 'warning',
        request_path: '/storage/v1/object/public/avatars/a.png',
        request_method: 'GET',
        response_content_type: 'text/plain',
        response_cache_status: null,
        ...noCf,
        headers_user_agent: 'curl/8.5.0',
        ...noAuth,
        cf_ray: 'ray-storage-1',
        correlation_cf_ray: 'ray-storage-1',
        client_ip: '172.18.0.1',
        storage_edge_gateway_version: '1',
      },
    ],
  },
  {
    name: 'service flow: edge function request with its function logs',
    from: FLOW,
    sql: flowEdgeFunction('f-1'),
    params: params(W),
    expect: [
      {
        id: 'f-1',
        timestamp: T('f-1'),
        log_type: 'edge-function',
        status: '200',
        level: 'success',
        request_path: '/hello',
        request_host: 'localhost',
        request_method: 'POST',
        request_url: 'http://localhost:8000/functions/v1/hello',
        request_search: null,
        request_protocol: 'http:',
        request_port: null,
        response_content_type: 'application/json',
        response_server: 'deno',
        response_edge_region: null,
        execution_id: 'exec-1',
        function_id: 'fn-hello',
        deployment_id: 'default_fn-hello_1',
        execution_time_ms: 42,
        project_ref: 'default',
        function_version: '1',
        headers_user_agent: 'curl/8.5.0',
        headers_accept: '*/*',
        headers_host: 'localhost:8000',
        ...noAuth,
        function_log_count: 2,
        last_event_message: 'hello from hello',
      },
    ],
  },
  {
    name: 'service flow: edge function console line (no request/response: no row)',
    from: FLOW,
    sql: flowEdgeFunction('f-3'),
    params: params(W),
    expect: [],
  },
  {
    name: 'service flow: postgres error',
    from: FLOW,
    sql: flowPostgres('p-2'),
    params: params(W),
    expect: [
      {
        id: 'p-2',
        timestamp: T('p-2'),
        log_type: 'postgres',
        status: '42P01',
        level: 'error',
        database_name: 'postgres',
        database_user: 'postgres',
        connection_from: null,
        database_host: 'db-default',
        command_tag: 'SELECT',
        backend_type: 'client backend',
        query_id: null,
        session_id: '6787a1b2.2a',
        process_id: 42,
        error_severity: 'ERROR',
        sql_state_code: '42P01',
        event_message: 'relation "foo" does not exist',
      },
    ],
  },
];
