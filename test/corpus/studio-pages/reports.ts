/**
 * Supabase Studio's REPORTS templates, sent to `logs.all` as Studio sends them (a caller `sql` plus
 * `iso_timestamp_start` / `iso_timestamp_end`), with the rows BigQuery returns over
 * reports-fixture.ts. Expected rows are computed below by plain code over the fixture arrays
 * (BigQuery's semantics: `CROSS JOIN UNNEST(record)` of a record an event lacks drops the event),
 * never taken from an engine.
 *
 * Templates, read in supabase/supabase:
 * - apps/studio/components/interfaces/Reports/Reports.constants.ts @ 9a5f1be0b1716aeee36530afc87fe43a5c308d67
 *   (API report: 7 queries, with and without filters; Storage report: 2 queries). The same SQL is in
 *   the older copy @ 013e65320e8350cbba96a6d5eec1d96de051d63f. Not included: the newer
 *   `requestsByCountry` query (`cross join unnest(request.cf)`), seen only in compiled Studio
 *   bundles, not in a source file of the index.
 * - apps/studio/components/interfaces/Reports/SharedAPIReport/SharedAPIReport.constants.ts
 *   @ 574f741cc5f94dd11b848a935104872aeb4fc50a (7 queries for the Auth page's API section,
 *   `request.path` matches `/auth`; the newer copy @ 2d28a20a40d9995d400f64533d7add16559d9899 has the
 *   same SQL). Its `function_edge_logs` variant is not included: it filters on `request.path`, a
 *   field function_edge_logs events do not have.
 * - apps/studio/data/reports/auth-report-query.ts @ 917daec42410dedd57a44c8fdfa98741f8efc98b
 *   (older per-panel Auth report, 7 queries).
 * - apps/studio/data/reports/v2/auth.config.ts @ 92010a2de76d2a4d3f0b8253ab0e7371c504e72d (per-panel
 *   Auth report v2, 10 queries + filter variants) and @ 034bbeb877440058c47397518d9940a09e7b58a8
 *   (single-scan usage and latency queries; its error queries are the same SQL as 92010a2d).
 * - apps/studio/data/reports/edgefn.queries.ts @ 5625c7ba93e26f814a94ae2eae32c95a4cc79782 (4 + 2),
 *   apps/studio/data/reports/edgefn-query.ts @ ebef636d9d9448317c51f15b0a0c9adc355ea0b9 (4 + 2),
 *   apps/studio/data/reports/v2/edge-functions.config.ts @ f1b0fbfd91b279af38364b208e7aacaf978017d3
 *   (4 + 2; same SQL @ 06859fc9c4ef31428e76dc8434358148c876e943).
 * - apps/studio/data/reports/report.utils.ts @ ec8927ecc4b67f6bcd14c10fbffbd5d9ff2cd0d1: the
 *   interval → granularity mapping (1m/5m/10m/30m → minute, 1h → hour, 1d → day) and the request
 *   (`sql`, `iso_timestamp_start`, `iso_timestamp_end`).
 * Realtime (v2/realtime.config.ts, realtime-charts.ts) and auth-charts.ts send no logs SQL
 * (infra-monitoring / chart attributes only); Query performance and Database presets run Postgres.
 *
 * 47 templates (API 7, shared API 7, Storage 2, Auth old 7, Auth v2 10, Auth single-scan 2, Edge
 * Functions 4 + 4 + 4), instantiated as 60 cases (filters, granularities and function selections).
 */
import { authEvents, edgeEvents, relayEvents } from './reports-fixture.ts';
import type { PageCase, Row } from './harness.ts';

type Rec = Record<string, unknown>;

const START = '2025-01-15T09:00:00.000Z';
const END = '2025-01-15T13:00:00.000Z';
const params = { iso_timestamp_start: START, iso_timestamp_end: END };

const C = {
  constants: { path: 'apps/studio/components/interfaces/Reports/Reports.constants.ts', commit: '9a5f1be0b1716aeee36530afc87fe43a5c308d67' },
  shared: {
    path: 'apps/studio/components/interfaces/Reports/SharedAPIReport/SharedAPIReport.constants.ts',
    commit: '574f741cc5f94dd11b848a935104872aeb4fc50a',
  },
  authOld: { path: 'apps/studio/data/reports/auth-report-query.ts', commit: '917daec42410dedd57a44c8fdfa98741f8efc98b' },
  authV2: { path: 'apps/studio/data/reports/v2/auth.config.ts', commit: '92010a2de76d2a4d3f0b8253ab0e7371c504e72d' },
  authScan: { path: 'apps/studio/data/reports/v2/auth.config.ts', commit: '034bbeb877440058c47397518d9940a09e7b58a8' },
  edgefnOld: { path: 'apps/studio/data/reports/edgefn.queries.ts', commit: '5625c7ba93e26f814a94ae2eae32c95a4cc79782' },
  edgefnMid: { path: 'apps/studio/data/reports/edgefn-query.ts', commit: 'ebef636d9d9448317c51f15b0a0c9adc355ea0b9' },
  edgefnV2: { path: 'apps/studio/data/reports/v2/edge-functions.config.ts', commit: 'f1b0fbfd91b279af38364b208e7aacaf978017d3' },
};

// ---------------------------------------------------------------------------------------------
// Plain helpers over the fixture

const us = (iso: string): number => Date.parse(iso) * 1000;
const START_US = us(START);
const END_US = us(END);
/** logs.all's CTE filter: after the start (exclusive), up to the end (inclusive). */
const inWindow = (ts: string): boolean => us(ts) > START_US && us(ts) <= END_US;

type Unit = 'minute' | 'hour' | 'day';
const UNIT_US: Record<Unit, number> = { minute: 60e6, hour: 3600e6, day: 86400e6 };
const trunc = (t: number, unit: Unit): number => Math.floor(t / UNIT_US[unit]) * UNIT_US[unit];
/** CAST(TIMESTAMP AS DATETIME) as the API returns it. */
const datetime = (t: number): string => new Date(t / 1000).toISOString().slice(0, 19);

const rec = (v: unknown): Rec | undefined => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Rec) : undefined);
const num = (v: unknown): number | null => (typeof v === 'number' ? v : null);
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** Groups `items` by the JSON of `key(item)`, keeping first-seen order. */
function groupBy<T>(items: readonly T[], key: (x: T) => unknown[]): [unknown[], T[]][] {
  const out = new Map<string, [unknown[], T[]]>();
  for (const x of items) {
    const k = key(x);
    const j = JSON.stringify(k);
    const g = out.get(j);
    if (g) g[1].push(x);
    else out.set(j, [k, [x]]);
  }
  return [...out.values()];
}

const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);
const avgOf = (xs: (number | null)[]): number | null => {
  const v = xs.filter((x): x is number => x !== null);
  return v.length === 0 ? null : sum(v) / v.length;
};
const round2 = (x: number): number => Math.round(x * 100) / 100;
const desc = (k: string) => (a: Row, b: Row) => (b[k] as number) - (a[k] as number);

/**
 * `ORDER BY key DESC LIMIT n` without a total order: `pick` n rows among those whose key reaches
 * the n-th key (NULLs last, as BigQuery sorts them descending).
 */
function top(rows: Row[], n: number, k: string): { expect: Row[]; pick: number } {
  const key = (r: Row) => (r[k] === null ? Number.NEGATIVE_INFINITY : (r[k] as number));
  const sorted = [...rows].sort((a, b) => key(b) - key(a));
  if (sorted.length <= n) return { expect: sorted, pick: sorted.length };
  const cut = key(sorted[n - 1]!);
  return { expect: sorted.filter((r) => key(r) >= cut), pick: n };
}

// edge_logs: metadata → request / response (→ request.headers, response.headers)
interface EdgeRow {
  ts: number;
  req: Rec;
  res: Rec;
  reqHeaders: Rec | undefined;
  resHeaders: Rec | undefined;
}
const edgeAll: EdgeRow[] = edgeEvents
  .filter((e) => e.project === 'default' && inWindow(e.timestamp as string))
  .flatMap((e) => {
    const m = rec(e.metadata);
    const req = rec(m?.request);
    const res = rec(m?.response);
    if (!req || !res) return [];
    return [{ ts: us(e.timestamp as string), req, res, reqHeaders: rec(req.headers), resHeaders: rec(res.headers) }];
  });
/** The rows of `edge_logs cross join unnest(metadata) cross join unnest(m.request|m.response)` [+ headers]. */
const edgeJoin = (o: { reqHeaders?: boolean; resHeaders?: boolean }): EdgeRow[] =>
  edgeAll.filter((r) => (!o.reqHeaders || r.reqHeaders) && (!o.resHeaders || r.resHeaders));

// auth_logs: the JSON line
interface AuthRow {
  ts: number;
  line: Rec;
}
const authAll: AuthRow[] = authEvents
  .filter((e) => e.project === 'default' && inWindow(e.timestamp as string))
  .map((e) => ({ ts: us(e.timestamp as string), line: JSON.parse(e.event_message as string) as Rec }));
