/**
 * Events for the Studio REPORTS corpus (reports.ts), shaped as the Supabase sources carry them
 * (../shared/reference/supabase-sources.md §3): what Vector ships from a self-hosted stack, plus
 * platform-shaped events (Cloudflare request/response headers, edge-function request/response
 * records) so that every report template has rows to count.
 *
 * Everything happens on 2025-01-15. Studio's window in reports.ts is (09:00, 13:00]; each source also
 * has an event exactly at 09:00 (excluded: the lower bound is exclusive), one at 13:00 (included),
 * one before the window and one of another project.
 *
 * Tricky shapes that exist in reality:
 * - self-hosted Kong lines carry `metadata.request.headers` but no `response.headers`, no
 *   `request.search`, no `response.origin_time` (BigQuery drops them from
 *   `CROSS JOIN UNNEST(response.headers)`);
 * - a Kong error-log line (`severity` at top level, `request.host`);
 * - deno-relay-logs console lines with only `metadata.project_ref` (no `request`/`response`
 *   records: BigQuery drops them from `CROSS JOIN UNNEST(m.request)`);
 * - GoTrue lines whose `metadata` repeats every key of the JSON line and carries a text
 *   `timestamp`; metering lines (`action`, `metering: true`, `provider`, `login_method`) next to
 *   "request completed" lines (`auth_event`, `duration` in ns, `grant_type`, `status`).
 */
import type { Fixture, Row } from './harness.ts';

const DAY = '2025-01-15';
/** `10:05:10` or `10:05:10.120` on the fixture's day, as ISO text with Z. */
export const at = (hms: string): string => `${DAY}T${hms.includes('.') ? hms : `${hms}.000`}Z`;

// ---------------------------------------------------------------------------------------------
// cloudflare.logs.prod (edge_logs)

/** A self-hosted Kong access-log event (vector.yml `kong_logs`). */
function kong(hms: string, method: string, path: string, status: number, project = 'default'): Row {
  const [h, m, s] = hms.split(':');
  return {
    timestamp: at(hms),
    project,
    appname: 'supabase-kong',
    event_message: `172.18.0.1 - - [15/Jan/2025:${h}:${m}:${s} +0000] "${method} ${path} HTTP/1.1" ${status} 321 "-" "curl/8.5.0"`,
    metadata: {
      request: {
        headers: { referer: '-', user_agent: 'curl/8.5.0', cf_connecting_ip: '172.18.0.1' },
        method,
        path,
        protocol: 'HTTP/1.1',
      },
      response: { status_code: status },
    },
  };
}

interface PlatformEdge {
  search?: string;
  origin: number;
  reqLen?: string;
  respLen?: string;
  cache?: string;
  errorCode?: string;
  country?: string;
  project?: string;
}

/** A platform-shaped (Cloudflare) edge event: request/response headers, search, origin_time. */
function cf(hms: string, method: string, path: string, status: number, o: PlatformEdge): Row {
  const requestHeaders: Row = {
    x_client_info: 'supabase-js/2.45.4',
    user_agent: 'Mozilla/5.0',
    cf_connecting_ip: '203.0.113.7',
    x_forwarded_proto: 'https',
  };
  if (o.reqLen !== undefined) requestHeaders.content_length = o.reqLen;
  const responseHeaders: Row = { content_type: 'application/json', date: 'Wed, 15 Jan 2025 10:00:00 GMT' };
  if (o.respLen !== undefined) responseHeaders.content_length = o.respLen;
  if (o.cache !== undefined) responseHeaders.cf_cache_status = o.cache;
  if (o.errorCode !== undefined) responseHeaders.x_sb_error_code = o.errorCode;
  const request: Row = {
    method,
    path,
    host: 'default.supabase.co',
    url: `https://default.supabase.co${path}${o.search ?? ''}`,
    protocol: 'https:',
    headers: requestHeaders,
    cf: { country: o.country ?? 'US', asn: 13335 },
  };
  if (o.search !== undefined) request.search = o.search;
  return {
    timestamp: at(hms),
    project: o.project ?? 'default',
    event_message: `${method} | ${status} | 203.0.113.7 | 8f1c2d3e4a5b6c7d | https://default.supabase.co${path}${o.search ?? ''} | Mozilla/5.0`,
    metadata: {
      request,
      response: { status_code: status, origin_time: o.origin, headers: responseHeaders },
    },
  };
}

