/** Supabase-shaped test events (shapes from the Vector transforms of self-hosted Supabase). */
const paths = ['/rest/v1/todos?select=*', '/auth/v1/token', '/storage/v1/object/public/a.png', '/functions/v1/hello'];
const methods = ['GET', 'POST', 'PATCH', 'DELETE'];
const statuses = [200, 201, 204, 400, 401, 404, 500];

/** A Kong access-log event for `cloudflare.logs.prod`, deterministic in `i`. */
export function edgeEvent(i: number, baseMs = Date.UTC(2026, 10, 20, 10, 0, 0)): Record<string, unknown> {
  const path = paths[i % paths.length] as string;
  const method = methods[i % methods.length] as string;
  const status = statuses[i % statuses.length] as number;
  const ip = `172.18.${(i >> 8) & 255}.${i & 255}`;
  return {
    timestamp: new Date(baseMs + i * 10).toISOString(),
    project: 'default',
    appname: 'supabase-kong',
    event_message: `${ip} - - [20/Nov/2026:10:00:00 +0000] "${method} ${path} HTTP/1.1" ${status} 321 "-" "curl/8.5.0"`,
    metadata: {
      request: {
        headers: { referer: '-', user_agent: 'curl/8.5.0', cf_connecting_ip: ip },
        method,
        path,
        protocol: 'HTTP/1.1',
      },
      response: { status_code: status },
    },
  };
}

/**
 * Request bodies every event of which may be read from the received text (src/ingest/prepare.ts):
 * each body form, `message` becoming the event message, a null, nested records and lists. Six events.
 */
export function cleanRawBodies(ts: string): (string | [string, 'json' | 'ndjson'])[] {
  return [
    JSON.stringify([
      { id: 'a', timestamp: ts, event_message: 'one', project: 'x', metadata: { request: { path: '/a', n: 1 }, tags: ['t'] } },
      { id: 'b', timestamp: ts, event_message: 'two', project: 'y', metadata: { request: { path: '/b', n: 2.5 } }, level: null },
    ]),
    `{"batch": [{"id": "c", "timestamp": "${ts}", "message": "three", "count": 3}]}`,
    `{"id": "d", "timestamp": 1795168800, "event_message": "four", "tenantId": "t1"}`,
    [`{"id": "e", "timestamp": 1, "event_message": "five", "n": 42}\n\n{"id": "f", "timestamp": 2, "event_message": {"nested": true}}\n`, 'ndjson'],
  ];
}