/** JSON_VALUE(event_message, '$.a.b'): a scalar as text, NULL for objects and missing paths. */
function jv(line: Rec, path: string): string | null {
  let v: unknown = line;
  for (const p of path.split('.')) v = rec(v)?.[p];
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return null;
}

// function_edge_logs: metadata → request / response → response.headers
interface FnRow {
  ts: number;
  m: Rec;
  req: Rec | undefined;
  res: Rec | undefined;
  h: Rec | undefined;
}
const fnAll: FnRow[] = relayEvents
  .filter((e) => rec(e.metadata)?.project_ref === 'default' && inWindow(e.timestamp as string))
  .map((e) => {
    const m = rec(e.metadata)!;
    const res = rec(m.response);
    return { ts: us(e.timestamp as string), m, req: rec(m.request), res, h: rec(res?.headers) };
  });
const fnJoin = (o: { req?: boolean; res?: boolean; h?: boolean }): FnRow[] => fnAll.filter((r) => (!o.req || r.req) && (!o.res || r.res) && (!o.h || r.h));

// ---------------------------------------------------------------------------------------------
// API report (Reports.constants.ts) and the shared API report (SharedAPIReport.constants.ts)

const apiSql = {
  totalRequests: (where: string, src = 'edge_logs', tag = '-- reports-api-total-requests') => `
        ${tag}
        select
          cast(timestamp_trunc(t.timestamp, hour) as datetime) as timestamp,
          count(t.id) as count
        FROM ${src} t
          cross join unnest(metadata) as m
          cross join unnest(m.response) as response
          cross join unnest(m.request) as request
          cross join unnest(request.headers) as headers
          ${where}
        GROUP BY
          timestamp
        ORDER BY
          timestamp ASC`,
  topRoutes: (where: string, src = 'edge_logs') => `
        -- reports-api-top-routes
        select
          request.path as path,
          request.method as method,
          request.search as search,
          response.status_code as status_code,
          count(t.id) as count
        from ${src} t
          cross join unnest(metadata) as m
          cross join unnest(m.response) as response
          cross join unnest(m.request) as request
          cross join unnest(request.headers) as headers
          ${where}
        group by
          request.path, request.method, request.search, response.status_code
        order by
          count desc
        limit 10
        `,
  errorCounts: (and: string, src = 'edge_logs') => `
        -- reports-api-error-counts
        select
          cast(timestamp_trunc(t.timestamp, hour) as datetime) as timestamp,
          count(t.id) as count
        FROM ${src} t
          cross join unnest(metadata) as m
          cross join unnest(m.response) as response
          cross join unnest(m.request) as request
          cross join unnest(request.headers) as headers
        WHERE
          response.status_code >= 400
        ${and}
        GROUP BY
          timestamp
        ORDER BY
          timestamp ASC
        `,
  topErrorRoutes: (and: string, src = 'edge_logs') => `
        -- reports-api-top-error-routes
        select
          request.path as path,
          request.method as method,
          request.search as search,
          response.status_code as status_code,
          count(t.id) as count
        from ${src} t
          cross join unnest(metadata) as m
          cross join unnest(m.response) as response
          cross join unnest(m.request) as request
          cross join unnest(request.headers) as headers
        where
          response.status_code >= 400
        ${and}
        group by
          request.path, request.method, request.search, response.status_code
        order by
          count desc
        limit 10
        `,
  responseSpeed: (where: string, src = 'edge_logs') => `
        -- reports-api-response-speed
        select
          cast(timestamp_trunc(t.timestamp, hour) as datetime) as timestamp,
          avg(response.origin_time) as avg
        FROM
          ${src} t
          cross join unnest(metadata) as m
          cross join unnest(m.response) as response
          cross join unnest(m.request) as request
          cross join unnest(request.headers) as headers
          ${where}
        GROUP BY
          timestamp
        ORDER BY
          timestamp ASC
      `,
  topSlowRoutes: (where: string, src = 'edge_logs') => `
        -- reports-api-top-slow-routes
        select
          request.path as path,
          request.method as method,
          request.search as search,
          response.status_code as status_code,
          count(t.id) as count,
          avg(response.origin_time) as avg
        from ${src} t
          cross join unnest(metadata) as m
          cross join unnest(m.response) as response
          cross join unnest(m.request) as request
          cross join unnest(request.headers) as headers
        ${where}
        group by
          request.path, request.method, request.search, response.status_code
        order by
          avg desc
        limit 10
        `,
  networkTraffic: (where: string, src = 'edge_logs') => `
        -- reports-api-network-traffic
        select
          cast(timestamp_trunc(t.timestamp, hour) as datetime) as timestamp,
          coalesce(
            safe_divide(
              sum(
                cast(coalesce(headers.content_length, "0") as int64)
              ),
              1000000
            ),
            0
          ) as ingress_mb,
          coalesce(
            safe_divide(
              sum(
                cast(coalesce(resp_headers.content_length, "0") as int64)
              ),
              1000000
            ),
            0
          ) as egress_mb,
        FROM
          ${src} t
          cross join unnest(metadata) as m
          cross join unnest(m.response) as response
          cross join unnest(m.request) as request
          cross join unnest(request.headers) as headers
          cross join unnest(response.headers) as resp_headers
          ${where}
        GROUP BY
          timestamp
        ORDER BY
          timestamp ASC
        `,
};

type EdgeFilter = (r: EdgeRow) => boolean;
const all: EdgeFilter = () => true;
const pathMatches =
  (re: string): EdgeFilter =>
  (r) =>
    new RegExp(re).test(str(r.req.path) ?? '');
const both =
  (a: EdgeFilter, b: EdgeFilter): EdgeFilter =>
  (r) =>
    a(r) && b(r);
const status = (r: EdgeRow): number => num(r.res.status_code)!;

const hourly = (rows: EdgeRow[], value: (g: EdgeRow[]) => Row): Row[] =>
  groupBy(rows, (r) => [trunc(r.ts, 'hour')])
    .map(([[t], g]) => ({ timestamp: datetime(t as number), ...value(g) }))
    .sort((a, b) => (a.timestamp as string).localeCompare(b.timestamp as string));

const routes = (rows: EdgeRow[], extra: (g: EdgeRow[]) => Row = () => ({})): Row[] =>
  groupBy(rows, (r) => [str(r.req.path), str(r.req.method), str(r.req.search), status(r)]).map(([k, g]) => ({
    path: k[0],
    method: k[1],
    search: k[2],
    status_code: k[3],
    count: g.length,
    ...extra(g),
  }));

function apiCases(label: string, from: PageCase['from'], f: EdgeFilter, where: string, and: string, src?: string, tag?: string): PageCase[] {
  const base = edgeJoin({ reqHeaders: true }).filter(f);
  const errors = base.filter((r) => status(r) >= 400);
  const traffic = edgeJoin({ reqHeaders: true, resHeaders: true }).filter(f);
  const len = (h: Rec | undefined) => Number.parseInt(str(h?.content_length) ?? '0', 10);
  return [
    { name: `${label}: total requests per hour`, from, sql: apiSql.totalRequests(where, src, tag), params, expect: hourly(base, (g) => ({ count: g.length })) },
    { name: `${label}: top routes`, from, sql: apiSql.topRoutes(where, src), params, ...top(routes(base), 10, 'count') },
    { name: `${label}: error counts per hour`, from, sql: apiSql.errorCounts(and, src), params, expect: hourly(errors, (g) => ({ count: g.length })) },
    { name: `${label}: top error routes`, from, sql: apiSql.topErrorRoutes(and, src), params, ...top(routes(errors), 10, 'count') },
    {
      name: `${label}: response speed per hour`,
      from,
      sql: apiSql.responseSpeed(where, src),
      params,
      expect: hourly(base, (g) => ({ avg: avgOf(g.map((r) => num(r.res.origin_time))) })),
    },
    {
      name: `${label}: top slow routes`,
      from,
      sql: apiSql.topSlowRoutes(where, src),
      params,
      ...top(
        routes(base, (g) => ({ avg: avgOf(g.map((r) => num(r.res.origin_time))) })),
        10,
        'avg',
      ),
    },
    {
      name: `${label}: network traffic per hour`,
      from,
      sql: apiSql.networkTraffic(where, src),
      params,
      expect: hourly(traffic, (g) => ({
        ingress_mb: sum(g.map((r) => len(r.reqHeaders))) / 1000000,
        egress_mb: sum(g.map((r) => len(r.resHeaders))) / 1000000,
      })),
    },
  ];
}

