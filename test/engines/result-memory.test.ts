/**
 * QUERY_RESULT_MEMORY (issue 20, "memory that holds"): results being read, encoded and sent share
 * one pool. The pool itself; each engine holding a run's bytes on its claim and giving them back
 * whenever the run fails (an error, a time-out, RESULT_TOO_LARGE, the pool refusing); and over real
 * HTTP on every engine: a large result that meets another one still being sent is `503
 * OVERLOADED`, one alone (or one after the other) is answered whole, and nothing stays held once
 * the responses are written or abandoned.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { defaultResultMemory, loadConfig } from '../../src/config.ts';
import { ResultMemory } from '../../src/query/result-memory.ts';
import { isQuarryError } from '../../src/errors.ts';
import { type PreparedQuery, prepareEndpointQuery } from '../../src/sql/index.ts';
import type { SourceTable } from '../../src/storage/schema.ts';
import { createEndpoint, ingest } from '../endpoints/http-support.ts';
import { schema, str } from '../sql/support.ts';
import { engineEnv, engines, openQueryTestEngine, type QueryTestEngine } from '../support/engines.ts';
import { type TestServer, startTestServer } from '../support/server.ts';

const MiB = 2 ** 20;

function assertOverloaded(e: unknown): true {
  assert.ok(isQuarryError(e), String(e));
  assert.equal(e.code, 'OVERLOADED');
  assert.equal(e.status, 503);
  assert.ok((e.retryAfter ?? 0) > 0);
  assert.match(e.message, /Other large results are being sent right now/);
  assert.match(e.message, /QUERY_RESULT_MEMORY/);
  return true;
}

describe('the result memory pool', () => {
  test('claims hold and give back bytes; the pool counts them and their holders', () => {
    const pool = new ResultMemory(100);
    const a = pool.claim();
    const b = pool.claim();
    assert.equal(pool.holders, 0, 'an empty claim holds nothing');
    a.hold(30);
    b.hold(50);
    assert.deepEqual([pool.used, pool.holders, a.bytes, b.bytes], [80, 2, 30, 50]);
    a.hold(10);
    assert.equal(pool.used, 60, 'a claim may shrink');
    a.release();
    a.release();
    assert.deepEqual([pool.used, pool.holders, a.bytes], [50, 1, 0]);
    a.hold(5);
    assert.deepEqual([pool.used, pool.holders], [55, 2], 'a released claim may hold again');
    a.release();
    b.release();
    assert.deepEqual([pool.used, pool.holders], [0, 0]);
  });

  test('every claim may hold its free share whatever the others hold, so a small result is never refused', () => {
    const pool = new ResultMemory(100, 10);
    const big = pool.claim();
    const small = pool.claim();
    big.hold(150);
    small.hold(10);
    assert.deepEqual([pool.used, pool.holders], [160, 2]);
    assert.throws(() => small.hold(11), assertOverloaded);
    assert.equal(small.bytes, 10);
    big.release();
    small.release();
    assert.equal(pool.used, 0);
  });

  test('a claim alone may grow past the size; another claim holding bytes makes it refuse', () => {
    const pool = new ResultMemory(100);
    const a = pool.claim();
    const b = pool.claim();
    a.hold(150);
    assert.equal(pool.used, 150, 'alone: the response cap, not the pool, bounds it');
    assert.throws(() => b.hold(1), assertOverloaded);
    assert.deepEqual([b.bytes, pool.used, pool.holders], [0, 150, 1], 'a refused claim keeps what it held');
    a.release();
    b.hold(60);
    a.hold(40);
    assert.equal(pool.used, 100, 'up to the size exactly');
    assert.throws(() => a.hold(41), assertOverloaded);
    assert.equal(a.bytes, 40);
    a.hold(20);
    b.hold(80);
    assert.equal(pool.used, 100, 'room another claim gave back is taken');
    a.release();
    b.release();
    assert.equal(pool.used, 0);
  });

  test('the refusal names the pool in MiB', () => {
    const pool = new ResultMemory(3 * MiB);
    pool.claim().hold(2 * MiB);
    assert.throws(
      () => pool.claim().hold(2 * MiB),
      (e: unknown) => assertOverloaded(e) && /the 3 MiB that QUERY_RESULT_MEMORY sets aside/.test((e as Error).message),
    );
  });
});

describe('QUERY_RESULT_MEMORY', () => {
  test('defaults to a 32nd of MEMORY_BUDGET, at least the response cap', () => {
    assert.equal(loadConfig({}).resultMemoryBytes, 64 * MiB);
    assert.equal(loadConfig({ MEMORY_BUDGET: '8GiB' }).resultMemoryBytes, 256 * MiB);
    // Never below the response cap: one result alone may always reach it.
    assert.equal(loadConfig({ MEMORY_BUDGET: '1GiB', QUERY_MAX_RESPONSE_BYTES: '64MiB' }).resultMemoryBytes, 64 * MiB);
    assert.equal(loadConfig({ MEMORY_BUDGET: '1GiB', QUERY_MAX_RESPONSE_BYTES: '8MiB' }).resultMemoryBytes, 32 * MiB);
    const small = loadConfig({ MEMORY_BUDGET: '1GiB' });
    assert.equal(small.resultMemoryBytes, Math.max(32 * MiB, small.responseMaxBytes));
    assert.equal(defaultResultMemory(2 * 2 ** 30, 64 * MiB), 64 * MiB);
    assert.equal(defaultResultMemory(4 * 2 ** 30, 64 * MiB), 128 * MiB);
    assert.equal(defaultResultMemory(256 * MiB, 64 * MiB), 64 * MiB);
  });

  test('is a size as MEMORY_BUDGET is', () => {
    assert.equal(loadConfig({ QUERY_RESULT_MEMORY: '256MiB' }).resultMemoryBytes, 256 * MiB);
    assert.equal(loadConfig({ QUERY_RESULT_MEMORY: '1000000' }).resultMemoryBytes, 1_000_000);
    assert.throws(() => loadConfig({ QUERY_RESULT_MEMORY: 'lots' }), /QUERY_RESULT_MEMORY must be a size/);
    assert.throws(() => loadConfig({ QUERY_RESULT_MEMORY: '0' }), /QUERY_RESULT_MEMORY must be a size/);
  });
});

const source: SourceTable = {
  id: '00000000-0000-4000-8000-0000000000b1',
  name: 'memory.events',
  table: 'src_memory',
  schema: schema({ kind: str }),
};
const ENGINE_ROWS = 3000;
const data = {
  'memory.events': Array.from({ length: ENGINE_ROWS }, (_, i) => ({
    id: `e${String(i).padStart(5, '0')}`,
    timestamp: new Date(Date.UTC(2026, 10, 21, 10, 0, 0, i)).toISOString(),
    // About 1 KB each, stored: the tests read large values rather than build them
    // (QUERY_MAX_VALUE_BYTES bounds what a query may build per row).
    kind: String(i).padEnd(1000, 'x'),
  })),
};

for (const engine of engines) {
  describe(`${engine}: a run holds its result's bytes, and gives them back when it fails`, () => {
    let t: QueryTestEngine;
    before(async () => {
      t = await openQueryTestEngine(engine, [source], data);
    });
    after(() => t.close());

    const prepare = (saved: string): PreparedQuery => prepareEndpointQuery({ saved, catalog: t.catalog, sandboxable: false });
    /** 3,000 rows of about 1 KB: some 3 MB of JSON. */
    const large = 'select id, kind as s from `memory.events` order by id';

    test('a run that succeeds leaves its bytes held, about the JSON size of its rows', async () => {
      const pool = new ResultMemory(64 * MiB);
      const claim = pool.claim();
      const result = await t.query.run(prepare(large), {}, { timeoutMs: 30_000, maxRows: ENGINE_ROWS, memory: claim });
      const json = JSON.stringify(result.rows).length;
      assert.equal(result.rows.length, ENGINE_ROWS);
      assert.equal(pool.used, claim.bytes);
      assert.ok(claim.bytes > 0.8 * json && claim.bytes < 1.2 * json, `held ${claim.bytes} for ${json} bytes of JSON`);
      claim.release();
      assert.equal(pool.used, 0);
    });

    test('without a response cap the bytes are still counted', async () => {
      const pool = new ResultMemory(64 * MiB);
      const claim = pool.claim();
      await t.query.run(prepare('select id from `memory.events`'), {}, { timeoutMs: 30_000, maxRows: ENGINE_ROWS, memory: claim });
      assert.ok(claim.bytes > ENGINE_ROWS * 10, `held ${claim.bytes}`);
      claim.release();
    });

    test('the pool refusing stops the run with OVERLOADED, holding nothing', async () => {
      const pool = new ResultMemory(1 * MiB);
      const other = pool.claim();
      other.hold(512 * 1024);
      const claim = pool.claim();
      await assert.rejects(t.query.run(prepare(large), {}, { timeoutMs: 30_000, maxRows: ENGINE_ROWS, memory: claim }), assertOverloaded);
      assert.equal(claim.bytes, 0);
      assert.equal(pool.used, 512 * 1024);
      other.release();
      // The engine is fine afterwards, and the same run alone is answered whole.
      const alone = await t.query.run(prepare(large), {}, { timeoutMs: 30_000, maxRows: ENGINE_ROWS, memory: claim });
      assert.equal(alone.rows.length, ENGINE_ROWS);
      assert.ok(pool.used > 1 * MiB, 'alone, past the pool');
      claim.release();
      assert.equal(pool.used, 0);
    });

    test('RESULT_TOO_LARGE gives back what the rows read so far held', async () => {
      const pool = new ResultMemory(64 * MiB);
      const claim = pool.claim();
      let most = 0;
      const watched = {
        get bytes() {
          return claim.bytes;
        },
        hold(total: number) {
          claim.hold(total);
          most = Math.max(most, total);
        },
        release: () => claim.release(),
      };
      await assert.rejects(
        t.query.run(prepare(large), {}, { timeoutMs: 30_000, maxRows: ENGINE_ROWS, maxBytes: 256 * 1024, memory: watched }),
        (e: unknown) => isQuarryError(e) && e.code === 'RESULT_TOO_LARGE',
      );
      assert.ok(most > 64 * 1024, `held up to ${most} while reading`);
      assert.equal(pool.used, 0);
    });

    test('a failing query gives back what its claim held', async () => {
      const pool = new ResultMemory(64 * MiB);
      const claim = pool.claim();
      // As if an earlier part of the run had held bytes.
      claim.hold(4096);
      await assert.rejects(
        t.query.run(
          prepare("select parse_timestamp('%Y-%m', kind) as n from `memory.events` order by id"),
          {},
          { timeoutMs: 30_000, maxRows: ENGINE_ROWS, memory: claim },
        ),
        (e: unknown) => isQuarryError(e) && e.code === 'INVALID_QUERY',
      );
      assert.equal(pool.used, 0);
    });

    test('a query stopped at its time limit gives back what its claim held', async () => {
      const pool = new ResultMemory(64 * MiB);
      const claim = pool.claim();
      claim.hold(4096);
      const slow = 'select count(*) as n from `memory.events` a cross join `memory.events` b cross join `memory.events` c where a.kind <> c.kind';
      await assert.rejects(
        t.query.run(prepare(slow), {}, { timeoutMs: 100, maxRows: 10, memory: claim }),
        (e: unknown) => isQuarryError(e) && e.code === 'QUERY_TIMEOUT',
      );
      assert.equal(pool.used, 0);
    });
  });
}

