/**
 * Events for the Studio page templates (pages.ts), shaped as Vector and the platform ship them to
 * the nine Supabase sources (../shared/reference/supabase-sources.md, section 3): `timestamp` as
 * ISO text; `project: 'default'` at the top level for edge, auth, postgres, postgrest and
 * pgbouncer; `metadata.project` for realtime and storage; `metadata.project_ref` for the two
 * function sources. A few events of another project check the project filter.
 *
 * Studio's page queries ask for "the last hour", "the last 24 hours", "the last 7 days", so every
 * time is relative to BASE, the current minute at module load; pages.ts builds its parameters and
 * expectations from the same BASE.
 *
 * Shapes that exist in reality and matter here:
 * - deno-relay-logs console lines (self-hosted edge-runtime output) carry only
 *   `metadata.project_ref`: no request, no response, no function id; one invocation cut short
 *   (wall clock limit) carries a request but no response;
 * - GoTrue events carry their own `metadata.timestamp` (second precision, GoTrue's clock), next to
 *   the event's `timestamp` (the container's, with milliseconds);
 * - GoTrue lines that are not JSON have no metadata at all;
 * - edge events carry the gateway's `request.sb` record (auth_user, jwt.apikey.payload, ...) only
 *   when a key or user token came with the request; self-hosted Kong lines have none.
 */
import type { Fixture, Row } from './harness.ts';

const MINUTE = 60_000;

/** The current minute at module load (Unix ms). */
export const BASE = Math.floor(Date.now() / MINUTE) * MINUTE;

/** ISO text of BASE minus `min` minutes, plus `sec` seconds and `ms` milliseconds. */
export function at(min: number, sec = 0, ms = 250): string {
  return new Date(BASE - min * MINUTE + sec * 1000 + ms).toISOString();
}

/** ISO text of BASE minus `min` minutes (Studio's computed bounds). */
export function isoAgo(min: number): string {
  return new Date(BASE - min * MINUTE).toISOString();
}

/** The user whose journey the Users page shows, and another one. */
export const USER = 'a3c1d7e2-5b4f-4c8e-9d2a-1f0e6b7c8d9e';
export const OTHER_USER = '7f9e8d7c-6b5a-4e3d-8c2b-1a0f9e8d7c6b';

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const pad = (n: number) => String(n).padStart(2, '0');
function nginxTime(iso: string): string {
  const d = new Date(iso);
  return `${pad(d.getUTCDate())}/${MONTHS[d.getUTCMonth()]}/${d.getUTCFullYear()}:${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())} +0000`;
}
const toSecond = (iso: string) => `${iso.slice(0, 19)}Z`;

// cloudflare.logs.prod (edge_logs) --------------------------------------------------------------

function anonKey(prefix: string, extra: Row = {}): Row {
  return {
    apikey: {
      ...extra,
      payload: { algorithm: 'HS256', issuer: 'supabase', role: 'anon', signature_prefix: prefix, issued_at: 1_700_000_000, expires_at: 2_015_000_000 },
    },
  };
}
const serviceKey = (prefix: string): Row => ({
  apikey: {
    payload: { algorithm: 'HS256', issuer: 'supabase', role: 'service_role', signature_prefix: prefix, issued_at: 1_700_000_000, expires_at: 2_015_000_000 },
  },
});
const userToken = (user: string): Row => ({
  authorization: {
    payload: { algorithm: 'HS256', issuer: 'http://localhost:8000/auth/v1', role: 'authenticated', subject: user, session_id: `s-${user.slice(0, 8)}` },
  },
});

interface EdgeSpec {
  at: string;
  method: string;
  path: string;
  search?: string;
  status: number;
  sb?: Row;
  project?: string;
  ua?: string;
  /** Response headers (the platform gateway's `x_sb_error_code`, ...). */
  headers?: Row;
}

