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
    assert.deepEqual(
      ((await p.json()) as SourceView).retention_days,
      7,
    );
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
});

describe('restarts', () => {
  test('a restart with the same DATA_DIR keeps sources and tokens and duplicates nothing', async () => {
    const dir = await tempDataDir();
    const first = await startTestServer({}, dir);
    await first.fetch('/api/sources', { method: 'POST', headers: json, body: JSON.stringify({ name: 'kept' }) });
    const tok = (await (
      await first.fetch('/api/access-tokens', { method: 'POST', headers: json, body: JSON.stringify({ scopes: ['query'] }) })
    ).json()) as { token: string };
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
