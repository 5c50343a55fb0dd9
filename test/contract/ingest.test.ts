/**
 * docs/API.md §3: ingest routes and body forms, source vs source_name, event normalisation
 * (id, timestamp by digit count and ISO with offset, message → event_message), keys at any
 * depth, schema growth and type conflicts, all-or-nothing, every status, sources management.
 * Everything is observed through the query API (a sandboxable endpoint over a fresh source).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { type TestServer, startTestServer } from '../support/server.ts';
import { engineEnv, engines } from '../support/engines.ts';
import { assertError, call, ingestAs, mustIngest, newEndpoint, newSource, newToken, result, run } from './support.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

for (const engine of engines) {
  describe(engine, () => {
    describe('§3 ingest', () => {
      let s: TestServer;
      /** A sandboxable endpoint over source `src` with CTE `e` exposing id, timestamp, event_message, metadata, project. */
      const reader = async (src: string) => {
        await newSource(s, src);
        await newEndpoint(s, {
          name: `read.${src}`,
          query: `with e as (select t.id, t.timestamp, t.event_message, t.metadata, t.project from \`${src}\` as t) select id from e`,
          sandboxable: true,
          max_limit: 10_000,
        });
      };
      const sql = async (src: string, q: string) => result(await run(s, `read.${src}`, { sql: q }));

      before(async () => {
        s = await startTestServer(engineEnv(engine));
      });
      after(() => s.close());

      describe('routes and body forms', () => {
        before(() => reader('forms'));

        test('/api/logs, /logs, /api/events × object, array, batch, NDJSON, gzip; source_name and source', async () => {
          const id = ((await call(s, 'GET', '/api/sources')).body as { id: string; name: string }[]).find((x) => x.name === 'forms')!.id;
          const routes = ['/api/logs', '/logs', '/api/events'];
          const selectors = ['source_name=forms', `source=${id}`];
          let n = 0;
          const expected: string[] = [];
          for (const route of routes) {
            for (const sel of selectors) {
              const url = `${route}?${sel}`;
              const m = () => `m${n++}`;
              const a = m();
              const b1 = m();
              const b2 = m();
              const c = m();
              const d1 = m();
              const d2 = m();
              const g = m();
              expected.push(a, b1, b2, c, d1, d2, g);
              const answers = [
                await call(s, 'POST', url, { body: { event_message: a } }),
                await call(s, 'POST', url, { body: [{ event_message: b1 }, { event_message: b2 }] }),
                await call(s, 'POST', url, { body: { batch: [{ event_message: c }] } }),
                await call(s, 'POST', url, {
                  raw: `${JSON.stringify({ event_message: d1 })}\n${JSON.stringify({ event_message: d2 })}\n`,
                  headers: { 'content-type': 'application/x-ndjson' },
                }),
                await call(s, 'POST', url, {
                  raw: gzipSync(JSON.stringify([{ event_message: g }])),
                  headers: { 'content-encoding': 'gzip' },
                }),
              ];
              for (const r of answers) {
                assert.equal(r.status, 200, `${url}: ${r.text}`);
                assert.deepEqual(r.body, { message: 'Logged!' });
              }
            }
          }
          const got = (await sql('forms', 'select event_message from e')).map((r) => r.event_message).sort();
          assert.deepEqual(got, expected.sort());
        });

        test('gzip NDJSON', async () => {
          const r = await call(s, 'POST', '/api/logs?source_name=forms', {
            raw: gzipSync('{"event_message":"gz-nd-1"}\n{"event_message":"gz-nd-2"}'),
            headers: { 'content-type': 'application/x-ndjson', 'content-encoding': 'gzip' },
          });
          assert.equal(r.status, 200, r.text);
          const got = await sql('forms', "select event_message from e where starts_with(event_message, 'gz-nd') order by event_message");
          assert.deepEqual(got, [{ event_message: 'gz-nd-1' }, { event_message: 'gz-nd-2' }]);
        });
      });

      describe('event normalisation', () => {
        before(async () => {
          await reader('norm');
          await mustIngest(s, 'norm', [
            { id: 'sec', timestamp: 1795300000, project: 'p' },
            { id: 'sec-str', timestamp: '1795300000', project: 'p' },
            { id: 'ms', timestamp: 1795300000123, project: 'p' },
            { id: 'us', timestamp: 1795300000123456, project: 'p' },
            { id: 'ns-str', timestamp: '1795300000123456789', project: 'p' },
            { id: 'iso-plus', timestamp: '2026-11-21T12:00:00+02:00', project: 'p' },
            { id: 'iso-minus', timestamp: '2026-11-21T05:30:00.250-04:30', project: 'p' },
            { id: 'iso-z', timestamp: '2026-11-21T10:00:00.123456Z', project: 'p' },
            { id: 'garbage', timestamp: 'not a time', project: 'p' },
            { id: 'missing', project: 'p' },
            { id: 'msg', message: 'from message', project: 'p' },
            { id: 'both', message: 'from message', event_message: 'from event_message', project: 'p' },
            { message: 'no id', project: 'p' },
          ]);
        });

        test('timestamp: unix s / ms / µs / ns told apart by digit count, ISO with an offset', async () => {
          const ts = new Map((await sql('norm', 'select id, timestamp from e')).map((r) => [r.id, r.timestamp as number]));
          assert.equal(ts.get('sec'), 1795300000_000000);
          assert.equal(ts.get('sec-str'), 1795300000_000000);
          assert.equal(ts.get('ms'), 1795300000_123000);
          assert.equal(ts.get('us'), 1795300000_123456);
          // nanoseconds: microsecond precision (truncated or rounded).
          assert.ok(Math.abs((ts.get('ns-str') ?? 0) - 1795300000_123456) <= 1, String(ts.get('ns-str')));
          assert.equal(ts.get('iso-plus'), Date.UTC(2026, 10, 21, 10, 0, 0) * 1000);
          assert.equal(ts.get('iso-minus'), Date.UTC(2026, 10, 21, 10, 0, 0, 250) * 1000);
          assert.equal(ts.get('iso-z'), Date.UTC(2026, 10, 21, 10, 0, 0) * 1000 + 123456);
        });

        test('missing or unparseable timestamp → the time of ingest', async () => {
          const rows = await sql('norm', "select id, timestamp from e where id in ('garbage', 'missing')");
          assert.equal(rows.length, 2);
          for (const r of rows) {
            const ms = (r.timestamp as number) / 1000;
            assert.ok(Math.abs(ms - Date.now()) < 60_000, `${r.id}: ${r.timestamp} is about now`);
          }
        });

        test('id kept when given, else a new UUID', async () => {
          const all = await sql('norm', 'select id, event_message from e');
          assert.ok(all.some((r) => r.id === 'sec'));
          const generated = all.find((r) => r.event_message === 'no id');
          assert.ok(generated);
          assert.match(String(generated.id), UUID);
        });

        test('event_message: event_message, else message', async () => {
          const rows = await sql('norm', "select id, event_message from e where id in ('msg', 'both') order by id");
          assert.deepEqual(rows, [
            { id: 'both', event_message: 'from event_message' },
            { id: 'msg', event_message: 'from message' },
          ]);
        });
      });

      describe('keys at any depth, schema growth, type conflicts', () => {
        before(() => reader('shape'));

        test('nested keys at any depth are queryable', async () => {
          await mustIngest(s, 'shape', [
            {
              id: 'deep',
              project: 'p',
              appname: 'app',
              metadata: { l1: { l2: { l3: { l4: { l5: 'bottom' } } } }, list: [1, 2, 3], flag: true, ratio: 0.5 },
            },
          ]);
          const rows = await sql(
            'shape',
            `select id, l4.l5 as bottom, m.flag, m.ratio, m.list from e
           cross join unnest(metadata) as m cross join unnest(m.l1) as l1 cross join unnest(l1.l2) as l2
           cross join unnest(l2.l3) as l3 cross join unnest(l3.l4) as l4 where id = 'deep'`,
          );
          assert.deepEqual(rows, [{ id: 'deep', bottom: 'bottom', flag: true, ratio: 0.5, list: [1, 2, 3] }]);
          const [whole] = await sql('shape', "select metadata from e where id = 'deep'");
          assert.deepEqual(whole?.metadata, [{ l1: [{ l2: [{ l3: [{ l4: [{ l5: 'bottom' }] }] }] }], list: [1, 2, 3], flag: true, ratio: 0.5 }]);
        });

        test('a new top-level key and a new nested key later: both queryable, older rows read NULL', async () => {
          await mustIngest(s, 'shape', [{ id: 'grown', project: 'p', metadata: { l1: { brand_new: 'yes' } }, extra_top: 42 }]);
          await newEndpoint(s, {
            name: 'read.shape.top',
            query: 'with e as (select t.id, t.extra_top from `shape` as t) select id, extra_top from e',
            sandboxable: true,
          });
          const top = result(await run(s, 'read.shape.top', { sql: 'select id, extra_top from e order by id' }));
          assert.deepEqual(top, [
            { id: 'deep', extra_top: null },
            { id: 'grown', extra_top: 42 },
          ]);
          const nested = await sql('shape', 'select id, l1.brand_new from e cross join unnest(metadata) as m cross join unnest(m.l1) as l1 order by id');
          assert.deepEqual(nested, [
            { id: 'deep', brand_new: null },
            { id: 'grown', brand_new: 'yes' },
          ]);
        });

        test('type conflicts never lose an event', async () => {
          await reader('conflict');
          await mustIngest(s, 'conflict', [{ id: 'c1', project: 'p', metadata: { v: 1, obj: { a: 1 }, s: 'text' } }]);
          await mustIngest(s, 'conflict', [{ id: 'c2', project: 'p', metadata: { v: 'one', obj: 'flat', s: 5 } }]);
          await mustIngest(s, 'conflict', [{ id: 'c3', project: 'p', metadata: { v: { deep: true }, obj: [1, 2], s: false } }]);
          await mustIngest(s, 'conflict', [{ id: 'c4', project: { odd: 'object' }, metadata: 'scalar metadata' }]);
          // In the same request too.
          await mustIngest(s, 'conflict', [
            { id: 'c5', project: 'p', metadata: { w: 1 } },
            { id: 'c6', project: 'p', metadata: { w: 'x' } },
          ]);
          const rows = await sql('conflict', 'select id from e order by id');
          assert.deepEqual(
            rows.map((r) => r.id),
            ['c1', 'c2', 'c3', 'c4', 'c5', 'c6'],
          );
        });
      });

      describe('all-or-nothing and statuses', () => {
        before(() => reader('strict'));

        const count = async () => (await sql('strict', 'select count(id) as n from e'))[0]?.n;

        test('a request with one bad event stores nothing; the message names the event', async () => {
          const before = await count();
          const bad = await ingestAs(s, 'strict', [{ event_message: 'ok 1' }, { event_message: 'ok 2' }, 42, { event_message: 'ok 3' }]);
          assertError(bad, 400, 'BAD_REQUEST', /\b2\b/);
          const badBatch = await ingestAs(s, 'strict', { batch: [{ event_message: 'ok' }, 'x'] });
          assertError(badBatch, 400, 'BAD_REQUEST', /\b1\b/);
          const badLine = await call(s, 'POST', '/api/logs?source_name=strict', {
            raw: '{"event_message":"ok"}\n{"event_message":\n{"event_message":"ok"}\n',
            headers: { 'content-type': 'application/x-ndjson' },
          });
          assertError(badLine, 400, 'BAD_REQUEST', /\b2\b/);
          assert.equal(await count(), before);
        });

        test('400 for a body that is not JSON or not events', async () => {
          for (const raw of ['{"a":', '"just a string"', '17', 'null', '{"batch": 3}', '[[{"a":1}]]']) {
            const r = await call(s, 'POST', '/api/logs?source_name=strict', { raw });
            assertError(r, 400, 'BAD_REQUEST');
          }
          assert.equal(await count(), 0);
        });

        test('404 NOT_FOUND for an unknown source name or id; 400 when no source is named', async () => {
          assertError(await ingestAs(s, 'no.such.source', { a: 1 }), 404, 'NOT_FOUND');
          assertError(await call(s, 'POST', `/api/logs?source=${crypto.randomUUID()}`, { body: { a: 1 } }), 404, 'NOT_FOUND');
          const none = await call(s, 'POST', '/api/logs', { body: { a: 1 } });
          assert.equal(none.status, 400);
        });

        test('413 over the default 10 MiB limit, stores nothing; just under is fine', async () => {
          const before = await count();
          const big = JSON.stringify([{ event_message: 'big' }, { event_message: 'x'.repeat(10 * 1024 * 1024) }]);
          assertError(await call(s, 'POST', '/api/logs?source_name=strict', { raw: big }), 413, 'PAYLOAD_TOO_LARGE');
          assert.equal(await count(), before);
          const fits = JSON.stringify([{ event_message: 'y'.repeat(9 * 1024 * 1024) }]);
          assert.equal((await call(s, 'POST', '/api/logs?source_name=strict', { raw: fits })).status, 200);
          assert.equal(await count(), (before as number) + 1);
        });
      });

      describe('the source named in a JSON object body', () => {
        let bodyId: string;
        let otherId: string;
        before(async () => {
          bodyId = await newSource(s, 'in.body');
          otherId = await newSource(s, 'in.body.other');
        });
        /** The events of a source, read by an endpoint made once the fields it reads are stored. */
        const stored = async (src: string, columns: string): Promise<Record<string, unknown>[]> => {
          const name = `body.${src}.${columns.length}`;
          await newEndpoint(s, { name, query: `select ${columns} from \`${src}\` order by event_message`, cache_duration_seconds: 0 });
          return result(await run(s, name));
        };

        test('"source_name" or "source" key names it when the query and headers do not; the key is kept, as Logflare keeps it', async () => {
          assert.equal((await call(s, 'POST', '/api/logs', { body: { source_name: 'in.body', event_message: 'a' } })).status, 200);
          assert.equal((await call(s, 'POST', '/logs', { body: { source: bodyId, event_message: 'b' } })).status, 200);
          const gz = gzipSync(JSON.stringify({ batch: [{ event_message: 'c' }, { event_message: 'd' }], source_name: 'in.body' }));
          const batch = await call(s, 'POST', '/api/events', { raw: gz, headers: { 'content-encoding': 'gzip' } });
          assert.equal(batch.status, 200, batch.text);
          const got = await stored('in.body', 'event_message, source_name, source');
          assert.deepEqual(
            got.map((r) => [r.event_message, r.source_name ?? null, r.source ?? null]),
            [
              ['a', 'in.body', null],
              ['b', null, bodyId],
              ['c', null, null],
              ['d', null, null],
            ],
          );
        });

        test('the query and the X-Source header come first; the body key is then an ordinary field', async () => {
          assert.equal((await call(s, 'POST', '/api/logs?source_name=in.body.other', { body: { source_name: 'in.body', event_message: 'q' } })).status, 200);
          const h = await call(s, 'POST', '/api/logs', { body: { source: bodyId, event_message: 'h' }, headers: { 'x-source': otherId } });
          assert.equal(h.status, 200);
          const got = await stored('in.body.other', 'event_message');
          assert.deepEqual(
            got.map((r) => r.event_message),
            ['h', 'q'],
          );
        });

        test('refusals: unknown (404 naming the key), none (400 naming every way), and never from NDJSON or arrays', async () => {
          assertError(
            await call(s, 'POST', '/api/logs', { body: { source_name: 'no.such', event_message: 'x' } }),
            404,
            'NOT_FOUND',
            /"source_name" key of the JSON body/,
          );
          assertError(await call(s, 'POST', '/api/logs', { body: { source: crypto.randomUUID() } }), 404, 'NOT_FOUND', /"source" key/);
          const ways = /\?source_name=.*\?source=.*X-Source.*"source_name".*"source".*JSON object body/;
          assertError(await call(s, 'POST', '/api/logs', { body: { source: 42, event_message: 'x' } }), 400, 'BAD_REQUEST', ways);
          assertError(await call(s, 'POST', '/api/logs', { body: [{ source_name: 'in.body' }] }), 400, 'BAD_REQUEST', ways);
          const ndjson = await call(s, 'POST', '/api/logs', { raw: '{"source_name":"in.body"}\n', headers: { 'content-type': 'application/x-ndjson' } });
          assertError(ndjson, 400, 'BAD_REQUEST', ways);
          assertError(await call(s, 'POST', '/api/logs', { raw: '{"source_name":' }), 400, 'BAD_REQUEST', ways);
        });

        test('order: the token before the body, the body (encoding, size) before the source; a bad event stores nothing', async () => {
          assertError(await call(s, 'POST', '/api/logs', { body: { source_name: 'in.body' }, token: null }), 401, 'UNAUTHORIZED');
          const queryOnly = await newToken(s, ['query']);
          assertError(await call(s, 'POST', '/api/logs', { body: { source_name: 'in.body' }, token: queryOnly.value }), 403, 'FORBIDDEN');
          const scoped = await newToken(s, [`ingest:source:${otherId}`]);
          assertError(await call(s, 'POST', '/api/logs', { body: { source_name: 'in.body' }, token: scoped.value }), 403, 'FORBIDDEN');
          assertError(await call(s, 'POST', '/api/logs', { body: { source_name: 'no.such' }, token: scoped.value }), 403, 'FORBIDDEN');
          const mine = await call(s, 'POST', '/api/logs', { body: { source_name: 'in.body.other', event_message: 's' }, token: scoped.value });
          assert.equal(mine.status, 200, mine.text);
          const notGzip = await call(s, 'POST', '/api/logs', { raw: '{"source_name":"in.body"}', headers: { 'content-encoding': 'gzip' } });
          assertError(notGzip, 400, 'BAD_REQUEST', /gzip/);
          const before = (await stored('in.body', 'event_message')).length;
          const bad = await call(s, 'POST', '/api/logs', { body: { source_name: 'in.body', batch: [{ event_message: 'ok' }, 7] } });
          assertError(bad, 400, 'BAD_REQUEST', /index 1/);
          assert.equal((await stored('in.body', 'event_message, id')).length, before);
        });
      });

      describe('sources management', () => {
        test('create → ingest by name and id → rename → delete → 404', async () => {
          const created = await call(s, 'POST', '/api/sources', { body: { name: 'managed.src' } });
          assert.equal(created.status, 201);
          const src = created.body as { id: string; name: string };
          assert.match(src.id, UUID);
          assert.equal(src.name, 'managed.src');
          assert.deepEqual((await call(s, 'GET', `/api/sources/${src.id}`)).body, created.body);
          await mustIngest(s, 'managed.src', [{ event_message: 'a' }]);
          assert.equal((await call(s, 'POST', `/api/logs?source=${src.id}`, { body: { event_message: 'b' } })).status, 200);

          const renamed = await call(s, 'PATCH', `/api/sources/${src.id}`, { body: { name: 'managed.renamed' } });
          assert.equal(renamed.status, 200, renamed.text);
          assert.equal((renamed.body as { name: string }).name, 'managed.renamed');
          await mustIngest(s, 'managed.renamed', [{ event_message: 'c' }]);
          assertError(await ingestAs(s, 'managed.src', [{ event_message: 'd' }]), 404, 'NOT_FOUND');

          assert.equal((await call(s, 'DELETE', `/api/sources/${src.id}`)).status, 204);
          assertError(await call(s, 'GET', `/api/sources/${src.id}`), 404, 'NOT_FOUND');
          assertError(await ingestAs(s, 'managed.renamed', [{ event_message: 'e' }]), 404, 'NOT_FOUND');
          assertError(await call(s, 'POST', `/api/logs?source=${src.id}`, { body: { event_message: 'f' } }), 404, 'NOT_FOUND');
          assertError(await call(s, 'PATCH', `/api/sources/${src.id}`, { body: { name: 'x' } }), 404, 'NOT_FOUND');
          assertError(await call(s, 'DELETE', `/api/sources/${src.id}`), 404, 'NOT_FOUND');
        });

        test('private scope only', async () => {
          const { PUBLIC_TOKEN } = await import('../support/server.ts');
          assertError(await call(s, 'GET', '/api/sources', { token: PUBLIC_TOKEN }), 403, 'FORBIDDEN');
          assertError(await call(s, 'POST', '/api/sources', { body: { name: 'nope.src' }, token: PUBLIC_TOKEN }), 403, 'FORBIDDEN');
          assertError(await call(s, 'GET', '/api/sources', { token: null }), 401, 'UNAUTHORIZED');
        });
      });
    });
  });
}