export const edgeEvents: Row[] = [
  // outside the window / other project
  cf('08:30:00', 'GET', '/rest/v1/todos', 200, { search: '?select=*', origin: 110, respLen: '2048' }),
  cf('09:00:00', 'GET', '/rest/v1/todos', 200, { search: '?select=*', origin: 115, respLen: '2048' }),
  cf('11:00:00', 'GET', '/rest/v1/todos', 500, { search: '?select=*', origin: 999, project: 'other' }),
  kong('11:00:30', 'GET', '/auth/v1/user', 401, 'other'),
  // hour 9: only a self-hosted line (no response.headers), so charts that unnest them have no hour 9
  kong('09:30:00', 'GET', '/storage/v1/object/public/avatars/a.png', 200),
  // hour 10
  kong('10:05:10', 'GET', '/rest/v1/todos?select=*', 200),
  kong('10:12:00', 'POST', '/auth/v1/token?grant_type=password', 400),
  cf('10:15:00', 'GET', '/rest/v1/todos', 200, { search: '?select=*', origin: 120, respLen: '2048', cache: 'DYNAMIC' }),
  kong('10:20:00', 'GET', '/storage/v1/object/public/avatars/a.png', 200),
  cf('10:45:00', 'GET', '/storage/v1/object/public/avatars/a.png', 200, { origin: 30, respLen: '50000', cache: 'HIT', country: 'DE' }),
  cf('10:50:00', 'POST', '/storage/v1/object/avatars/up.png', 200, { origin: 400, reqLen: '250000', respLen: '80', cache: 'DYNAMIC' }),
  // hour 11
  kong('11:01:00', 'GET', '/rest/v1/todos', 200),
  cf('11:05:00', 'GET', '/storage/v1/object/public/avatars/b.png', 200, { origin: 250, respLen: '120000', cache: 'MISS' }),
  cf('11:10:00', 'GET', '/storage/v1/object/sign/docs/c.pdf', 200, { search: '?token=abc', origin: 300, respLen: '90000', cache: 'MISS' }),
  cf('11:20:00', 'POST', '/auth/v1/token', 400, { search: '?grant_type=password', origin: 80, reqLen: '64', respLen: '90', errorCode: 'invalid_credentials' }),
  cf('11:25:00', 'POST', '/auth/v1/token', 400, {
    search: '?grant_type=password',
    origin: 90,
    reqLen: '64',
    respLen: '90',
    errorCode: 'invalid_credentials',
    country: 'DE',
  }),
  kong('11:30:00', 'POST', '/auth/v1/signup', 422),
  {
    // Kong error-log line (vector.yml `kong_err`): defaults GET/200, host and client from the line.
    timestamp: at('11:45:00'),
    project: 'default',
    appname: 'supabase-kong',
    severity: 'error',
    event_message:
      '2025/01/15 11:45:00 [error] 1234#0: *42 connect() failed (111: Connection refused) while connecting to upstream, client: 172.18.0.1, server: kong, request: "GET /rest/v1/x HTTP/1.1", host: "localhost:8000"',
    metadata: {
      request: { method: 'GET', path: '/rest/v1/x', protocol: 'HTTP/1.1', host: 'localhost:8000', headers: { cf_connecting_ip: '172.18.0.1' } },
      response: { status_code: 200 },
    },
  },
  // hour 12
  cf('12:05:00', 'POST', '/auth/v1/signup', 422, { search: '', origin: 70, reqLen: '120', respLen: '100', errorCode: 'weak_password' }),
  kong('12:10:00', 'GET', '/realtime/v1/websocket', 101),
  cf('12:15:00', 'GET', '/auth/v1/user', 401, { origin: 15, respLen: '60', errorCode: 'bad_jwt' }),
  cf('12:20:00', 'POST', '/rest/v1/rpc/fn', 500, { origin: 1500, reqLen: '30', respLen: '120' }),
  cf('12:30:00', 'GET', '/storage/v1/object/public/avatars/a.png', 200, { origin: 25, respLen: '50000', cache: 'HIT' }),
  kong('12:40:00', 'GET', '/rest/v1/missing', 404),
  cf('12:50:00', 'GET', '/auth/v1/user', 200, { origin: 20, respLen: '400' }),
  // exactly at the upper bound (included)
  cf('13:00:00', 'GET', '/rest/v1/todos', 200, { search: '?select=*', origin: 100, respLen: '2048', cache: 'DYNAMIC' }),
];

