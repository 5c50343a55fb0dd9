/**
 * Abusive keys and shapes over HTTP against the real server: prototype member names, keys with
 * dots, quotes, backticks, NUL and emoji, case variants, very deep nesting, and the per-source
 * field limit. None may answer 500; each is stored and read back, or refused with a clear 4xx.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createEndpoint, createSource, postText as post, type Row, rows } from '../endpoints/http-support.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/** Rows of `select id, <columns> from source` for the events whose ids start with `prefix`. */
async function readBack(s: TestServer, source: string, columns: string, prefix: string): Promise<Row[]> {
  const name = `read-${source}-${columns.replace(/[^a-z0-9]/gi, '')}`.slice(0, 60);
  await createEndpoint(s, {
    name,
    query: `select id, ${columns} from \`${source}\` where starts_with(id, @prefix) order by id`,
    cache_duration_seconds: 0,
  });
  return rows(s, name, { prefix });
}

function nestedObject(depth: number, leaf: string): string {
  return `${'{"a":'.repeat(depth)}${JSON.stringify(leaf)}${'}'.repeat(depth)}`;
}

describe('abusive keys and shapes', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ INGEST_MAX_FIELDS: '200' });
    await createSource(s, 'abuse');
    await createSource(s, 'narrow');
  });
  after(() => s.close());

  it('prototype member names as keys, new to an existing record and at the top level, are stored and read back', async () => {
    assert.equal((await post(s, 'abuse', '[{"id":"p0","metadata":{"plain":1}}]')).status, 200);
    const keys = ['constructor', 'toString', 'hasOwnProperty', 'valueOf', '__proto__', 'isPrototypeOf', '__defineGetter__'];
    const inner = keys.map((k, i) => `"${k}":"v${i}"`).join(',');
    // Both shapes: every key new to an existing record, and an object under __proto__.
    const body =
      `[{"id":"p1","metadata":{${inner}},"constructor":"top","__proto__":{"polluted":true},"toString":7},` +
      `{"id":"p2","metadata":{"constructor":{"name":"x"}}}]`;
    const r = await post(s, 'abuse', body);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(({} as Record<string, unknown>).polluted, undefined, 'no prototype was polluted');
    // The same shape again: now it fits the stored schema, so it takes the fast path (DuckDB
    // reads the received text with a structure naming every field).
    const p1Event = `{"id":"p3","metadata":{${inner}},"constructor":"top","__proto__":{"polluted":true},"toString":7}`;
    const again = await post(s, 'abuse', `[${p1Event}]`);
    assert.equal(again.status, 200, JSON.stringify(again.body));
    const got = await readBack(s, 'abuse', 'metadata, `constructor`, `__proto__`, `toString`', 'p');
    assert.deepEqual(
      got.map((row) => row.id),
      ['p0', 'p1', 'p2', 'p3'],
    );
    assert.deepEqual(got[3], { ...got[1], id: 'p3' });
    const p1 = got[1] as Row;
    const meta = (p1.metadata as Record<string, unknown>[])[0] as Record<string, unknown>;
    for (const [i, k] of keys.entries()) {
      assert.ok(Object.hasOwn(meta, k), `metadata.${k} is there: ${JSON.stringify(meta)}`);
      // `constructor` met an object in p2: the field became text, as the conflict rule says.
      assert.equal(meta[k], `v${i}`);
    }
    assert.equal(p1.constructor, 'top');
    // An own key of the parsed response (JSON.parse defines it), not the prototype.
    assert.ok(Object.hasOwn(p1, '__proto__'));
    assert.deepEqual(Object.getOwnPropertyDescriptor(p1, '__proto__')?.value, [{ polluted: true }]);
    assert.equal(p1.toString, 7);
    const p2 = ((got[2] as Row).metadata as Record<string, unknown>[])[0] as Record<string, unknown>;
    assert.equal(p2.constructor, '{"name":"x"}');
    // The SQL side reads such fields by name too.
    await createEndpoint(s, {
      name: 'proto-fields',
      query: 'select t.id, m.constructor as c, m.__proto__ as p, m.toString as s from `abuse` t cross join unnest(t.metadata) as m ' + "where t.id = 'p1'",
      cache_duration_seconds: 0,
    });
    assert.deepEqual(await rows(s, 'proto-fields'), [{ id: 'p1', c: 'v0', p: 'v4', s: 'v1' }]);
  });

  it('keys with dots, quotes, backticks, NUL, emoji and case variants are kept, none answers 500', async () => {
    const keys = ['a.b', 'say "hi"', "it's", 'back`tick', 'nul\u0000key', 'emoji😀', 'Case', 'case', 'CASE', '', ' ', '1st', 'x'.repeat(400)];
    const event: Record<string, unknown> = { id: 'k1' };
    const nested: Record<string, unknown> = {};
    for (const [i, k] of keys.entries()) {
      event[k] = `top${i}`;
      nested[k] = i;
    }
    event.nested = nested;
    const r = await post(s, 'abuse', JSON.stringify([event]));
    assert.equal(r.status, 200, JSON.stringify(r.body));
    // Logflare's renaming (docs/INGEST.md, "Key names"): one leading `_` for the replaced
    // characters, and an emoji is one character.
    const got = await readBack(s, 'abuse', 'nested, _a_b, Case, case_2, CASE_3, _emoji_', 'k');
    const row = got[0] as Row;
    assert.equal(row._a_b, 'top0');
    assert.equal(row.Case, 'top6');
    assert.equal(row.case_2, 'top7');
    assert.equal(row.CASE_3, 'top8');
    assert.equal(row._emoji_, 'top5');
    const n = (row.nested as Record<string, unknown>[])[0] as Record<string, unknown>;
    // Every key's value is there under its sanitised name: nothing was lost.
    assert.deepEqual(
      Object.values(n).sort((a, b) => Number(a) - Number(b)),
      keys.map((_, i) => i),
    );
    assert.ok(
      Object.keys(n).every((k) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(k) && k.length <= 130),
      Object.keys(n).join(' '),
    );
  });

  it('objects nested 165, 200 and 100,000 deep are stored; below the depth limit kept as JSON text', async () => {
    for (const [id, depth] of [
      ['d165', 165],
      ['d200', 200],
    ] as const) {
      const r = await post(s, 'narrow', `[{"id":"${id}","deep":${nestedObject(depth, id)}}]`);
      assert.equal(r.status, 200, `${depth}: ${JSON.stringify(r.body)}`);
    }
    const huge = 100_000;
    const arrays = `[{"id":"d100k","deeplist":${'['.repeat(huge)}1${']'.repeat(huge)}}]`;
    const r = await post(s, 'narrow', arrays);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const got = await readBack(s, 'narrow', 'deep, deeplist', 'd');
    assert.deepEqual(
      got.map((x) => x.id),
      ['d100k', 'd165', 'd200'],
    );
    // Walk down the default 20 levels; what is below is the JSON text of the rest.
    let v: unknown = (got[1] as Row).deep;
    for (let level = 1; level <= 20; level++) {
      assert.ok(Array.isArray(v), `level ${level}`);
      v = (v[0] as Record<string, unknown>).a;
    }
    assert.equal(typeof v, 'string');
    assert.equal(v, nestedObject(165 - 20, 'd165'));
    let list: unknown = (got[0] as Row).deeplist;
    for (let level = 1; level <= 20; level++) {
      assert.ok(Array.isArray(list), `list level ${level}`);
      list = list[0];
    }
    assert.equal(list, `${'['.repeat(huge - 20)}1${']'.repeat(huge - 20)}`);
  });

  it('growing past the field limit is refused with a 400 naming the field and the limit; nothing of it is stored', async () => {
    const wide = (prefix: string, n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`${prefix}${i}`, i]));
    assert.equal((await post(s, 'narrow', JSON.stringify([{ id: 'w1', wide: wide('f', 150) }]))).status, 200);
    const over = await post(
      s,
      'narrow',
      JSON.stringify([
        { id: 'w2', wide: wide('g', 60) },
        { id: 'w3', ok: 1 },
      ]),
    );
    assert.equal(over.status, 400);
    const error = over.body.error as { message: string; code: string };
    assert.equal(error.code, 'BAD_REQUEST');
    assert.match(error.message, /wide\.g\d+/);
    assert.match(error.message, /limit of 200/);
    assert.match(error.message, /INGEST_MAX_FIELDS/);
    // Within the limit still works, and the refused request left nothing behind.
    assert.equal((await post(s, 'narrow', JSON.stringify([{ id: 'w4', wide: { f1: 2 } }]))).status, 200);
    const got = await readBack(s, 'narrow', 'wide', 'w');
    assert.deepEqual(
      got.map((x) => x.id),
      ['w1', 'w4'],
    );
  });
});

