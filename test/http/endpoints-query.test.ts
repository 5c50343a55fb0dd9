import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type EndpointView, createEndpoint, createSource, createToken, ingest, manage, query, rows, sleep } from '../endpoints/http-support.ts';
import { PUBLIC_TOKEN, type TestServer, startTestServer } from '../support/server.ts';

const SOURCE = 'qtest.events';
const T0 = Date.UTC(2026, 10, 21, 10, 0, 0);

/** Items of one project, optionally of one kind; newest first. */
const ITEMS_SQL = `with items as (
  select t.id, t.timestamp, t.event_message, t.metadata from \`${SOURCE}\` as t
  where t.project = @project and (coalesce(@kind, '') = '' or t.kind = @kind)
)
select id, event_message from items order by timestamp desc`;

/** Echoes its parameters back, to observe binding. */
const ECHO_SQL = `with one as (select t.id from \`${SOURCE}\` as t limit 1)
select @a as a, @b as b from one`;

describe('running endpoints over HTTP', () => {
  let s: TestServer;
  let items: EndpointView;
  let echo: EndpointView;

  before(async () => {
    s = await startTestServer();
    await createSource(s, SOURCE);
    await ingest(s, SOURCE, [
      { id: 'e1', timestamp: new Date(T0 + 1000).toISOString(), project: 'p1', kind: 'a', event_message: 'one', metadata: { n: 1 } },
      { id: 'e2', timestamp: new Date(T0 + 2000).toISOString(), project: 'p1', kind: 'b', event_message: 'two', metadata: { n: 2 } },
      { id: 'e3', timestamp: new Date(T0 + 3000).toISOString(), project: 'p1', kind: 'a', event_message: 'three', metadata: { n: 3 } },
      { id: 'e4', timestamp: new Date(T0 + 4000).toISOString(), project: 'p2', kind: 'a', event_message: 'four', metadata: { n: 4 } },
      {
        id: 'e5',
        timestamp: new Date(T0 + 5000).toISOString(),
        project: 'pii',
        kind: 'a',
        event_message: 'client 10.1.2.3 via 2001:db8::1 and ::ffff:192.0.2.1, not 12192.168.1.11',
        metadata: { request: { headers: { x_real_ip: '172.16.0.9', host: 'db.internal' } }, ips: ['8.8.8.8', 'fe80::1'] },
      },
    ]);
    items = await createEndpoint(s, { name: 'qtest.items', query: ITEMS_SQL, sandboxable: true });
    echo = await createEndpoint(s, { name: 'qtest.echo', query: ECHO_SQL });
  });
  after(() => s.close());

  describe('addressing', () => {
    test('by name and by id reach the same endpoint, also on the legacy path and by POST', async () => {
      const expected = [
        { id: 'e3', event_message: 'three' },
        { id: 'e2', event_message: 'two' },
        { id: 'e1', event_message: 'one' },
      ];
      assert.deepEqual(await rows(s, 'qtest.items', { project: 'p1' }), expected);
      assert.deepEqual(await rows(s, items.id, { project: 'p1' }), expected);
      assert.deepEqual(await rows(s, items.id.toUpperCase(), { project: 'p1' }), expected);
      assert.deepEqual(await rows(s, items.id.replaceAll('-', ''), { project: 'p1' }), expected);
      assert.deepEqual(await rows(s, 'qtest.items', { project: 'p1' }, { prefix: '/endpoints/query' }), expected);
      assert.deepEqual(await rows(s, 'qtest.items', {}, { method: 'POST', body: { project: 'p1' } }), expected);
      assert.deepEqual(await rows(s, 'qtest.items', { project: 'p1' }, { method: 'POST' }), expected);
      const emptyJson = await s.fetch('/api/endpoints/query/qtest.items?project=p1', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '',
      });
      assert.equal(emptyJson.status, 200, 'an empty JSON body is no body');
      const badJson = await s.fetch('/api/endpoints/query/qtest.items?project=p1', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"project":',
      });
      assert.equal(badJson.status, 400);
      assert.equal(((await badJson.json()) as { error: { code: string } }).error.code, 'BAD_REQUEST');
    });

    test('unknown names and ids are 404 for a caller with a token, 401 without one', async () => {
      for (const idOrName of ['no.such.endpoint', '6f1c1d5e-0000-4000-8000-000000000000']) {
        const r = await query(s, idOrName);
        assert.equal(r.status, 404, idOrName);
        assert.deepEqual(Object.keys(r.error ?? {}).sort(), ['code', 'message', 'status']);
        assert.equal(r.error?.code, 'NOT_FOUND');
        assert.equal(r.error?.status, 404);
        const anonymous = await query(s, idOrName, {}, { token: null });
        assert.equal(anonymous.status, 401);
      }
    });
  });

  describe('parameters', () => {
    test('every declared parameter is bound as a string; absent ones are NULL; undeclared ones are ignored', async () => {
      assert.deepEqual(await rows(s, 'qtest.echo', { a: '5', c: 'ignored' }), [{ a: '5', b: null }]);
      assert.deepEqual(await rows(s, 'qtest.echo', { a: '', b: 'x y' }), [{ a: '', b: 'x y' }]);
      assert.deepEqual(await rows(s, 'qtest.echo', { a: "1' or '1'='1" }), [{ a: "1' or '1'='1", b: null }]);
    });

    test('a JSON body wins over the query string and its values bind as strings', async () => {
      assert.deepEqual(await rows(s, 'qtest.echo', { a: 'query', b: 'query' }, { method: 'POST', body: { a: 7 } }), [{ a: '7', b: 'query' }]);
      assert.deepEqual(await rows(s, 'qtest.echo', {}, { method: 'POST', body: { a: true, b: null } }), [{ a: 'true', b: null }]);
    });

    test('a parameter filters as the saved query says; an empty value is treated as absent by the query', async () => {
      assert.deepEqual(
        (await rows(s, 'qtest.items', { project: 'p1', kind: 'a' })).map((r) => r.id),
        ['e3', 'e1'],
      );
      assert.deepEqual(
        (await rows(s, 'qtest.items', { project: 'p1', kind: '' })).map((r) => r.id),
        ['e3', 'e2', 'e1'],
      );
      assert.deepEqual(await rows(s, 'qtest.items', {}), [], 'project absent → NULL → matches nothing');
    });

    test('sql replaces the final SELECT on a sandboxable endpoint and wins over lql', async () => {
      const sql = 'select id from items where event_message = @kind';
      const viaSql = await rows(s, 'qtest.items', { project: 'p1', sql: 'select count(id) as c from items', lql: 'two' });
      assert.deepEqual(viaSql, [{ c: 3 }]);
      const r = await query(s, 'qtest.items', { project: 'p1', sql });
      assert.equal(r.status, 200);
      assert.deepEqual(r.rows, []);
      const body = await rows(s, 'qtest.items', { project: 'q' }, { method: 'POST', body: { project: 'p1', sql: "select id from items where id = 'e2'" } });
      assert.deepEqual(body, [{ id: 'e2' }]);
    });

    test('sql and lql are refused on an endpoint that is not sandboxable', async () => {
      for (const params of [{ sql: 'select id from one' }, { lql: 'error' }] as Record<string, string>[]) {
        const r = await query(s, 'qtest.echo', params);
        assert.equal(r.status, 400, JSON.stringify(params));
        assert.equal(r.error?.code, 'QUERY_NOT_ALLOWED');
        assert.match(r.error?.message ?? '', /sandbox/);
      }
      assert.equal((await query(s, 'qtest.echo', { sql: '' })).status, 200, 'a blank sql is no sql');
    });
  });

  describe('limits', () => {
    test('never more than max_limit rows, with or without a LIMIT in the query', async () => {
      const small = await createEndpoint(s, { name: 'qtest.small', query: ITEMS_SQL, sandboxable: true, max_limit: 2 });
      assert.equal((await rows(s, small.name, { project: 'p1' })).length, 2);
      assert.equal((await rows(s, small.name, { project: 'p1', sql: 'select id from items limit 100' })).length, 2);
      assert.equal((await rows(s, small.name, { project: 'p1', sql: 'select id from items limit 1' })).length, 1);
    });
  });

  describe('errors', () => {
    const cases: [string, Record<string, string>, number, string, RegExp][] = [
      ['parse error', { sql: 'select id fro items' }, 400, 'PARSE_ERROR', /line|column/i],
      ['wildcard', { sql: 'select * from items' }, 400, 'QUERY_NOT_ALLOWED', /\*|wildcard/i],
      ['a source instead of a CTE', { sql: `select id from \`${SOURCE}\`` }, 400, 'QUERY_NOT_ALLOWED', /qtest\.events/],
      ['an unknown table', { sql: 'select id from nope' }, 400, 'QUERY_NOT_ALLOWED', /nope/],
      ['DML', { sql: 'delete from items where true' }, 400, 'QUERY_NOT_ALLOWED', /./],
      ['two statements', { sql: 'select id from items; select id from items' }, 400, 'QUERY_NOT_ALLOWED', /./],
      ['restricted function', { sql: 'select session_user() as u from items' }, 400, 'QUERY_NOT_ALLOWED', /session_user/i],
      ['unknown column', { sql: 'select no_such_column from items' }, 400, 'INVALID_QUERY', /no_such_column/],
      ['LQL that does not parse', { lql: 'm.n:>>>' }, 400, 'PARSE_ERROR', /./],
    ];
    for (const [what, params, status, code, message] of cases) {
      test(`${what} → ${status} ${code}`, async () => {
        const r = await query(s, 'qtest.items', { project: 'p1', ...params });
        assert.equal(r.status, status, JSON.stringify(r.error));
        assert.equal(r.error?.code, code);
        assert.equal(r.error?.status, status);
        assert.match(r.error?.message ?? '', message);
        assert.doesNotMatch(r.error?.message ?? '', /at .*\.ts:\d+/, 'no stack trace');
      });
    }

    test('tokens: none, unknown or revoked → 401; no query scope → 403; a token for another endpoint → 404; query scopes pass', async () => {
      const params = { project: 'p1' };
      assert.equal((await query(s, 'qtest.items', params, { token: null })).error?.code, 'UNAUTHORIZED');
      assert.equal((await query(s, 'qtest.items', params, { token: 'nope' })).status, 401);

      const revoked = await createToken(s, ['query']);
      assert.equal((await query(s, 'qtest.items', params, { token: revoked })).status, 200);
      const list = (await manage(s, 'GET', '/api/access-tokens')).body as { id: string; scopes: string[] }[];
      for (const t of list.filter((x) => x.scopes.length === 1 && x.scopes[0] === 'query')) {
        await manage(s, 'DELETE', `/api/access-tokens/${t.id}`);
      }
      assert.equal((await query(s, 'qtest.items', params, { token: revoked })).status, 401);

      const ingestOnly = await query(s, 'qtest.items', params, { token: PUBLIC_TOKEN });
      assert.equal(ingestOnly.status, 403);
      assert.equal(ingestOnly.error?.code, 'FORBIDDEN');
      const other = await createToken(s, [`query:endpoint:${echo.id}`]);
      // Not among the endpoints it may run: the same 404 as an unknown name.
      assert.equal((await query(s, 'qtest.items', params, { token: other })).status, 404);
      assert.equal((await query(s, 'qtest.echo', {}, { token: other })).status, 200);

      const any = await createToken(s, ['query']);
      assert.equal((await query(s, 'qtest.items', params, { token: any })).status, 200);
      const viaBearer = await query(s, 'qtest.items', params, { token: null, headers: { authorization: `Bearer ${any}` } });
      assert.equal(viaBearer.status, 200);
      const viaQuery = await query(s, 'qtest.items', { ...params, api_key: any }, { token: null });
      assert.equal(viaQuery.status, 200);
    });

    test('an endpoint with enable_auth false runs without a token, and with a wrong one', async () => {
      const open = await createEndpoint(s, { name: 'qtest.open', query: ITEMS_SQL, enable_auth: false });
      assert.equal((await rows(s, open.name, { project: 'p2' }, { token: null })).length, 1);
      assert.equal((await rows(s, open.id, { project: 'p2' }, { token: 'garbage' })).length, 1);
    });

    test('a query running past the time limit → 504 QUERY_TIMEOUT', async () => {
      const slow = await startTestServer({ QUERY_TIMEOUT_MS: '300' });
      try {
        await createSource(slow, 'slow.events');
        const many = Array.from({ length: 400 }, (_, i) => ({ event_message: `m${i}`, project: 'x' }));
        await ingest(slow, 'slow.events', many);
        const ep = await createEndpoint(slow, {
          name: 'slow.cross',
          query:
            // 64 million string concatenations: no optimiser shortcut, far longer than the limit.
            "with e as (select t.id, t.event_message from `slow.events` as t) select count(a.id) as c from e as a cross join e as b cross join e as c where a.event_message || b.event_message || c.event_message = 'never'",
        });
        const r = await query(slow, ep.name);
        assert.equal(r.status, 504, JSON.stringify(r.error ?? r.rows));
        assert.equal(r.error?.code, 'QUERY_TIMEOUT');
      } finally {
        await slow.close();
      }
    });
  });

  describe('PII redaction', () => {
    const expectedRedacted = {
      id: 'e5',
      event_message: 'client REDACTED via REDACTED and REDACTED, not 12192.168.1.11',
    };
    const raw = {
      id: 'e5',
      event_message: 'client 10.1.2.3 via 2001:db8::1 and ::ffff:192.0.2.1, not 12192.168.1.11',
    };

    test('off by default, on with the header, and never shared through the cache', async () => {
      const cached = await createEndpoint(s, {
        name: 'qtest.pii',
        query: ITEMS_SQL,
        sandboxable: true,
        cache_duration_seconds: 600,
      });
      assert.deepEqual(await rows(s, cached.name, { project: 'pii' }), [raw]);
      const on = await query(s, cached.name, { project: 'pii' }, { headers: { 'LF-ENDPOINT-REDACT-PII': 'true' } });
      assert.equal(on.headers.get('x-cache'), 'MISS', 'a redacted result has its own cache entry');
      assert.deepEqual(on.rows, [expectedRedacted]);
      const offAgain = await query(s, cached.name, { project: 'pii' });
      assert.equal(offAgain.headers.get('x-cache'), 'HIT');
      assert.deepEqual(offAgain.rows, [raw]);
    });

    test('the endpoint setting is the default and the header overrides it both ways; nested values too', async () => {
      const sql = `with items as (select t.id, t.event_message, t.metadata from \`${SOURCE}\` as t where t.project = @project)
select id, metadata from items`;
      const ep = await createEndpoint(s, { name: 'qtest.pii.default', query: sql, redact_pii: true });
      const redacted = await rows(s, ep.name, { project: 'pii' });
      assert.deepEqual(redacted, [
        {
          id: 'e5',
          // Fields other events of the source carry read as null (the schema is per source).
          metadata: [{ request: [{ headers: [{ x_real_ip: 'REDACTED', host: 'db.internal' }] }], ips: ['REDACTED', 'REDACTED'] }],
        },
      ]);
      const plain = await rows(s, ep.name, { project: 'pii' }, { headers: { 'LF-ENDPOINT-REDACT-PII': 'false' } });
      assert.deepEqual(plain[0]?.metadata, [{ request: [{ headers: [{ x_real_ip: '172.16.0.9', host: 'db.internal' }] }], ips: ['8.8.8.8', 'fe80::1'] }]);
    });
  });

  describe('caching', () => {
    test('MISS then HIT with Age; the entry expires cache_duration_seconds after computation', async () => {
      const ep = await createEndpoint(s, {
        name: 'qtest.cache.ttl',
        query: ITEMS_SQL,
        sandboxable: true,
        cache_duration_seconds: 2,
        proactive_requerying_seconds: 0,
      });
      const first = await query(s, ep.name, { project: 'p2' });
      assert.equal(first.headers.get('x-cache'), 'MISS');
      assert.equal(first.headers.get('age'), '0');
      const hit = await query(s, ep.name, { project: 'p2' });
      assert.equal(hit.headers.get('x-cache'), 'HIT');
      assert.deepEqual(hit.rows, first.rows);
      const otherParams = await query(s, ep.name, { project: 'p1' });
      assert.equal(otherParams.headers.get('x-cache'), 'MISS', 'other parameters, other entry');
      const otherSql = await query(s, ep.name, { project: 'p2', sql: 'select id from items' });
      assert.equal(otherSql.headers.get('x-cache'), 'MISS', 'other sql, other entry');
      const undeclared = await query(s, ep.name, { project: 'p2', unused: 'x' });
      assert.equal(undeclared.headers.get('x-cache'), 'HIT', 'undeclared parameters do not split the cache');
      await sleep(1100);
      const older = await query(s, ep.name, { project: 'p2' });
      assert.equal(older.headers.get('x-cache'), 'HIT');
      assert.equal(older.headers.get('age'), '1');
      await sleep(1000);
      assert.equal((await query(s, ep.name, { project: 'p2' })).headers.get('x-cache'), 'MISS');
    });

    test('a live entry is recomputed in the background every proactive_requerying_seconds', async () => {
      await createSource(s, 'qtest.warm');
      const sql = 'with w as (select t.id from `qtest.warm` as t) select count(id) as c from w';
      const ep = await createEndpoint(s, {
        name: 'qtest.cache.warm',
        query: sql,
        cache_duration_seconds: 30,
        proactive_requerying_seconds: 1,
      });
      await ingest(s, 'qtest.warm', [{ event_message: 'a' }]);
      assert.deepEqual(await rows(s, ep.name), [{ c: 1 }]);
      await ingest(s, 'qtest.warm', [{ event_message: 'b' }]);
      const stale = await query(s, ep.name);
      assert.equal(stale.headers.get('x-cache'), 'HIT');
      assert.deepEqual(stale.rows, [{ c: 1 }]);
      await sleep(1300);
      const warmed = await query(s, ep.name);
      assert.equal(warmed.headers.get('x-cache'), 'HIT', 'the reader did not wait for a computation');
      assert.deepEqual(warmed.rows, [{ c: 2 }]);
      assert.equal(warmed.headers.get('age'), '0');
    });

    test('concurrent identical requests on a miss all get the same answer', async () => {
      const ep = await createEndpoint(s, { name: 'qtest.cache.flight', query: ITEMS_SQL, cache_duration_seconds: 60 });
      const answers = await Promise.all(Array.from({ length: 8 }, () => query(s, ep.name, { project: 'p1' })));
      assert.ok(answers.every((a) => a.status === 200));
      assert.ok(answers.every((a) => JSON.stringify(a.rows) === JSON.stringify(answers[0]?.rows)));
      assert.equal((await query(s, ep.name, { project: 'p1' })).headers.get('x-cache'), 'HIT');
    });

    test('errors are never cached', async () => {
      const ep = await createEndpoint(s, { name: 'qtest.cache.err', query: ITEMS_SQL, sandboxable: true, cache_duration_seconds: 60 });
      for (let i = 0; i < 2; i += 1) {
        const r = await query(s, ep.name, { project: 'p1', sql: 'select nope from items' });
        assert.equal(r.status, 400);
        assert.equal(r.headers.get('x-cache'), null);
      }
    });
  });

  test('a nested field no event ever carried reads as NULL and is named in X-Query-Warnings', async () => {
    const r = await query(s, 'qtest.items', {
      project: 'p1',
      sql: "select id, m.never_sent as x from items cross join unnest(metadata) as m where id = 'e1'",
    });
    assert.equal(r.status, 200, JSON.stringify(r.error));
    assert.deepEqual(r.rows, [{ id: 'e1', x: null }]);
    assert.match(r.headers.get('x-query-warnings') ?? '', /never_sent/);
  });
});
