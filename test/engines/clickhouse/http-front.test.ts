/**
 * The test front (test/support/clickhouse-front.ts) answers `@clickhouse/client` as a ClickHouse
 * server would, for what Quarry's tests rely on: query parameters arrive as the server reads them,
 * settings last one request, errors carry ClickHouse's code and type, and users are checked.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type ClickHouseClient, ClickHouseLogLevel, createClient } from '@clickhouse/client';
import { type ClickHouseFront, startClickHouseFront } from '../../support/clickhouse-front.ts';
import { engines } from '../../support/engines.ts';

describe('the ClickHouse HTTP front over chDB', { skip: !engines.includes('clickhouse') && 'chdb is not installed' }, () => {
  let dir = '';
  let front: ClickHouseFront;
  let client: ClickHouseClient;
  const rows = async (query: string, extra: Parameters<ClickHouseClient['query']>[0] = { query }) =>
    (await (await client.query({ ...extra, query, format: 'JSONEachRow' })).json()) as Record<string, unknown>[];

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'quarry-front-test-'));
    front = await startClickHouseFront({ path: dir, users: { default: { password: '' }, u: { password: 'p' } }, sessions: 2 });
    client = createClient({ url: front.url, log: { level: ClickHouseLogLevel.OFF } });
  });
  after(async () => {
    await client?.close();
    await front?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('binds query parameters as the server reads them: text with tabs, quotes and backslashes, NULL, arrays', async () => {
    const text = "tab\there, quote ' and backslash \\ and newline\n";
    const got = await rows('SELECT {s:String} AS s, {n:Nullable(String)} AS n, {a:Array(String)} AS a, {i:Int64} + 1 AS i', {
      query: '',
      query_params: { s: text, n: null, a: ["x'y", 'z\\w'], i: '41' },
    });
    assert.deepEqual(got, [{ s: text, n: null, a: ["x'y", 'z\\w'], i: 42 }]);
  });

  it('a setting lasts its request only', async () => {
    const limited = async (settings: Record<string, string | number>) =>
      rows("SELECT value FROM system.settings WHERE name = 'max_result_rows'", { query: '', clickhouse_settings: settings });
    assert.deepEqual(await limited({ max_result_rows: 7 }), [{ value: '7' }]);
    // Every session of the pool: none kept it.
    for (let i = 0; i < 4; i++) assert.deepEqual(await limited({}), [{ value: '0' }]);
  });

  it("errors are ClickHouse's, with code and type; inserts and commands work", async () => {
    await client.command({ query: 'CREATE TABLE IF NOT EXISTS t (a Int64) ENGINE = MergeTree ORDER BY a' });
    await client.insert({ table: 't', values: [{ a: 1 }, { a: 2 }], format: 'JSONEachRow' });
    assert.deepEqual(await rows('SELECT sum(a) AS s FROM t'), [{ s: 3 }]);
    await assert.rejects(rows('SELECT * FROM no_such_table'), (e: unknown) => {
      const err = e as { code?: string; type?: string };
      return err.code === '60' && err.type === 'UNKNOWN_TABLE';
    });
  });

  it('checks users', async () => {
    const wrong = createClient({ url: front.url, username: 'u', password: 'nope', log: { level: ClickHouseLogLevel.OFF } });
    const right = createClient({ url: front.url, username: 'u', password: 'p', log: { level: ClickHouseLogLevel.OFF } });
    try {
      await assert.rejects(
        wrong.query({ query: 'SELECT 1', format: 'JSONEachRow' }),
        (e: unknown) => (e as { type?: string }).type === 'AUTHENTICATION_FAILED',
      );
      assert.deepEqual(await (await right.query({ query: 'SELECT 1 AS one', format: 'JSONEachRow' })).json(), [{ one: 1 }]);
    } finally {
      await wrong.close();
      await right.close();
    }
  });
});