const apiReport = apiCases('API report', C.constants, all, '', '');
const apiFiltered: PageCase[] = (() => {
  const two = both(pathMatches('/rest'), (r) => status(r) === 200);
  const cases = apiCases(
    'API report, filters request.path matches /rest and response.status_code is 200',
    C.constants,
    two,
    `WHERE REGEXP_CONTAINS(request.path, '/rest') AND response.status_code = 200`,
    `AND REGEXP_CONTAINS(request.path, '/rest') AND response.status_code = 200`,
  );
  const rest = apiCases(
    'API report, filter request.path matches /rest',
    C.constants,
    pathMatches('/rest'),
    `WHERE REGEXP_CONTAINS(request.path, '/rest')`,
    `AND REGEXP_CONTAINS(request.path, '/rest')`,
  );
  // distinct shapes only: two filters on a WHERE-less template, one filter after the error WHERE
  return [cases[0]!, cases[1]!, rest[2]!, rest[3]!];
})();
const sharedAuth = apiCases(
  'Auth page API report (shared, request.path matches /auth)',
  C.shared,
  pathMatches('/auth'),
  `WHERE REGEXP_CONTAINS(request.path, '/auth')`,
  `AND REGEXP_CONTAINS(request.path, '/auth')`,
  'edge_logs',
  '--reports-api-total-requests',
);

// ---------------------------------------------------------------------------------------------
// Storage report (Reports.constants.ts)

const HIT = ['HIT', 'STALE', 'REVALIDATED', 'UPDATING'];
const MISS = ['MISS', 'NONE/UNKNOWN', 'EXPIRED', 'BYPASS', 'DYNAMIC'];
const storageGets = edgeJoin({ resHeaders: true }).filter((r) => (str(r.req.path) ?? '').startsWith('/storage/v1/object') && r.req.method === 'GET');
const cacheStatus = (r: EdgeRow) => str(r.resHeaders?.cf_cache_status) ?? '';

const storageCases: PageCase[] = [
  {
    name: 'Storage report: cache hit rate per hour',
    from: C.constants,
    sql: `
        -- reports-storage-cache-hit-rate
SELECT
  timestamp_trunc(timestamp, hour) as timestamp,
  countif( h.cf_cache_status in ('HIT', 'STALE', 'REVALIDATED', 'UPDATING') ) as hit_count,
  countif( h.cf_cache_status in ('MISS', 'NONE/UNKNOWN', 'EXPIRED', 'BYPASS', 'DYNAMIC') ) as miss_count
from edge_logs f
  cross join unnest(f.metadata) as m
  cross join unnest(m.request) as r
  cross join unnest(m.response) as res
  cross join unnest(res.headers) as h
where starts_with(r.path, '/storage/v1/object') and r.method = 'GET'
  
group by timestamp
order by timestamp desc
`,
    params,
    expect: groupBy(storageGets, (r) => [trunc(r.ts, 'hour')])
      .map(([[t], g]) => ({
        timestamp: t,
        hit_count: g.filter((r) => HIT.includes(cacheStatus(r))).length,
        miss_count: g.filter((r) => MISS.includes(cacheStatus(r))).length,
      }))
      .sort(desc('timestamp')),
  },
  {
    name: 'Storage report: top cache misses',
    from: C.constants,
    sql: `
        -- reports-storage-top-cache-misses
SELECT
  r.path as path,
  r.search as search,
  count(id) as count
from edge_logs f
  cross join unnest(f.metadata) as m
  cross join unnest(m.request) as r
  cross join unnest(m.response) as res
  cross join unnest(res.headers) as h
where starts_with(r.path, '/storage/v1/object')
  and r.method = 'GET'
  and h.cf_cache_status in ('MISS', 'NONE/UNKNOWN', 'EXPIRED', 'BYPASS', 'DYNAMIC')
  
group by path, search
order by count desc
limit 12
    `,
    params,
    ...top(
      groupBy(
        storageGets.filter((r) => MISS.includes(cacheStatus(r))),
        (r) => [str(r.req.path), str(r.req.search)],
      ).map(([k, g]) => ({ path: k[0], search: k[1], count: g.length })),
      12,
      'count',
    ),
  },
];

// ---------------------------------------------------------------------------------------------
// Auth report: per-panel queries (auth-report-query.ts, v2/auth.config.ts @ 92010a2d)

const ACTIVE = ['login', 'user_signedup', 'token_refreshed', 'user_modified', 'user_recovery_requested', 'user_reauthenticate_requested'];
const dur = (a: AuthRow): number | null => {
  const v = jv(a.line, 'duration');
  return v === null ? null : Number(v);
};
const byBucket = (rows: AuthRow[], unit: Unit, extra: (a: AuthRow) => unknown[] = () => []) => groupBy(rows, (a) => [trunc(a.ts, unit), ...extra(a)]);
/**
 * approx_quantiles(x, 100)[offset(i)]. The fixture's groups are built so that every exact rank
 * rule (nearest rank, floor or rounded interpolation index) picks the same value; this checks it.
 */
function quantile(xs: number[], i: number): number {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  const ranks = [Math.floor((i / 100) * (n - 1)), Math.round((i / 100) * (n - 1)), Math.max(0, Math.ceil((i / 100) * n) - 1)];
  const values = new Set(ranks.map((r) => s[r]));
  if (values.size !== 1) throw new Error(`quantile ${i} of ${s.join(',')} depends on the rank rule`);
  return s[ranks[0]!]!;
}
const ms2 = (ns: number) => round2(ns / 1000000);
const activeUsers = (rows: AuthRow[]) => new Set(rows.map((a) => jv(a.line, 'auth_event.actor_id')).filter((x) => x !== null)).size;
const auditIs = (action: string) => (a: AuthRow) => jv(a.line, 'auth_event.action') === action;
const loginTypeProvider = (a: AuthRow): string | null => {
  const p = jv(a.line, 'provider');
  return p !== null && p !== '' ? `${jv(a.line, 'login_method')} (${p})` : jv(a.line, 'login_method');
};
const metered = authAll.filter((a) => jv(a.line, 'action') === 'login' && jv(a.line, 'metering') === 'true');

function signInAttempts(unit: Unit): Row[] {
  return byBucket(metered, unit, (a) => [loginTypeProvider(a)])
    .map(([k, g]) => ({ timestamp: k[0], login_type_provider: k[1], count: g.length }))
    .sort((a, b) => desc('timestamp')(a, b) || String(a.login_type_provider).localeCompare(String(b.login_type_provider)));
}
const countPer = (rows: AuthRow[], unit: Unit): Row[] =>
  byBucket(rows, unit)
    .map(([[t], g]) => ({ timestamp: t, count: g.length }))
    .sort(desc('timestamp'));
function basicTimes(rows: AuthRow[], unit: Unit, prefix: string): Row[] {
  return byBucket(rows, unit)
    .map(([[t], g]) => {
      const d = g.map(dur).filter((x): x is number => x !== null);
      return {
        timestamp: t,
        count: g.length,
        [`avg_${prefix}`]: ms2(sum(d) / d.length),
        [`min_${prefix}`]: ms2(Math.min(...d)),
        [`max_${prefix}`]: ms2(Math.max(...d)),
      };
    })
    .sort(desc('timestamp'));
}
function percentileTimes(rows: AuthRow[], unit: Unit, prefix: string, ps: number[]): Row[] {
  return byBucket(rows, unit)
    .map(([[t], g]) => {
      const d = g.map(dur).filter((x): x is number => x !== null);
      const out: Row = { timestamp: t, count: g.length };
      for (const p of ps) out[`p${p}_${prefix}`] = ms2(quantile(d, p));
      return out;
    })
    .sort(desc('timestamp'));
}

// edge_logs rows of the auth error charts
const authErrorsOld = edgeJoin({}).filter((r) => (str(r.req.path) ?? '').includes('/auth') && status(r) >= 400 && status(r) <= 599);
const authErrorsV2 = edgeJoin({ resHeaders: true }).filter((r) => (str(r.req.path) ?? '').includes('auth/v1') && status(r) >= 400 && status(r) <= 599);
const errorsBy = (rows: EdgeRow[], unit: Unit, col: string, value: (r: EdgeRow) => unknown): Row[] =>
  groupBy(rows, (r) => [trunc(r.ts, unit), value(r)]).map(([k, g]) => ({ timestamp: k[0], count: g.length, [col]: k[1] }));