// ---------------------------------------------------------------------------------------------
// gotrue.logs.prod (auth_logs)

/** A GoTrue JSON line as vector.yml `auth_logs` ships it: the raw line, every key in metadata. */
function gotrue(hms: string, line: Record<string, unknown>, project = 'default'): Row {
  const ts = at(hms);
  const body = { ...line, time: ts.replace(/\.\d+Z$/, 'Z') };
  return {
    timestamp: ts,
    project,
    appname: 'supabase-auth',
    event_message: JSON.stringify(body),
    metadata: { ...body, timestamp: ts },
  };
}

const instance = '00000000-0000-0000-0000-000000000000';

/** The metering line GoTrue writes on a successful login. */
function meteredLogin(hms: string, user: string, loginMethod: string, provider: string, project = 'default'): Row {
  return gotrue(
    hms,
    { action: 'login', instance_id: instance, level: 'info', login_method: loginMethod, metering: true, msg: 'Login', provider, user_id: user },
    project,
  );
}

/** A "request completed" line; `auditAction` adds the `auth_event` GoTrue attaches. */
function completed(
  hms: string,
  o: {
    method: string;
    path: string;
    status: number;
    duration: number;
    grant?: string;
    auditAction?: string;
    actor?: string;
    provider?: string;
    error?: string;
  },
): Row {
  const line: Record<string, unknown> = {
    component: 'api',
    duration: o.duration,
    level: o.status >= 400 ? 'warning' : 'info',
    method: o.method,
    msg: 'request completed',
    path: o.path,
    referer: 'http://localhost:3000',
    remote_addr: '172.18.0.1',
    request_id: `req-${hms.replace(/[:.]/g, '')}`,
    status: o.status,
  };
  if (o.grant !== undefined) line.grant_type = o.grant;
  if (o.error !== undefined) line.error_code = o.error;
  if (o.auditAction !== undefined) {
    line.auth_event = {
      action: o.auditAction,
      actor_id: o.actor,
      actor_username: `${o.actor}@example.com`,
      actor_via_sso: false,
      log_type: o.auditAction === 'user_signedup' ? 'team' : 'account',
      traits: { provider: o.provider ?? 'email' },
    };
  }
  return gotrue(hms, line);
}