const SOURCE = 'cloudflare.logs.prod';
const HTTP_ROWS = 1000;
const MESSAGE_BYTES = 12_000;
/**
 * 1,000 stored messages of 12 KB: a 12 MB response, three times the pool and the socket's buffers
 * (Linux's loopback takes some 4 MB of an unread response: tcp_wmem's largest send buffer).
 */
const LARGE = 'select event_message as s from big';

/** Reads a response's body whole without decoding it: its length in bytes (the rows are ASCII). */
async function bodyBytes(r: Response): Promise<number> {
  let n = 0;
  for await (const chunk of r.body ?? []) n += (chunk as Uint8Array).byteLength;
  return n;
}

/** Waits until `check` holds (the response's end reaches the server a moment after the client's). */
async function eventually(check: () => boolean, what: string): Promise<void> {
  const until = Date.now() + 5000;
  while (!check()) {
    if (Date.now() > until) assert.fail(what);
    await new Promise((r) => setTimeout(r, 10));
  }
}

for (const engine of engines) {
  describe(`${engine}: results share QUERY_RESULT_MEMORY over HTTP`, () => {
    let s: TestServer;
    let endpointId: string;
    let cachedId: string;

    const post = (id: string, body: Record<string, string>, signal?: AbortSignal) =>
      s.fetch(`/api/endpoints/query/${id}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        ...(signal ? { signal } : {}),
      });
    const used = () => s.server.resultMemory.used;

    before(async () => {
      s = await startTestServer({ ...engineEnv(engine), QUERY_RESULT_MEMORY: '4MiB' });
      assert.equal(s.server.resultMemory.size, 4 * MiB);
      for (let i = 0; i < HTTP_ROWS; i += 500) {
        await ingest(
          s,
          SOURCE,
          Array.from({ length: 500 }, (_, j) => ({ message: `m${String(i + j).padStart(5, '0')}`.padEnd(MESSAGE_BYTES, 'x'), project: 'p' })),
        );
      }
      const query = `with big as (select event_message, timestamp from \`${SOURCE}\`) select event_message from big`;
      endpointId = (await createEndpoint(s, { name: 'memory.big', query, sandboxable: true, max_limit: HTTP_ROWS, cache_duration_seconds: 0 })).id;
      cachedId = (await createEndpoint(s, { name: 'memory.cached', query, sandboxable: true, max_limit: HTTP_ROWS, cache_duration_seconds: 60 })).id;
    });
    after(() => s?.close());

    test('a large result meeting another one still being sent is 503 OVERLOADED; alone it is a 200', async () => {
      // The first response is not read: the server cannot finish writing it, so it holds its bytes.
      const first = await post(endpointId, { sql: LARGE });
      assert.equal(first.status, 200);
      assert.ok(used() > 4 * MiB, `the unread response holds ${used()} bytes`);
      const second = await post(endpointId, { sql: LARGE });
      const refused = (await second.json()) as { error?: { code: string; message: string } };
      assert.equal(second.status, 503);
      assert.equal(refused.error?.code, 'OVERLOADED');
      assert.match(refused.error?.message ?? '', /^Other large results are being sent right now; retry shortly, or select fewer rows/);
      assert.ok(Number(second.headers.get('retry-after')) > 0);
      const whole = (await first.json()) as { result: { s: string }[] };
      assert.equal(whole.result.length, HTTP_ROWS);
      assert.equal(whole.result[0]?.s.length, MESSAGE_BYTES);
      await eventually(() => used() === 0, `the pool still holds ${used()} bytes`);
    });

    test('one after the other, both are answered whole, in every format', async () => {
      for (const format of ['json', 'csv', 'ndjson']) {
        for (let i = 0; i < 2; i++) {
          const r = await post(endpointId, { sql: LARGE, format });
          assert.equal(r.status, 200, format);
          assert.ok((await bodyBytes(r)) > HTTP_ROWS * MESSAGE_BYTES, format);
          await eventually(() => used() === 0, `${format}: the pool still holds ${used()} bytes`);
        }
      }
    });

    test('two at once: whatever the timing, at least one is answered and a refusal is OVERLOADED', async () => {
      const answers = await Promise.all([post(endpointId, { sql: LARGE }), post(endpointId, { sql: LARGE })]);
      const statuses = answers.map((r) => r.status);
      for (const r of answers) {
        if (r.status === 200) assert.ok((await bodyBytes(r)) > HTTP_ROWS * MESSAGE_BYTES);
        else assert.equal(((await r.json()) as { error?: { code: string } }).error?.code, 'OVERLOADED');
      }
      assert.ok(statuses.includes(200), String(statuses));
      await eventually(() => used() === 0, `the pool still holds ${used()} bytes`);
    });

    test('a response the client abandons gives its memory back', async () => {
      const abort = new AbortController();
      const r = await post(endpointId, { sql: LARGE }, abort.signal);
      assert.equal(r.status, 200);
      assert.ok(used() > 0);
      abort.abort();
      await r.body?.cancel().catch(() => undefined);
      await eventually(() => used() === 0, `the pool still holds ${used()} bytes`);
    });

    test('a cached result is bounded by the cache, not held twice while it is sent', async () => {
      const r = await post(cachedId, { sql: LARGE });
      assert.equal(r.status, 200);
      assert.equal(r.headers.get('x-cache'), 'MISS');
      assert.equal(used(), 0, 'unread, yet nothing held: the cache has it');
      const other = await post(endpointId, { sql: LARGE });
      assert.equal(other.status, 200);
      assert.ok((await bodyBytes(other)) > HTTP_ROWS * MESSAGE_BYTES);
      assert.ok((await bodyBytes(r)) > HTTP_ROWS * MESSAGE_BYTES);
      await eventually(() => used() === 0, `the pool still holds ${used()} bytes`);
    });

    test('the service answers normally afterwards, and the pool is empty', async () => {
      const r = await post(endpointId, { sql: 'select count(*) as n from big' });
      assert.equal(r.status, 200);
      assert.deepEqual(((await r.json()) as { result: unknown[] }).result, [{ n: HTTP_ROWS }]);
      await eventually(() => used() === 0, `the pool still holds ${used()} bytes`);
      assert.equal(s.server.resultMemory.holders, 0);
    });
  });
}