const oldAuthSql = {
  ActiveUsers: (g: Unit) => `
      --active-users
      select 
        timestamp_trunc(timestamp, ${g}) as timestamp,
        count(distinct json_value(f.event_message, "$.auth_event.actor_id")) as count
      from auth_logs f
      where json_value(f.event_message, "$.auth_event.action") in (
        'login', 'user_signedup', 'token_refreshed', 'user_modified',
        'user_recovery_requested', 'user_reauthenticate_requested'
      )
      group by timestamp
      order by timestamp desc
    `,
  SignInAttempts: (g: Unit) => `
      --sign-in-attempts
      SELECT
        timestamp_trunc(timestamp, ${g}) as timestamp,
        CASE
          WHEN JSON_VALUE(event_message, "$.provider") IS NOT NULL
              AND JSON_VALUE(event_message, "$.provider") != ''
          THEN CONCAT(
            JSON_VALUE(event_message, "$.login_method"),
            ' (',
            JSON_VALUE(event_message, "$.provider"),
            ')'
          )
          ELSE JSON_VALUE(event_message, "$.login_method")
        END as login_type_provider,
        COUNT(*) as count
      FROM
        auth_logs
      WHERE
        JSON_VALUE(event_message, "$.action") = 'login'
        AND JSON_VALUE(event_message, "$.metering") = "true"
      GROUP BY
        timestamp, login_type_provider
      ORDER BY
        timestamp desc, login_type_provider
    `,
  PasswordResetRequests: (g: Unit) => `
      --password-reset-requests
      select 
        timestamp_trunc(timestamp, ${g}) as timestamp,
        count(*) as count
      from auth_logs f
      where json_value(f.event_message, "$.auth_event.action") = 'user_recovery_requested'
      group by timestamp
      order by timestamp desc
    `,
  TotalSignUps: (g: Unit) => `
      --total-signups
      select 
        timestamp_trunc(timestamp, ${g}) as timestamp,
        count(*) as count
      from auth_logs
      where json_value(event_message, "$.auth_event.action") = 'user_signedup'
      group by timestamp
      order by timestamp desc
    `,
  SignInLatency: (g: Unit) => `
      --signin-latency
      select 
        timestamp_trunc(timestamp, ${g}) as timestamp,
        json_value(event_message, "$.grant_type") as grant_type,
        count(*) as request_count,
        round(avg(cast(json_value(event_message, "$.duration") as int64)) / 1000000, 2) as avg_latency_ms,
        round(min(cast(json_value(event_message, "$.duration") as int64)) / 1000000, 2) as min_latency_ms,
        round(max(cast(json_value(event_message, "$.duration") as int64)) / 1000000, 2) as max_latency_ms,
        round(approx_quantiles(cast(json_value(event_message, "$.duration") as int64), 100)[offset(50)] / 1000000, 2) as p50_latency_ms,
        round(approx_quantiles(cast(json_value(event_message, "$.duration") as int64), 100)[offset(95)] / 1000000, 2) as p95_latency_ms,
        round(approx_quantiles(cast(json_value(event_message, "$.duration") as int64), 100)[offset(99)] / 1000000, 2) as p99_latency_ms
      from auth_logs
      where json_value(event_message, "$.path") = '/token'
      group by timestamp, grant_type
      order by timestamp desc, grant_type
    `,
  SignUpLatency: (g: Unit) => `
      --signup-latency
      select 
        timestamp_trunc(timestamp, ${g}) as timestamp,
        json_value(event_message, "$.auth_event.traits.provider") as provider,
        round(avg(cast(json_value(event_message, "$.duration") as int64)) / 1000000, 2) as avg_latency_ms,
        round(min(cast(json_value(event_message, "$.duration") as int64)) / 1000000, 2) as min_latency_ms,
        round(max(cast(json_value(event_message, "$.duration") as int64)) / 1000000, 2) as max_latency_ms,
        round(approx_quantiles(cast(json_value(event_message, "$.duration") as int64), 100)[offset(50)] / 1000000, 2) as p50_latency_ms,
        round(approx_quantiles(cast(json_value(event_message, "$.duration") as int64), 100)[offset(95)] / 1000000, 2) as p95_latency_ms
      from auth_logs
      where json_value(event_message, "$.auth_event.action") = 'user_signedup'
        and json_value(event_message, "$.status") = '200'
      group by timestamp, provider
      order by timestamp desc, provider
    `,
  ErrorsByStatus: (g: Unit) => `
      --auth-errors-by-status
select 
  timestamp_trunc(timestamp, ${g}) as timestamp,
  count(*) as count,
  response.status_code
from edge_logs
  cross join unnest(metadata) as m
  cross join unnest(m.request) as request
  cross join unnest(m.response) as response
where path like '%/auth%'
  and response.status_code >= 400 and response.status_code <= 599
group by timestamp, status_code
order by timestamp desc
    `,
};

function latencyRows(rows: AuthRow[], unit: Unit, col: string, ps: number[], withCount: boolean): Row[] {
  return byBucket(rows, unit, (a) => [jv(a.line, col === 'grant_type' ? 'grant_type' : 'auth_event.traits.provider')])
    .map(([k, g]) => {
      const d = g.map(dur).filter((x): x is number => x !== null);
      const out: Row = { timestamp: k[0], [col]: k[1] };
      if (withCount) out.request_count = g.length;
      out.avg_latency_ms = ms2(sum(d) / d.length);
      out.min_latency_ms = ms2(Math.min(...d));
      out.max_latency_ms = ms2(Math.max(...d));
      for (const p of ps) out[`p${p}_latency_ms`] = ms2(quantile(d, p));
      return out;
    })
    .sort((a, b) => desc('timestamp')(a, b) || String(a[col]).localeCompare(String(b[col])));
}

const oldAuthCases: PageCase[] = [
  {
    name: 'Auth report (per panel, old): active users per hour',
    from: C.authOld,
    sql: oldAuthSql.ActiveUsers('hour'),
    params,
    expect: byBucket(
      authAll.filter((a) => ACTIVE.includes(jv(a.line, 'auth_event.action') ?? '')),
      'hour',
    )
      .map(([[t], g]) => ({ timestamp: t, count: activeUsers(g) }))
      .sort(desc('timestamp')),
  },
  {
    name: 'Auth report (per panel, old): sign-in attempts per hour',
    from: C.authOld,
    sql: oldAuthSql.SignInAttempts('hour'),
    params,
    expect: signInAttempts('hour'),
  },
  {
    name: 'Auth report (per panel, old): password reset requests per hour',
    from: C.authOld,
    sql: oldAuthSql.PasswordResetRequests('hour'),
    params,
    expect: countPer(authAll.filter(auditIs('user_recovery_requested')), 'hour'),
  },
  {
    name: 'Auth report (per panel, old): sign-ups per minute',
    from: C.authOld,
    sql: oldAuthSql.TotalSignUps('minute'),
    params,
    expect: countPer(authAll.filter(auditIs('user_signedup')), 'minute'),
  },
  {
    name: 'Auth report (per panel, old): sign-in latency per hour and grant type',
    from: C.authOld,
    sql: oldAuthSql.SignInLatency('hour'),
    params,
    expect: latencyRows(
      authAll.filter((a) => jv(a.line, 'path') === '/token'),
      'hour',
      'grant_type',
      [50, 95, 99],
      true,
    ),
  },
  {
    name: 'Auth report (per panel, old): sign-up latency per hour and provider',
    from: C.authOld,
    sql: oldAuthSql.SignUpLatency('hour'),
    params,
    expect: latencyRows(
      authAll.filter((a) => auditIs('user_signedup')(a) && jv(a.line, 'status') === '200'),
      'hour',
      'provider',
      [50, 95],
      false,
    ),
  },
  {
    name: 'Auth report (per panel, old): API errors by status per hour',
    from: C.authOld,
    sql: oldAuthSql.ErrorsByStatus('hour'),
    params,
    expect: errorsBy(authErrorsOld, 'hour', 'status_code', status),
    unordered: true,
  },
];

