import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { createEndpoint, createSource, createToken } from '../endpoints/http-support.ts';
import { PUBLIC_TOKEN, type TestServer, startTestServer } from '../support/server.ts';

const SOURCE = 'cors.events';
const ORIGIN = 'https://page.example';
const INGEST_PATHS = ['/api/logs', '/logs', '/api/events'];
const QUERY_PATHS = ['/api/endpoints/query/cors.items', '/endpoints/query/cors.items'];

/** What a browser sends before a cross-origin POST with a JSON body and an API key. */
function preflight(s: TestServer, path: string, method: string, headers: string): Promise<Response> {
  return s.fetch(
    path,
    {
      method: 'OPTIONS',
      headers: { origin: ORIGIN, 'access-control-request-method': method, 'access-control-request-headers': headers },
    },
    null,
  );
}

function allowed(res: Response, header: string): string[] {
  return (res.headers.get(header) ?? '').split(',').map((h) => h.trim().toLowerCase());
}

/** Sends a cross-origin request; the status, the CORS headers and the body. */
async function crossOrigin(s: TestServer, path: string, init: RequestInit, token: string | null = PUBLIC_TOKEN) {
  const res = await s.fetch(path, { ...init, headers: { origin: ORIGIN, ...(init.headers as Record<string, string>) } }, token);
  const body = (await res.json()) as { error?: { code: string; message: string } };
  return { status: res.status, origin: res.headers.get('access-control-allow-origin'), expose: allowed(res, 'access-control-expose-headers'), body };
}

