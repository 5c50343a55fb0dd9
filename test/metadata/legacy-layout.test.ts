/**
 * A data directory from before the metadata store had its own file (metadata tables inside
 * quarry.duckdb, no metadata.duckdb) starts on this version with every source, token and endpoint
 * intact, its events readable, and the old tables gone from the event database; a start
 * interrupted half-way through the move finishes it. The same directory started with DATABASE_URL
 * moves its metadata into PostgreSQL.
 *
 * The older directory is made once and each case that needs one gets a copy of it; PostgreSQL is
 * started at the beginning, beside the first case, which does not use it.
 */
import assert from 'node:assert/strict';
import { cpSync, existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DuckDBInstance } from '@duckdb/node-api';
import pg from 'pg';
import { startTestPostgres, type TestPostgres } from '../support/postgres.ts';
import { startTestServer, type TestServer, tempDataDir } from '../support/server.ts';

/** Quarry 0.1's metadata tables, exactly as 0.1 created them in quarry.duckdb. */
const LEGACY_DDL = [
  `CREATE TABLE _quarry_sources (
    id VARCHAR PRIMARY KEY, name VARCHAR NOT NULL UNIQUE, "table" VARCHAR NOT NULL,
    retention_days INTEGER, created_at TIMESTAMP NOT NULL, updated_at TIMESTAMP NOT NULL)`,
  `CREATE TABLE _quarry_tokens (
    id VARCHAR PRIMARY KEY, token_hash VARCHAR NOT NULL, description VARCHAR, scopes VARCHAR NOT NULL,
    created_at TIMESTAMP NOT NULL, revoked_at TIMESTAMP)`,
  `CREATE TABLE _quarry_endpoints (
    id VARCHAR PRIMARY KEY, name VARCHAR NOT NULL UNIQUE, description VARCHAR, query VARCHAR NOT NULL,
    language VARCHAR NOT NULL, sandboxable BOOLEAN NOT NULL, max_limit INTEGER NOT NULL,
    cache_duration_seconds INTEGER NOT NULL, proactive_requerying_seconds INTEGER NOT NULL,
    enable_auth BOOLEAN NOT NULL, redact_pii BOOLEAN NOT NULL, labels VARCHAR,
    created_at TIMESTAMP NOT NULL, updated_at TIMESTAMP NOT NULL)`,
];

/** Rewrites a data directory into 0.1's layout: metadata rows into quarry.duckdb, no metadata.duckdb. */
async function makeLegacy(dataDir: string): Promise<void> {
  const db = await DuckDBInstance.create(path.join(dataDir, 'quarry.duckdb'));
  const conn = await db.connect();
  await conn.run(`ATTACH '${path.join(dataDir, 'metadata.duckdb')}' AS m (READ_ONLY)`);
  for (const ddl of LEGACY_DDL) await conn.run(ddl);
  await conn.run('INSERT INTO _quarry_sources SELECT id, name, "table", retention_days, created_at, updated_at FROM m._quarry_sources');
  await conn.run('INSERT INTO _quarry_tokens SELECT * FROM m._quarry_tokens');
  await conn.run(`INSERT INTO _quarry_endpoints
    SELECT id, name, json_extract_string(definition, '$.description'), json_extract_string(definition, '$.query'),
      'bq_sql', json_extract(definition, '$.sandboxable')::BOOLEAN, json_extract(definition, '$.max_limit')::INTEGER,
      json_extract(definition, '$.cache_duration_seconds')::INTEGER,
      json_extract(definition, '$.proactive_requerying_seconds')::INTEGER,
      json_extract(definition, '$.enable_auth')::BOOLEAN, json_extract(definition, '$.redact_pii')::BOOLEAN,
      json_extract_string(definition, '$.labels'), created_at, updated_at
    FROM m._quarry_endpoints`);
  await conn.run('DETACH m');
  conn.closeSync();
  db.closeSync();
  await rm(path.join(dataDir, 'metadata.duckdb'), { force: true });
  await rm(path.join(dataDir, 'metadata.duckdb.wal'), { force: true });
}

