/**
 * The nine Supabase sources with realistic (trimmed) schemas and a small, fixed set of events.
 * Times are on 2026-11-21 UTC. Some paths Studio asks for are deliberately absent from the
 * schemas (edge `request.search`, postgres `parsed.hint`, pgbouncer has no `metadata` at all),
 * to exercise the missing-path rule.
 */
import type { SourceTable } from '../../src/storage/schema.ts';
import { bool, float, int, list, rec, schema, str } from './support.ts';

function source(name: string, table: string, columns: Parameters<typeof schema>[0]): SourceTable {
  return { id: `00000000-0000-4000-8000-${table.padStart(12, '0').slice(-12)}`, name, table, schema: schema(columns) };
}

export const edgeSource = source('cloudflare.logs.prod', 'src_edge', {
  project: str,
  identifier: str,
  metadata: rec({
    tags: list(str),
    request: rec({
      method: str,
      path: str,
      url: str,
      headers: rec({ cf_connecting_ip: str, user_agent: str }),
    }),
    response: rec({ status_code: int, origin_time: float }),
  }),
});

export const postgresSource = source('postgres.logs', 'src_postgres', {
  project: str,
  identifier: str,
  metadata: rec({
    host: str,
    parsed: rec({ error_severity: str, user_name: str, application_name: str, sql_state_code: str }),
  }),
});

export const functionEdgeSource = source('deno-relay-logs', 'src_fn_edge', {
  metadata: rec({
    project_ref: str,
    function_id: str,
    execution_time_ms: int,
    deployment_id: str,
    request: rec({ method: str, pathname: str }),
    response: rec({ status_code: int }),
  }),
});

export const functionLogsSource = source('deno-subhosting-events', 'src_fn_logs', {
  metadata: rec({ project_ref: str, event_type: str, level: str, function_id: str, execution_id: str }),
});

export const authSource = source('gotrue.logs.prod', 'src_auth', {
  project: str,
  metadata: rec({ level: str, status: int, path: str, msg: str, error: str }),
});

export const realtimeSource = source('realtime.logs.prod', 'src_realtime', {
  metadata: rec({ project: str, level: str, external_id: str }),
});

export const storageSource = source('storage.logs.prod.2', 'src_storage', {
  metadata: rec({
    project: str,
    level: str,
    tenantId: str,
    context: list(rec({ host: str, pid: int })),
  }),
});

export const postgrestSource = source('postgREST.logs.prod', 'src_postgrest', {
  project: str,
  metadata: rec({ host: str }),
});

export const pgbouncerSource = source('pgbouncer.logs.prod', 'src_pgbouncer', {
  project: str,
  verbose: bool,
});

export const supabaseSources: SourceTable[] = [
  edgeSource,
  postgresSource,
  functionEdgeSource,
  functionLogsSource,
  authSource,
  realtimeSource,
  storageSource,
  postgrestSource,
  pgbouncerSource,
];

const T = (hms: string) => `2026-11-21T${hms}Z`;

function edge(id: string, time: string, method: string, path: string, status: number, extra: Record<string, unknown> = {}) {
  return {
    id,
    timestamp: T(time),
    event_message: `${method} | ${status} | 10.0.0.${id.slice(-1)} | ${path}`,
    project: 'default',
    identifier: 'default',
    metadata: {
      tags: (extra.tags as string[] | null | undefined) ?? null,
      request: {
        method,
        path,
        url: `http://kong:8000${path}`,
        headers: { cf_connecting_ip: `10.0.0.${id.slice(-1)}`, user_agent: 'curl/8.5.0' },
      },
      response: { status_code: status, origin_time: 1.5 },
    },
    ...Object.fromEntries(Object.entries(extra).filter(([k]) => k !== 'tags')),
  };
}