describe('CORS', () => {
  let s: TestServer;
  /** What a page that reads endpoints holds. */
  let queryToken: string;
  before(async () => {
    s = await startTestServer();
    queryToken = await createToken(s, ['query']);
    await createSource(s, SOURCE);
    await createEndpoint(s, {
      name: 'cors.items',
      query: `with items as (select t.id, t.event_message from \`${SOURCE}\` as t) select event_message from items order by event_message`,
      sandboxable: true,
    });
  });
  after(() => s.close());

  test('an ingest preflight is answered 204 without a token, allowing what a page sends', async () => {
    for (const path of [...INGEST_PATHS, `/api/logs?source_name=${SOURCE}`, '/api/events?source=nope']) {
      const res = await preflight(s, path, 'POST', 'content-type, x-api-key, content-encoding');
      assert.equal(res.status, 204, path);
      assert.equal(await res.text(), '');
      assert.equal(res.headers.get('access-control-allow-origin'), '*');
      assert.deepEqual(allowed(res, 'access-control-allow-methods'), ['post', 'options']);
      const headers = allowed(res, 'access-control-allow-headers');
      for (const h of ['content-type', 'x-api-key', 'authorization', 'content-encoding', 'content-length', 'x-requested-with', 'x-source']) {
        assert.ok(headers.includes(h), `${path}: ${h} in ${headers.join(', ')}`);
      }
      assert.equal(res.headers.get('access-control-max-age'), '1728000');
    }
  });

  test('an endpoint query preflight is answered 204 for GET and POST, allowing the LF-ENDPOINT headers', async () => {
    for (const path of [...QUERY_PATHS, '/api/endpoints/query/no.such.endpoint']) {
      const res = await preflight(s, path, 'POST', 'content-type, authorization, lf-endpoint-redact-pii');
      assert.equal(res.status, 204, path);
      assert.equal(res.headers.get('access-control-allow-origin'), '*');
      assert.deepEqual(allowed(res, 'access-control-allow-methods'), ['get', 'post', 'options']);
      const headers = allowed(res, 'access-control-allow-headers');
      for (const h of ['content-type', 'x-api-key', 'authorization', 'content-encoding', 'lf-endpoint-redact-pii', 'lf-endpoint-labels']) {
        assert.ok(headers.includes(h), `${path}: ${h} in ${headers.join(', ')}`);
      }
      assert.equal(res.headers.get('access-control-max-age'), '1728000');
    }
  });

  test('ingest answers carry Access-Control-Allow-Origin: *, refusals included', async () => {
    const json = { 'content-type': 'application/json' };
    const event = JSON.stringify({ event_message: 'from a page' });
    for (const path of INGEST_PATHS) {
      const ok = await crossOrigin(s, `${path}?source_name=${SOURCE}`, { method: 'POST', headers: json, body: event });
      assert.equal(ok.status, 200, `${path}: ${JSON.stringify(ok.body)}`);
      assert.equal(ok.origin, '*');
      assert.ok(ok.expose.includes('retry-after'));
    }
    const refusals: [number, string, RequestInit, string | null][] = [
      [401, `/api/logs?source_name=${SOURCE}`, { method: 'POST', headers: json, body: event }, null],
      [401, `/logs?source_name=${SOURCE}`, { method: 'POST', headers: json, body: event }, 'not-a-token'],
      [404, '/api/logs?source_name=no.such.source', { method: 'POST', headers: json, body: event }, PUBLIC_TOKEN],
      [400, '/api/events', { method: 'POST', headers: json, body: event }, PUBLIC_TOKEN],
      [400, `/api/logs?source_name=${SOURCE}`, { method: 'POST', headers: json, body: '{"a":' }, PUBLIC_TOKEN],
      [400, `/api/logs?source_name=${SOURCE}`, { method: 'POST', headers: { ...json, 'content-encoding': 'gzip' }, body: 'not gzip' }, PUBLIC_TOKEN],
      [415, `/api/logs?source_name=${SOURCE}`, { method: 'POST', headers: { ...json, 'content-encoding': 'zstd' }, body: event }, PUBLIC_TOKEN],
      [
        413,
        `/api/logs?source_name=${SOURCE}`,
        { method: 'POST', headers: { ...json, 'content-encoding': 'gzip' }, body: gzipSync(Buffer.alloc(11 * 1024 * 1024, ' ')) },
        PUBLIC_TOKEN,
      ],
    ];
    for (const [status, path, init, token] of refusals) {
      const r = await crossOrigin(s, path, init, token);
      assert.equal(r.status, status, `${path}: ${JSON.stringify(r.body)}`);
      assert.equal(r.origin, '*', `${status} ${path}`);
      assert.ok(r.body.error?.message, `${status} ${path} names what was wrong`);
    }
  });

  test('endpoint query answers carry Access-Control-Allow-Origin: * and expose X-Cache, refusals included', async () => {
    for (const path of QUERY_PATHS) {
      const get = await crossOrigin(s, path, {}, queryToken);
      assert.equal(get.status, 200, `${path}: ${JSON.stringify(get.body)}`);
      assert.equal(get.origin, '*');
      for (const h of ['x-cache', 'age', 'x-query-warnings', 'retry-after']) assert.ok(get.expose.includes(h), `${h} exposed`);
    }
    const post = await crossOrigin(s, QUERY_PATHS[0] as string, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }, queryToken);
    assert.equal(post.status, 200, JSON.stringify(post.body));
    assert.equal(post.origin, '*');
    const refusals: [number, string, RequestInit, string | null][] = [
      [401, QUERY_PATHS[0] as string, {}, null],
      [401, QUERY_PATHS[0] as string, {}, 'not-a-token'],
      [403, QUERY_PATHS[0] as string, {}, PUBLIC_TOKEN],
      [404, '/api/endpoints/query/no.such.endpoint', {}, queryToken],
      [400, `${QUERY_PATHS[0]}?sql=${encodeURIComponent('drop table x')}`, {}, queryToken],
      [400, QUERY_PATHS[0] as string, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":' }, queryToken],
    ];
    for (const [status, path, init, token] of refusals) {
      const r = await crossOrigin(s, path, init, token);
      assert.equal(r.status, status, `${path}: ${JSON.stringify(r.body)}`);
      assert.equal(r.origin, '*', `${status} ${path}`);
      assert.ok(r.body.error?.message, `${status} ${path} names what was wrong`);
    }
  });

  test('management routes send no CORS headers and answer no preflight', async () => {
    for (const path of ['/api/sources', '/api/endpoints', '/api/access-tokens', '/api/openapi.json', '/health']) {
      const res = await s.fetch(path, { headers: { origin: ORIGIN } });
      await res.arrayBuffer();
      assert.equal(res.status, 200, path);
      assert.equal(res.headers.get('access-control-allow-origin'), null, path);
      const pre = await preflight(s, path, 'POST', 'content-type, authorization');
      await pre.arrayBuffer();
      assert.equal(pre.status, 404, path);
      assert.equal(pre.headers.get('access-control-allow-origin'), null, path);
    }
  });

  test('the preflight routes stay out of the OpenAPI document', async () => {
    const doc = (await (await s.fetch('/api/openapi.json')).json()) as { paths: Record<string, Record<string, unknown>> };
    assert.ok(doc.paths['/api/logs']?.post);
    assert.deepEqual(
      Object.entries(doc.paths).filter(([, ops]) => 'options' in ops),
      [],
    );
  });

  test('what pages stored through CORS is there', async () => {
    const r = await crossOrigin(s, QUERY_PATHS[0] as string, {}, queryToken);
    assert.deepEqual((r.body as { result?: unknown[] }).result, [
      { event_message: 'from a page' },
      { event_message: 'from a page' },
      { event_message: 'from a page' },
    ]);
  });
});
