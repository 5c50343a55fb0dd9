import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type EndpointView, createEndpoint, createSource, ingest, manage, query, rows } from '../endpoints/http-support.ts';
import { engineEnv, engines } from '../support/engines.ts';
import { PUBLIC_TOKEN, type TestServer, startTestServer } from '../support/server.ts';

const SOURCE = 'typed.events';
const T0 = Date.UTC(2026, 10, 21, 10, 0, 0);

/** Echoes every typed value back, and counts rows the typed filters keep. */
const ECHO = `with t as (select n, score, ok, kind, timestamp from \`${SOURCE}\`)
select @min + 1 as next, @ratio * 2 as doubled, @flag as flag, @since as since, @day as day, @kind as kind, @note as note,
  (select count(*) from t where t.n > @min and t.score >= @ratio and t.ok = @flag and t.timestamp >= @since
     and date(t.timestamp) >= @day and t.kind = @kind) as matching
from (select 1)`;

const SPECS = [
  { name: 'min', type: 'int', default: 5, description: 'Smallest n, exclusive' },
  { name: 'ratio', type: 'float', default: 0.5 },
  { name: 'flag', type: 'bool', default: true },
  { name: 'since', type: 'timestamp', required: true },
  { name: 'day', type: 'date', default: '2026-11-21' },
  { name: 'kind', type: 'enum', values: ['a', 'b'], default: 'a' },
];

