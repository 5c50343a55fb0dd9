/**
 * docs/API.md §2: transports and their order, every scope against management / ingest / query,
 * token management (value shown once, only a hash stored).
 */
import assert from 'node:assert/strict';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { PRIVATE_TOKEN, PUBLIC_TOKEN, type TestServer, startTestServer } from '../support/server.ts';
import { engineEnv, engines } from '../support/engines.ts';
import { assertError, call, newEndpoint, newToken, run, sourceIds } from './support.ts';

for (const engine of engines) {
  describe(engine, () => {
    describe('§2 access tokens', () => {
      let s: TestServer;
      let ids: Map<string, string>;
      let ep: { id: string; name: string };
      let other: { id: string; name: string };
      before(async () => {
        s = await startTestServer(engineEnv(engine));
        ids = await sourceIds(s);
        ep = await newEndpoint(s, { name: 'tok.one', query: 'with a as (select t.id from `postgres.logs` as t) select id from a' });
        other = await newEndpoint(s, { name: 'tok.two', query: 'with a as (select t.id from `postgres.logs` as t) select id from a' });
      });
      after(() => s.close());

      describe('transports: Authorization Bearer, then X-API-KEY, then ?api_key=', () => {
        const get = (headers: Record<string, string>, qs = '') => call(s, 'GET', `/api/sources${qs}`, { headers, token: null });

        test('each transport alone works', async () => {
          assert.equal((await get({ authorization: `Bearer ${PRIVATE_TOKEN}` })).status, 200);
          assert.equal((await get({ 'x-api-key': PRIVATE_TOKEN })).status, 200);
          assert.equal((await get({}, `?api_key=${PRIVATE_TOKEN}`)).status, 200);
        });

        test('the first transport present decides', async () => {
          assert.equal((await get({ authorization: `Bearer ${PRIVATE_TOKEN}`, 'x-api-key': 'wrong' })).status, 200);
          assertError(await get({ authorization: 'Bearer wrong', 'x-api-key': PRIVATE_TOKEN }), 401, 'UNAUTHORIZED');
          assert.equal((await get({ 'x-api-key': PRIVATE_TOKEN }, '?api_key=wrong')).status, 200);
          assertError(await get({ 'x-api-key': 'wrong' }, `?api_key=${PRIVATE_TOKEN}`), 401, 'UNAUTHORIZED');
          assertError(await get({ authorization: 'Bearer wrong' }, `?api_key=${PRIVATE_TOKEN}`), 401, 'UNAUTHORIZED');
        });

        test('the scope of the first transport is the one that counts', async () => {
          // public token in Bearer, private in X-API-KEY: the public one is used → no management.
          assertError(await get({ authorization: `Bearer ${PUBLIC_TOKEN}`, 'x-api-key': PRIVATE_TOKEN }), 403, 'FORBIDDEN');
        });
      });

      describe('scopes', () => {
        const ingest = (token: string, source: string) =>
          call(s, 'POST', `/api/logs?source_name=${encodeURIComponent(source)}`, { body: { event_message: 'scope test' }, token });
        const ingestById = (token: string, source: string) =>
          call(s, 'POST', `/api/logs?source=${ids.get(source)}`, { body: { event_message: 'scope test' }, token });
        const manage = (token: string) => call(s, 'GET', '/api/endpoints', { token });
        const query = (token: string, name: string) => run(s, name, {}, { token });

        test('private: management, ingest and query', async () => {
          const t = (await newToken(s, ['private'])).value;
          assert.equal((await manage(t)).status, 200);
          assert.equal((await call(s, 'GET', '/api/access-tokens', { token: t })).status, 200);
          assert.equal((await call(s, 'GET', '/api/sources', { token: t })).status, 200);
          assert.equal((await ingest(t, 'postgres.logs')).status, 200);
          assert.equal((await query(t, ep.name)).status, 200);
          assert.equal((await query(t, other.id)).status, 200);
        });

        test('query: any endpoint, by name and by id; no ingest, no management', async () => {
          const t = (await newToken(s, ['query'])).value;
          assert.equal((await query(t, ep.name)).status, 200);
          assert.equal((await query(t, other.id)).status, 200);
          assert.equal((await query(t, 'logs.all')).status, 200);
          assertError(await ingest(t, 'postgres.logs'), 403, 'FORBIDDEN');
          assertError(await manage(t), 403, 'FORBIDDEN');
        });

        test('query:endpoint:<id>: that endpoint only (by id, by name, on the legacy path)', async () => {
          const t = (await newToken(s, [`query:endpoint:${ep.id}`])).value;
          assert.equal((await query(t, ep.id)).status, 200);
          assert.equal((await query(t, ep.name)).status, 200);
          assert.equal((await run(s, ep.name, {}, { token: t, prefix: '/endpoints/query' })).status, 200);
          // Endpoints the token may not run are not visible to it: the same 404 as an unknown name.
          assertError(await query(t, other.name), 404, 'NOT_FOUND');
          assertError(await query(t, 'logs.all'), 404, 'NOT_FOUND');
          assertError(await ingest(t, 'postgres.logs'), 403, 'FORBIDDEN');
          assertError(await manage(t), 403, 'FORBIDDEN');
        });

        test('ingest and public: any source, by name and id; no query, no management', async () => {
          for (const t of [(await newToken(s, ['ingest'])).value, (await newToken(s, ['public'])).value, PUBLIC_TOKEN]) {
            assert.equal((await ingest(t, 'postgres.logs')).status, 200);
            assert.equal((await ingest(t, 'gotrue.logs.prod')).status, 200);
            assert.equal((await ingestById(t, 'realtime.logs.prod')).status, 200);
            assertError(await query(t, ep.name), 403, 'FORBIDDEN');
            assertError(await manage(t), 403, 'FORBIDDEN');
          }
        });

        test('ingest:source:<id>: that source only, by name or by id', async () => {
          const t = (await newToken(s, [`ingest:source:${ids.get('postgres.logs')}`])).value;
          assert.equal((await ingest(t, 'postgres.logs')).status, 200);
          assert.equal((await ingestById(t, 'postgres.logs')).status, 200);
          assert.equal((await call(s, 'POST', '/api/events?source_name=postgres.logs', { body: [{ a: 1 }], token: t })).status, 200);
          assertError(await ingest(t, 'gotrue.logs.prod'), 403, 'FORBIDDEN');
          assertError(await ingestById(t, 'gotrue.logs.prod'), 403, 'FORBIDDEN');
          assertError(await query(t, ep.name), 403, 'FORBIDDEN');
          assertError(await manage(t), 403, 'FORBIDDEN');
        });

        test('several scopes add up', async () => {
          const t = (await newToken(s, ['ingest', `query:endpoint:${ep.id}`])).value;
          assert.equal((await ingest(t, 'postgres.logs')).status, 200);
          assert.equal((await query(t, ep.name)).status, 200);
          assertError(await query(t, other.name), 404, 'NOT_FOUND');
        });

        test('a revoked token is 401 everywhere (ingest, query, management)', async () => {
          const tok = await newToken(s, ['private']);
          assert.equal((await call(s, 'DELETE', `/api/access-tokens/${tok.id}`)).status, 204);
          assertError(await ingest(tok.value, 'postgres.logs'), 401, 'UNAUTHORIZED');
          assertError(await query(tok.value, ep.name), 401, 'UNAUTHORIZED');
          assertError(await manage(tok.value), 401, 'UNAUTHORIZED');
        });

        test('no token and unknown token on ingest → 401 UNAUTHORIZED', async () => {
          assertError(await call(s, 'POST', '/api/logs?source_name=postgres.logs', { body: { a: 1 }, token: null }), 401, 'UNAUTHORIZED');
          assertError(await ingest('no-such-token', 'postgres.logs'), 401, 'UNAUTHORIZED');
        });
      });

      describe('token management', () => {
        test('needs the private scope', async () => {
          assertError(await call(s, 'GET', '/api/access-tokens', { token: null }), 401, 'UNAUTHORIZED');
          assertError(await call(s, 'GET', '/api/access-tokens', { token: PUBLIC_TOKEN }), 403, 'FORBIDDEN');
          assertError(await call(s, 'POST', '/api/access-tokens', { body: { scopes: ['private'] }, token: PUBLIC_TOKEN }), 403, 'FORBIDDEN');
          const q = (await newToken(s, ['query'])).id;
          assertError(await call(s, 'DELETE', `/api/access-tokens/${q}`, { token: PUBLIC_TOKEN }), 403, 'FORBIDDEN');
        });

        test('the value is in the creation answer only; the list never shows it', async () => {
          const created = await call(s, 'POST', '/api/access-tokens', { body: { scopes: ['query'], description: 'once' } });
          assert.equal(created.status, 201);
          const b = created.body as { id: string; token: string };
          assert.equal(typeof b.token, 'string');
          assert.ok(b.token.length >= 20, 'a token long enough to be unguessable');
          const list = await call(s, 'GET', '/api/access-tokens');
          assert.equal(list.status, 200);
          assert.ok(Array.isArray(list.body));
          assert.ok((list.body as { id: string }[]).some((t) => t.id === b.id));
          assert.ok(!list.text.includes(b.token));
          assert.ok(!list.text.includes(PRIVATE_TOKEN), 'bootstrap tokens are not listed either');
          assert.ok(!list.text.includes(PUBLIC_TOKEN));
        });

        test('DELETE of an unknown token → 404 NOT_FOUND', async () => {
          assertError(await call(s, 'DELETE', `/api/access-tokens/${crypto.randomUUID()}`), 404, 'NOT_FOUND');
        });
      });
    });

    test('§2 only a hash is stored: no raw token value anywhere under DATA_DIR', async () => {
      const configured = 'configured-private-token-Zq8wX3rT5yU7';
      const configuredPublic = 'configured-public-token-Kd9fG2hJ4kL6';
      const legacy = 'configured-legacy-key-Mn1bV3cX5zA7';
      const s = await startTestServer({
        ...engineEnv(engine),
        LOGFLARE_PRIVATE_ACCESS_TOKEN: configured,
        LOGFLARE_PUBLIC_ACCESS_TOKEN: configuredPublic,
        LOGFLARE_API_KEY: legacy,
      });
      const created: string[] = [];
      for (const scopes of [['private'], ['query'], ['ingest']]) {
        const r = await call(s, 'POST', '/api/access-tokens', { body: { scopes }, token: configured });
        assert.equal(r.status, 201);
        created.push((r.body as { token: string }).token);
      }
      // Use them so any lookup cache/logging path runs too.
      for (const t of created) await call(s, 'GET', '/api/sources', { token: t });
      await s.stop();
      try {
        const files = await readdir(s.dataDir, { recursive: true });
        const found: string[] = [];
        for (const f of files) {
          const p = path.join(s.dataDir, f);
          let buf: Buffer;
          try {
            buf = await readFile(p);
          } catch {
            continue; // a directory
          }
          for (const secret of [configured, configuredPublic, legacy, ...created]) {
            // utf8 and utf16 (in case a value is stored wide)
            if (buf.includes(Buffer.from(secret)) || buf.includes(Buffer.from(secret, 'utf16le'))) found.push(`${f}: ${secret.slice(0, 8)}…`);
          }
        }
        assert.deepEqual(found, [], 'raw token values found on disk');
      } finally {
        await s.close();
      }
    });
  });
}