// v2/auth.config.ts @ 92010a2d: the same panels, with filters and processing-time splits
const providerSelect = (on: boolean, q = 'f.') => (on ? `COALESCE(JSON_VALUE(${q}event_message, "$.provider"), 'unknown') as provider,` : '');
const v2Where = (clause: string) => (clause ? `AND ${clause}` : '');
const v2AuthSql = {
  ActiveUsers: (g: Unit, where = '', byProvider = false) => `
        --active-users
        select 
          timestamp_trunc(timestamp, ${g}) as timestamp,
          ${providerSelect(byProvider)}
          count(distinct json_value(f.event_message, "$.auth_event.actor_id")) as count
        from auth_logs f
        where json_value(f.event_message, "$.auth_event.action") in (
          'login', 'user_signedup', 'token_refreshed', 'user_modified',
          'user_recovery_requested', 'user_reauthenticate_requested'
        )
        ${v2Where(where)}
        group by timestamp${byProvider ? ', provider' : ''}
        order by timestamp desc${byProvider ? ', provider' : ''}
      `,
  SignInAttempts: (g: Unit, where = '', byProvider = false) => `
        --sign-in-attempts
        SELECT
          timestamp_trunc(timestamp, ${g}) as timestamp,
          ${providerSelect(byProvider, '')}
          CASE
            WHEN JSON_VALUE(event_message, "$.provider") IS NOT NULL
                AND JSON_VALUE(event_message, "$.provider") != ''
            THEN CONCAT(
              JSON_VALUE(event_message, "$.login_method"),
              ' (',
              JSON_VALUE(event_message, "$.provider"),
              ')'
            )
            ELSE JSON_VALUE(event_message, "$.login_method")
          END as login_type_provider,
          COUNT(*) as count
        FROM
          auth_logs
        WHERE
          JSON_VALUE(event_message, "$.action") = 'login'
          AND JSON_VALUE(event_message, "$.metering") = "true"
          ${v2Where(where)}
        GROUP BY
          timestamp, login_type_provider${byProvider ? ', provider' : ''}
        ORDER BY
          timestamp desc, login_type_provider${byProvider ? ', provider' : ''}
      `,
  PasswordResetRequests: (g: Unit) => `
        --password-reset-requests
        select 
          timestamp_trunc(timestamp, ${g}) as timestamp,
          
          count(*) as count
        from auth_logs f
        where json_value(f.event_message, "$.auth_event.action") = 'user_recovery_requested'
        
        group by timestamp
        order by timestamp desc
      `,
  TotalSignUps: (g: Unit, where = '', byProvider = false) => `
        --total-signups
        select 
          timestamp_trunc(timestamp, ${g}) as timestamp,
          ${providerSelect(byProvider, '')}
          count(*) as count
        from auth_logs
        where json_value(event_message, "$.auth_event.action") = 'user_signedup'
        ${v2Where(where)}
        group by timestamp${byProvider ? ', provider' : ''}
        order by timestamp desc${byProvider ? ', provider' : ''}
      `,
  ProcessingTimeBasic: (g: Unit, kind: 'signin' | 'signup') => `
        --${kind}-processing-time-basic
        select 
          timestamp_trunc(timestamp, ${g}) as timestamp,
          
          count(*) as count,
          round(avg(cast(json_value(event_message, "$.duration") as int64)) / 1000000, 2) as avg_processing_time_ms,
          round(min(cast(json_value(event_message, "$.duration") as int64)) / 1000000, 2) as min_processing_time_ms,
          round(max(cast(json_value(event_message, "$.duration") as int64)) / 1000000, 2) as max_processing_time_ms
        from auth_logs
        where json_value(event_message, "$.auth_event.action") = '${kind === 'signin' ? 'login' : 'user_signedup'}'
        
        group by timestamp
        order by timestamp desc
      `,
  ProcessingTimePercentiles: (g: Unit, kind: 'signin' | 'signup') => `
        --${kind}-processing-time-percentiles
        select 
          timestamp_trunc(timestamp, ${g}) as timestamp,
          
          count(*) as count,
          round(approx_quantiles(cast(json_value(event_message, "$.duration") as int64), 100)[offset(50)] / 1000000, 2) as p50_processing_time_ms,
          round(approx_quantiles(cast(json_value(event_message, "$.duration") as int64), 100)[offset(95)] / 1000000, 2) as p95_processing_time_ms,
          round(approx_quantiles(cast(json_value(event_message, "$.duration") as int64), 100)[offset(99)] / 1000000, 2) as p99_processing_time_ms
        from auth_logs
        where json_value(event_message, "$.auth_event.action") = '${kind === 'signin' ? 'login' : 'user_signedup'}'
        
        group by timestamp
        order by timestamp desc
      `,
  ErrorsByStatus: (g: Unit, where = '') => `
        --auth-errors-by-status
  select 
    timestamp_trunc(timestamp, ${g}) as timestamp,
    count(*) as count,
    response.status_code
  from edge_logs
    cross join unnest(metadata) as m
    cross join unnest(m.request) as request
    cross join unnest(m.response) as response
    cross join unnest(response.headers) as h
  where path like '%auth/v1%'
    and response.status_code >= 400 and response.status_code <= 599
    ${v2Where(where)}
  group by timestamp, status_code
  order by timestamp desc
      `,
  ErrorsByAuthCode: (g: Unit) => `
        --auth-errors-by-code
  select 
    timestamp_trunc(timestamp, ${g}) as timestamp,
    count(*) as count,
    h.x_sb_error_code as error_code
  from edge_logs
    cross join unnest(metadata) as m
    cross join unnest(m.request) as request
    cross join unnest(m.response) as response
    cross join unnest(response.headers) as h
  where path like '%auth/v1%'
    and response.status_code >= 400 and response.status_code <= 599
    
  group by timestamp, error_code
  order by timestamp desc
      `,
};

const emailOnly = `JSON_VALUE(event_message, "$.provider") IN ('email')`;
const v2AuthCases: PageCase[] = [
  {
    name: 'Auth report v2 (per panel): active users per hour',
    from: C.authV2,
    sql: v2AuthSql.ActiveUsers('hour'),
    params,
    expect: oldAuthCases[0]!.expect,
  },
  {
    // The provider filter reads the metering lines' `provider`; audit lines carry none.
    name: 'Auth report v2 (per panel): active users, provider filter email (no audit line has a provider)',
    from: C.authV2,
    sql: v2AuthSql.ActiveUsers('hour', emailOnly, true),
    params,
    expect: [],
  },
  {
    name: 'Auth report v2 (per panel): sign-in attempts per hour',
    from: C.authV2,
    sql: v2AuthSql.SignInAttempts('hour'),
    params,
    expect: signInAttempts('hour'),
  },
  {
    name: 'Auth report v2 (per panel): sign-in attempts per day, provider filter email',
    from: C.authV2,
    sql: v2AuthSql.SignInAttempts('day', emailOnly, true),
    params,
    expect: byBucket(
      metered.filter((a) => jv(a.line, 'provider') === 'email'),
      'day',
      (a) => [loginTypeProvider(a)],
    ).map(([k, g]) => ({ timestamp: k[0], provider: 'email', login_type_provider: k[1], count: g.length })),
  },
  {
    name: 'Auth report v2 (per panel): password reset requests per hour',
    from: C.authV2,
    sql: v2AuthSql.PasswordResetRequests('hour'),
    params,
    expect: countPer(authAll.filter(auditIs('user_recovery_requested')), 'hour'),
  },
  {
    name: 'Auth report v2 (per panel): sign-ups per hour',
    from: C.authV2,
    sql: v2AuthSql.TotalSignUps('hour'),
    params,
    expect: countPer(authAll.filter(auditIs('user_signedup')), 'hour'),
  },
  {
    name: 'Auth report v2 (per panel): sign-in processing time per hour',
    from: C.authV2,
    sql: v2AuthSql.ProcessingTimeBasic('hour', 'signin'),
    params,
    expect: basicTimes(authAll.filter(auditIs('login')), 'hour', 'processing_time_ms'),
  },
  {
    name: 'Auth report v2 (per panel): sign-in processing time percentiles per hour',
    from: C.authV2,
    sql: v2AuthSql.ProcessingTimePercentiles('hour', 'signin'),
    params,
    expect: percentileTimes(authAll.filter(auditIs('login')), 'hour', 'processing_time_ms', [50, 95, 99]),
  },
  {
    name: 'Auth report v2 (per panel): sign-up processing time per hour',
    from: C.authV2,
    sql: v2AuthSql.ProcessingTimeBasic('hour', 'signup'),
    params,
    expect: basicTimes(authAll.filter(auditIs('user_signedup')), 'hour', 'processing_time_ms'),
  },
  {
    name: 'Auth report v2 (per panel): sign-up processing time percentiles per hour',
    from: C.authV2,
    sql: v2AuthSql.ProcessingTimePercentiles('hour', 'signup'),
    params,
    expect: percentileTimes(authAll.filter(auditIs('user_signedup')), 'hour', 'processing_time_ms', [50, 95, 99]),
  },
  {
    name: 'Auth report v2: API gateway auth errors by status per hour',
    from: C.authV2,
    sql: v2AuthSql.ErrorsByStatus('hour'),
    params,
    expect: errorsBy(authErrorsV2, 'hour', 'status_code', status),
    unordered: true,
  },
  {
    name: 'Auth report v2: API gateway auth errors by status per minute, status_code filter >= 401',
    from: C.authV2,
    sql: v2AuthSql.ErrorsByStatus('minute', 'response.status_code >= 401'),
    params,
    expect: errorsBy(
      authErrorsV2.filter((r) => status(r) >= 401),
      'minute',
      'status_code',
      status,
    ),
    unordered: true,
  },
  {
    name: 'Auth report v2: auth errors by error code per hour',
    from: C.authV2,
    sql: v2AuthSql.ErrorsByAuthCode('hour'),
    params,
    expect: errorsBy(authErrorsV2, 'hour', 'error_code', (r) => str(r.resHeaders?.x_sb_error_code)),
    unordered: true,
  },
];

// ---------------------------------------------------------------------------------------------
// Auth report v2 @ 034bbeb8: single-scan usage and latency (their own [start, end) window)