function edge(s: EdgeSpec): Row {
  const ua = s.ua ?? 'supabase-js/2.45.0';
  const request: Row = {
    headers: { referer: '-', user_agent: ua, cf_connecting_ip: '172.18.0.1', x_client_info: 'supabase-js-web/2.45.0' },
    method: s.method,
    path: s.path,
    protocol: 'HTTP/1.1',
  };
  if (s.search !== undefined) request.search = s.search;
  if (s.sb !== undefined) request.sb = s.sb;
  return {
    timestamp: s.at,
    project: s.project ?? 'default',
    appname: 'supabase-kong',
    event_message: `172.18.0.1 - - [${nginxTime(s.at)}] "${s.method} ${s.path}${s.search ?? ''} HTTP/1.1" ${s.status} 321 "-" "${ua}"`,
    metadata: { request, response: s.headers === undefined ? { status_code: s.status } : { status_code: s.status, headers: s.headers } },
  };
}

export const edgeEvents: Row[] = [
  edge({
    at: at(50, 1),
    method: 'GET',
    path: '/rest/v1/profiles',
    search: '?select=*',
    status: 200,
    sb: { auth_user: USER, jwt: { ...anonKey('aBcDeF'), ...userToken(USER) } },
  }),
  edge({ at: at(45, 2), method: 'POST', path: '/rest/v1/orders', status: 201, sb: { auth_user: USER, jwt: { ...anonKey('aBcDeF'), ...userToken(USER) } } }),
  edge({ at: at(40, 3), method: 'GET', path: '/rest/v1/todos', search: '?select=id', status: 200, sb: { jwt: anonKey('zYxWvU') } }),
  edge({ at: at(30, 4), method: 'POST', path: '/rest/v1/payments', status: 403, sb: { auth_user: USER, jwt: { ...anonKey('aBcDeF'), ...userToken(USER) } } }),
  edge({ at: at(25, 5), method: 'GET', path: '/rest/v1/todos', status: 200, sb: { jwt: serviceKey('sRvKeY') }, ua: 'node-fetch' }),
  edge({
    at: at(15, 6),
    method: 'GET',
    path: '/auth/v1/user',
    status: 200,
    sb: { auth_user: OTHER_USER, jwt: { ...anonKey('aBcDeF'), ...userToken(OTHER_USER) } },
  }),
  edge({ at: at(12, 7), method: 'POST', path: '/functions/v1/hello', status: 500, sb: { jwt: anonKey('aBcDeF') } }),
  // a key whose signature did not verify
  edge({ at: at(8, 8), method: 'GET', path: '/rest/v1/todos', status: 401, sb: { jwt: anonKey('bAdSiG', { invalid: true }) } }),
  // a custom JWT signed by another issuer, and an asymmetric key
  edge({
    at: at(7, 9),
    method: 'GET',
    path: '/rest/v1/todos',
    status: 200,
    sb: { jwt: { apikey: { payload: { algorithm: 'HS256', issuer: 'my-issuer', role: 'anon', signature_prefix: 'cUsToM' } } } },
  }),
  edge({
    at: at(6, 10),
    method: 'GET',
    path: '/rest/v1/todos',
    status: 200,
    sb: { jwt: { apikey: { payload: { algorithm: 'ES256', issuer: 'supabase', role: 'anon', signature_prefix: 'eCdSa1' } } } },
  }),
  // self-hosted Kong lines: no sb at all
  edge({ at: at(4, 11), method: 'GET', path: '/rest/v1/', status: 200, ua: 'curl/8.5.0' }),
  // the error-log shape (kong_err): request defaults, a top-level severity
  {
    timestamp: at(2, 12),
    project: 'default',
    appname: 'supabase-kong',
    severity: 'error',
    event_message: `2026/11/27 10:00:00 [error] 1234#0: *5 connect() failed (111: Connection refused) while connecting to upstream, client: 172.18.0.1, server: kong, request: "GET /storage/v1/bucket HTTP/1.1", host: "localhost:8000"`,
    metadata: {
      request: { method: 'GET', host: 'localhost:8000', headers: { cf_connecting_ip: '172.18.0.1' }, path: '/storage/v1/bucket', protocol: 'HTTP/1.1' },
      response: { status_code: 200 },
    },
  },
  // Auth API errors through the gateway, some with GoTrue's error code header
  ...[44, 33, 22].map((min, i) =>
    edge({
      at: at(min, 17 + i),
      method: 'POST',
      path: '/auth/v1/token',
      search: '?grant_type=password',
      status: 400,
      headers: { content_type: 'application/json', x_sb_error_code: 'invalid_credentials' },
    }),
  ),
  ...[300, 26].map((min, i) =>
    edge({
      at: at(min, 20 + i),
      method: 'POST',
      path: '/auth/v1/signup',
      status: 422,
      headers: { content_type: 'application/json', x_sb_error_code: 'weak_password' },
    }),
  ),
  edge({ at: at(9, 22), method: 'GET', path: '/auth/v1/user', status: 500, headers: { content_type: 'application/json' } }),
  edge({ at: at(600, 23), method: 'GET', path: '/auth/v1/settings', status: 200, headers: { content_type: 'application/json' } }),
  edge({ at: at(26 * 60, 24), method: 'POST', path: '/auth/v1/token', status: 400, headers: { x_sb_error_code: 'invalid_credentials' } }),
  // older than an hour, and older than a day
  edge({ at: at(180, 13), method: 'GET', path: '/rest/v1/profiles', status: 200, sb: { auth_user: USER, jwt: { ...anonKey('aBcDeF'), ...userToken(USER) } } }),
  edge({ at: at(200, 14), method: 'GET', path: '/rest/v1/todos', status: 200, sb: { jwt: serviceKey('oLdSrV') } }),
  edge({ at: at(30 * 60, 15), method: 'GET', path: '/rest/v1/todos', status: 200, sb: { jwt: serviceKey('sRvKeY') } }),
  // another project
  edge({
    at: at(10, 16),
    method: 'GET',
    path: '/rest/v1/profiles',
    status: 200,
    project: 'other',
    sb: { auth_user: USER, jwt: { ...anonKey('oThErP'), ...userToken(USER) } },
  }),
];

