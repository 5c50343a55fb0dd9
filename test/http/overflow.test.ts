/**
 * Fields beyond a source's typed budget (INGEST_MAX_TYPED_FIELDS) are kept in its catch-all
 * overflow column and read back through the same names, with the catalogued types, over HTTP
 * against the real server: new top-level keys and nested fields, type conflicts, records partly
 * typed and partly overflowed, records that become text, awkward key names, after a restart,
 * through LQL and the sandbox.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createEndpoint, createSource, ingest, postText as post, type Row, rows } from '../endpoints/http-support.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let endpoints = 0;
async function select(s: TestServer, sql: string): Promise<Row[]> {
  const name = `overflow-${endpoints++}`;
  await createEndpoint(s, { name, query: sql, cache_duration_seconds: 0 });
  return rows(s, name);
}

async function schemaOf(s: TestServer, source: string): Promise<Record<string, unknown>> {
  const list = (await (await s.fetch('/api/sources')).json()) as { id: string; name: string }[];
  const id = list.find((x) => x.name === source)?.id;
  const r = await s.fetch(`/api/sources/${id}/schema`);
  assert.equal(r.status, 200);
  return ((await r.json()) as { columns: Record<string, unknown> }).columns;
}

describe('fields beyond the typed budget', () => {
  let s: TestServer;
  const env = { INGEST_MAX_TYPED_FIELDS: '3', INGEST_MAX_FIELDS: '40' };
  before(async () => {
    s = await startTestServer(env);
    await createSource(s, 'ov');
    // Three typed leaves: a, m.x, m.y. Everything new after that goes to the overflow.
    await ingest(s, 'ov', [{ id: 'e1', a: 'x', m: { x: 1, y: 'y' } }]);
  });
  after(() => s.close());

  it('keeps new top-level keys and nested fields, with their types, and reads them by name', async () => {
    const r = await post(
      s,
      'ov',
      JSON.stringify([
        {
          id: 'e2',
          a: 'x2',
          c: 5,
          f: 1.5,
          ok: true,
          m: { x: 2, z: 'zz', deep: { k: true, n: [1, 2] } },
          extra: { p: 'q', list: [{ v: 1 }, { v: 2 }] },
          tags: ['t1', 't2'],
        },
        { id: 'e3', c: 7, m: { z: 'z3' } },
      ]),
    );
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const got = await select(s, 'select id, a, c, f, ok, mm.x, mm.z, mm.deep.k as k, tags from `ov` cross join unnest(m) as mm order by id');
    assert.deepEqual(got, [
      { id: 'e1', a: 'x', c: null, f: null, ok: null, x: 1, z: null, k: null, tags: null },
      { id: 'e2', a: 'x2', c: 5, f: 1.5, ok: true, x: 2, z: 'zz', k: true, tags: ['t1', 't2'] },
      { id: 'e3', a: null, c: 7, f: null, ok: null, x: null, z: 'z3', k: null, tags: null },
    ]);
    // Filters, lists and records of the overflow work like any others.
    assert.deepEqual(await select(s, 'select id from `ov` where c > 6'), [{ id: 'e3' }]);
    assert.deepEqual(await select(s, "select count(*) as n from `ov` cross join unnest(m) as mm where mm.z like 'z%'"), [{ n: 2 }]);
    assert.deepEqual(await select(s, 'select n from `ov` cross join unnest(m) as mm cross join unnest(mm.deep) as d cross join unnest(d.n) as n order by n'), [
      { n: 1 },
      { n: 2 },
    ]);
    assert.deepEqual(await select(s, 'select e.p, l.v from `ov` cross join unnest(extra) as e cross join unnest(e.list) as l order by l.v'), [
      { p: 'q', v: 1 },
      { p: 'q', v: 2 },
    ]);
    // The schema shows every field, wherever it is kept.
    const schema = await schemaOf(s, 'ov');
    for (const name of ['a', 'm', 'c', 'f', 'ok', 'extra', 'tags']) assert.ok(Object.hasOwn(schema, name), name);
    assert.deepEqual(schema.c, { kind: 'scalar', type: 'int' });
  });

  it('a record partly typed and partly overflowed reads back whole', async () => {
    const got = await select(s, "select id, m from `ov` where id in ('e1', 'e2') order by id");
    assert.deepEqual(got, [
      { id: 'e1', m: [{ x: 1, y: 'y' }] },
      { id: 'e2', m: [{ x: 2, z: 'zz', deep: [{ k: true, n: [1, 2] }] }] },
    ]);
  });

  it('type conflicts in the overflow follow the conflict rule', async () => {
    await ingest(s, 'ov', [{ id: 'e4', c: 2.5 }]);
    assert.deepEqual(await select(s, "select id, c from `ov` where id in ('e2', 'e4') order by id"), [
      { id: 'e2', c: 5 },
      { id: 'e4', c: 2.5 },
    ]);
    await ingest(s, 'ov', [
      { id: 'e5', c: 'text' },
      { id: 'e6', c: { o: 1 } },
    ]);
    assert.deepEqual(await select(s, "select id, c from `ov` where id in ('e2', 'e4', 'e5', 'e6') order by id"), [
      { id: 'e2', c: '5' },
      { id: 'e4', c: '2.5' },
      { id: 'e5', c: 'text' },
      { id: 'e6', c: '{"o":1}' },
    ]);
  });

  it("awkward key names are sanitised as usual (Logflare's rule) and read back", async () => {
    const text =
      '[{"id":"k1","constructor":"c","toString":3,"__proto__":{"polluted":true},"we.ird\\"key`":"w","emoji🔥":"e",' +
      '"Case":"upper","m":{"constructor":{"name":"n"},"has.dot":"d"}}]';
    const r = await post(s, 'ov', text);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    const got = await select(
      s,
      "select t.`constructor`, t.`toString`, t.`__proto__`.polluted as polluted, t._we_ird_key_, t._emoji_, t.`Case`, mm.`constructor`.name as name, mm._has_dot from `ov` as t cross join unnest(m) as mm where t.id = 'k1'",
    );
    assert.deepEqual(got, [{ constructor: 'c', toString: 3, polluted: true, _we_ird_key_: 'w', _emoji_: 'e', Case: 'upper', name: 'n', _has_dot: 'd' }]);
  });

  it('a typed record that becomes text takes its overflowed fields into the text', async () => {
    await ingest(s, 'ov', [{ id: 'r1', m: 'plain text' }]);
    const got = await select(s, "select id, m from `ov` where id in ('e1', 'e3', 'r1') order by id");
    assert.equal(got.length, 3);
    assert.deepEqual(JSON.parse(got[0]!.m as string), { x: 1, y: 'y' });
    assert.deepEqual(JSON.parse(got[1]!.m as string), { x: null, y: null, z: 'z3' });
    assert.equal(got[2]!.m, 'plain text');
  });

  it('a nested typed record that becomes text takes its overflowed fields too', async () => {
    // n.r is typed (n.r.a); n.r.b arrives past the budget, then n.r becomes text.
    const s2 = await startTestServer({ INGEST_MAX_TYPED_FIELDS: '1' });
    try {
      await createSource(s2, 'nest');
      await ingest(s2, 'nest', [{ id: 'n1', n: { r: { a: 1 } } }]);
      await ingest(s2, 'nest', [{ id: 'n2', n: { r: { a: 2, b: 'kept' } } }]);
      await ingest(s2, 'nest', [{ id: 'n3', n: { r: 'text now' } }]);
      const got = await select(s2, 'select id, nn.r from `nest` cross join unnest(n) as nn order by id');
      assert.deepEqual(
        got.map((r) => (r.id === 'n3' ? r.r : JSON.parse(r.r as string))),
        [{ a: 1 }, { a: 2, b: 'kept' }, 'text now'],
      );
    } finally {
      await s2.close();
    }
  });

  it('the field limit counts overflowed fields: past it a request is refused naming the field, and nothing is lost', async () => {
    const wide: Row = { id: 'w1' };
    for (let i = 0; i < 40; i++) wide[`wide_${i}`] = i;
    const r = await post(s, 'ov', JSON.stringify([wide]));
    assert.equal(r.status, 400);
    assert.match(
      (r.body.error as { message: string }).message,
      /Field "wide_\d+" would take source "ov" to \d+ fields, over its limit of 40 \(INGEST_MAX_FIELDS\)/,
    );
    assert.deepEqual(await select(s, "select id from `ov` where id = 'w1'"), []);
    // Events that fit keep being accepted.
    await ingest(s, 'ov', [{ id: 'w2', c: 'fits' }]);
  });

  it('everything is still there, and still readable, after a restart', async () => {
    const sql = 'select id, c, extra, m from `ov` order by id';
    const before = await select(s, sql);
    assert.ok(before.length >= 8);
    await s.stop();
    s = await startTestServer(env, s.dataDir);
    assert.deepEqual(await select(s, sql), before);
    await ingest(s, 'ov', [{ id: 'z1', c: 'after', extra: { p: 'restart' } }]);
    assert.deepEqual(await select(s, "select c, e.p from `ov` cross join unnest(extra) as e where id = 'z1'"), [{ c: 'after', p: 'restart' }]);
  });
});

describe('overflowed fields through LQL and the sandbox (logs.all)', () => {
  let s: TestServer;
  before(async () => {
    // One typed leaf: every metadata field but the first is kept in the overflow.
    s = await startTestServer({ INGEST_MAX_TYPED_FIELDS: '2' });
    const now = Date.now();
    const event = (id: string, status: number, path: string, minutes: number) => ({
      id,
      timestamp: new Date(now - minutes * 60_000).toISOString(),
      project: 'ovproj',
      event_message: `GET ${path} ${status}`,
      metadata: { request: { method: 'GET', path }, response: { status_code: status } },
    });
    await ingest(s, 'cloudflare.logs.prod', [event('l1', 200, '/rest/v1/a', 1), event('l2', 401, '/auth/v1/b', 2), event('l3', 503, '/rest/v1/c', 3)]);
  });
  after(() => s.close());

  it('LQL filters on overflowed fields', async () => {
    const lql = (q: string) => rows(s, 'logs.all', { project: 'ovproj', lql: q });
    assert.deepEqual(
      (await lql('f:edge_logs s:id m.response.status_code:>=400')).map((r) => r.id),
      ['l2', 'l3'],
    );
    assert.deepEqual(
      (await lql('f:edge_logs s:id m.request.path:~^/rest')).map((r) => r.id),
      ['l1', 'l3'],
    );
  });

  it('a caller query in the sandbox reads overflowed fields of the sources it may read', async () => {
    const got = await rows(s, 'logs.all', {
      project: 'ovproj',
      sql: 'select id, response.status_code from edge_logs cross join unnest(metadata) as m cross join unnest(m.response) as response order by id',
    });
    assert.deepEqual(got, [
      { id: 'l1', status_code: 200 },
      { id: 'l2', status_code: 401 },
      { id: 'l3', status_code: 503 },
    ]);
  });
});