for (const engine of engines) {
  describe(engine, () => {
    describe('typed endpoint parameters', () => {
      let s: TestServer;
      let echo: EndpointView;

      before(async () => {
        s = await startTestServer(engineEnv(engine));
        await createSource(s, SOURCE);
        await ingest(s, SOURCE, [
          { timestamp: new Date(T0).toISOString(), n: 2, score: 0.25, ok: true, kind: 'a' },
          { timestamp: new Date(T0 + 1000).toISOString(), n: 10, score: 1.5, ok: true, kind: 'a' },
          { timestamp: new Date(T0 + 2000).toISOString(), n: 100, score: 3, ok: true, kind: 'a' },
          { timestamp: new Date(T0 + 3000).toISOString(), n: 100, score: 3, ok: false, kind: 'b' },
        ]);
        echo = await createEndpoint(s, { name: 'typed.echo', query: ECHO, params: SPECS });
      });
      after(() => s.close());

      test('values bind with their types: arithmetic, comparisons, results as numbers, booleans, dates', async () => {
        const [r] = await rows(s, 'typed.echo', {
          min: '9',
          ratio: '1.5',
          flag: 'true',
          since: '2026-11-21T10:00:01Z',
          day: '2026-11-21',
          kind: 'a',
          note: '007',
        });
        assert.deepEqual(r, {
          next: 10,
          doubled: 3,
          flag: true,
          since: (T0 + 1000) * 1000,
          day: '2026-11-21',
          kind: 'a',
          note: '007',
          matching: 2,
        });
        // `9` and `10` compare as numbers, not text: n > 9 keeps 10 and 100.
        const [numeric] = await rows(s, 'typed.echo', { min: '9', ratio: '0', since: '2026-11-21T10:00:00Z' });
        assert.equal(numeric!.matching, 2);
        // An offset is honoured; fractions of a second keep microseconds.
        const [offset] = await rows(s, 'typed.echo', { since: '2026-11-21T11:00:01.5+01:00' });
        assert.equal(offset!.since, (T0 + 1500) * 1000);
      });

      test('absent parameters take their defaults; an undescribed one binds as a string or NULL', async () => {
        const [r] = await rows(s, 'typed.echo', { since: '2026-11-21T10:00:00Z' });
        assert.deepEqual(r, { next: 6, doubled: 1, flag: true, since: T0 * 1000, day: '2026-11-21', kind: 'a', note: null, matching: 2 });
      });

      test('a JSON body may send numbers and booleans; a repeated query parameter binds its last value', async () => {
        const [r] = await rows(
          s,
          'typed.echo',
          {},
          {
            method: 'POST',
            body: { min: 99, ratio: 2, flag: false, since: '2026-11-21T10:00:00Z', kind: 'b', note: 12 },
          },
        );
        assert.deepEqual([r!.next, r!.doubled, r!.flag, r!.kind, r!.note, r!.matching], [100, 4, false, 'b', '12', 1]);
        const qs = await s.fetch('/api/endpoints/query/typed.echo?since=2026-11-21T10:00:00Z&min=1&min=41');
        assert.equal(((await qs.json()) as { result: { next: number }[] }).result[0]!.next, 42);
      });

      test('a value that does not fit is a 400 naming the parameter and the type; a missing required one too', async () => {
        const cases: [Record<string, string>, RegExp][] = [
          [{ min: 'abc' }, /"min" must be int.*"abc"/],
          [{ min: '1.5' }, /"min" must be int/],
          [{ min: '9223372036854775808' }, /"min" must be int/],
          [{ ratio: 'NaN' }, /"ratio" must be float/],
          [{ ratio: '1e999' }, /"ratio" must be float/],
          [{ flag: 'yes' }, /"flag" must be bool/],
          [{ since: 'yesterday' }, /"since" must be timestamp/],
          [{ since: '2026-11-21T25:00:00Z' }, /"since" must be timestamp/],
          [{ day: '2026-02-30' }, /"day" must be date/],
          [{ day: '21/11/2026' }, /"day" must be date/],
          [{ kind: 'c' }, /"kind" must be enum \(one of "a", "b"\)/],
        ];
        for (const [params, message] of cases) {
          const r = await query(s, 'typed.echo', { since: '2026-11-21T10:00:00Z', ...params });
          assert.equal(r.status, 400, JSON.stringify(params));
          assert.equal(r.error?.code, 'BAD_REQUEST');
          assert.match(r.error!.message, message);
        }
        const missing = await query(s, 'typed.echo', {});
        assert.equal(missing.status, 400);
        assert.match(missing.error!.message, /"since" is required \(timestamp\)/);
        const body = await query(s, 'typed.echo', {}, { method: 'POST', body: { since: '2026-11-21T10:00:00Z', min: { x: 1 } } });
        assert.equal(body.status, 400);
        assert.match(body.error!.message, /"min" must be int/);
      });

      test('saving checks the list: 422 with a message per field', async () => {
        const q = `select count(*) as n from \`${SOURCE}\` where n > @min and kind = @kind`;
        const bad = await manage(s, 'POST', '/api/endpoints', {
          name: 'typed.bad',
          query: q,
          params: [
            { name: 'min', type: 'integer' },
            { name: 'kind', type: 'enum' },
            { name: 'unused', type: 'int' },
            { name: 'min', type: 'int' },
            { name: 'sql', type: 'string' },
            { type: 'int' },
            { name: 'x', type: 'int', default: 'ten', values: ['a'] },
            { name: 'y', type: 'date', default: '2026-13-01', required: true, colour: 'red' },
            'kind',
          ],
        });
        assert.equal(bad.status, 422, JSON.stringify(bad.body));
        const fields = (bad.body as { error: { code: string; fields: Record<string, string[]> } }).error.fields;
        assert.match(fields['params[0].type']![0]!, /unknown type "integer": use one of string, int, float, bool, timestamp, date, enum/);
        assert.match(fields['params[1].values']![0]!, /an enum needs a non-empty list/);
        assert.match(fields['params[2].name']![0]!, /the query does not use @unused \(it uses @min, @kind\)/);
        assert.match(fields['params[3].name']![0]!, /"min" is described twice/);
        assert.match(fields['params[4].name']![0]!, /"sql" is reserved/);
        assert.match(fields['params[5].name']![0]!, /must be a parameter name/);
        assert.match(fields['params[6].values']![0]!, /only an enum lists values/);
        assert.match(fields['params[7].default']!.join(' '), /a required parameter takes no default/);
        assert.match(fields['params[7].default']!.join(' '), /"2026-13-01" does not fit date/);
        assert.match(fields['params[7].colour']![0]!, /is not a parameter setting/);
        assert.match(fields['params[8]']![0]!, /must be an object/);
        assert.ok(fields['params[6].name'], 'x is not used by the query either');

        const notList = await manage(s, 'POST', '/api/endpoints', { name: 'typed.bad', query: q, params: { min: 'int' } });
        assert.equal(notList.status, 422);
        assert.ok((notList.body as { error: { fields: Record<string, string[]> } }).error.fields.params);

        const badDefault = await manage(s, 'POST', '/api/endpoints', {
          name: 'typed.bad',
          query: q,
          params: [{ name: 'min', type: 'int', default: 'ten' }],
        });
        assert.equal(badDefault.status, 422);
        assert.deepEqual((badDefault.body as { error: { fields: Record<string, string[]> } }).error.fields, {
          'params[0].default': ['"ten" does not fit int'],
        });
      });

      test('the list is returned as stored, changes with PATCH, and is checked against a changed query', async () => {
        const got = await manage(s, 'GET', `/api/endpoints/${echo.id}`);
        const params = (got.body as EndpointView & { params: unknown[] }).params;
        assert.deepEqual(params[0], { name: 'min', type: 'int', default: 5, description: 'Smallest n, exclusive' });
        assert.deepEqual(params[5], { name: 'kind', type: 'enum', default: 'a', values: ['a', 'b'] });

        const e = await createEndpoint(s, {
          name: 'typed.patch',
          query: `select @n as n from \`${SOURCE}\` limit 1`,
          params: [{ name: 'n', type: 'int' }],
        });
        assert.deepEqual(await rows(s, 'typed.patch', { n: '7' }), [{ n: 7 }]);
        const dropsParam = await manage(s, 'PATCH', `/api/endpoints/${e.id}`, { query: `select 1 as one from \`${SOURCE}\` limit 1` });
        assert.equal(dropsParam.status, 422, 'the described @n is no longer used');
        assert.match(JSON.stringify(dropsParam.body), /does not use @n/);
        const untyped = await manage(s, 'PATCH', `/api/endpoints/${e.id}`, { params: null });
        assert.equal(untyped.status, 200);
        assert.equal((untyped.body as { params: unknown }).params, null);
        assert.deepEqual(await rows(s, 'typed.patch', { n: '7' }), [{ n: '7' }], 'untyped again: a string');
        const retyped = await manage(s, 'PATCH', `/api/endpoints/${e.id}`, { params: [{ name: 'n', type: 'float' }] });
        assert.equal(retyped.status, 200);
        assert.deepEqual(await rows(s, 'typed.patch', { n: '7' }), [{ n: 7 }]);
        assert.equal((await query(s, 'typed.patch', { n: 'seven' })).status, 400);
      });

      test('untyped endpoints keep binding every parameter as a string', async () => {
        await createEndpoint(s, { name: 'typed.none', query: `select @a as a, @b as b from \`${SOURCE}\` limit 1` });
        assert.deepEqual(await rows(s, 'typed.none', { a: '5' }), [{ a: '5', b: null }]);
        const got = await manage(s, 'GET', '/api/endpoints');
        const none = (got.body as (EndpointView & { params: unknown })[]).find((x) => x.name === 'typed.none');
        assert.equal(none?.params, null);
      });

      test('the cache keys typed values by value: 05 and 5 share an entry', async () => {
        await createEndpoint(s, {
          name: 'typed.cached',
          query: `select count(*) as c from \`${SOURCE}\` where n > @min`,
          params: [{ name: 'min', type: 'int', default: 0 }],
          cache_duration_seconds: 600,
        });
        const a = await query(s, 'typed.cached', { min: '5' });
        assert.equal(a.headers.get('x-cache'), 'MISS');
        const b = await query(s, 'typed.cached', { min: '05' });
        assert.equal(b.headers.get('x-cache'), 'HIT');
        assert.deepEqual(b.rows, [{ c: 3 }]);
        const c = await query(s, 'typed.cached', {});
        assert.equal(c.headers.get('x-cache'), 'MISS', 'the default 0 is another value');
        assert.deepEqual(c.rows, [{ c: 4 }]);
        assert.equal((await query(s, 'typed.cached', { min: '0' })).headers.get('x-cache'), 'HIT');
      });

      test('the OpenAPI document has an operation per saved endpoint the caller may run, with typed parameters', async () => {
        await createEndpoint(s, {
          name: 'typed.public',
          query: `select count(*) as c from \`${SOURCE}\` where kind = @kind`,
          enable_auth: false,
          sandboxable: true,
          params: [{ name: 'kind', type: 'enum', values: ['a', 'b'], required: true, description: 'Which kind' }],
        });
        const doc = (await (await s.fetch('/api/openapi.json')).json()) as {
          paths: Record<string, { get: { parameters: { name: string; required: boolean; schema: Record<string, unknown>; description: string }[] } }>;
        };
        const op = doc.paths['/api/endpoints/query/typed.echo']?.get;
        assert.ok(op, Object.keys(doc.paths).join(' '));
        const byName = Object.fromEntries(op.parameters.map((p) => [p.name, p]));
        assert.deepEqual(byName.min?.schema, { type: 'integer', format: 'int64', default: 5 });
        assert.match(byName.min!.description, /^Smallest n, exclusive \(int/);
        assert.deepEqual(byName.ratio?.schema, { type: 'number', format: 'double', default: 0.5 });
        assert.deepEqual(byName.flag?.schema, { type: 'boolean', default: true });
        assert.deepEqual(byName.since?.schema, { type: 'string', format: 'date-time' });
        assert.equal(byName.since?.required, true);
        assert.deepEqual(byName.day?.schema, { type: 'string', format: 'date', default: '2026-11-21' });
        assert.deepEqual(byName.kind?.schema, { type: 'string', enum: ['a', 'b'], default: 'a' });
        assert.deepEqual(byName.note?.schema, { type: 'string' });
        assert.deepEqual(byName.format?.schema, { type: 'string', enum: ['json', 'ndjson', 'csv'], default: 'json' });
        assert.equal(byName.sql, undefined, 'not sandboxable');
        assert.ok(doc.paths['/api/endpoints/query/logs.all'], 'the seeded endpoints too');
        assert.ok(doc.paths['/api/endpoints/query/{idOrName}'], 'the generic operation stays');

        // Anonymous: only endpoints that run without a token; a public (ingest) token: the same.
        for (const token of [null, PUBLIC_TOKEN]) {
          const anon = (await (await s.fetch('/api/openapi.json', {}, token)).json()) as typeof doc;
          const saved = Object.keys(anon.paths).filter((p) => p.startsWith('/api/endpoints/query/') && !p.includes('{'));
          assert.deepEqual(saved, ['/api/endpoints/query/typed.public'], String(token));
          const pub = Object.fromEntries(anon.paths['/api/endpoints/query/typed.public']!.get.parameters.map((p) => [p.name, p]));
          assert.deepEqual(pub.kind?.schema, { type: 'string', enum: ['a', 'b'] });
          assert.equal(pub.kind?.required, true);
          assert.ok(pub.sql && pub.lql, 'sandboxable: sql and lql');
        }
      });

      // Last: it restarts this service on the same data (the after hook closes the new one).
      describe('typed parameters survive a restart', () => {
        test('stored and bound with their types after the service restarts on the same data', async () => {
          await createEndpoint(s, {
            name: 'typed.durable',
            query: `select count(*) as c, @min + 0.5 as half from \`${SOURCE}\` where n > @min`,
            params: [{ name: 'min', type: 'int', default: 3 }],
          });
          await s.stop();
          s = await startTestServer(engineEnv(engine), s.dataDir);
          // n is 2, 10, 100 and 100: three rows past the default 3.
          assert.deepEqual(await rows(s, 'typed.durable'), [{ c: 3, half: 3.5 }]);
          assert.equal((await query(s, 'typed.durable', { min: 'x' })).status, 400);
        });
      });
    });
  });
}
