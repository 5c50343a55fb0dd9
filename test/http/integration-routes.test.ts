/**
 * Logflare's integration routes end to end, on every engine: real-shaped bodies of LogLayer,
 * Vector, Cloudflare Logpush, CloudEvents, Vercel, Netlify, GitHub, browsers and typecasts posted
 * to `{prefix}/<integration>`, read back through the query API; then a bad body of each is a 400
 * naming what was wrong and stores nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { createEndpoint, createSource, type Row, rows } from '../endpoints/http-support.ts';
import { engineEnv, engines } from '../support/engines.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const T0_MS = Date.UTC(2025, 10, 21, 10, 0, 0);
const T0_ISO = new Date(T0_MS).toISOString();
const T0_MICROS = T0_MS * 1000;

const ROUTES = ['json', 'vector', 'cloudflare', 'cloud-event', 'vercel', 'netlify', 'github', 'browser', 'typecasts', 'syslog'] as const;
type Route = (typeof ROUTES)[number];
const sourceName = (r: Route) => `int.${r}`;

function obj(row: Row | undefined, key: string): Record<string, unknown> {
  const v = row?.[key];
  return (Array.isArray(v) ? v[0] : v) as Record<string, unknown>;
}

for (const engine of engines) {
  describe(`Logflare's integration routes on ${engine}`, () => {
    let s: TestServer;
    const ids = new Map<Route, string>();
    const created = new Set<string>();
    before(async () => {
      s = await startTestServer(engineEnv(engine));
      for (const r of ROUTES) ids.set(r, await createSource(s, sourceName(r)));
    });
    after(() => s.close());

    async function post(path: string, body: string | Uint8Array, headers: Record<string, string>): Promise<{ status: number; body: Record<string, unknown> }> {
      const r = await s.fetch(path, { method: 'POST', headers, body });
      return { status: r.status, body: (await r.json()) as Record<string, unknown> };
    }

    async function stored(route: Route, columns: string): Promise<Row[]> {
      const name = `read.${route}.${columns.length}`;
      if (!created.has(name))
        await createEndpoint(s, {
          name,
          query: `select ${columns} from \`${sourceName(route)}\` order by timestamp, event_message`,
          cache_duration_seconds: 0,
        });
      created.add(name);
      return rows(s, name);
    }

    async function ok(path: string, body: string | Uint8Array, headers: Record<string, string> = { 'content-type': 'application/json' }): Promise<void> {
      const a = await post(path, body, headers);
      assert.equal(a.status, 200, `${path}: ${JSON.stringify(a.body)}`);
      assert.deepEqual(a.body, { message: 'Logged!' });
    }

    it('/json: LogLayer events kept under metadata, under every prefix', async () => {
      await ok(`/logs/json?source_name=int.json`, JSON.stringify({ level: 'info', message: 'one', timestamp: T0_ISO }));
      await ok(`/api/logs/json?source=${ids.get('json')}`, JSON.stringify([{ level: 'warn', message: 'two' }]));
      await ok(`/api/events/json?source_name=int.json`, gzipSync(JSON.stringify({ batch: [{ level: 'error', message: 'three' }] })), {
        'content-type': 'application/json',
        'content-encoding': 'gzip',
      });
      const got = await stored('json', 'timestamp, event_message, metadata');
      assert.equal(got.length, 3);
      assert.equal(got[0]?.timestamp, T0_MICROS);
      assert.equal(got[0]?.event_message, JSON.stringify({ level: 'info', message: 'one', timestamp: T0_ISO }));
      assert.deepEqual(
        got.map((r) => obj(r, 'metadata').level),
        ['info', 'warn', 'error'],
      );
    });

    it('/vector: message, timestamp, metadata and project; no timestamp gets the receive time', async () => {
      const before = Date.now() * 1000;
      const body = `{"message":"GET /rest/v1","timestamp":"${T0_ISO}","project":"abc","appname":"kong"}\n{"appname":"postgres","n":1}\n`;
      await ok('/api/logs/vector?source_name=int.vector', body, { 'content-type': 'application/x-ndjson' });
      const got = await stored('vector', 'timestamp, event_message, project, metadata');
      assert.deepEqual(
        got.map((r) => r.event_message),
        ['GET /rest/v1', '{"appname":"postgres","n":1}'],
      );
      assert.equal(got[0]?.timestamp, T0_MICROS);
      assert.equal(got[0]?.project, 'abc');
      assert.equal(obj(got[0], 'metadata').appname, 'kong');
      assert.ok(Number(got[1]?.timestamp) >= before - 1_000_000);
    });

    it('/cloudflare: Logpush NDJSON as text/plain, the source in the X-Source header', async () => {
      const body = `{"RayID":"r1","EdgeResponseStatus":200,"ClientRequestHost":"a.com"}\n{"RayID":"r2","EdgeResponseStatus":503,"ClientRequestHost":"a.com"}\n`;
      await ok('/api/logs/cloudflare', gzipSync(body), {
        'content-type': 'text/plain; charset=utf-8',
        'content-encoding': 'gzip',
        'x-source': ids.get('cloudflare') as string,
      });
      const got = await stored('cloudflare', 'RayID, EdgeResponseStatus');
      assert.deepEqual(got.map((r) => [r.RayID, r.EdgeResponseStatus]).sort(), [
        ['r1', 200],
        ['r2', 503],
      ]);
    });

    it('/cloud-event: binary and structured mode', async () => {
      await ok('/logs/cloud-event?source_name=int.cloud-event', JSON.stringify({ order_id: 7 }), {
        'content-type': 'application/json',
        'ce-specversion': '1.0',
        'ce-id': 'e1',
        'ce-source': '/orders',
        'ce-type': 'order.created',
        'ce-time': T0_ISO,
      });
      const envelope = {
        specversion: '1.0',
        id: 'e2',
        source: '/orders',
        type: 'order.paid',
        time: new Date(T0_MS + 1000).toISOString(),
        data: { order_id: 8 },
      };
      await ok('/logs/cloud-event?source_name=int.cloud-event', JSON.stringify(envelope), { 'content-type': 'application/cloudevents+json' });
      const got = await stored('cloud-event', 'timestamp, order_id, cloud_event');
      assert.deepEqual(
        got.map((r) => [r.timestamp, r.order_id, obj(r, 'cloud_event').type, obj(r, 'cloud_event').id]),
        [
          [T0_MICROS, 7, 'order.created', 'e1'],
          [T0_MICROS + 1_000_000, 8, 'order.paid', 'e2'],
        ],
      );
    });

    it('/vercel: proxy and build messages', async () => {
      const logs = [
        {
          id: 'v1',
          source: 'edge',
          timestamp: T0_MS,
          proxy: { statusCode: 200, host: 'app.vercel.app', path: '/', clientIp: '1.2.3.4', userAgent: ['curl/8'] },
        },
        { id: 'v2', source: 'build', timestamp: T0_MS + 1, message: 'Compiled successfully' },
      ];
      await ok('/logs/vercel?source_name=int.vercel', JSON.stringify(logs));
      const got = await stored('vercel', 'timestamp, event_message');
      assert.deepEqual(
        got.map((r) => [r.timestamp, r.event_message]),
        [
          [T0_MICROS, 'edge | 200 | app.vercel.app | / | 1.2.3.4 | curl/8'],
          [T0_MICROS + 1000, 'build | Compiled successfully'],
        ],
      );
    });

    it('/netlify: traffic and function logs', async () => {
      const logs = [
        { timestamp: T0_ISO, log_type: 'traffic', method: 'GET', status_code: 200, client_ip: '1.1.1.1', request_id: 'r1', url: '/a', user_agent: 'ua' },
        { timestamp: new Date(T0_MS + 1).toISOString(), log_type: 'functions', method: 'POST', status_code: 500, request_id: 'r2', path: '/f' },
      ];
      await ok('/api/logs/netlify?source_name=int.netlify', JSON.stringify(logs));
      const got = await stored('netlify', 'timestamp, event_message, metadata');
      assert.deepEqual(
        got.map((r) => r.event_message),
        ['traffic | GET | 200 | 1.1.1.1 | r1 | /a | ua', 'functions | POST | 500 | r2 | /f'],
      );
      assert.equal(obj(got[1], 'metadata').request_id, 'r2');
    });

    it('/github: a webhook delivery without its *_url keys', async () => {
      const payload = { action: 'opened', repository: { full_name: 'o/r', html_url: 'https://github.com/o/r' }, sender: { login: 'me', avatar_url: 'x' } };
      await ok('/logs/github?source_name=int.github', JSON.stringify(payload), { 'content-type': 'application/json', 'x-github-event': 'issues' });
      const got = await stored('github', 'timestamp, event_message, metadata');
      assert.equal(got[0]?.event_message, 'o/r | me | opened');
      assert.deepEqual(obj(obj(got[0], 'metadata') as Row, 'repository'), { full_name: 'o/r' });
    });

    it('/browser/reports: a CSP report and Reporting API reports', async () => {
      const csp = { 'csp-report': { 'document-uri': 'https://a.com/', 'violated-directive': 'script-src' } };
      await ok('/logs/browser/reports?source_name=int.browser', JSON.stringify(csp), { 'content-type': 'application/csp-report' });
      const reports = [{ type: 'deprecation', age: 3, url: 'https://a.com/', user_agent: 'ua', body: { id: 'd1' } }];
      await ok('/logs/browser/reports?source_name=int.browser', JSON.stringify(reports), { 'content-type': 'application/reports+json' });
      const got = await stored('browser', 'timestamp, event_message');
      assert.deepEqual(got.map((r) => r.event_message).sort(), [JSON.stringify(csp), JSON.stringify(reports[0])].sort());
    });

    it('/typecasts: strings cast to numbers', async () => {
      const body = { batch: [{ body: { message: 'cast', metadata: { n: '2.5' } }, typecasts: [{ path: ['metadata', 'n'], from: 'string', to: 'float' }] }] };
      await ok('/logs/typecasts?source_name=int.typecasts', JSON.stringify(body));
      const got = await stored('typecasts', 'event_message, metadata');
      assert.deepEqual([got[0]?.event_message, obj(got[0], 'metadata').n], ['cast', 2.5]);
    });

    it('/logplex and /syslogs: Heroku frames under every prefix, RFC 5424 lines', async () => {
      const m = (i: number) => `<158>1 ${new Date(T0_MS + i).toISOString()} host heroku router - at=info path="/p${i}" status=200\n`;
      const framed = (...ms: string[]) => ms.map((x) => `${Buffer.byteLength(x)} ${x}`).join('');
      // Logflare's parser knows only /logs/logplex's path: /api/logs/logplex crashes there.
      await ok('/logs/logplex?source_name=int.syslog', framed(m(0), m(1)), { 'content-type': 'application/logplex-1' });
      await ok('/api/logs/logplex?source_name=int.syslog', framed(m(2)), { 'content-type': 'application/logplex-1' });
      await ok('/api/events/syslogs?source_name=int.syslog', '<14>1 2025-11-21T10:00:00.003Z h app 42 - [ex@1 k="v"] hello\n', {
        'content-type': 'text/plain',
      });
      const got = await stored('syslog', 'timestamp, event_message, metadata');
      assert.deepEqual(
        got.map((r) => [r.timestamp, r.event_message]),
        [
          [T0_MICROS, 'at=info path="/p0" status=200'],
          [T0_MICROS + 1000, 'at=info path="/p1" status=200'],
          [T0_MICROS + 2000, 'at=info path="/p2" status=200'],
          [T0_MICROS + 3000, 'hello'],
        ],
      );
      assert.equal(obj(got[0], 'metadata').severity, 'info');
      assert.equal(obj(got[3], 'metadata').appname, 'app');
    });

    it('a JSON object body may name the source ("source_name", "source") when the query and headers do not', async () => {
      const id = await createSource(s, 'int.body');
      await ok('/logs/vector', JSON.stringify({ source_name: 'int.body', message: 'from vector', timestamp: T0_ISO }));
      await ok('/api/events/json', gzipSync(JSON.stringify({ source: id, level: 'info', message: 'from json' })), {
        'content-type': 'application/json',
        'content-encoding': 'gzip',
      });
      await createEndpoint(s, {
        name: 'read.int.body',
        query: 'select timestamp, event_message, metadata from `int.body` order by event_message',
        cache_duration_seconds: 0,
      });
      const got = await rows(s, 'read.int.body');
      assert.deepEqual(
        got.map((r) => r.event_message),
        ['from vector', JSON.stringify({ source: id, level: 'info', message: 'from json' })],
      );
      // Kept where each route keeps the body's keys, as Logflare keeps them.
      assert.equal(obj(got[0], 'metadata').source_name, 'int.body');
      assert.equal(got[0]?.timestamp, T0_MICROS);
      assert.equal(obj(got[1], 'metadata').source, id);
      // A structured CloudEvent's own `source` attribute names no Quarry source: the 404 says where it came from.
      const envelope = JSON.stringify({ specversion: '1.0', id: 'e9', source: '/orders', type: 't', data: {} });
      const ce = await post('/logs/cloud-event', envelope, { 'content-type': 'application/cloudevents+json' });
      assert.equal(ce.status, 404);
      assert.match((ce.body.error as { message: string }).message, /No source with id \/orders \(named by the "source" key of the JSON body\)/);
      // Text bodies never name one.
      const syslog = await post('/logs/syslogs', '<14>1 2025-11-21T10:00:00Z host app - - - source_name=int.body', { 'content-type': 'text/plain' });
      assert.equal(syslog.status, 400);
      assert.match((syslog.body.error as { message: string }).message, /Say which source/);
      assert.equal((await rows(s, 'read.int.body')).length, 2);
    });

    it('refuses bad bodies with a 400 naming what was wrong, storing nothing', async () => {
      const cases: [string, string, Record<string, string>, RegExp][] = [
        ['/logs/json?source_name=int.json', '[1]', { 'content-type': 'application/json' }, /index 0 is not a JSON object/],
        ['/logs/vector?source_name=int.vector', '{oops', { 'content-type': 'application/json' }, /not valid JSON/],
        ['/logs/cloudflare?source_name=int.cloudflare', '{"a":1}\nnope\n', { 'content-type': 'text/plain; charset=utf-8' }, /Line 2/],
        ['/logs/cloud-event?source_name=int.cloud-event', '{"a":1}', { 'content-type': 'application/json' }, /ce-specversion/],
        ['/logs/netlify?source_name=int.netlify', '[{"a":1}]', { 'content-type': 'application/json' }, /neither "timestamp"/],
        ['/logs/github?source_name=int.github', '[]', { 'content-type': 'application/json' }, /JSON object/],
        ['/logs/typecasts?source_name=int.typecasts', '{"a":1}', { 'content-type': 'application/json' }, /batch/],
        ['/logs/logplex?source_name=int.syslog', '90 <14>1 short', { 'content-type': 'application/logplex-1' }, /body ends first/],
        ['/logs/syslogs?source_name=int.syslog', 'not syslog', { 'content-type': 'text/plain' }, /not RFC 5424/],
      ];
      for (const [path, body, headers, pattern] of cases) {
        const a = await post(path, body, headers);
        assert.equal(a.status, 400, path);
        const error = a.body.error as { code: string; message: string };
        assert.equal(error.code, 'BAD_REQUEST', path);
        assert.match(error.message, pattern, path);
      }
      assert.equal((await stored('json', 'timestamp, event_message, metadata')).length, 3);
      // And the token and source are checked first, as on every ingest route.
      const r = await s.fetch('/logs/json?source_name=int.json', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }, null);
      assert.equal(r.status, 401);
      const missing = await post('/logs/json?source_name=int.none', '{}', { 'content-type': 'application/json' });
      assert.equal(missing.status, 404);
    });
  });
}