const usageAllSql = (g: Unit, start: string, end: string, providers?: string[]) => {
  const byProvider = Boolean(providers && providers.length > 0);
  const providerClause = byProvider
    ? `AND COALESCE(JSON_VALUE(event_message, '$.provider'), 'unknown') IN (${providers!.map((p) => `'${p}'`).join(', ')})`
    : '';
  const providerCol = byProvider ? 'provider' : 'CAST(NULL AS STRING) AS provider';
  return `
    -- usage-all (single fetch, single scan of auth_logs) — NO bucket generation, FE fills gaps
    WITH
    params AS (
      SELECT
        COALESCE(
          PARSE_TIMESTAMP('%Y-%m-%dT%H:%M:%E*S%Ez', '${start}'),
          TIMESTAMP('${start}')
        ) AS start_ts,
        COALESCE(
          PARSE_TIMESTAMP('%Y-%m-%dT%H:%M:%E*S%Ez', '${end}'),
          TIMESTAMP('${end}')
        ) AS end_ts
    ),

    -- single pass over auth_logs, parse JSON once
    base AS (
      SELECT
        TIMESTAMP_TRUNC(timestamp, ${g}) AS ts,
        COALESCE(JSON_VALUE(event_message, '$.auth_event.action'), JSON_VALUE(event_message, '$.action')) AS action,
        COALESCE(JSON_VALUE(event_message, '$.auth_event.actor_id'), JSON_VALUE(event_message, '$.user_id')) AS actor_id,
        COALESCE(JSON_VALUE(event_message, '$.provider'), 'unknown') AS provider,
        JSON_VALUE(event_message, '$.login_method') AS login_method,
        CASE
          WHEN JSON_VALUE(event_message, '$.metering') IS NOT NULL THEN LOWER(JSON_VALUE(event_message, '$.metering'))
          WHEN JSON_QUERY(event_message, '$.metering') = 'true' THEN 'true'
          ELSE ''
        END AS metering
      FROM auth_logs, params
      WHERE timestamp >= start_ts AND timestamp < end_ts
      ${providerClause}
    ),

    -- aggregate usage metrics from the same base rows
    agg_usage AS (
      SELECT
        ts
        ${byProvider ? ', provider' : ''},
        COUNT(DISTINCT IF(action IN ('login','user_signedup','token_refreshed','user_modified','user_recovery_requested','user_reauthenticate_requested'), actor_id, NULL)) AS active_users,
        COUNTIF(action = 'user_signedup') AS total_signups,
        COUNTIF(action = 'user_recovery_requested') AS password_reset_requests
      FROM base
      GROUP BY ts${byProvider ? ', provider' : ''}
    ),

    -- sign-in attempts by login_type_provider from the same base rows
    agg_signin AS (
      SELECT
        ts
        ${byProvider ? ', provider' : ''},
        CASE
          WHEN COALESCE(provider, '') != '' THEN CONCAT(login_method, ' (', provider, ')')
          ELSE login_method
        END AS login_type_provider,
        COUNTIF(action = 'login' AND metering = 'true') AS count
      FROM base
      GROUP BY ts, login_type_provider${byProvider ? ', provider' : ''}
    )

    -- emit tall result; no LEFT JOIN to a bucket table
    SELECT ts AS timestamp, 'ActiveUsers' AS metric, active_users AS count,
           ${providerCol},
           CAST(NULL AS STRING) AS login_type_provider
    FROM agg_usage

    UNION ALL
    SELECT ts, 'TotalSignUps', total_signups,
           ${providerCol},
           CAST(NULL AS STRING)
    FROM agg_usage

    UNION ALL
    SELECT ts, 'PasswordResetRequests', password_reset_requests,
           ${providerCol},
           CAST(NULL AS STRING)
    FROM agg_usage

    UNION ALL
    SELECT ts, 'SignInAttempts', count,
           ${providerCol},
           login_type_provider
    FROM agg_signin

    ORDER BY timestamp DESC${byProvider ? ', provider' : ''}
  `;
};

const latencyAllSql = (g: Unit, start: string, end: string) => `
    -- Auth latency (sign-in + sign-up), single scan, FE does zero-fill
    WITH params AS (
      SELECT
        COALESCE(PARSE_TIMESTAMP('%Y-%m-%dT%H:%M:%E*S%Ez', '${start}'), TIMESTAMP('${start}')) AS start_ts,
        COALESCE(PARSE_TIMESTAMP('%Y-%m-%dT%H:%M:%E*S%Ez', '${end}'),   TIMESTAMP('${end}'))   AS end_ts
    ),
    base AS (
      SELECT
        TIMESTAMP_TRUNC(timestamp, ${g}) AS ts,
        -- normalize action; accept both signup spellings
        CASE COALESCE(JSON_VALUE(event_message, '$.auth_event.action'), JSON_VALUE(event_message, '$.action'))
          WHEN 'login' THEN 'SignInLatency'
          WHEN 'user_signedup' THEN 'SignUpLatency'
          WHEN 'user_signed_up' THEN 'SignUpLatency'
          ELSE NULL
        END AS metric,
        -- normalize to milliseconds; prefer explicit *ms fields, then convert us/ns
        COALESCE(
          -- already in ms
          SAFE_CAST(JSON_VALUE(event_message, '$.processing_time_ms') AS FLOAT64),
          SAFE_CAST(JSON_VALUE(event_message, '$.auth_event.processing_time_ms') AS FLOAT64),
          SAFE_CAST(JSON_VALUE(event_message, '$.duration_ms') AS FLOAT64),
          SAFE_CAST(JSON_VALUE(event_message, '$.auth_event.duration_ms') AS FLOAT64),
          -- microseconds -> ms
          SAFE_CAST(JSON_VALUE(event_message, '$.processing_time_us') AS FLOAT64) / 1000.0,
          SAFE_CAST(JSON_VALUE(event_message, '$.auth_event.processing_time_us') AS FLOAT64) / 1000.0,
          SAFE_CAST(JSON_VALUE(event_message, '$.duration_us') AS FLOAT64) / 1000.0,
          SAFE_CAST(JSON_VALUE(event_message, '$.auth_event.duration_us') AS FLOAT64) / 1000.0,
          -- nanoseconds -> ms
          SAFE_CAST(JSON_VALUE(event_message, '$.processing_time_ns') AS FLOAT64) / 1000000.0,
          SAFE_CAST(JSON_VALUE(event_message, '$.auth_event.processing_time_ns') AS FLOAT64) / 1000000.0,
          SAFE_CAST(JSON_VALUE(event_message, '$.duration_ns') AS FLOAT64) / 1000000.0,
          SAFE_CAST(JSON_VALUE(event_message, '$.auth_event.duration_ns') AS FLOAT64) / 1000000.0,
          -- unlabeled duration: assume ns -> ms to match observed magnitudes
          SAFE_CAST(JSON_VALUE(event_message, '$.duration') AS FLOAT64) / 1000000.0,
          SAFE_CAST(JSON_VALUE(event_message, '$.auth_event.duration') AS FLOAT64) / 1000000.0
        ) AS latency_ms
      FROM auth_logs, params
      WHERE timestamp >= start_ts AND timestamp < end_ts
    ),
    filtered AS (
      SELECT
        ts,
        metric,
        latency_ms
      FROM base
      WHERE metric IS NOT NULL
    ),
    basic AS (
      SELECT
        ts,
        metric,
        MIN(latency_ms) AS min,
        AVG(latency_ms) AS avg,
        MAX(latency_ms) AS max
      FROM filtered
      GROUP BY ts, metric
    ),
    pct AS (
      SELECT
        ts,
        metric,
        APPROX_QUANTILES(latency_ms, 100) AS q
      FROM filtered
      GROUP BY ts, metric
    )
    SELECT
      b.ts AS timestamp,
      b.metric,
      b.min  AS min_processing_time_ms,
      b.avg  AS avg_processing_time_ms,
      b.max  AS max_processing_time_ms,
      q[OFFSET(50)] AS p50_processing_time_ms,
      q[OFFSET(95)] AS p95_processing_time_ms,
      q[OFFSET(99)] AS p99_processing_time_ms
    FROM basic b
    JOIN pct USING (ts, metric)
    ORDER BY timestamp DESC, metric
  `;

/** The rows of the single-scan `base`: logs.all's window, then the query's own [start, end). */
const scanBase = authAll.filter((a) => a.ts >= START_US && a.ts < END_US);
const action = (a: AuthRow) => jv(a.line, 'auth_event.action') ?? jv(a.line, 'action');
const actor = (a: AuthRow) => jv(a.line, 'auth_event.actor_id') ?? jv(a.line, 'user_id');
const provider = (a: AuthRow) => jv(a.line, 'provider') ?? 'unknown';
const meteringOf = (a: AuthRow) => jv(a.line, 'metering')?.toLowerCase() ?? '';

