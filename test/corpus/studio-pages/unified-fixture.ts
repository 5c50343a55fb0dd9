/**
 * Events for Studio's unified logs page (unified.ts), shaped as Vector ships them from a self-hosted
 * stack (../shared/reference/supabase-sources.md §3), plus a few platform-shaped events (Cloudflare
 * `cf`/`sb` records, edge-function `request`/`response`, Postgres `sql_state_code`) so that every
 * column the templates read has values somewhere.
 *
 * The page's window is 11:00 .. 12:00 on 2025-01-15; `e-old` lies before it and the `*-other` events
 * belong to another project, so the CTEs of logs.all leave them out. Ids are given so that expected
 * rows can name them.
 *
 * Tricky shapes kept on purpose:
 * - deno-relay-logs console lines (`f-3`, `f-4`) carry only `metadata.project_ref`: no `request`, no
 *   `response` (BigQuery's CROSS JOIN UNNEST of the missing record drops them);
 * - GoTrue events whose `metadata` also carries a `timestamp` text field (`a-1`, `a-3`);
 * - a GoTrue line that was not JSON (`a-4`): no `metadata` at all;
 * - an edge timestamp with microseconds (`e-rest-3`), which a millisecond cursor cuts off;
 * - Postgres severities LOG, ERROR, WARNING, FATAL and NOTICE (the last maps to a NULL level).
 */
import type { Fixture } from './harness.ts';

const kongLine = (method: string, path: string, status: number, when: string) =>
  `172.18.0.1 - - [15/Jan/2025:${when} +0000] "${method} ${path} HTTP/1.1" ${status} 321 "-" "curl/8.5.0"`;

const selfHostedRequest = (method: string, path: string) => ({
  headers: { referer: '-', user_agent: 'curl/8.5.0', cf_connecting_ip: '172.18.0.1' },
  method,
  path,
  protocol: 'HTTP/1.1',
});