describe('an ingest write past the engine memory limit', () => {
  let s: TestServer;
  before(async () => {
    // A tiny limit stands in for a very wide source on a small budget (measured: 5,000 top-level
    // plus 5,000 nested fields needed more than the default 1 GiB). The typed budget is raised so
    // the fields become columns (within the default budget they would go to the overflow, cheaply).
    s = await startTestServer({ DUCKDB_MEMORY_LIMIT: '16MiB', INGEST_MAX_TYPED_FIELDS: '10000' });
    await createSource(s, 'wide');
  });
  after(() => s.close());

  it('answers 503 OVERLOADED naming the limit, not 500, stores nothing, and ingest keeps working', async () => {
    const wide = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`k${i}`, i]));
    const r = await s.fetch('/api/logs?source_name=wide', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify([
        { id: 'w1', m: wide },
        { id: 'w2', m: wide },
      ]),
    });
    const body = (await r.json()) as { error: { code: string; message: string } };
    assert.equal(r.status, 503, JSON.stringify(body));
    assert.equal(body.error.code, 'OVERLOADED');
    assert.match(body.error.message, /MEMORY_BUDGET/);
    assert.ok(Number(r.headers.get('retry-after')) >= 1);
    assert.equal((await post(s, 'postgres.logs', '[{"id":"small","a":1}]')).status, 200);
    await createEndpoint(s, { name: 'wide-count', query: 'select count(*) as n from `wide`', cache_duration_seconds: 0 });
    assert.deepEqual(await rows(s, 'wide-count'), [{ n: 0 }]);
  });
});
