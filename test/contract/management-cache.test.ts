/**
 * docs/API.md §5 (endpoint management: fields, defaults, bounds, 201, 422 per field, invalidation)
 * and §6 (caching: HIT/MISS, Age, keys, single flight, errors never cached).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { PUBLIC_TOKEN, type TestServer, startTestServer } from '../support/server.ts';
import { engineEnv, engines } from '../support/engines.ts';
import { assertError, call, mustIngest, newEndpoint, result, run, sleep } from './support.ts';

const SIMPLE = 'with pg as (select t.id, t.event_message, t.timestamp from `postgres.logs` as t) select id from pg';
const FIELDS = [
  'id',
  'name',
  'description',
  'query',
  'language',
  'sandboxable',
  'max_limit',
  'cache_duration_seconds',
  'proactive_requerying_seconds',
  'enable_auth',
  'redact_pii',
  'labels',
  'created_at',
  'updated_at',
];

type ErrorBody = { error: { code: string; status: number; message: string; fields?: Record<string, string[]> } };

for (const engine of engines) {
  describe(engine, () => {
    describe('§5 endpoint management', () => {
      let s: TestServer;
      before(async () => {
        s = await startTestServer(engineEnv(engine));
      });
      after(() => s.close());

      test('POST → 201 with every field and the defaults', async () => {
        const a = await call(s, 'POST', '/api/endpoints', { body: { name: 'mg.defaults', query: SIMPLE } });
        assert.equal(a.status, 201, a.text);
        const e = a.body as Record<string, unknown>;
        for (const f of FIELDS) assert.ok(f in e, `field ${f} in ${a.text}`);
        assert.match(e.id as string, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i);
        assert.equal(e.language, 'bq_sql');
        assert.equal(e.max_limit, 1000);
        assert.equal(e.enable_auth, true);
        assert.equal(e.redact_pii, false);
        assert.equal(e.cache_duration_seconds, 0);
        assert.equal(e.query, SIMPLE);
        assert.ok(!Number.isNaN(Date.parse(e.created_at as string)));
        assert.ok(!Number.isNaN(Date.parse(e.updated_at as string)));
      });

      test('every field round-trips through POST, GET, list', async () => {
        const input = {
          name: 'mg.full',
          description: 'all fields',
          query: SIMPLE,
          language: 'bq_sql',
          sandboxable: true,
          max_limit: 10,
          cache_duration_seconds: 30,
          proactive_requerying_seconds: 10,
          enable_auth: false,
          redact_pii: true,
          labels: 'team:core,env:test',
        };
        const created = await newEndpoint(s, input);
        for (const [k, v] of Object.entries(input)) assert.deepEqual(created[k], v, k);
        const got = await call(s, 'GET', `/api/endpoints/${created.id}`);
        assert.deepEqual(got.body, created);
        const list = (await call(s, 'GET', '/api/endpoints')).body as Record<string, unknown>[];
        assert.deepEqual(
          list.find((x) => x.id === created.id),
          created,
        );
      });

      test('max_limit bounds: 1 and 10000 accepted; 0, 10001, -1, 2.5 → 422 naming max_limit', async () => {
        assert.equal((await newEndpoint(s, { name: 'mg.min', query: SIMPLE, max_limit: 1 })).max_limit, 1);
        assert.equal((await newEndpoint(s, { name: 'mg.max', query: SIMPLE, max_limit: 10_000 })).max_limit, 10_000);
        for (const bad of [0, 10_001, -1, 2.5]) {
          const a = await call(s, 'POST', '/api/endpoints', { body: { name: `mg.bad${String(bad).replace('.', '_')}`, query: SIMPLE, max_limit: bad } });
          const e = assertError(a, 422, 'VALIDATION_FAILED');
          assert.ok((a.body as ErrorBody).error.fields?.max_limit?.length, `${bad}: ${a.text}`);
          assert.ok(e.message.includes('max_limit'));
        }
        // PATCH too.
        const ep = await newEndpoint(s, { name: 'mg.patchlimit', query: SIMPLE });
        const a = await call(s, 'PATCH', `/api/endpoints/${ep.id}`, { body: { max_limit: 10_001 } });
        assertError(a, 422, 'VALIDATION_FAILED');
        assert.ok((a.body as ErrorBody).error.fields?.max_limit);
      });

      test('422 lists a message for every invalid field at once', async () => {
        const a = await call(s, 'POST', '/api/endpoints', {
          body: { name: 'mg.multi', query: SIMPLE, max_limit: 0, enable_auth: 'yes', cache_duration_seconds: -1 },
        });
        assertError(a, 422, 'VALIDATION_FAILED');
        const fields = (a.body as ErrorBody).error.fields ?? {};
        assert.deepEqual(Object.keys(fields).sort(), ['cache_duration_seconds', 'enable_auth', 'max_limit'], a.text);
      });

      test('the query is validated at save time: 422 with fields.query (parse error names line/column)', async () => {
        const a = await call(s, 'POST', '/api/endpoints', { body: { name: 'mg.badq', query: 'select id\nfrom `postgres.logs`\nwhere (' } });
        assertError(a, 422, 'VALIDATION_FAILED');
        const q = (a.body as ErrorBody).error.fields?.query?.[0] ?? '';
        assert.match(q, /line 3/i);
        for (const bad of [
          'select * from `postgres.logs`',
          'select id from `no.such.source`',
          'drop table x',
          'with a as (select t.id from `postgres.logs` as t) select nope from a',
        ]) {
          const r = await call(s, 'POST', '/api/endpoints', { body: { name: 'mg.badq', query: bad } });
          assertError(r, 422, 'VALIDATION_FAILED');
          assert.ok((r.body as ErrorBody).error.fields?.query?.length, bad);
        }
        // A refused save leaves nothing behind.
        assert.ok(!((await call(s, 'GET', '/api/endpoints')).body as { name: string }[]).some((e) => e.name === 'mg.badq'));
      });

      test('a misspelt top-level column of a source that has events is refused at save time', async () => {
        await mustIngest(s, 'gotrue.logs.prod', [{ event_message: 'x', project: 'p', metadata: { level: 'info' } }]);
        // `projct` for `project`: the source has carried `project`, never `projct`.
        const a = await call(s, 'POST', '/api/endpoints', {
          body: { name: 'mg.typo', query: 'with a as (select t.id from `gotrue.logs.prod` as t where t.projct = @project) select id from a' },
        });
        assertError(a, 422, 'VALIDATION_FAILED', /projct/);
      });

      test('PATCH keeps created_at, moves updated_at; PUT replaces; DELETE → 204 then 404', async () => {
        const ep = await newEndpoint(s, { name: 'mg.life', query: SIMPLE, max_limit: 5, description: 'd' });
        await sleep(5);
        const p = await call(s, 'PATCH', `/api/endpoints/${ep.id}`, { body: { description: 'changed' } });
        assert.equal(p.status, 200);
        const pb = p.body as Record<string, unknown>;
        assert.equal(pb.created_at, ep.created_at);
        assert.ok(Date.parse(pb.updated_at as string) > Date.parse(ep.updated_at as string), 'updated_at moves');
        assert.equal(pb.max_limit, 5);
        const put = await call(s, 'PUT', `/api/endpoints/${ep.id}`, { body: { name: 'mg.life', query: SIMPLE } });
        assert.equal(put.status, 200);
        assert.equal((put.body as Record<string, unknown>).max_limit, 1000);
        assert.equal((await call(s, 'DELETE', `/api/endpoints/${ep.id}`)).status, 204);
        assertError(await call(s, 'GET', `/api/endpoints/${ep.id}`), 404, 'NOT_FOUND');
        assertError(await call(s, 'PUT', `/api/endpoints/${ep.id}`, { body: { name: 'mg.life', query: SIMPLE } }), 404, 'NOT_FOUND');
        assertError(await run(s, ep.id), 404, 'NOT_FOUND');
      });

      test('management needs the private scope', async () => {
        assertError(await call(s, 'GET', '/api/endpoints', { token: null }), 401, 'UNAUTHORIZED');
        assertError(await call(s, 'GET', '/api/endpoints', { token: PUBLIC_TOKEN }), 403, 'FORBIDDEN');
        const ep = await newEndpoint(s, { name: 'mg.scope', query: SIMPLE });
        assertError(await call(s, 'DELETE', `/api/endpoints/${ep.id}`, { token: PUBLIC_TOKEN }), 403, 'FORBIDDEN');
        assertError(await call(s, 'PATCH', `/api/endpoints/${ep.id}`, { body: { max_limit: 2 }, token: PUBLIC_TOKEN }), 403, 'FORBIDDEN');
      });
    });

    describe('§5/§6 invalidation and caching', () => {
      let s: TestServer;
      const marker = 'cache-contract';
      const Q = `with pg as (select t.id, t.event_message from \`postgres.logs\` as t where t.event_message = '${marker}') select count(id) as n from pg`;
      const Q2 = `with pg as (select t.id, t.event_message from \`postgres.logs\` as t where t.event_message = '${marker}') select count(id) as n, 'v2' as v from pg`;
      before(async () => {
        s = await startTestServer(engineEnv(engine));
        await mustIngest(s, 'postgres.logs', [{ event_message: marker }]);
      });
      after(() => s.close());

      const add = () => mustIngest(s, 'postgres.logs', [{ event_message: marker }]);

      const changes: [string, Record<string, unknown>][] = [
        ['the query (PATCH)', { query: Q2 }],
        ['max_limit', { max_limit: 999 }],
        ['redact_pii', { redact_pii: true }],
        ['cache_duration_seconds', { cache_duration_seconds: 500 }],
        ['sandboxable', { sandboxable: true }],
      ];
      for (const [what, patch] of changes) {
        test(`changing ${what} invalidates cached results at once`, async () => {
          const ep = await newEndpoint(s, { name: `inv.${what.replace(/\W+/g, '_')}`, query: Q, cache_duration_seconds: 600 });
          const first = await run(s, ep.name);
          assert.equal(first.headers.get('x-cache'), 'MISS');
          const n1 = result(first)[0]?.n as number;
          await add();
          const hit = await run(s, ep.name);
          assert.equal(hit.headers.get('x-cache'), 'HIT');
          assert.equal(result(hit)[0]?.n, n1);
          assert.equal((await call(s, 'PATCH', `/api/endpoints/${ep.id}`, { body: patch })).status, 200);
          const after = await run(s, ep.name);
          assert.equal(after.headers.get('x-cache'), 'MISS', what);
          assert.equal(result(after)[0]?.n, n1 + 1);
        });
      }

      test('PUT invalidates too', async () => {
        const ep = await newEndpoint(s, { name: 'inv.put', query: Q, cache_duration_seconds: 600 });
        const n1 = result(await run(s, ep.name))[0]?.n as number;
        await add();
        assert.equal((await run(s, ep.name)).headers.get('x-cache'), 'HIT');
        assert.equal((await call(s, 'PUT', `/api/endpoints/${ep.id}`, { body: { name: 'inv.put', query: Q, cache_duration_seconds: 600 } })).status, 200);
        const after = await run(s, ep.name);
        assert.equal(after.headers.get('x-cache'), 'MISS');
        assert.equal(result(after)[0]?.n, n1 + 1);
      });

      test('a deleted and re-created endpoint of the same name does not see the old entries', async () => {
        const ep = await newEndpoint(s, { name: 'inv.recreate', query: Q, cache_duration_seconds: 600 });
        const n1 = result(await run(s, ep.name))[0]?.n as number;
        await add();
        assert.equal((await call(s, 'DELETE', `/api/endpoints/${ep.id}`)).status, 204);
        await newEndpoint(s, { name: 'inv.recreate', query: Q, cache_duration_seconds: 600 });
        const again = await run(s, 'inv.recreate');
        assert.equal(again.headers.get('x-cache'), 'MISS');
        assert.equal(result(again)[0]?.n, n1 + 1);
      });

      test('two endpoints with the same query have separate entries', async () => {
        const a = await newEndpoint(s, { name: 'key.a', query: Q, cache_duration_seconds: 600 });
        const b = await newEndpoint(s, { name: 'key.b', query: Q, cache_duration_seconds: 600 });
        assert.equal((await run(s, a.name)).headers.get('x-cache'), 'MISS');
        assert.equal((await run(s, b.name)).headers.get('x-cache'), 'MISS');
      });

      test('the key holds declared params, sql, lql and redaction; MISS / HIT and Age', async () => {
        const ep = await newEndpoint(s, {
          name: 'key.parts',
          query: `with pg as (select t.id, t.timestamp, t.event_message from \`postgres.logs\` as t where t.event_message = @m) select count(id) as n from pg`,
          cache_duration_seconds: 600,
          sandboxable: true,
        });
        const miss = await run(s, ep.name, { m: marker });
        assert.equal(miss.headers.get('x-cache'), 'MISS');
        assert.equal(miss.headers.get('age'), '0');
        const hit = await run(s, ep.name, { m: marker });
        assert.equal(hit.headers.get('x-cache'), 'HIT');
        assert.match(hit.headers.get('age') ?? '', /^\d+$/);
        assert.equal((await run(s, ep.name, { m: 'other' })).headers.get('x-cache'), 'MISS');
        assert.equal((await run(s, ep.name, { m: marker, sql: 'select n from (select count(id) as n from pg)' })).headers.get('x-cache'), 'MISS');
        assert.equal((await run(s, ep.name, { m: marker, lql: 'f:pg' })).headers.get('x-cache'), 'MISS');
        assert.equal((await run(s, ep.name, { m: marker, lql: 'f:pg' })).headers.get('x-cache'), 'HIT');
        assert.equal((await run(s, ep.name, { m: marker }, { headers: { 'LF-ENDPOINT-REDACT-PII': 'true' } })).headers.get('x-cache'), 'MISS');
        // POST with the same parameters in a body is the same entry.
        const post = await call(s, 'POST', `/api/endpoints/query/${ep.name}`, { body: { m: marker } });
        assert.equal(post.headers.get('x-cache'), 'HIT');
      });

      test('Age counts seconds since the result was computed', async () => {
        const ep = await newEndpoint(s, { name: 'key.age', query: Q, cache_duration_seconds: 600 });
        await run(s, ep.name);
        await sleep(1100);
        const hit = await run(s, ep.name);
        assert.equal(hit.headers.get('x-cache'), 'HIT');
        assert.ok(Number(hit.headers.get('age')) >= 1, `Age ${hit.headers.get('age')}`);
      });

      test('concurrent identical requests on a miss run the query once', async () => {
        // current_timestamp() differs between two runs of the query; one run → one value for all.
        const ep = await newEndpoint(s, {
          name: 'flight.once',
          query: `with pg as (select t.id from \`postgres.logs\` as t) select current_timestamp() as computed_at, count(id) as n from pg`,
          cache_duration_seconds: 600,
        });
        const uncached = await newEndpoint(s, { name: 'flight.control', query: ep.query as string, cache_duration_seconds: 0 });
        const c1 = result(await run(s, uncached.name))[0]?.computed_at;
        await sleep(5);
        const c2 = result(await run(s, uncached.name))[0]?.computed_at;
        assert.notEqual(c1, c2, 'control: two runs give two values');

        const answers = await Promise.all(Array.from({ length: 8 }, () => run(s, ep.name)));
        const values = new Set(answers.map((a) => result(a)[0]?.computed_at));
        assert.equal(values.size, 1, `one computation for all: ${[...values].join(', ')}`);
      });

      test('an error is never cached', async () => {
        const ep = await newEndpoint(s, { name: 'err.cache', query: Q, cache_duration_seconds: 600, sandboxable: true });
        for (let i = 0; i < 2; i++) {
          const a = await run(s, ep.name, { sql: 'select nope from pg' });
          assertError(a, 400, 'INVALID_QUERY');
          assert.notEqual(a.headers.get('x-cache'), 'HIT');
        }
      });

      test('cache_duration_seconds 0: every request computes', async () => {
        const ep = await newEndpoint(s, { name: 'nocache', query: Q });
        const n1 = result(await run(s, ep.name))[0]?.n as number;
        await add();
        const second = await run(s, ep.name);
        assert.notEqual(second.headers.get('x-cache'), 'HIT');
        assert.equal(result(second)[0]?.n, n1 + 1);
      });
    });
  });
}