// gotrue.logs.prod (auth_logs) -------------------------------------------------------------------

function auth(when: string, fields: Row, project = 'default'): Row {
  const time = toSecond(when);
  const line = { ...fields, time };
  return {
    timestamp: when,
    project,
    appname: 'supabase-auth',
    event_message: JSON.stringify(line),
    metadata: { ...line, timestamp: time },
  };
}
const request = (method: string, path: string, status: number, extra: Row = {}): Row => ({
  component: 'api',
  duration: 1_250_000 + status * 1000,
  level: 'info',
  method,
  msg: 'request completed',
  path,
  referer: 'http://localhost:3000',
  remote_addr: '172.18.0.1',
  request_id: `req-${method}-${status}-${path.length}`,
  status,
  ...extra,
});
const actor = (action: string, user: string): Row => ({
  auth_event: {
    action,
    actor_id: user,
    actor_username: `${user.slice(0, 4)}@example.com`,
    log_type: action === 'login' ? 'account' : 'user',
    traits: { provider: 'email' },
  },
});

export const authEvents: Row[] = [
  auth(at(55, 1, 123), request('POST', '/signup', 200, actor('user_signedup', USER))),
  auth(at(54, 2, 456), request('POST', '/token', 200, { grant_type: 'password', ...actor('login', USER) })),
  // a failed login: the user id is not in the line
  auth(at(48, 3, 789), request('POST', '/token', 400, { grant_type: 'password', error: 'invalid_grant', msg: '400: Invalid login credentials' })),
  auth(at(40, 4, 321), request('PUT', `/admin/users/${USER}`, 422, { error: 'weak_password', msg: '422: Password should be at least 6 characters.' })),
  auth(at(20, 5, 654), {
    ...request('GET', `/admin/users/${USER}`, 500, { error: 'unable to find user: connection refused', msg: '500: Database error finding user' }),
    level: 'error',
  }),
  auth(at(10, 6, 987), request('POST', '/token', 200, { grant_type: 'refresh_token', ...actor('token_refreshed', USER) })),
  auth(at(8, 7, 111), request('POST', '/token', 200, { grant_type: 'password', ...actor('login', OTHER_USER) })),
  // a background line that names the user and has no status
  auth(at(6, 8, 222), { component: 'mailer', level: 'warning', msg: 'Error sending confirmation email', user_id: USER }),
  auth(at(4, 9, 333), request('POST', '/logout', 204, actor('logout', USER))),
  // not JSON: no metadata
  { timestamp: at(3, 10, 444), project: 'default', appname: 'supabase-auth', event_message: 'INFO: GoTrue API started on: 0.0.0.0:9999' },
  // older than an hour; another project
  auth(at(90, 11, 555), request('POST', '/token', 200, { grant_type: 'password', ...actor('login', USER) })),
  auth(at(30, 12, 666), request('POST', '/token', 500, { grant_type: 'password', ...actor('login', USER) }), 'other'),
];

