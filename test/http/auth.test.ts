import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { PRIVATE_TOKEN, PUBLIC_TOKEN, type TestServer, startTestServer } from '../support/server.ts';

describe('access tokens over HTTP', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.close());

  test('health is ok once started', async () => {
    const r = await s.fetch('/health', {}, null);
    assert.equal(r.status, 200);
    assert.deepEqual(await r.json(), { status: 'ok' });
  });

  test('the three transports are accepted', async () => {
    const viaBearer = await s.fetch('/api/sources', { headers: { authorization: `Bearer ${PRIVATE_TOKEN}` } });
    const viaHeader = await s.fetch('/api/sources', { headers: { 'x-api-key': PRIVATE_TOKEN } });
    const viaQuery = await s.fetch(`/api/sources?api_key=${PRIVATE_TOKEN}`, {}, null);
    assert.deepEqual([viaBearer.status, viaHeader.status, viaQuery.status], [200, 200, 200]);
  });

  test('Bearer is checked before X-API-KEY', async () => {
    const r = await s.fetch('/api/sources', {
      headers: { authorization: 'Bearer wrong-token', 'x-api-key': PRIVATE_TOKEN },
    });
    assert.equal(r.status, 401);
  });

  test('no token, unknown token → 401 with a stable code and a message that says what to send', async () => {
    const none = await s.fetch('/api/sources', {}, null);
    assert.equal(none.status, 401);
    const body = (await none.json()) as { error: { code: string; message: string; status: number } };
    assert.equal(body.error.code, 'UNAUTHORIZED');
    assert.equal(body.error.status, 401);
    assert.match(body.error.message, /X-API-KEY/);
    const unknown = await s.fetch('/api/sources', {}, 'not-a-token');
    assert.equal(unknown.status, 401);
  });

  test('a public token cannot use the management API', async () => {
    const r = await s.fetch('/api/sources', {}, PUBLIC_TOKEN);
    assert.equal(r.status, 403);
    const body = (await r.json()) as { error: { code: string } };
    assert.equal(body.error.code, 'FORBIDDEN');
  });

  test('create, use, list and revoke a token; the value is shown once and never listed', async () => {
    const created = await s.fetch('/api/access-tokens', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ description: 'ci', scopes: ['private'] }),
    });
    assert.equal(created.status, 201);
    const tok = (await created.json()) as { id: string; token: string; scopes: string[] };
    assert.deepEqual(tok.scopes, ['private']);
    assert.equal((await s.fetch('/api/sources', {}, tok.token)).status, 200);

    const list = (await (await s.fetch('/api/access-tokens')).json()) as Record<string, unknown>[];
    const listed = list.find((t) => t.id === tok.id);
    assert.ok(listed);
    assert.equal(listed.token, undefined);
    assert.ok(!JSON.stringify(list).includes(tok.token));

    assert.equal((await s.fetch(`/api/access-tokens/${tok.id}`, { method: 'DELETE' })).status, 204);
    assert.equal((await s.fetch('/api/sources', {}, tok.token)).status, 401);
    assert.equal((await s.fetch(`/api/access-tokens/${tok.id}`, { method: 'DELETE' })).status, 404);
  });

  test('unknown scopes are refused with 422 naming them', async () => {
    const r = await s.fetch('/api/access-tokens', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ scopes: ['superuser'] }),
    });
    assert.equal(r.status, 422);
    const body = (await r.json()) as { error: { code: string; message: string } };
    assert.equal(body.error.code, 'VALIDATION_FAILED');
    assert.match(body.error.message, /superuser/);
  });

  test('a query-scoped token may not manage', async () => {
    const created = (await (
      await s.fetch('/api/access-tokens', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ scopes: ['query'] }),
      })
    ).json()) as { token: string };
    assert.equal((await s.fetch('/api/access-tokens', {}, created.token)).status, 403);
  });
});