function usageAll(rows: AuthRow[], unit: Unit, byProvider: boolean): Row[] {
  const out: Row[] = [];
  const pv = (g: AuthRow[]) => (byProvider ? provider(g[0]!) : null);
  for (const [[t], g] of groupBy(rows, (a) => [trunc(a.ts, unit), ...(byProvider ? [provider(a)] : [])])) {
    const ids = new Set(
      g
        .filter((a) => ACTIVE.includes(action(a) ?? ''))
        .map(actor)
        .filter((x) => x !== null),
    );
    out.push({ timestamp: t, metric: 'ActiveUsers', count: ids.size, provider: pv(g), login_type_provider: null });
    out.push({
      timestamp: t,
      metric: 'TotalSignUps',
      count: g.filter((a) => action(a) === 'user_signedup').length,
      provider: pv(g),
      login_type_provider: null,
    });
    out.push({
      timestamp: t,
      metric: 'PasswordResetRequests',
      count: g.filter((a) => action(a) === 'user_recovery_requested').length,
      provider: pv(g),
      login_type_provider: null,
    });
  }
  const ltp = (a: AuthRow) => {
    const lm = jv(a.line, 'login_method');
    // provider is never '' here (COALESCE to 'unknown'), and CONCAT with a NULL login_method is NULL
    return lm === null ? null : `${lm} (${provider(a)})`;
  };
  for (const [k, g] of groupBy(rows, (a) => [trunc(a.ts, unit), ltp(a), ...(byProvider ? [provider(a)] : [])])) {
    out.push({
      timestamp: k[0],
      metric: 'SignInAttempts',
      count: g.filter((a) => action(a) === 'login' && meteringOf(a) === 'true').length,
      provider: byProvider ? k[2] : null,
      login_type_provider: k[1],
    });
  }
  return out;
}

function latencyAll(unit: Unit): Row[] {
  const metric = (a: AuthRow) => ({ login: 'SignInLatency', user_signedup: 'SignUpLatency', user_signed_up: 'SignUpLatency' })[action(a) ?? ''] ?? null;
  return groupBy(
    scanBase.filter((a) => metric(a) !== null),
    (a) => [trunc(a.ts, unit), metric(a)],
  )
    .map(([k, g]) => {
      const l = g
        .map(dur)
        .filter((x): x is number => x !== null)
        .map((ns) => ns / 1000000.0);
      return {
        timestamp: k[0],
        metric: k[1],
        min_processing_time_ms: Math.min(...l),
        avg_processing_time_ms: sum(l) / l.length,
        max_processing_time_ms: Math.max(...l),
        p50_processing_time_ms: quantile(l, 50),
        p95_processing_time_ms: quantile(l, 95),
        p99_processing_time_ms: quantile(l, 99),
      };
    })
    .sort((a, b) => desc('timestamp')(a, b) || String(a.metric).localeCompare(String(b.metric)));
}

const scanCases: PageCase[] = [
  {
    name: 'Auth report v2 (single scan): usage-all per hour',
    from: C.authScan,
    sql: usageAllSql('hour', START, END),
    params,
    expect: usageAll(scanBase, 'hour', false),
    unordered: true,
  },
  {
    name: 'Auth report v2 (single scan): usage-all per hour, provider filter email',
    from: C.authScan,
    sql: usageAllSql('hour', START, END, ['email']),
    params,
    expect: usageAll(
      scanBase.filter((a) => provider(a) === 'email'),
      'hour',
      true,
    ),
    unordered: true,
  },
  {
    name: 'Auth report v2 (single scan): sign-in and sign-up latency per hour',
    from: C.authScan,
    sql: latencyAllSql('hour', START, END),
    params,
    expect: latencyAll('hour'),
  },
];

// ---------------------------------------------------------------------------------------------
// Edge Functions report: edgefn.queries.ts, edgefn-query.ts, v2/edge-functions.config.ts

const fnId = (r: FnRow) => str(r.m.function_id);
const fnStatus = (r: FnRow) => num(r.res?.status_code);
const region = (r: FnRow) => str(r.h?.x_sb_edge_region);
const pathname = (r: FnRow) => str(r.req?.pathname);
const execMs = (r: FnRow) => num(r.m.execution_time_ms);
const perBucket = (rows: FnRow[], unit: Unit, cols: [string, (r: FnRow) => unknown][], value: (g: FnRow[]) => Row): Row[] =>
  groupBy(rows, (r) => [trunc(r.ts, unit), ...cols.map(([, f]) => f(r))]).map(([k, g]) => {
    const out: Row = { timestamp: k[0] };
    cols.forEach(([name], i) => {
      out[name] = k[i + 1];
    });
    return { ...out, ...value(g) };
  });
const inIds = (ids: string[]) => (r: FnRow) => ids.includes(fnId(r) ?? '');

const edgefnOldSql = {
  TotalInvocations: (g: Unit, functionId?: string) => `
--edgefn-report-invocations
select
  timestamp_trunc(timestamp, ${g}) as timestamp,
  request.pathname as function_path,
  count(*) as count
from
  function_edge_logs
  CROSS JOIN UNNEST(metadata) AS m
  CROSS JOIN UNNEST(m.request) AS request
  CROSS JOIN UNNEST(m.response) AS response
  ${functionId ? `WHERE function_id = '${functionId}'` : ''}
group by
  timestamp,
  function_path
order by
  timestamp desc;        

    `,
  ExecutionStatusCodes: (g: Unit) => `
--edgefn-report-execution-status-codes
select
  timestamp_trunc(timestamp, ${g}) as timestamp,
  response.status_code AS status_code,
  COUNT(*) AS count
FROM
  function_edge_logs
  CROSS JOIN UNNEST(metadata) AS m
  CROSS JOIN UNNEST(m.response) AS response
  CROSS JOIN UNNEST(m.request) AS request
  
group by
  timestamp,
  status_code
order by
  timestamp desc;
    `,
  InvocationsByRegion: (g: Unit) => `
--edgefn-report-invocations-by-region
select
  timestamp_trunc(timestamp, ${g}) as timestamp,
  h.x_sb_edge_region as region,
  count(*) as count
from
  function_edge_logs
  cross join unnest(metadata) as m
  cross join unnest(m.response) as r
  cross join unnest(r.headers) as h
  where h.x_sb_edge_region is not null
  
group by
  timestamp,
  region
order by
  timestamp desc
    `,
  ExecutionTime: (g: Unit, functionId?: string) => `
--edgefn-report-execution-time
select
  timestamp_trunc(timestamp, ${g}) as timestamp,
  request.pathname as function_path,
  avg(m.execution_time_ms) as avg_execution_time
from
  function_edge_logs
  cross join unnest(metadata) as m
  cross join unnest(m.request) as request
  ${functionId ? `where function_id = '${functionId}'` : ''}
group by
  timestamp,
  function_path
order by
  timestamp desc
    `,
};

const idList = (ids: string[]) => ids.map((id) => `'${id}'`).join(',');
const edgefnMidSql = {
  TotalInvocations: (g: Unit, ids: string[] = []) => `
--edgefn-report-invocations
select
  timestamp_trunc(timestamp, ${g}) as timestamp,
  function_id,
  count(*) as count
from
  function_edge_logs
  CROSS JOIN UNNEST(metadata) AS m
  CROSS JOIN UNNEST(m.request) AS request
  CROSS JOIN UNNEST(m.response) AS response
  ${ids.length > 0 ? `WHERE function_id IN (${idList(ids)})` : ''}
group by
  timestamp,
  function_id
order by
  timestamp desc;        

    `,
  ExecutionStatusCodes: (g: Unit, ids: string[] = []) => `
--edgefn-report-execution-status-codes
select
  timestamp_trunc(timestamp, ${g}) as timestamp,
  response.status_code AS status_code,
  COUNT(*) AS count
FROM
  function_edge_logs
  CROSS JOIN UNNEST(metadata) AS m
  CROSS JOIN UNNEST(m.response) AS response
  CROSS JOIN UNNEST(m.request) AS request
  ${ids.length > 0 ? `WHERE function_id IN (${idList(ids)})` : ''}
group by
  timestamp,
  status_code
order by
  timestamp desc;
    `,
  InvocationsByRegion: (g: Unit, ids: string[] = []) => `
--edgefn-report-invocations-by-region
select
  timestamp_trunc(timestamp, ${g}) as timestamp,
  h.x_sb_edge_region as region,
  count(*) as count
from
  function_edge_logs
  cross join unnest(metadata) as m
  cross join unnest(m.response) as r
  cross join unnest(r.headers) as h
  where h.x_sb_edge_region is not null
  ${ids.length > 0 ? `and function_id IN (${idList(ids)})` : ''}
group by
  timestamp,
  region
order by
  timestamp desc
    `,
  ExecutionTime: (g: Unit, ids: string[] = []) => `
--edgefn-report-execution-time
select
  timestamp_trunc(timestamp, ${g}) as timestamp,
  ${ids.length > 0 ? 'function_id,' : ''}
  avg(m.execution_time_ms) as avg_execution_time
from
  function_edge_logs
  cross join unnest(metadata) as m
  cross join unnest(m.request) as request
  ${ids.length > 0 ? `where function_id IN (${idList(ids)})` : ''}
group by
  timestamp
  ${ids.length > 0 ? ', function_id' : ''}
order by
  timestamp desc
    `,
};