// deno-relay-logs (function_edge_logs) ----------------------------------------------------------

interface RelaySpec {
  at: string;
  fn: string;
  exec: string;
  method: string;
  status?: number;
  ms: number;
  projectRef?: string;
  message?: string;
}

function relay(s: RelaySpec): Row {
  const url = `http://localhost:8000/functions/v1/${s.fn.replace('fn-', '')}`;
  const metadata: Row = {
    project_ref: s.projectRef ?? 'default',
    function_id: s.fn,
    execution_id: s.exec,
    deployment_id: `default_${s.fn}_3`,
    version: '3',
    execution_time_ms: s.ms,
    request: {
      method: s.method,
      pathname: `/${s.fn.replace('fn-', '')}`,
      url,
      host: 'localhost:8000',
      protocol: 'http',
      headers: { accept: '*/*', user_agent: 'supabase-js/2.45.0' },
    },
  };
  if (s.status !== undefined) metadata.response = { status_code: s.status, headers: { content_type: 'application/json' } };
  return { timestamp: s.at, event_message: s.message ?? `${s.method} | ${s.status} | ${url}`, metadata };
}

export const relayEvents: Row[] = [
  relay({ at: at(50, 1), fn: 'fn-hello', exec: 'exec-h1', method: 'POST', status: 200, ms: 35 }),
  relay({ at: at(40, 2), fn: 'fn-hello', exec: 'exec-h2', method: 'POST', status: 200, ms: 41 }),
  relay({ at: at(35, 3), fn: 'fn-hello', exec: 'exec-h3', method: 'GET', status: 404, ms: 12 }),
  relay({ at: at(30, 4), fn: 'fn-hello', exec: 'exec-h4', method: 'POST', status: 500, ms: 230 }),
  relay({ at: at(28, 5), fn: 'fn-pay', exec: 'exec-p1', method: 'POST', status: 500, ms: 812 }),
  relay({ at: at(20, 6), fn: 'fn-pay', exec: 'exec-p2', method: 'POST', status: 502, ms: 1500 }),
  relay({ at: at(15, 7), fn: 'fn-pay', exec: 'exec-p3', method: 'POST', status: 201, ms: 95 }),
  // cut short by the wall clock limit: a request, no response
  relay({
    at: at(12, 8),
    fn: 'fn-pay',
    exec: 'exec-p9',
    method: 'POST',
    ms: 150_000,
    message: 'POST | wall clock limit reached | http://localhost:8000/functions/v1/pay',
  }),
  // self-hosted console output: project_ref only
  { timestamp: at(10, 9), event_message: 'serving the request with /home/deno/functions/hello', metadata: { project_ref: 'default' } },
  { timestamp: at(9, 10), event_message: 'Listening on http://localhost:9999/', metadata: { project_ref: 'default' } },
  // just over an hour ago; two hours ago; another project
  relay({ at: at(61, 11), fn: 'fn-hello', exec: 'exec-h0', method: 'POST', status: 200, ms: 33 }),
  relay({ at: at(120, 12), fn: 'fn-resize', exec: 'exec-r1', method: 'POST', status: 200, ms: 480 }),
  relay({ at: at(5, 13), fn: 'fn-hello', exec: 'exec-x1', method: 'POST', status: 500, ms: 20, projectRef: 'other' }),
];

// deno-subhosting-events (function_logs) ---------------------------------------------------------

function fnLog(when: string, fn: string, exec: string | undefined, level: string, message: string, eventType = 'Log', projectRef = 'default'): Row {
  const metadata: Row = {
    project_ref: projectRef,
    function_id: fn,
    deployment_id: `default_${fn}_3`,
    version: '3',
    event_type: eventType,
    level,
    region: 'us-east-1',
    timestamp: when,
  };
  if (exec !== undefined) metadata.execution_id = exec;
  return { timestamp: when, event_message: message, metadata };
}

