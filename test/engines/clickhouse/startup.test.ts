/** Start-up on the ClickHouse engine: configuration errors and an unreachable server are clear. */
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { test } from 'node:test';
import { loadConfig } from '../../../src/config.ts';
import { startServer } from '../../../src/server.ts';
import { tempDataDir } from '../../support/server.ts';

test('QUARRY_ENGINE and CLICKHOUSE_URL are checked', () => {
  assert.throws(() => loadConfig({ QUARRY_ENGINE: 'bigquery' }), /QUARRY_ENGINE must be duckdb or clickhouse/);
  assert.throws(() => loadConfig({ QUARRY_ENGINE: 'clickhouse' }), /needs CLICKHOUSE_URL/);
  assert.throws(() => loadConfig({ QUARRY_ENGINE: 'clickhouse', CLICKHOUSE_URL: 'ftp://x' }), /must start with http/);
  assert.throws(() => loadConfig({ QUARRY_ENGINE: 'clickhouse', CLICKHOUSE_URL: 'chdb:', CLICKHOUSE_DATABASE: 'a;b' }), /CLICKHOUSE_DATABASE/);
  assert.deepEqual(
    loadConfig({ QUARRY_ENGINE: 'clickhouse', CLICKHOUSE_URL: 'chdb:', DATA_DIR: '/d' }).engine.folders.map((f) => f.path),
    ['/d/clickhouse'],
  );
  assert.deepEqual(
    loadConfig({ QUARRY_ENGINE: 'clickhouse', CLICKHOUSE_URL: 'chdb:///var/ch', DATA_DIR: '/d' }).engine.folders.map((f) => f.path),
    ['/var/ch'],
  );
  assert.deepEqual(loadConfig({ QUARRY_ENGINE: 'clickhouse', CLICKHOUSE_URL: 'http://ch:8123', DATA_DIR: '/d' }).engine.folders, []);
  assert.equal(loadConfig({}).engine.name, 'duckdb');
});

test('an unreachable ClickHouse server stops the start with a message naming it', async () => {
  const dir = await tempDataDir();
  try {
    const config = loadConfig({ QUARRY_ENGINE: 'clickhouse', CLICKHOUSE_URL: 'http://127.0.0.1:9', DATA_DIR: dir, PORT: '0', LOG_LEVEL: 'silent' });
    await assert.rejects(startServer(config), /Cannot reach ClickHouse at http:\/\/127\.0\.0\.1:9/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