export const authEvents: Row[] = [
  // outside the window / other project
  gotrue('08:00:00', {
    component: 'api',
    level: 'info',
    msg: 'request completed',
    path: '/signup',
    status: 200,
    duration: 70000000,
    auth_event: {
      action: 'user_signedup',
      actor_id: 'u0',
      actor_username: 'u0@example.com',
      actor_via_sso: false,
      log_type: 'team',
      traits: { provider: 'email' },
    },
  }),
  meteredLogin('09:00:00', 'u9', 'password', 'email'),
  meteredLogin('11:00:00', 'u8', 'password', 'email', 'other'),
  // hour 10
  meteredLogin('10:02:00', 'u1', 'password', 'email'),
  completed('10:02:00.120', { method: 'POST', path: '/token', status: 200, duration: 50000000, grant: 'password', auditAction: 'login', actor: 'u1' }),
  completed('10:10:00', { method: 'POST', path: '/signup', status: 200, duration: 80000000, auditAction: 'user_signedup', actor: 'u2' }),
  completed('10:30:00', {
    method: 'POST',
    path: '/token',
    status: 200,
    duration: 10000000,
    grant: 'refresh_token',
    auditAction: 'token_refreshed',
    actor: 'u1',
  }),
  // hour 11
  meteredLogin('11:05:00', 'u3', 'pkce', 'github'),
  completed('11:05:00.200', {
    method: 'POST',
    path: '/token',
    status: 200,
    duration: 62500000,
    grant: 'pkce',
    auditAction: 'login',
    actor: 'u3',
    provider: 'github',
  }),
  completed('11:20:00', { method: 'POST', path: '/recover', status: 200, duration: 30000000, auditAction: 'user_recovery_requested', actor: 'u2' }),
  completed('11:50:00', { method: 'GET', path: '/callback', status: 302, duration: 90000000, auditAction: 'user_signedup', actor: 'u4', provider: 'github' }),
  // hour 12
  meteredLogin('12:00:00', 'u2', 'password', 'email'),
  completed('12:00:00.150', { method: 'POST', path: '/token', status: 200, duration: 40250000, grant: 'password', auditAction: 'login', actor: 'u2' }),
  completed('12:20:00', { method: 'PUT', path: '/user', status: 200, duration: 20000000, auditAction: 'user_modified', actor: 'u3' }),
  meteredLogin('12:30:00', 'u1', 'password', 'email'),
  completed('12:30:00.100', { method: 'POST', path: '/token', status: 200, duration: 50000000, grant: 'password', auditAction: 'login', actor: 'u1' }),
  meteredLogin('12:35:00', 'u4', 'pkce', 'github'),
  completed('12:35:00.100', {
    method: 'POST',
    path: '/token',
    status: 200,
    duration: 50000000,
    grant: 'pkce',
    auditAction: 'login',
    actor: 'u4',
    provider: 'github',
  }),
  completed('12:40:00', { method: 'POST', path: '/token', status: 400, duration: 50000000, grant: 'password', error: 'invalid_credentials' }),
  gotrue('12:50:00', { component: 'api', level: 'info', msg: 'GoTrue API started on: 0.0.0.0:9999' }),
  // exactly at the upper bound (included by logs.all)
  meteredLogin('13:00:00', 'u5', 'password', 'email'),
];

// ---------------------------------------------------------------------------------------------
// deno-relay-logs (function_edge_logs)

/** A platform-shaped edge-function invocation (request/response records, function_id, timing). */
function invocation(hms: string, fn: string, pathname: string, status: number, ms: number, region?: string, projectRef = 'default'): Row {
  const responseHeaders: Row = { content_type: 'application/json', content_length: '42', server: 'cloudflare', vary: 'Accept-Encoding' };
  if (region !== undefined) responseHeaders.x_sb_edge_region = region;
  return {
    timestamp: at(hms),
    event_message: `POST | ${status} | https://${projectRef}.supabase.co/functions/v1${pathname}`,
    metadata: {
      project_ref: projectRef,
      function_id: fn,
      deployment_id: `${projectRef}_${fn}_3`,
      version: '3',
      execution_id: `exec-${hms.replace(/:/g, '')}`,
      execution_time_ms: ms,
      request: {
        method: 'POST',
        pathname,
        host: `${projectRef}.supabase.co`,
        url: `https://${projectRef}.supabase.co/functions/v1${pathname}`,
        protocol: 'https:',
        headers: { accept: '*/*', content_length: '18', host: `${projectRef}.supabase.co`, user_agent: 'Deno/1.45.2' },
      },
      response: { status_code: status, headers: responseHeaders },
    },
  };
}

/** A self-hosted edge-runtime console line: only `metadata.project_ref`. */
function consoleLine(hms: string, message: string): Row {
  return { timestamp: at(hms), appname: 'supabase-edge-functions', event_message: message, metadata: { project_ref: 'default' } };
}