export const fnLogEvents: Row[] = [
  fnLog(at(50, 1, 400), 'fn-hello', 'exec-h1', 'log', 'hello from Functions!\n'),
  fnLog(at(45, 2, 400), 'fn-hello', undefined, 'info', 'booted (time: 25ms)', 'Boot'),
  fnLog(
    at(30, 4, 400),
    'fn-hello',
    'exec-h4',
    'error',
    "TypeError: Cannot read properties of undefined (reading 'name')\n    at Server.<anonymous> (file:///home/deno/functions/hello/index.ts:5:24)",
  ),
  fnLog(at(28, 5, 100), 'fn-pay', 'exec-p1', 'log', 'charging customer cus_123\n'),
  fnLog(at(28, 5, 600), 'fn-pay', 'exec-p1', 'error', 'Error: card_declined\n    at handler (file:///home/deno/functions/pay/index.ts:12:11)'),
  fnLog(at(20, 6, 700), 'fn-pay', 'exec-p2', 'error', 'Error: upstream timeout\n    at fetchWithTimeout (file:///home/deno/functions/pay/index.ts:30:9)'),
  fnLog(at(15, 7, 300), 'fn-pay', 'exec-p3', 'info', 'payment ok\n'),
  fnLog(at(5, 8, 300), 'fn-hello', 'exec-x1', 'error', 'Error: boom', 'Log', 'other'),
];

// postgres.logs (postgres_logs) ------------------------------------------------------------------

function pg(when: string, severity: string, message: string, parsed: Row = {}, project = 'default'): Row {
  const d = new Date(when);
  const stamp = `${d.toISOString().slice(0, 10)} ${d.toISOString().slice(11, 23)} UTC`;
  return {
    timestamp: when,
    project,
    appname: 'supabase-db',
    event_message: `${stamp} [${parsed.process_id ?? 42}] ${severity}:  ${message}`,
    metadata: { host: 'db-default', parsed: { timestamp: when, error_severity: severity, ...parsed } },
  };
}
const ddl = (tag: string, user: string, query: string): Row => ({
  command_tag: tag,
  user_name: user,
  application_name: 'postgres-meta 0.84.2',
  database_name: 'postgres',
  query,
  process_id: 88,
});

export const pgEvents: Row[] = [
  pg(at(8 * 24 * 60, 1), 'LOG', 'statement: create table public.legacy (id int)', ddl('CREATE TABLE', 'postgres', 'create table public.legacy (id int)')),
  pg(
    at(2 * 24 * 60, 2),
    'LOG',
    'statement: create table public.todos (id bigint primary key, task text)',
    ddl('CREATE TABLE', 'postgres', 'create table public.todos (id bigint primary key, task text)'),
  ),
  pg(
    at(24 * 60, 3),
    'LOG',
    'statement: alter table public.todos add column done boolean',
    ddl('ALTER TABLE', 'supabase_admin', 'alter table public.todos add column done boolean'),
  ),
  pg(at(180, 4), 'LOG', 'statement: drop view public.todo_stats', ddl('DROP VIEW', 'postgres', 'drop view public.todo_stats')),
  pg(
    at(40, 5),
    'LOG',
    'statement: create function public.hello() returns text language sql as $$ select 1 $$',
    ddl('CREATE FUNCTION', 'postgres', 'create function public.hello()'),
  ),
  pg(at(30, 6), 'ERROR', 'relation "public.missing" does not exist at character 15', {
    command_tag: 'SELECT',
    user_name: 'authenticator',
    sql_state_code: '42P01',
    query: 'select * from public.missing',
  }),
  // the self-hosted shape: parsed carries only timestamp and error_severity
  pg(at(20, 7), 'LOG', 'checkpoint starting: time'),
  pg(at(15, 8), 'FATAL', 'password authentication failed for user "app"', { command_tag: 'authentication', user_name: 'app' }),
  pg(at(10, 9), 'WARNING', 'there is no transaction in progress', { command_tag: 'COMMIT', user_name: 'postgres' }),
  pg(
    at(5, 10),
    'LOG',
    'statement: create materialized view public.todo_counts as select count(*) from public.todos',
    ddl('CREATE MATERIALIZED VIEW', 'postgres', 'create materialized view public.todo_counts'),
  ),
  pg(at(3, 11), 'LOG', 'statement: create table public.other (id int)', ddl('CREATE TABLE', 'postgres', 'create table public.other (id int)'), 'other'),
];

