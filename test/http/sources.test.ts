import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { supabaseSources } from '../../src/metadata/sources.ts';
import { type TestServer, startTestServer, tempDataDir } from '../support/server.ts';

interface SourceView {
  id: string;
  name: string;
  retention_days: number | null;
}
const json = { 'content-type': 'application/json' };

describe('sources management', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.close());

  test('first start creates the nine Supabase sources', async () => {
    const list = (await (await s.fetch('/api/sources')).json()) as SourceView[];
    assert.deepEqual(list.map((x) => x.name).sort(), supabaseSources.map((x) => x.name).sort());
  });

  test('create, get, rename, set retention, delete', async () => {
    const c = await s.fetch('/api/sources', { method: 'POST', headers: json, body: JSON.stringify({ name: 'my.app' }) });
    assert.equal(c.status, 201);
    const src = (await c.json()) as SourceView;
    assert.equal(src.retention_days, null);
    const got = (await (await s.fetch(`/api/sources/${src.id}`)).json()) as SourceView;
    assert.equal(got.name, 'my.app');
    const p = await s.fetch(`/api/sources/${src.id}`, {
      method: 'PATCH',
      headers: json,
      body: JSON.stringify({ name: 'my.app.v2', retention_days: 7 }),
    });
    assert.equal(p.status, 200);
    assert.deepEqual(((await p.json()) as SourceView).retention_days, 7);
    assert.equal((await s.fetch(`/api/sources/${src.id}`, { method: 'DELETE' })).status, 204);
    assert.equal((await s.fetch(`/api/sources/${src.id}`)).status, 404);
  });

  test('bad input is refused with a message naming the field', async () => {
    const dup = await s.fetch('/api/sources', {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ name: 'postgres.logs' }),
    });
    assert.equal(dup.status, 422);
    const body = (await dup.json()) as { error: { code: string; fields: Record<string, string[]> } };
    assert.equal(body.error.code, 'VALIDATION_FAILED');
    assert.ok(body.error.fields.name);
    const badName = await s.fetch('/api/sources', {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ name: 'has spaces' }),
    });
    assert.equal(badName.status, 422);
    const notJson = await s.fetch('/api/sources', { method: 'POST', headers: json, body: '{nope' });
    assert.equal(notJson.status, 400);
    const err = (await notJson.json()) as { error: { code: string } };
    assert.equal(err.error.code, 'BAD_REQUEST');
  });

  test("every wrong field of a body is a 422 naming it, in the vocabulary's words", async () => {
    type Invalid = { error: { code: string; status: number; message: string; fields: Record<string, string[]> } };
    const bad = await s.fetch('/api/sources', {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ name: 5, retention_days: 0, colour: 'red' }),
    });
    assert.equal(bad.status, 422);
    const body = (await bad.json()) as Invalid;
    assert.equal(body.error.code, 'VALIDATION_FAILED');
    assert.equal(body.error.status, 422);
    assert.deepEqual(body.error.fields, {
      name: ['must be 1 to 128 characters of letters, digits, dots, dashes or underscores, starting with a letter or digit'],
      retention_days: ['must be a whole number of days from 1 to 36500, or null to keep everything'],
      colour: ['is not a source field (name, retention_days)'],
    });
    assert.match(body.error.message, /^The source is not valid: .*name must be 1 to 128/);
    const missing = (await (await s.fetch('/api/sources', { method: 'POST', headers: json, body: '{}' })).json()) as Invalid;
    assert.deepEqual(missing.error.fields, { name: ['is required'] });

    const created = (await (
      await s.fetch('/api/sources', { method: 'POST', headers: json, body: JSON.stringify({ name: 'fields.app' }) })
    ).json()) as SourceView;
    for (const retention_days of [40_000, 1.5, '7']) {
      const p = await s.fetch(`/api/sources/${created.id}`, { method: 'PATCH', headers: json, body: JSON.stringify({ retention_days }) });
      assert.equal(p.status, 422, String(retention_days));
      assert.ok(((await p.json()) as Invalid).error.fields.retention_days);
    }
    const unknown = await s.fetch('/api/sources/00000000-0000-4000-8000-000000000000', { method: 'PATCH', headers: json, body: '{}' });
    assert.equal(unknown.status, 404);
  });

  test('token bodies are checked against their vocabulary too', async () => {
    type Invalid = { error: { code: string; fields: Record<string, string[]> } };
    const post = (body: unknown) => s.fetch('/api/access-tokens', { method: 'POST', headers: json, body: JSON.stringify(body) });
    const empty = await post({ scopes: [] });
    assert.equal(empty.status, 422);
    assert.deepEqual(((await empty.json()) as Invalid).error.fields, { scopes: ['must be a non-empty list of scopes'] });
    const extra = await post({ scopes: ['query'], description: 'x'.repeat(501), owner: 'me' });
    assert.equal(extra.status, 422);
    assert.deepEqual(((await extra.json()) as Invalid).error.fields, {
      description: ['must be text of at most 500 characters'],
      owner: ['is not an access token field (description, scopes)'],
    });
    const scope = await post({ scopes: ['query', 'superuser'] });
    assert.equal(scope.status, 422);
    assert.deepEqual(((await scope.json()) as Invalid).error.fields, { scopes: ['"superuser" is not a scope'] });
  });

  test('the OpenAPI document describes the bodies from the same vocabularies', async () => {
    const doc = (await (await s.fetch('/api/openapi.json')).json()) as {
      paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: Record<string, unknown> }> } }>>;
    };
    const create = doc.paths['/api/sources']?.post?.requestBody?.content['application/json']?.schema as {
      properties: Record<string, Record<string, unknown>>;
      additionalProperties: boolean;
    };
    assert.equal(create.properties.name?.pattern, '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$');
    assert.equal(create.additionalProperties, false);
    const token = doc.paths['/api/access-tokens']?.post?.requestBody?.content['application/json']?.schema as {
      properties: Record<string, Record<string, unknown>>;
    };
    assert.equal(token.properties.scopes?.minItems, 1);
  });
});