const edgefnV2Sql = {
  TotalInvocations: (g: Unit, where = '') => `
--edgefn-report-invocations
select
  timestamp_trunc(timestamp, ${g}) as timestamp,
  function_id,
  count(*) as count
from
  function_edge_logs
  CROSS JOIN UNNEST(metadata) AS m
  CROSS JOIN UNNEST(m.request) AS request
  CROSS JOIN UNNEST(m.response) AS response
  CROSS JOIN UNNEST(response.headers) AS h
  ${where}
group by
  timestamp,
  function_id
order by
  timestamp desc;
`,
  ExecutionStatusCodes: (g: Unit, where = '') => `
--edgefn-report-execution-status-codes
select
  timestamp_trunc(timestamp, ${g}) as timestamp,
  response.status_code as status_code,
  count(response.status_code) as count
from
  function_edge_logs
  cross join unnest(metadata) as m
  cross join unnest(m.response) as response
  cross join unnest(response.headers) as h
  ${where}
group by
  timestamp,
  status_code
order by
  timestamp desc
`,
  InvocationsByRegion: (g: Unit, where = '') => `
--edgefn-report-invocations-by-region
select
  timestamp_trunc(timestamp, ${g}) as timestamp,
  h.x_sb_edge_region as region,
  count(*) as count
from
  function_edge_logs
  cross join unnest(metadata) as m
  cross join unnest(m.response) as r
  cross join unnest(r.headers) as h
  ${where}
  ${where.includes('WHERE') ? 'AND h.x_sb_edge_region is not null' : 'WHERE h.x_sb_edge_region is not null'}
group by
  timestamp,
  region
order by
  timestamp desc
`,
  ExecutionTime: (g: Unit, where = '') => `
--edgefn-report-execution-time
select
  timestamp_trunc(timestamp, ${g}) as timestamp,
  function_id,
  avg(m.execution_time_ms) as avg_execution_time
from
  function_edge_logs
  cross join unnest(metadata) as m
  cross join unnest(m.request) as request
  cross join unnest(m.response) as response
  cross join unnest(response.headers) as h
  ${where}
group by
  timestamp,
  function_id
order by
  timestamp desc
`,
};

const withReqRes = fnJoin({ req: true, res: true });
const withReq = fnJoin({ req: true });
const withResH = fnJoin({ res: true, h: true });
const withAllH = fnJoin({ req: true, res: true, h: true });
const count = (g: FnRow[]) => ({ count: g.length });
const avgExec = (g: FnRow[]) => ({ avg_execution_time: avgOf(g.map(execMs)) });
const v2Filter = (r: FnRow) =>
  ['fn-hello', 'fn-stripe'].includes(fnId(r) ?? '') && (fnStatus(r) ?? 0) >= 200 && region(r) === 'eu-west-1' && (execMs(r) ?? 0) > 90;
const v2FilterWhere = `WHERE function_id IN ('fn-hello','fn-stripe') AND response.status_code >= 200 AND h.x_sb_edge_region IN ('eu-west-1') AND m.execution_time_ms > 90`;

const edgeFnCases: PageCase[] = [
  {
    name: 'Edge Functions report (edgefn.queries): invocations per hour and path',
    from: C.edgefnOld,
    sql: edgefnOldSql.TotalInvocations('hour'),
    params,
    expect: perBucket(withReqRes, 'hour', [['function_path', pathname]], count),
    unordered: true,
  },
  {
    name: 'Edge Functions report (edgefn.queries): invocations of one function per minute',
    from: C.edgefnOld,
    sql: edgefnOldSql.TotalInvocations('minute', 'fn-hello'),
    params,
    expect: perBucket(withReqRes.filter(inIds(['fn-hello'])), 'minute', [['function_path', pathname]], count).sort(desc('timestamp')),
  },
  {
    name: 'Edge Functions report (edgefn.queries): status codes per hour',
    from: C.edgefnOld,
    sql: edgefnOldSql.ExecutionStatusCodes('hour'),
    params,
    expect: perBucket(withReqRes, 'hour', [['status_code', fnStatus]], count),
    unordered: true,
  },
  {
    name: 'Edge Functions report (edgefn.queries): invocations by region per hour',
    from: C.edgefnOld,
    sql: edgefnOldSql.InvocationsByRegion('hour'),
    params,
    expect: perBucket(
      withResH.filter((r) => region(r) !== null),
      'hour',
      [['region', region]],
      count,
    ),
    unordered: true,
  },
  {
    name: 'Edge Functions report (edgefn.queries): execution time per hour and path',
    from: C.edgefnOld,
    sql: edgefnOldSql.ExecutionTime('hour'),
    params,
    expect: perBucket(withReq, 'hour', [['function_path', pathname]], avgExec),
    unordered: true,
  },
  {
    name: 'Edge Functions report (edgefn.queries): execution time of one function per hour',
    from: C.edgefnOld,
    sql: edgefnOldSql.ExecutionTime('hour', 'fn-stripe'),
    params,
    expect: perBucket(withReq.filter(inIds(['fn-stripe'])), 'hour', [['function_path', pathname]], avgExec).sort(desc('timestamp')),
  },
  {
    name: 'Edge Functions report (edgefn-query): invocations per hour and function',
    from: C.edgefnMid,
    sql: edgefnMidSql.TotalInvocations('hour'),
    params,
    expect: perBucket(withReqRes, 'hour', [['function_id', fnId]], count),
    unordered: true,
  },
  {
    name: 'Edge Functions report (edgefn-query): status codes per hour, two functions',
    from: C.edgefnMid,
    sql: edgefnMidSql.ExecutionStatusCodes('hour', ['fn-hello', 'fn-resize']),
    params,
    expect: perBucket(withReqRes.filter(inIds(['fn-hello', 'fn-resize'])), 'hour', [['status_code', fnStatus]], count),
    unordered: true,
  },
  {
    name: 'Edge Functions report (edgefn-query): invocations by region per day, one function',
    from: C.edgefnMid,
    sql: edgefnMidSql.InvocationsByRegion('day', ['fn-hello']),
    params,
    expect: perBucket(
      withResH.filter((r) => region(r) !== null && fnId(r) === 'fn-hello'),
      'day',
      [['region', region]],
      count,
    ),
    unordered: true,
  },
  {
    name: 'Edge Functions report (edgefn-query): execution time per hour, all functions',
    from: C.edgefnMid,
    sql: edgefnMidSql.ExecutionTime('hour'),
    params,
    expect: perBucket(withReq, 'hour', [], avgExec).sort(desc('timestamp')),
  },
  {
    name: 'Edge Functions report (edgefn-query): execution time per hour and function, two functions',
    from: C.edgefnMid,
    sql: edgefnMidSql.ExecutionTime('hour', ['fn-hello', 'fn-stripe']),
    params,
    expect: perBucket(withReq.filter(inIds(['fn-hello', 'fn-stripe'])), 'hour', [['function_id', fnId]], avgExec),
    unordered: true,
  },
  {
    name: 'Edge Functions report v2: invocations per hour and function',
    from: C.edgefnV2,
    sql: edgefnV2Sql.TotalInvocations('hour'),
    params,
    expect: perBucket(withAllH, 'hour', [['function_id', fnId]], count),
    unordered: true,
  },
  {
    name: 'Edge Functions report v2: invocations per hour, all four filters',
    from: C.edgefnV2,
    sql: edgefnV2Sql.TotalInvocations('hour', v2FilterWhere),
    params,
    expect: perBucket(withAllH.filter(v2Filter), 'hour', [['function_id', fnId]], count),
    unordered: true,
  },
  {
    name: 'Edge Functions report v2: status codes per hour',
    from: C.edgefnV2,
    sql: edgefnV2Sql.ExecutionStatusCodes('hour'),
    params,
    expect: perBucket(withResH, 'hour', [['status_code', fnStatus]], count),
    unordered: true,
  },
  {
    name: 'Edge Functions report v2: invocations by region per hour',
    from: C.edgefnV2,
    sql: edgefnV2Sql.InvocationsByRegion('hour'),
    params,
    expect: perBucket(
      withResH.filter((r) => region(r) !== null),
      'hour',
      [['region', region]],
      count,
    ),
    unordered: true,
  },
  {
    name: 'Edge Functions report v2: invocations by region per hour, function filter',
    from: C.edgefnV2,
    sql: edgefnV2Sql.InvocationsByRegion('hour', `WHERE function_id IN ('fn-stripe','fn-resize')`),
    params,
    expect: perBucket(
      withResH.filter((r) => region(r) !== null && inIds(['fn-stripe', 'fn-resize'])(r)),
      'hour',
      [['region', region]],
      count,
    ),
    unordered: true,
  },
  {
    name: 'Edge Functions report v2: execution time per hour and function',
    from: C.edgefnV2,
    sql: edgefnV2Sql.ExecutionTime('hour'),
    params,
    expect: perBucket(withAllH, 'hour', [['function_id', fnId]], avgExec),
    unordered: true,
  },
];

export const reportCases: PageCase[] = [
  ...apiReport,
  ...apiFiltered,
  ...sharedAuth,
  ...storageCases,
  ...oldAuthCases,
  ...v2AuthCases,
  ...scanCases,
  ...edgeFnCases,
];