// postgREST.logs.prod, realtime.logs.prod, storage.logs.prod.2, pgbouncer.logs.prod --------------

export const restEvents: Row[] = [
  { timestamp: at(50, 20), project: 'default', appname: 'supabase-rest', event_message: 'Starting PostgREST 12.2.3...', metadata: { host: 'default' } },
  { timestamp: at(50, 21), project: 'default', appname: 'supabase-rest', event_message: 'Listening on port 3000', metadata: { host: 'default' } },
  // no ": " in the line: passed through without metadata
  { timestamp: at(35, 22), project: 'default', appname: 'supabase-rest', event_message: 'Schema cache loaded' },
  { timestamp: at(12, 23), project: 'default', appname: 'supabase-rest', event_message: 'Config reloaded', metadata: { host: 'default' } },
  { timestamp: at(80, 24), project: 'default', appname: 'supabase-rest', event_message: 'Listening on port 3000', metadata: { host: 'default' } },
];

const rt = (when: string, message: string, level?: string, project = 'default'): Row => ({
  timestamp: when,
  appname: 'realtime-dev.supabase-realtime',
  event_message: message,
  metadata: level === undefined ? { project, external_id: project } : { project, external_id: project, level },
});

export const realtimeEvents: Row[] = [
  rt(at(55, 30), 'Billing metrics: [:realtime, :rate_counter, :channel, :events]', 'info'),
  rt(at(42, 31), 'Starting Realtime tenant connection', 'info'),
  rt(at(42, 45), 'Realtime was unable to connect to the project database', 'error'),
  rt(at(18, 32), 'project=default external_id=default [info] Subscribing to PostgreSQL'),
  rt(at(7, 33), 'Billing metrics: [:realtime, :rate_counter, :channel, :joins]', 'info'),
  rt(at(7, 34), 'Billing metrics: [:realtime, :rate_counter, :channel, :joins]', 'info', 'other'),
];

const st = (when: string, message: string, level: string, project = 'default'): Row => ({
  timestamp: when,
  appname: 'supabase-storage',
  event_message: message,
  metadata: { project, tenantId: project, level, timestamp: when, context: [{ host: '3c1f9a2b7d4e', pid: 1 }] },
});

export const storageEvents: Row[] = [
  st(at(58, 40), 'Server listening at http://0.0.0.0:5000', 'info'),
  st(at(44, 41), 'incoming request', 'info'),
  st(at(44, 42), 'request completed', 'info'),
  st(at(16, 43), 'Object not found', 'warn'),
  st(at(2, 44), 'request completed', 'info'),
  st(at(70, 45), 'request completed', 'info'),
  st(at(2, 46), 'request completed', 'info', 'other'),
];

export const pgbouncerEvents: Row[] = [
  {
    timestamp: at(33, 50),
    project: 'default',
    event_message: 'LOG stats: 0 xacts/s, 0 queries/s, in 0 B/s, out 0 B/s',
    metadata: { host: 'pgbouncer-default' },
  },
  {
    timestamp: at(3, 51),
    project: 'default',
    event_message: 'LOG C-0x55d: postgres/app@172.18.0.1:5432 login attempt: db=postgres user=app tls=no',
    metadata: { host: 'pgbouncer-default' },
  },
];

export const pagesFixture: Fixture = {
  'cloudflare.logs.prod': edgeEvents,
  'gotrue.logs.prod': authEvents,
  'deno-relay-logs': relayEvents,
  'deno-subhosting-events': fnLogEvents,
  'postgres.logs': pgEvents,
  'postgREST.logs.prod': restEvents,
  'realtime.logs.prod': realtimeEvents,
  'storage.logs.prod.2': storageEvents,
  'pgbouncer.logs.prod': pgbouncerEvents,
};