async function legacyTables(dataDir: string): Promise<string[]> {
  const db = await DuckDBInstance.create(path.join(dataDir, 'quarry.duckdb'), { access_mode: 'READ_ONLY' });
  const conn = await db.connect();
  const reader = await conn.runAndReadAll(
    "SELECT table_name FROM duckdb_tables() WHERE table_name IN ('_quarry_sources', '_quarry_tokens', '_quarry_endpoints') ORDER BY 1",
  );
  const names = reader.getRows().map((r) => String(r[0]));
  conn.closeSync();
  db.closeSync();
  return names;
}

interface Legacy {
  dataDir: string;
  endpointId: string;
  queryToken: string;
  revokedToken: string;
  sourcesBefore: unknown;
}

/** A data directory with events, an endpoint and tokens, rewritten into the older layout. */
async function legacyDataDir(): Promise<Legacy> {
  const dataDir = await tempDataDir();
  const s = await startTestServer({}, dataDir);
  const ingest = await s.fetch('/api/logs?source_name=postgres.logs', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify([{ event_message: 'kept across the move', project: 'p1', timestamp: '2026-11-21T10:00:00Z' }]),
  });
  assert.equal(ingest.status, 200);
  const created = await s.fetch('/api/endpoints', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      name: 'moved.messages',
      query: 'select event_message from `postgres.logs` order by timestamp',
      max_limit: 7,
      labels: 'team=ops',
      enable_auth: true,
    }),
  });
  assert.equal(created.status, 201);
  const endpoint = (await created.json()) as { id: string };
  const tokenRes = await s.fetch('/api/access-tokens', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ scopes: ['query'], description: 'made by 0.1' }),
  });
  const queryToken = ((await tokenRes.json()) as { token: string }).token;
  const revokedRes = await s.fetch('/api/access-tokens', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ scopes: ['query'], description: 'revoked in 0.1' }),
  });
  const revoked = (await revokedRes.json()) as { id: string; token: string };
  assert.equal((await s.fetch(`/api/access-tokens/${revoked.id}`, { method: 'DELETE' })).status, 204);
  const sourcesBefore = await (await s.fetch('/api/sources')).json();
  await s.stop();
  await makeLegacy(dataDir);
  assert.equal(existsSync(path.join(dataDir, 'metadata.duckdb')), false);
  assert.deepEqual(await legacyTables(dataDir), ['_quarry_endpoints', '_quarry_sources', '_quarry_tokens']);
  return { dataDir, endpointId: endpoint.id, queryToken, revokedToken: revoked.token, sourcesBefore };
}

let legacyOnce: Promise<Legacy> | undefined;

/** A copy of the older data directory (made on the first call). */
async function legacyCopy(): Promise<Legacy> {
  legacyOnce ??= legacyDataDir();
  const legacy = await legacyOnce;
  const dataDir = await tempDataDir();
  cpSync(legacy.dataDir, dataDir, { recursive: true });
  return { ...legacy, dataDir };
}

/** Everything the older directory held, through the running service. */
async function assertCarriedOver(s: TestServer, legacy: Legacy): Promise<void> {
  const { endpointId, queryToken, revokedToken, sourcesBefore } = legacy;
  assert.deepEqual(await (await s.fetch('/api/sources')).json(), sourcesBefore);
  const ran = await s.fetch('/api/endpoints/query/moved.messages', {}, queryToken);
  assert.equal(ran.status, 200);
  assert.deepEqual(await ran.json(), { result: [{ event_message: 'kept across the move' }] });
  const got = (await (await s.fetch(`/api/endpoints/${endpointId}`)).json()) as Record<string, unknown>;
  assert.deepEqual([got.name, got.max_limit, got.labels], ['moved.messages', 7, 'team=ops']);
  assert.equal((await s.fetch('/api/endpoints/query/moved.messages', {}, revokedToken)).status, 401);
  const names = ((await (await s.fetch('/api/endpoints')).json()) as { name: string }[]).map((e) => e.name).sort();
  assert.deepEqual(names, ['logs.all', 'moved.messages', 'usage.api-counts']);
}

