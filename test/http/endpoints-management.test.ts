import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type EndpointView, createEndpoint, createToken, ingest, manage, query, rows } from '../endpoints/http-support.ts';
import { PUBLIC_TOKEN, type TestServer, startTestServer } from '../support/server.ts';

type ErrorBody = { error: { code: string; status: number; message: string; fields?: Record<string, string[]> } };

const SIMPLE = 'with pg as (select t.id, t.event_message, t.timestamp from `postgres.logs` as t) select id from pg';

describe('endpoint management API', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.close());

  test('first start seeds logs.all and usage.api-counts with the seed configuration', async () => {
    const list = (await manage(s, 'GET', '/api/endpoints')).body as EndpointView[];
    const logs = list.find((e) => e.name === 'logs.all');
    const usage = list.find((e) => e.name === 'usage.api-counts');
    assert.ok(logs && usage);
    assert.deepEqual(
      [logs.sandboxable, logs.max_limit, logs.cache_duration_seconds, logs.redact_pii, logs.enable_auth, logs.language],
      [true, 1000, 0, false, true, 'bq_sql'],
    );
    assert.deepEqual(
      [usage.sandboxable, usage.max_limit, usage.cache_duration_seconds, usage.proactive_requerying_seconds, usage.redact_pii],
      [true, 1000, 900, 300, false],
    );
    assert.match(logs.query, /edge_logs/);
    assert.match(usage.query, /chart_counts/);
  });

  test('restarting on the same data keeps the seeded endpoints and their edits, without duplicates', async () => {
    const own = await startTestServer();
    try {
      const before = (await manage(own, 'GET', '/api/endpoints')).body as EndpointView[];
      const logs = before.find((e) => e.name === 'logs.all')!;
      const patched = await manage(own, 'PATCH', `/api/endpoints/${logs.id}`, { max_limit: 500 });
      assert.equal(patched.status, 200);
      await own.stop();
      const again = await startTestServer(own.env, own.dataDir);
      try {
        const after = (await manage(again, 'GET', '/api/endpoints')).body as EndpointView[];
        assert.equal(after.length, before.length);
        const logsAfter = after.find((e) => e.name === 'logs.all')!;
        assert.equal(logsAfter.id, logs.id);
        assert.equal(logsAfter.max_limit, 500);
      } finally {
        await again.close();
      }
    } finally {
      await own.close();
    }
  });

  test('create, get, list, put, patch, delete', async () => {
    const created = await createEndpoint(s, { name: 'my.errors', query: SIMPLE, description: 'errors' });
    assert.match(created.id, /^[0-9a-f-]{36}$/);
    assert.deepEqual(
      {
        language: created.language,
        sandboxable: created.sandboxable,
        max_limit: created.max_limit,
        cache_duration_seconds: created.cache_duration_seconds,
        enable_auth: created.enable_auth,
        redact_pii: created.redact_pii,
      },
      { language: 'bq_sql', sandboxable: false, max_limit: 1000, cache_duration_seconds: 0, enable_auth: true, redact_pii: false },
    );
    assert.ok(!Number.isNaN(Date.parse(created.created_at)));

    const got = await manage(s, 'GET', `/api/endpoints/${created.id}`);
    assert.deepEqual(got, { status: 200, body: created });
    const list = (await manage(s, 'GET', '/api/endpoints')).body as EndpointView[];
    assert.ok(list.some((e) => e.id === created.id));

    const patched = await manage(s, 'PATCH', `/api/endpoints/${created.id}`, { max_limit: 5, sandboxable: true });
    assert.equal(patched.status, 200);
    const p = patched.body as EndpointView;
    assert.deepEqual([p.max_limit, p.sandboxable, p.description, p.name], [5, true, 'errors', 'my.errors']);
    assert.equal(p.created_at, created.created_at);

    const put = await manage(s, 'PUT', `/api/endpoints/${created.id}`, { name: 'my.errors.v2', query: SIMPLE });
    assert.equal(put.status, 200);
    const r = put.body as EndpointView;
    assert.deepEqual(
      [r.name, r.max_limit, r.sandboxable, r.description],
      ['my.errors.v2', 1000, false, null],
      'PUT replaces: settings left out return to their defaults',
    );

    assert.equal((await manage(s, 'DELETE', `/api/endpoints/${created.id}`)).status, 204);
    assert.equal((await manage(s, 'GET', `/api/endpoints/${created.id}`)).status, 404);
    assert.equal((await manage(s, 'DELETE', `/api/endpoints/${created.id}`)).status, 404);
    assert.equal((await manage(s, 'PATCH', `/api/endpoints/${created.id}`, { max_limit: 3 })).status, 404);
    assert.equal((await query(s, 'my.errors.v2')).status, 404);
  });

  test('invalid fields are refused with 422 and a message per field', async () => {
    const r = await manage(s, 'POST', '/api/endpoints', {
      name: 'bad one',
      query: SIMPLE,
      max_limit: 10_001,
      cache_duration_seconds: -5,
    });
    assert.equal(r.status, 422);
    const e = (r.body as ErrorBody).error;
    assert.equal(e.code, 'VALIDATION_FAILED');
    assert.equal(e.status, 422);
    assert.ok(e.fields?.max_limit, JSON.stringify(e));
    assert.ok(e.fields?.name, JSON.stringify(e));
    assert.ok(e.fields?.cache_duration_seconds, JSON.stringify(e));

    const missing = await manage(s, 'POST', '/api/endpoints', { query: SIMPLE });
    assert.equal(missing.status, 422);
    assert.deepEqual((missing.body as ErrorBody).error.fields?.name, ['is required']);

    const wrongType = await manage(s, 'POST', '/api/endpoints', { name: 'typed', query: SIMPLE, sandboxable: 'maybe' });
    assert.equal(wrongType.status, 422);
    assert.ok((wrongType.body as ErrorBody).error.fields?.sandboxable);

    for (const limit of [0, 1.5]) {
      const bad = await manage(s, 'POST', '/api/endpoints', { name: 'limits', query: SIMPLE, max_limit: limit });
      assert.equal(bad.status, 422, `max_limit ${limit}`);
      assert.ok((bad.body as ErrorBody).error.fields?.max_limit);
    }
    const edge = await createEndpoint(s, { name: 'limits', query: SIMPLE, max_limit: 10_000 });
    assert.equal(edge.max_limit, 10_000);
  });

  test('one 422 lists every wrong field: settings, the query and typed parameters, in their own words', async () => {
    const r = await manage(s, 'POST', '/api/endpoints', {
      name: 'one.pass',
      query: 'select * from `postgres.logs`',
      description: 5,
      sandboxable: 'maybe',
      language: 'sql',
      proactive_requerying_seconds: -1,
      params: [{ name: 'p', type: 'integer' }],
      id: 'ignored',
    });
    assert.equal(r.status, 422);
    const e = (r.body as ErrorBody).error;
    assert.deepEqual(e.fields?.description, ['must be text or null']);
    assert.deepEqual(e.fields?.sandboxable, ['must be true or false']);
    assert.deepEqual(e.fields?.language, ['must be bq_sql']);
    assert.deepEqual(e.fields?.proactive_requerying_seconds, ['must be a whole number of seconds from 0 (no refresh) to 604800']);
    assert.match(e.fields?.query?.[0] ?? '', /\*/);
    assert.match(e.fields?.['params[0].type']?.[0] ?? '', /^unknown type "integer": use one of string, int/);
    assert.deepEqual(Object.keys(e.fields ?? {}).sort(), ['description', 'language', 'params[0].type', 'proactive_requerying_seconds', 'query', 'sandboxable']);
    assert.match(e.message, /^The endpoint is not valid: /);

    const uuid = await manage(s, 'POST', '/api/endpoints', { name: '0b6b7c2e1f3a4e5b9c8d7a6f5e4d3c2b', query: SIMPLE });
    assert.deepEqual((uuid.body as ErrorBody).error.fields, { name: ['must not look like a UUID (it would be read as an id)'] });

    for (const body of [[{ name: 'x', query: SIMPLE }], 'text', null]) {
      const notObject = await manage(s, 'POST', '/api/endpoints', body);
      assert.equal(notObject.status, 422, JSON.stringify(body));
      assert.deepEqual((notObject.body as ErrorBody).error.fields, { body: ['must be a JSON object of endpoint settings'] });
    }
    // An unknown id is a 404 before the body is looked at.
    const unknown = '00000000-0000-4000-8000-000000000000';
    assert.equal((await manage(s, 'PUT', `/api/endpoints/${unknown}`, [])).status, 404);
    assert.equal((await manage(s, 'PATCH', `/api/endpoints/${unknown}`, { max_limit: 0 })).status, 404);
    const e2 = await createEndpoint(s, { name: 'one.pass.patch', query: SIMPLE });
    const patch = await manage(s, 'PATCH', `/api/endpoints/${e2.id}`, []);
    assert.equal(patch.status, 422);
  });

  test('the query is parsed and validated at save time', async () => {
    const cases: [string, RegExp][] = [
      ['selec id from x', /line|column|expected/i],
      ['select * from `postgres.logs`', /wildcard|\*/i],
      ['select id from `no.such.source`', /no.such.source/],
      ['delete from `postgres.logs` where true', /select/i],
      ['select id from `postgres.logs`; select id from `postgres.logs`', /./],
      ['select id from `postgres.logs` where id = @__lql_0', /__lql_/],
      // Caught by the engine's check at save time, not at the first run.
      ['with a as (select id from `postgres.logs`) select idd from a', /idd/],
      ["select id from `postgres.logs` where timestamp > 'not a time' + 1", /./],
    ];
    for (const [sql, message] of cases) {
      const r = await manage(s, 'POST', '/api/endpoints', { name: 'invalid.query', query: sql });
      assert.equal(r.status, 422, sql);
      const e = (r.body as ErrorBody).error;
      assert.equal(e.code, 'VALIDATION_FAILED');
      assert.ok(e.fields?.query?.[0], sql);
      assert.match(e.fields.query[0], message, sql);
    }
    const created = await createEndpoint(s, { name: 'valid.query', query: SIMPLE });
    const r = await manage(s, 'PATCH', `/api/endpoints/${created.id}`, { query: 'select * from `postgres.logs`' });
    assert.equal(r.status, 422);
    assert.equal(((await manage(s, 'GET', `/api/endpoints/${created.id}`)).body as EndpointView).query, SIMPLE);
  });

  test('names are unique', async () => {
    const a = await createEndpoint(s, { name: 'unique.a', query: SIMPLE });
    const dup = await manage(s, 'POST', '/api/endpoints', { name: 'unique.a', query: SIMPLE });
    assert.equal(dup.status, 422);
    assert.deepEqual((dup.body as ErrorBody).error.fields?.name, ['is already taken']);
    const b = await createEndpoint(s, { name: 'unique.b', query: SIMPLE });
    const rename = await manage(s, 'PATCH', `/api/endpoints/${b.id}`, { name: 'unique.a' });
    assert.equal(rename.status, 422);
    const same = await manage(s, 'PATCH', `/api/endpoints/${a.id}`, { name: 'unique.a', max_limit: 2 });
    assert.equal(same.status, 200, 'keeping its own name is fine');
  });

  test('the OpenAPI document describes the endpoint routes from their schemas', async () => {
    const doc = (await (await s.fetch('/api/openapi.json')).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    const run = doc.paths['/api/endpoints/query/{idOrName}'];
    assert.ok(run?.get && run.post, 'query routes');
    assert.deepEqual(Object.keys(run.get.responses).sort(), ['200', '400', '401', '403', '404', '500', '503', '504']);
    const one = doc.paths['/api/endpoints/{id}'];
    assert.ok(one?.get && one.put && one.patch && one.delete, 'management routes');
    assert.ok(doc.paths['/api/endpoints']?.post?.responses['422']);
    // The request body is the endpoint vocabulary: typed parameters included, with their rules.
    interface Schema {
      properties: Record<string, Schema>;
      required?: string[];
      anyOf?: Schema[];
      items?: Schema;
      default?: unknown;
      enum?: string[];
    }
    const post = doc.paths['/api/endpoints']?.post as unknown as { requestBody: { content: Record<string, { schema: Schema }> } };
    const body = post.requestBody.content['application/json']?.schema as Schema;
    assert.deepEqual(body.required, ['name', 'query']);
    assert.equal(body.properties.max_limit?.default, 1000);
    const list = body.properties.params?.anyOf?.[0];
    assert.deepEqual(list?.items?.properties.type?.enum, ['string', 'int', 'float', 'bool', 'timestamp', 'date', 'enum']);
  });

  test('needs the private scope', async () => {
    const queryToken = await createToken(s, ['query']);
    assert.equal((await manage(s, 'GET', '/api/endpoints', undefined, null)).status, 401);
    assert.equal((await manage(s, 'GET', '/api/endpoints', undefined, 'not-a-token')).status, 401);
    const forbidden = await manage(s, 'GET', '/api/endpoints', undefined, queryToken);
    assert.equal(forbidden.status, 403);
    assert.equal((forbidden.body as ErrorBody).error.code, 'FORBIDDEN');
    assert.equal((await manage(s, 'POST', '/api/endpoints', { name: 'x', query: SIMPLE }, PUBLIC_TOKEN)).status, 403);
  });

  test('any change invalidates the cached results of that endpoint at once', async () => {
    const marker = `cache-marker-${Date.now()}`;
    const sql = `with pg as (select t.id, t.event_message from \`postgres.logs\` as t where t.event_message = '${marker}') select id from pg`;
    const cached = await createEndpoint(s, { name: 'cached.one', query: sql, cache_duration_seconds: 600 });
    await ingest(s, 'postgres.logs', [{ event_message: marker, project: 'cache' }]);
    const first = await query(s, 'cached.one');
    assert.equal(first.headers.get('x-cache'), 'MISS');
    assert.equal(first.rows.length, 1);
    await ingest(s, 'postgres.logs', [{ event_message: marker, project: 'cache' }]);
    const second = await query(s, 'cached.one');
    assert.equal(second.headers.get('x-cache'), 'HIT');
    assert.equal(second.rows.length, 1, 'still the cached result');

    const patched = await manage(s, 'PATCH', `/api/endpoints/${cached.id}`, { description: 'only the description' });
    assert.equal(patched.status, 200);
    const third = await query(s, 'cached.one');
    assert.equal(third.headers.get('x-cache'), 'MISS');
    assert.equal(third.rows.length, 2);
    assert.equal((await rows(s, 'cached.one')).length, 2);
  });
});