describe('restarts', () => {
  test('a restart with the same DATA_DIR keeps sources and tokens and duplicates nothing', async () => {
    const dir = await tempDataDir();
    const first = await startTestServer({}, dir);
    await first.fetch('/api/sources', { method: 'POST', headers: json, body: JSON.stringify({ name: 'kept' }) });
    const tok = (await (await first.fetch('/api/access-tokens', { method: 'POST', headers: json, body: JSON.stringify({ scopes: ['query'] }) })).json()) as {
      token: string;
    };
    await first.stop();

    const second = await startTestServer({}, dir);
    try {
      const names = ((await (await second.fetch('/api/sources')).json()) as SourceView[]).map((x) => x.name);
      assert.equal(names.length, 10);
      assert.ok(names.includes('kept'));
      // The query token is still live: it is refused management with 403, not 401.
      assert.equal((await second.fetch('/api/sources', {}, tok.token)).status, 403);
    } finally {
      await second.close();
    }
  });

  test('without a configured private token the first start generates one, keeps it, and reuses it', async () => {
    const dir = await tempDataDir();
    const first = await startTestServer({ LOGFLARE_PRIVATE_ACCESS_TOKEN: '' }, dir);
    const generated = first.server.generatedPrivateToken;
    assert.ok(generated && generated.length >= 32);
    const onDisk = (await readFile(path.join(dir, 'private-access-token'), 'utf8')).trim();
    assert.equal(onDisk, generated);
    assert.equal((await first.fetch('/api/sources', {}, generated)).status, 200);
    await first.stop();

    const second = await startTestServer({ LOGFLARE_PRIVATE_ACCESS_TOKEN: '' }, dir);
    try {
      assert.equal(second.server.generatedPrivateToken, undefined);
      assert.equal((await second.fetch('/api/sources', {}, generated)).status, 200);
    } finally {
      await second.close();
    }
  });

  test('changing LOGFLARE_PRIVATE_ACCESS_TOKEN retires the old value', async () => {
    const dir = await tempDataDir();
    const first = await startTestServer({ LOGFLARE_PRIVATE_ACCESS_TOKEN: 'old-value-123456' }, dir);
    await first.stop();
    const second = await startTestServer({ LOGFLARE_PRIVATE_ACCESS_TOKEN: 'new-value-123456' }, dir);
    try {
      assert.equal((await second.fetch('/api/sources', {}, 'old-value-123456')).status, 401);
      assert.equal((await second.fetch('/api/sources', {}, 'new-value-123456')).status, 200);
    } finally {
      await second.close();
    }
  });

  test('LOGFLARE_API_KEY may query and ingest but not manage', async () => {
    const s = await startTestServer({ LOGFLARE_API_KEY: 'legacy-key-123456' });
    try {
      assert.equal((await s.fetch('/api/sources', {}, 'legacy-key-123456')).status, 403);
    } finally {
      await s.close();
    }
  });
});