describe('moving an older data directory forward', () => {
  let dataDir = '';
  let s: TestServer | undefined;
  let pgStarted: Promise<TestPostgres>;
  before(() => {
    pgStarted = startTestPostgres();
    pgStarted.catch(() => undefined);
  });
  after(async () => {
    await s?.stop();
    await (await pgStarted.catch(() => undefined))?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
    const made = await legacyOnce?.catch(() => undefined);
    if (made) await rm(made.dataDir, { recursive: true, force: true });
  });

  it('keeps sources, tokens, endpoints and events, and drops the old tables', async () => {
    const legacy = await legacyCopy();
    dataDir = legacy.dataDir;
    const { queryToken, sourcesBefore } = legacy;
    s = await startTestServer({}, dataDir);
    await assertCarriedOver(s, legacy);
    await s.stop();

    assert.equal(existsSync(path.join(dataDir, 'metadata.duckdb')), true);
    assert.deepEqual(await legacyTables(dataDir), []);

    // A move interrupted after the copy (old tables still there) finishes without duplicates.
    const events = await DuckDBInstance.create(path.join(dataDir, 'quarry.duckdb'));
    const ec = await events.connect();
    for (const ddl of LEGACY_DDL) await ec.run(ddl);
    await ec.run(`ATTACH '${path.join(dataDir, 'metadata.duckdb')}' AS m (READ_ONLY)`);
    await ec.run('INSERT INTO _quarry_sources SELECT id, name, "table", retention_days, created_at, updated_at FROM m._quarry_sources');
    await ec.run('DETACH m');
    ec.closeSync();
    events.closeSync();

    s = await startTestServer({}, dataDir);
    assert.deepEqual(await (await s.fetch('/api/sources')).json(), sourcesBefore);
    assert.equal((await s.fetch('/api/endpoints/query/moved.messages', {}, queryToken)).status, 200);
    await s.stop();
    assert.deepEqual(await legacyTables(dataDir), []);
  });

  it('started with DATABASE_URL, the older directory moves its metadata into PostgreSQL', async () => {
    await rm(dataDir, { recursive: true, force: true });
    const legacy = await legacyCopy();
    dataDir = legacy.dataDir;
    const url = await (await pgStarted).createDatabase('moved');
    s = await startTestServer({ DATABASE_URL: url }, dataDir);
    await assertCarriedOver(s, legacy);
    await s.stop();
    assert.deepEqual(await legacyTables(dataDir), []);
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    const r = await c.query("SELECT definition->>'labels' AS labels FROM quarry_endpoints WHERE name = 'moved.messages'");
    await c.end();
    assert.deepEqual(r.rows, [{ labels: 'team=ops' }]);
  });

  it('a node that ran on the embedded store brings its metadata into PostgreSQL once', async () => {
    await rm(dataDir, { recursive: true, force: true });
    dataDir = await tempDataDir();
    s = await startTestServer({}, dataDir);
    const created = await s.fetch('/api/endpoints', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'single.node', query: 'select event_message from `postgres.logs`' }),
    });
    const { id } = (await created.json()) as { id: string };
    const sourcesBefore = await (await s.fetch('/api/sources')).json();
    await s.stop();

    const url = await (await pgStarted).createDatabase('from_embedded');
    s = await startTestServer({ DATABASE_URL: url }, dataDir);
    assert.deepEqual(await (await s.fetch('/api/sources')).json(), sourcesBefore);
    assert.equal(((await (await s.fetch(`/api/endpoints/${id}`)).json()) as { name: string }).name, 'single.node');
    const names = ((await (await s.fetch('/api/endpoints')).json()) as { name: string }[]).map((e) => e.name).sort();
    assert.deepEqual(names, ['logs.all', 'single.node', 'usage.api-counts']);
    await s.stop();
    assert.equal(existsSync(path.join(dataDir, 'metadata.duckdb')), false);
    assert.equal(existsSync(path.join(dataDir, 'metadata.duckdb.moved-to-postgres')), true);
  });
});