export const supabaseData: Record<string, object[]> = {
  'cloudflare.logs.prod': [
    edge('e1', '10:00:00', 'GET', '/rest/v1/todos', 200, { tags: ['a', 'b'] }),
    edge('e2', '10:01:00', 'POST', '/auth/v1/token', 400, { tags: [] }),
    edge('e3', '10:02:30', 'GET', '/storage/v1/object/x', 500),
    edge('e4', '10:03:00', 'GET', '/realtime/v1/websocket', 101, { tags: ['c'] }),
    edge('e5', '10:04:00', 'GET', '/rest/v1/auth/x', 200),
    edge('e6', '10:05:00', 'GET', '/rest/v1/y', 200, { project: 'other' }),
    edge('e7', '10:05:00', 'DELETE', '/rest/v1/z', 503),
    { id: 'e8', timestamp: T('11:00:00'), event_message: 'bare', project: 'default', identifier: null, metadata: null },
  ],
  'postgres.logs': [
    pg('p1', '10:00:00', 'LOG', 'checkpoint starting: time'),
    pg('p2', '10:10:00', 'ERROR', 'relation "x" does not exist'),
    pg('p3', '10:20:00', 'WARNING', 'there is no transaction in progress'),
    pg('p4', '10:30:00', 'FATAL', 'cron job 7 failed', 'pg_cron'),
    { ...pg('p5', '10:40:00', 'LOG', 'other project'), project: 'other' },
  ],
  'deno-relay-logs': [
    fnEdge('f1', '10:00:00', 'default', 'fn1', 200, 35),
    fnEdge('f2', '10:01:00', 'default', 'fn1', 500, 120),
    fnEdge('f3', '10:02:00', 'other', 'fn2', 200, 10),
  ],
  'deno-subhosting-events': [
    fnLog('fl1', '10:00:00', 'default', 'Log', 'info'),
    fnLog('fl2', '10:01:00', 'default', 'UncaughtException', 'error'),
    fnLog('fl3', '10:02:00', 'other', 'Log', 'info'),
  ],
  'gotrue.logs.prod': [
    {
      id: 'a1',
      timestamp: T('10:00:00'),
      event_message: '{"msg":"request completed","status":200}',
      project: 'default',
      metadata: { level: 'info', status: 200, path: '/token', msg: 'request completed', error: null },
    },
    {
      id: 'a2',
      timestamp: T('10:05:00'),
      event_message: '{"msg":"signup failed","status":500}',
      project: 'default',
      metadata: { level: 'error', status: 500, path: '/signup', msg: 'signup failed', error: 'database error' },
    },
    { id: 'a3', timestamp: T('10:06:00'), event_message: 'x', project: 'other', metadata: { level: 'info', status: 200, path: '/user', msg: 'ok' } },
  ],
  'realtime.logs.prod': [
    { id: 'r1', timestamp: T('10:00:00'), event_message: 'Billing metrics', metadata: { project: 'default', level: 'info', external_id: 'default' } },
    { id: 'r2', timestamp: T('10:01:00'), event_message: 'other', metadata: { project: 'other', level: 'error', external_id: 'other' } },
  ],
  'storage.logs.prod.2': [
    {
      id: 's1',
      timestamp: T('10:00:00'),
      event_message: 'Server listening',
      metadata: { project: 'default', level: 'info', tenantId: 'default', context: [{ host: 'h1', pid: 1 }] },
    },
    {
      id: 's2',
      timestamp: T('10:01:00'),
      event_message: 'two contexts',
      metadata: {
        project: 'default',
        level: 'warn',
        tenantId: 'default',
        context: [
          { host: 'h2', pid: 2 },
          { host: 'h3', pid: 3 },
        ],
      },
    },
    { id: 's3', timestamp: T('10:02:00'), event_message: 'no context', metadata: { project: 'default', level: 'error', tenantId: 'default', context: [] } },
    { id: 's4', timestamp: T('10:03:00'), event_message: 'other', metadata: { project: 'other', level: 'info', tenantId: 'other', context: null } },
  ],
  'postgREST.logs.prod': [
    { id: 'pr1', timestamp: T('10:00:00'), event_message: 'Listening on port 3000', project: 'default', metadata: { host: 'default' } },
    { id: 'pr2', timestamp: T('10:01:00'), event_message: 'Starting PostgREST', project: 'default', metadata: null },
  ],
  'pgbouncer.logs.prod': [
    { id: 'pb1', timestamp: T('10:00:00'), event_message: 'stats: 0 xacts/s', project: 'default', verbose: false },
    { id: 'pb2', timestamp: T('10:01:00'), event_message: 'other', project: 'other', verbose: true },
  ],
};

function pg(id: string, time: string, severity: string, message: string, app = 'postgres') {
  return {
    id,
    timestamp: T(time),
    event_message: `2026-11-21 ${time}.000 UTC [42] ${severity}:  ${message}`,
    project: 'default',
    identifier: 'default',
    metadata: { host: 'db-default', parsed: { error_severity: severity, user_name: 'postgres', application_name: app, sql_state_code: '00000' } },
  };
}

function fnEdge(id: string, time: string, project: string, fn: string, status: number, ms: number) {
  return {
    id,
    timestamp: T(time),
    event_message: `POST | ${status} | http://kong:8000/functions/v1/${fn}`,
    metadata: {
      project_ref: project,
      function_id: fn,
      execution_time_ms: ms,
      deployment_id: `${fn}_1`,
      request: { method: 'POST', pathname: `/${fn}` },
      response: { status_code: status },
    },
  };
}

function fnLog(id: string, time: string, project: string, eventType: string, level: string) {
  return {
    id,
    timestamp: T(time),
    event_message: `${eventType} ${level}`,
    metadata: { project_ref: project, event_type: eventType, level, function_id: 'fn1', execution_id: `x-${id}` },
  };
}