export const unifiedFixture: Fixture = {
  'cloudflare.logs.prod': [
    {
      id: 'e-rest-1',
      timestamp: '2025-01-15T11:50:00.000Z',
      project: 'default',
      appname: 'supabase-kong',
      event_message: kongLine('GET', '/rest/v1/todos?select=*', 200, '11:50:00'),
      metadata: { request: selfHostedRequest('GET', '/rest/v1/todos?select=*'), response: { status_code: 200 } },
    },
    {
      id: 'e-auth-1',
      timestamp: '2025-01-15T11:51:00.000Z',
      project: 'default',
      appname: 'supabase-kong',
      event_message: 'POST | 200 | 172.18.0.1 | ray-auth-1 | http://localhost:8000/auth/v1/token?grant_type=password',
      metadata: {
        request: {
          headers: {
            referer: 'http://localhost:3000/',
            user_agent: 'Mozilla/5.0',
            cf_connecting_ip: '172.18.0.1',
            x_client_info: 'supabase-js-web/2.47.0',
            x_forwarded_proto: 'https',
            cf_ipcountry: 'NL',
          },
          host: 'localhost',
          method: 'POST',
          path: '/auth/v1/token?grant_type=password',
          protocol: 'HTTP/1.1',
          search: '?grant_type=password',
          url: 'http://localhost:8000/auth/v1/token?grant_type=password',
          cf: { continent: 'EU', country: 'NL', city: 'Amsterdam', colo: 'AMS', httpProtocol: 'HTTP/2', timezone: 'Europe/Amsterdam' },
          sb: {
            auth_user: 'user-123',
            jwt: {
              apikey: { payload: { role: 'anon', algorithm: 'HS256', issuer: 'supabase', signature_prefix: 'abcd12', expires_at: 1999999999 } },
              authorization: {
                payload: {
                  role: 'authenticated',
                  algorithm: 'HS256',
                  issuer: 'http://localhost:8000/auth/v1',
                  subject: 'user-123',
                  session_id: 'sess-1',
                  key_id: 'kid-1',
                  signature_prefix: 'efgh34',
                  expires_at: 1736946000,
                },
              },
            },
          },
        },
        response: {
          status_code: 200,
          origin_time: 87,
          headers: { cf_ray: 'ray-auth-1', content_type: 'application/json', cf_cache_status: 'DYNAMIC' },
        },
      },
    },
    {
      id: 'e-stor-1',
      timestamp: '2025-01-15T11:52:00.500Z',
      project: 'default',
      appname: 'supabase-kong',
      event_message: kongLine('GET', '/storage/v1/object/public/avatars/a.png', 404, '11:52:00'),
      metadata: {
        request: selfHostedRequest('GET', '/storage/v1/object/public/avatars/a.png'),
        response: { status_code: 404, headers: { cf_ray: 'ray-storage-1', content_type: 'text/plain', sb_gateway_version: '1' } },
      },
    },
    {
      id: 'e-rest-2',
      timestamp: '2025-01-15T11:53:00.000Z',
      project: 'default',
      appname: 'supabase-kong',
      event_message: kongLine('GET', '/rest/v1/items', 500, '11:53:00'),
      metadata: { request: selfHostedRequest('GET', '/rest/v1/items'), response: { status_code: 500 } },
    },
    {
      id: 'e-rest-3',
      timestamp: '2025-01-15T11:54:00.123456Z',
      project: 'default',
      appname: 'supabase-kong',
      event_message: kongLine('DELETE', '/rest/v1/todos?id=eq.1', 204, '11:54:00'),
      metadata: { request: selfHostedRequest('DELETE', '/rest/v1/todos?id=eq.1'), response: { status_code: 204 } },
    },
    {
      // kong_err: an nginx error line, with the transform's defaults for method and status
      id: 'e-err-1',
      timestamp: '2025-01-15T11:55:00.000Z',
      project: 'default',
      appname: 'supabase-kong',
      severity: 'error',
      event_message:
        '2025/01/15 11:55:00 [error] 1234#0: *5 open() "/usr/local/kong/favicon.ico" failed (2: No such file or directory), client: 172.18.0.1, server: kong, request: "GET /favicon.ico HTTP/1.1", host: "localhost"',
      metadata: {
        request: { method: 'GET', host: 'localhost', headers: { cf_connecting_ip: '172.18.0.1' }, path: '/favicon.ico', protocol: 'HTTP/1.1' },
        response: { status_code: 200 },
      },
    },
    {
      id: 'e-fn-1',
      timestamp: '2025-01-15T11:56:00.000Z',
      project: 'default',
      appname: 'supabase-kong',
      event_message: kongLine('POST', '/functions/v1/hello', 200, '11:56:00'),
      metadata: {
        request: selfHostedRequest('POST', '/functions/v1/hello'),
        response: { status_code: 200, headers: { cf_ray: 'ray-fn-1', content_type: 'application/json' } },
      },
    },
    {
      id: 'e-old',
      timestamp: '2025-01-15T10:30:00.000Z',
      project: 'default',
      appname: 'supabase-kong',
      event_message: kongLine('GET', '/rest/v1/old', 200, '10:30:00'),
      metadata: { request: selfHostedRequest('GET', '/rest/v1/old'), response: { status_code: 200 } },
    },
    {
      id: 'e-other',
      timestamp: '2025-01-15T11:57:00.000Z',
      project: 'other',
      appname: 'supabase-kong',
      event_message: kongLine('GET', '/rest/v1/other', 200, '11:57:00'),
      metadata: {
        request: selfHostedRequest('GET', '/rest/v1/other'),
        response: { status_code: 200, headers: { cf_ray: 'req-unmatched-1' } },
      },
    },
  ],

  'gotrue.logs.prod': [
    {
      id: 'a-1',
      timestamp: '2025-01-15T11:51:00.050Z',
      project: 'default',
      appname: 'supabase-auth',
      event_message:
        '{"component":"api","duration":1234567,"level":"info","method":"POST","msg":"request completed","path":"/token","referer":"http://localhost:3000","remote_addr":"172.18.0.1","request_id":"ray-auth-1","status":200,"time":"2025-01-15T11:51:00Z"}',
      metadata: {
        timestamp: '2025-01-15T11:51:00Z',
        component: 'api',
        duration: 1234567,
        level: 'info',
        method: 'POST',
        msg: 'request completed',
        path: '/token',
        referer: 'http://localhost:3000',
        remote_addr: '172.18.0.1',
        request_id: 'ray-auth-1',
        status: 200,
        time: '2025-01-15T11:51:00Z',
      },
    },
    {
      id: 'a-2',
      timestamp: '2025-01-15T11:52:30.000Z',
      project: 'default',
      appname: 'supabase-auth',
      event_message:
        '{"component":"api","level":"info","method":"GET","msg":"request started","path":"/user","remote_addr":"172.18.0.1","request_id":"req-unmatched-1","time":"2025-01-15T11:52:30Z"}',
      metadata: {
        component: 'api',
        level: 'info',
        method: 'GET',
        msg: 'request started',
        path: '/user',
        remote_addr: '172.18.0.1',
        request_id: 'req-unmatched-1',
        time: '2025-01-15T11:52:30Z',
      },
    },
    {
      id: 'a-3',
      timestamp: '2025-01-15T11:53:30.000Z',
      project: 'default',
      appname: 'supabase-auth',
      event_message:
        '{"auth_event":{"action":"login","actor_id":"user-123","actor_username":"a@example.com","log_type":"account"},"component":"api","level":"info","msg":"Login","time":"2025-01-15T11:53:30Z"}',
      metadata: {
        timestamp: '2025-01-15T11:53:30Z',
        auth_event: { action: 'login', actor_id: 'user-123', actor_username: 'a@example.com', log_type: 'account' },
        component: 'api',
        level: 'info',
        msg: 'Login',
        time: '2025-01-15T11:53:30Z',
      },
    },
    {
      // a line that was not JSON: no metadata
      id: 'a-4',
      timestamp: '2025-01-15T11:59:00.000Z',
      project: 'default',
      appname: 'supabase-auth',
      event_message: 'GoTrue API started on: 0.0.0.0:9999',
    },
    {
      id: 'a-5',
      timestamp: '2025-01-15T11:59:10.000Z',
      project: 'default',
      appname: 'supabase-auth',
      event_message:
        '{"component":"api","error":"invalid_grant","level":"error","method":"POST","msg":"400: Invalid login credentials","path":"/token","request_id":"req-unmatched-2","status":400,"time":"2025-01-15T11:59:10Z"}',
      metadata: {
        component: 'api',
        error: 'invalid_grant',
        level: 'error',
        method: 'POST',
        msg: '400: Invalid login credentials',
        path: '/token',
        request_id: 'req-unmatched-2',
        status: 400,
        time: '2025-01-15T11:59:10Z',
      },
    },
  ],

  'postgres.logs': [
    {
      id: 'p-1',
      timestamp: '2025-01-15T11:50:30.000Z',
      project: 'default',
      appname: 'supabase-db',
      event_message: 'connection received: host=172.18.0.5 port=45678',
      metadata: { host: 'db-default', parsed: { timestamp: '2025-01-15T11:50:30.000Z', error_severity: 'LOG' } },
    },
    {
      id: 'p-2',
      timestamp: '2025-01-15T11:52:10.000Z',
      project: 'default',
      appname: 'supabase-db',
      event_message: 'relation "foo" does not exist',
      metadata: {
        host: 'db-default',
        parsed: {
          timestamp: '2025-01-15T11:52:10.000Z',
          error_severity: 'ERROR',
          sql_state_code: '42P01',
          user_name: 'postgres',
          database_name: 'postgres',
          backend_type: 'client backend',
          command_tag: 'SELECT',
          session_id: '6787a1b2.2a',
          process_id: 42,
          query: 'select * from foo',
        },
      },
    },
    {
      id: 'p-3',
      timestamp: '2025-01-15T11:54:40.000Z',
      project: 'default',
      appname: 'supabase-db',
      event_message: 'there is no transaction in progress',
      metadata: {
        host: 'db-default',
        parsed: { timestamp: '2025-01-15T11:54:40.000Z', error_severity: 'WARNING', sql_state_code: '25P01' },
      },
    },
    {
      id: 'p-4',
      timestamp: '2025-01-15T11:57:20.000Z',
      project: 'default',
      appname: 'supabase-db',
      event_message: 'password authentication failed for user "app"',
      metadata: {
        host: 'db-default',
        parsed: { timestamp: '2025-01-15T11:57:20.000Z', error_severity: 'FATAL', sql_state_code: '28P01' },
      },
    },
    {
      id: 'p-5',
      timestamp: '2025-01-15T11:58:45.000Z',
      project: 'default',
      appname: 'supabase-db',
      event_message: 'extension "pg_net" already exists, skipping',
      metadata: { host: 'db-default', parsed: { timestamp: '2025-01-15T11:58:45.000Z', error_severity: 'NOTICE' } },
    },
    {
      id: 'p-other',
      timestamp: '2025-01-15T11:55:00.000Z',
      project: 'other',
      appname: 'supabase-db',
      event_message: 'checkpoint starting: time',
      metadata: { host: 'db-other', parsed: { timestamp: '2025-01-15T11:55:00.000Z', error_severity: 'LOG' } },
    },
  ],

  'deno-relay-logs': [
    {
      id: 'f-1',
      timestamp: '2025-01-15T11:56:00.100Z',
      appname: 'supabase-edge-functions',
      event_message: 'POST | 200 | http://localhost:8000/functions/v1/hello',
      metadata: {
        project_ref: 'default',
        execution_id: 'exec-1',
        request_id: 'req-fn-1',
        function_id: 'fn-hello',
        deployment_id: 'default_fn-hello_1',
        execution_time_ms: 42,
        version: '1',
        request: {
          method: 'POST',
          pathname: '/hello',
          url: 'http://localhost:8000/functions/v1/hello',
          host: 'localhost',
          protocol: 'http:',
          headers: { user_agent: 'curl/8.5.0', accept: '*/*', host: 'localhost:8000' },
        },
        response: { status_code: 200, headers: { content_type: 'application/json', server: 'deno' } },
      },
    },
    {
      id: 'f-2',
      timestamp: '2025-01-15T11:57:30.000Z',
      appname: 'supabase-edge-functions',
      event_message: 'GET | 500 | http://localhost:8000/functions/v1/broken',
      metadata: {
        project_ref: 'default',
        execution_id: 'exec-2',
        request_id: 'req-fn-2',
        function_id: 'fn-broken',
        deployment_id: 'default_fn-broken_3',
        execution_time_ms: 7,
        version: '3',
        request: {
          method: 'GET',
          pathname: '/broken',
          url: 'http://localhost:8000/functions/v1/broken',
          host: 'localhost',
          protocol: 'http:',
          headers: { user_agent: 'curl/8.5.0', accept: '*/*', host: 'localhost:8000' },
        },
        response: { status_code: 500, headers: { content_type: 'text/plain', server: 'deno' } },
      },
    },
    {
      // self-hosted console lines: only project_ref
      id: 'f-3',
      timestamp: '2025-01-15T11:56:00.200Z',
      appname: 'supabase-edge-functions',
      event_message: 'serving the request with /home/deno/functions/hello',
      metadata: { project_ref: 'default' },
    },
    {
      id: 'f-4',
      timestamp: '2025-01-15T11:56:00.300Z',
      appname: 'supabase-edge-functions',
      event_message: 'hello from the function',
      metadata: { project_ref: 'default' },
    },
    {
      id: 'f-other',
      timestamp: '2025-01-15T11:56:30.000Z',
      appname: 'supabase-edge-functions',
      event_message: 'serving the request with /home/deno/functions/x',
      metadata: { project_ref: 'other' },
    },
  ],

  'deno-subhosting-events': [
    {
      id: 'fl-1',
      timestamp: '2025-01-15T11:56:00.150Z',
      event_message: 'hello from hello',
      metadata: {
        project_ref: 'default',
        execution_id: 'exec-1',
        request_id: 'req-fn-1',
        function_id: 'fn-hello',
        deployment_id: 'default_fn-hello_1',
        event_type: 'Log',
        level: 'info',
        region: 'local',
        version: '1',
      },
    },
    {
      id: 'fl-2',
      timestamp: '2025-01-15T11:56:00.180Z',
      event_message: 'hello from hello',
      metadata: {
        project_ref: 'default',
        execution_id: 'exec-1',
        request_id: 'req-fn-1',
        function_id: 'fn-hello',
        deployment_id: 'default_fn-hello_1',
        event_type: 'Log',
        level: 'log',
        region: 'local',
        version: '1',
      },
    },
    {
      id: 'fl-3',
      timestamp: '2025-01-15T11:57:30.100Z',
      event_message: 'Error: boom',
      metadata: {
        project_ref: 'default',
        execution_id: 'exec-2',
        request_id: 'req-fn-2',
        function_id: 'fn-broken',
        deployment_id: 'default_fn-broken_3',
        event_type: 'UncaughtException',
        level: 'error',
        region: 'local',
        version: '3',
      },
    },
    {
      // a boot event: no execution or request id
      id: 'fl-4',
      timestamp: '2025-01-15T11:55:59.000Z',
      event_message: 'booted (time: 21ms)',
      metadata: { project_ref: 'default', function_id: 'fn-hello', event_type: 'Boot', level: 'info', region: 'local' },
    },
  ],

  'realtime.logs.prod': [
    {
      id: 'r-1',
      timestamp: '2025-01-15T11:51:30.000Z',
      appname: 'realtime-dev.supabase-realtime',
      event_message: 'Billing metrics: [:realtime, :channel, :joined]',
      metadata: { project: 'default', external_id: 'default', level: 'info' },
    },
  ],

  'storage.logs.prod.2': [
    {
      id: 's-1',
      timestamp: '2025-01-15T11:52:00.400Z',
      appname: 'supabase-storage',
      event_message: 'Object not found',
      metadata: {
        project: 'default',
        tenantId: 'default',
        level: 'info',
        timestamp: '2025-01-15T11:52:00.400Z',
        context: [{ host: '3c1f0a2b', pid: 1 }],
      },
    },
  ],

  'postgREST.logs.prod': [
    {
      id: 'pr-1',
      timestamp: '2025-01-15T11:50:05.000Z',
      project: 'default',
      appname: 'supabase-rest',
      event_message: 'Listening on port 3000',
      metadata: { host: 'default' },
    },
  ],

  'pgbouncer.logs.prod': [],
};
