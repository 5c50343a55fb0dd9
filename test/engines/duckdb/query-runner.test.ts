/** The DuckDB query runner: time limit, row cap, error mapping and result encoding. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { logsAllSql } from '../../../src/endpoints/supabase/index.ts';
import { datetimeString } from '../../../src/engines/duckdb/encode.ts';
import { DuckDbQueryRunner, mapDuckDbError } from '../../../src/engines/duckdb/runner.ts';
import { isQuarryError } from '../../../src/errors.ts';
import { prepareEndpointQuery } from '../../../src/sql/index.ts';
import { supabaseData, supabaseSources } from '../../sql/fixtures.ts';
import { openTestDb, type TestDb } from '../../sql/support.ts';

let t: TestDb;
let runner: DuckDbQueryRunner;

before(async () => {
  t = await openTestDb(supabaseSources, supabaseData);
  runner = new DuckDbQueryRunner({ connect: () => t.db.connect() });
});

after(() => {
  runner.close();
  t.db.close();
});

function prepared(sql: string) {
  return prepareEndpointQuery({ saved: logsAllSql, caller: { sql }, catalog: t.catalog, sandboxable: true });
}

describe('DuckDbQueryRunner', () => {
  test('a query past its time limit is interrupted: QUERY_TIMEOUT', async () => {
    // 86 400 × 86 400 rows: minutes of work unless stopped.
    const slow = prepared(`select count(*) as n
      from unnest(generate_timestamp_array('2026-01-01T00:00:00Z', '2026-01-02T00:00:00Z', interval 1 second)) as a,
           unnest(generate_timestamp_array('2026-01-01T00:00:00Z', '2026-01-02T00:00:00Z', interval 1 second)) as b`);
    const started = Date.now();
    await assert.rejects(runner.run(slow, { project: 'default' }, { timeoutMs: 300, maxRows: 10 }), (e: unknown) => {
      assert.ok(isQuarryError(e));
      assert.equal(e.code, 'QUERY_TIMEOUT');
      assert.equal(e.status, 504);
      return true;
    });
    assert.ok(Date.now() - started < 5000, 'the interrupt stops the query promptly');
    // The pooled connection is usable afterwards.
    const ok = await runner.run(prepared('select count(*) as n from auth_logs'), { project: 'default' }, { timeoutMs: 5000, maxRows: 10 });
    assert.deepEqual(ok.rows, [{ n: 2 }]);
  });

  test('rows come back whole and in order whether the result is read at once (a cap within one chunk) or streamed', async () => {
    // 2048 rows (one DuckDB chunk) is where the driver switches from a materialised result to a stream.
    const every3 = prepared('select x from unnest(generate_array(1, 9000)) as x where mod(x, 3) = 0');
    for (const maxRows of [1, 700, 2000, 2048, 2049, 2999]) {
      const r = await runner.run(every3, { project: 'default' }, { timeoutMs: 5000, maxRows });
      assert.equal(r.rows.length, maxRows, `maxRows ${maxRows}`);
      assert.deepEqual(
        r.rows.map((row) => row.x),
        Array.from({ length: maxRows }, (_, i) => 3 * (i + 1)),
        `maxRows ${maxRows}`,
      );
    }
  });

  test('warnings come back with the rows', async () => {
    const r = await runner.run(
      prepared('select parsed.detail from postgres_logs cross join unnest(metadata) as m cross join unnest(m.parsed) as parsed limit 1'),
      { project: 'default' },
      { timeoutMs: 5000, maxRows: 10 },
    );
    assert.deepEqual(r.rows, [{ detail: null }]);
    assert.deepEqual(r.warnings, ['parsed.detail']);
  });

  test('absent parameters are bound as NULL', async () => {
    const r = await runner.run(prepared('select @iso_timestamp_start is null as absent'), { project: 'default' }, { timeoutMs: 5000, maxRows: 10 });
    assert.deepEqual(r.rows, [{ absent: true }]);
  });

  test('DuckDB errors map to stable codes without SQL text', () => {
    const binder = mapDuckDbError(new Error('Binder Error: Referenced column "x" not found\n\nLINE 1: SELECT "t"."x" FROM "src_edge"'));
    assert.equal(binder.code, 'INVALID_QUERY');
    assert.doesNotMatch(binder.message, /LINE|src_edge/);
    const other = mapDuckDbError(new Error('INTERNAL Error: something in SELECT * FROM "src_edge"'));
    assert.equal(other.code, 'INTERNAL');
    assert.doesNotMatch(other.message, /src_edge/);
  });
});

describe('encoding', () => {
  test('DATETIME strings carry fractional seconds only when present', () => {
    const base = BigInt(Date.parse('2026-11-21T10:00:00Z')) * 1000n;
    assert.equal(datetimeString(base), '2026-11-21T10:00:00');
    assert.equal(datetimeString(base + 123456n), '2026-11-21T10:00:00.123456');
  });

  test('timestamps in nested records are microseconds too', async () => {
    const r = await runner.run(
      prepared('select array_agg(timestamp order by timestamp limit 2) as ts, timestamp_trunc(max(timestamp), day) as day from auth_logs'),
      { project: 'default' },
      { timeoutMs: 5000, maxRows: 10 },
    );
    const at = (hms: string) => Date.parse(`2026-11-21T${hms}Z`) * 1000;
    assert.deepEqual(r.rows, [{ ts: [at('10:00:00'), at('10:05:00')], day: at('00:00:00') }]);
  });
});

describe('fixed costs are paid once per distinct query', () => {
  test('column-wise encoding gives what the value encoder gives (records, lists, datetimes, 64-bit ints)', async () => {
    const sql = `select id, timestamp, datetime(timestamp) as dt, metadata, array_agg(event_message) over () as msgs,
      count(*) over () as n, [1, 2] as xs, cast(null as string) as nothing
      from edge_logs order by timestamp desc limit 5`;
    const query = prepared(sql);
    const r = await runner.run(query, { project: 'default' }, { timeoutMs: 5000, maxRows: 10 });
    const { generateDuckDb } = await import('../../../src/engines/duckdb/generator.ts');
    const { encodeValue } = await import('../../../src/engines/duckdb/encode.ts');
    const { VARCHAR } = await import('@duckdb/node-api');
    const g = generateDuckDb(query.ast, { catalog: t.catalog, maxRows: 10 });
    const conn = await t.db.connect();
    try {
      const reader = await conn.runAndReadAll(
        g.sql,
        { project: 'default', iso_timestamp_start: null, iso_timestamp_end: null },
        { project: VARCHAR, iso_timestamp_start: VARCHAR, iso_timestamp_end: VARCHAR },
      );
      const names = reader.columnNames();
      const expected = reader.getRows().map((row) => Object.fromEntries(row.map((v, i) => [names[i]!, encodeValue(v, g.columns[i]?.type)])));
      assert.ok(expected.length > 0);
      assert.deepEqual(r.rows, expected);
    } finally {
      t.db.disconnect(conn);
    }
  });

  test('the same caller text gives the same prepared query until a source it reads disappears', async () => {
    const sources = new Map(t.sources.map((s) => [s.name, s]));
    const catalog = { sourceByName: (name: string) => sources.get(name) };
    const input = { saved: logsAllSql, caller: { sql: 'select count(*) as n from auth_logs' }, catalog, sandboxable: true };
    const first = prepareEndpointQuery(input);
    assert.equal(prepareEndpointQuery(input), first);
    const before = await runner.run(first, { project: 'default' }, { timeoutMs: 5000, maxRows: 10 });
    assert.deepEqual(before.rows, [{ n: 2 }]);
    const edge = sources.get('cloudflare.logs.prod')!;
    sources.delete('cloudflare.logs.prod');
    assert.throws(
      () => prepareEndpointQuery(input),
      (e: unknown) => isQuarryError(e) && e.code === 'QUERY_NOT_ALLOWED',
    );
    sources.set('cloudflare.logs.prod', edge);
    assert.deepEqual((await runner.run(prepareEndpointQuery(input), { project: 'default' }, { timeoutMs: 5000, maxRows: 10 })).rows, [{ n: 2 }]);
  });

  test('a changed catalogue entry regenerates the SQL for a remembered query', async () => {
    const sources = new Map(t.sources.map((s) => [s.name, s]));
    const catalog = { sourceByName: (name: string) => sources.get(name) };
    const query = prepareEndpointQuery({ saved: logsAllSql, caller: { sql: 'select count(*) as n from auth_logs' }, catalog, sandboxable: true });
    assert.deepEqual((await runner.run(query, { project: 'default' }, { timeoutMs: 5000, maxRows: 10 })).rows, [{ n: 2 }]);
    // Same name, another physical table: the remembered translation must not be used.
    const auth = sources.get('gotrue.logs.prod')!;
    sources.set('gotrue.logs.prod', { ...auth, table: 'no_such_table' });
    await assert.rejects(runner.run(query, { project: 'default' }, { timeoutMs: 5000, maxRows: 10 }), (e: unknown) => isQuarryError(e));
    sources.set('gotrue.logs.prod', auth);
    assert.deepEqual((await runner.run(query, { project: 'default' }, { timeoutMs: 5000, maxRows: 10 })).rows, [{ n: 2 }]);
  });

  test('prepared statements are reused with fresh bindings each run', async () => {
    const query = prepared('select @project as p, @iso_timestamp_start as s');
    const a = await runner.run(query, { project: 'default', iso_timestamp_start: 'x' }, { timeoutMs: 5000, maxRows: 10 });
    const b = await runner.run(query, { project: 'other' }, { timeoutMs: 5000, maxRows: 10 });
    assert.deepEqual(a.rows, [{ p: 'default', s: 'x' }]);
    assert.deepEqual(b.rows, [{ p: 'other', s: null }], 'an absent parameter is NULL, not the previous value');
  });
});