export const relayEvents: Row[] = [
  invocation('08:00:00', 'fn-hello', '/hello', 200, 70, 'us-east-1'),
  invocation('09:00:00', 'fn-hello', '/hello', 200, 75, 'us-east-1'),
  invocation('11:00:00', 'fn-hello', '/hello', 200, 60, 'us-east-1', 'other'),
  // hour 10
  invocation('10:05:00', 'fn-hello', '/hello', 200, 120, 'us-east-1'),
  consoleLine('10:06:00', 'serving the request with /home/deno/functions/hello'),
  invocation('10:25:00', 'fn-hello', '/hello', 200, 80, 'us-east-1'),
  invocation('10:40:00', 'fn-stripe', '/stripe-webhook', 500, 1500, 'eu-west-1'),
  // hour 11
  invocation('11:10:00', 'fn-hello', '/hello', 200, 100, 'eu-west-1'),
  consoleLine('11:11:00', 'Listening on http://localhost:9999/'),
  invocation('11:15:00', 'fn-stripe', '/stripe-webhook', 200, 300, 'eu-west-1'),
  invocation('11:40:00', 'fn-resize', '/resize', 404, 50),
  // hour 12
  invocation('12:05:00', 'fn-resize', '/resize', 200, 2500, 'us-east-1'),
  invocation('12:30:00', 'fn-hello', '/hello', 401, 5, 'us-east-1'),
  consoleLine('12:31:00', 'booted (time: 23ms)'),
  // exactly at the upper bound (included)
  invocation('13:00:00', 'fn-stripe', '/stripe-webhook', 200, 200, 'eu-west-1'),
];

// ---------------------------------------------------------------------------------------------
// The other sources (no report template reads them; a few events so the CTEs are not empty)

const realtimeEvents: Row[] = [
  {
    timestamp: at('10:00:05'),
    appname: 'realtime-dev.supabase-realtime',
    event_message: 'Billing metrics: [:realtime, :rate_counter, :channel, :events]',
    metadata: { project: 'default', external_id: 'default', level: 'info' },
  },
  {
    timestamp: at('11:30:00'),
    appname: 'realtime-dev.supabase-realtime',
    event_message: 'Stop tenant default because of no connected users',
    metadata: { project: 'default', external_id: 'default', level: 'warning' },
  },
];

const storageEvents: Row[] = [
  {
    timestamp: at('10:00:01'),
    appname: 'supabase-storage',
    event_message: 'Server listening at http://0.0.0.0:5000',
    metadata: { project: 'default', tenantId: 'default', level: 'info', timestamp: at('10:00:01'), context: [{ host: '3c1f9a0b2d4e', pid: 1 }] },
  },
  {
    timestamp: at('12:30:00.020'),
    appname: 'supabase-storage',
    event_message: 'GET | 200 | 172.18.0.9 | /object/public/avatars/a.png',
    metadata: { project: 'default', tenantId: 'default', level: 'info', timestamp: at('12:30:00.020'), context: [{ host: '3c1f9a0b2d4e', pid: 1 }] },
  },
];

const postgresEvents: Row[] = [
  {
    timestamp: at('10:00:00.500'),
    project: 'default',
    appname: 'supabase-db',
    event_message: '2025-01-15 10:00:00.500 UTC [42] LOG:  checkpoint starting: time',
    metadata: { host: 'db-default', parsed: { timestamp: at('10:00:00.500'), error_severity: 'LOG' } },
  },
  {
    timestamp: at('12:20:00.010'),
    project: 'default',
    appname: 'supabase-db',
    event_message: '2025-01-15 12:20:00.010 UTC [57] ERROR:  function fn() does not exist',
    metadata: { host: 'db-default', parsed: { timestamp: at('12:20:00.010'), error_severity: 'ERROR' } },
  },
];

const postgrestEvents: Row[] = [
  { timestamp: at('10:00:02'), project: 'default', appname: 'supabase-rest', event_message: 'Listening on port 3000', metadata: { host: 'default' } },
  { timestamp: at('10:00:03'), project: 'default', appname: 'supabase-rest', event_message: 'Schema cache loaded' },
];

export const reportsFixture: Fixture = {
  'cloudflare.logs.prod': edgeEvents,
  'gotrue.logs.prod': authEvents,
  'deno-relay-logs': relayEvents,
  'realtime.logs.prod': realtimeEvents,
  'storage.logs.prod.2': storageEvents,
  'postgres.logs': postgresEvents,
  'postgREST.logs.prod': postgrestEvents,
  'deno-subhosting-events': [],
  'pgbouncer.logs.prod': [],
};
