/**
 * Record presence markers (src/storage/presence.ts): `CROSS JOIN UNNEST(record)` drops an event
 * that did not carry the record, as in BigQuery, on both engines; the marker never shows; tables
 * written before markers existed answer the same (DuckDB migrates them at open; a ClickHouse table
 * not known to be marked is tested the slow way).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { openDuckDb } from '../../src/embedded-db/database.ts';
import { DuckDbQueryRunner } from '../../src/engines/duckdb/runner.ts';
import { DuckDbStorage } from '../../src/engines/duckdb/storage.ts';
import { generateClickHouse } from '../../src/engines/clickhouse/printer.ts';
import { generateDuckDb } from '../../src/engines/duckdb/generator.ts';
import type { QueryEngine } from '../../src/query/port.ts';
import { mergeSchema } from '../../src/storage/infer.ts';
import { PRESENCE_KEY, withPresence } from '../../src/storage/presence.ts';
import { baseColumns, type SourceTable } from '../../src/storage/schema.ts';
import { prepareEndpointQuery } from '../../src/sql/index.ts';
import { duckType, int, list, makeCatalog, rec, schema, str } from '../sql/support.ts';
import { engines, openQueryTestEngine, type QueryTestEngine, storedEvent } from '../support/engines.ts';

const source: SourceTable = {
  id: '00000000-0000-4000-8000-000000000001',
  name: 'logs',
  table: 'src_logs',
  schema: schema({
    metadata: rec({
      request: rec({ method: str, path: str }),
      response: rec({ status_code: int }),
      tags: list(rec({ k: str, inner: rec({ v: int }) })),
    }),
  }),
};

const at = '2026-11-21T10:00:00Z';
const events = [
  {
    id: 'e1',
    timestamp: at,
    event_message: 'a',
    metadata: { request: { method: 'GET' }, response: { status_code: 200 }, tags: [{ k: 'x', inner: { v: 1 } }, { k: 'y' }] },
  },
  { id: 'e2', timestamp: at, event_message: 'b', metadata: { response: { status_code: 500 } } },
  { id: 'e3', timestamp: at, event_message: 'c' },
  { id: 'e4', timestamp: at, event_message: 'd', metadata: { request: {} } },
];

async function ids(query: QueryEngine, catalog: ReturnType<typeof makeCatalog>, sql: string): Promise<unknown[]> {
  const r = await query.run(prepareEndpointQuery({ saved: sql, catalog, sandboxable: false }), {}, { timeoutMs: 30_000, maxRows: 1000 });
  return r.rows.map((row) => row.id);
}

async function rows(query: QueryEngine, catalog: ReturnType<typeof makeCatalog>, sql: string): Promise<Record<string, unknown>[]> {
  return (await query.run(prepareEndpointQuery({ saved: sql, catalog, sandboxable: false }), {}, { timeoutMs: 30_000, maxRows: 1000 })).rows;
}

const dropped = 'select t.id from logs t cross join unnest(t.metadata) m cross join unnest(m.request) r order by t.id';
const comma = 'select t.id from logs t, unnest(t.metadata) m, unnest(m.request) r order by t.id';
const kept = 'select t.id from logs t cross join unnest(t.metadata) m left join unnest(m.request) r on true order by t.id';
const throughCte = 'with c as (select id, metadata from logs) select c.id from c cross join unnest(c.metadata) m cross join unnest(m.request) r order by c.id';
const inList = 'select t.id from logs t cross join unnest(t.metadata) m cross join unnest(m.tags) x cross join unnest(x.inner) i order by t.id';

test('withPresence marks records reached through records only', () => {
  const marked = withPresence({ a: 1, m: { r: { x: 1 }, l: [{ y: {} }] } });
  assert.deepEqual(marked, { a: 1, m: { [PRESENCE_KEY]: true, r: { [PRESENCE_KEY]: true, x: 1 }, l: [{ y: {} }] } });
  const plain = { a: 1, l: [{ b: 2 }] };
  assert.equal(withPresence(plain), plain);
});

for (const engineName of engines) {
  describe(`record presence on ${engineName}`, () => {
    let engine: QueryTestEngine;
    before(async () => {
      engine = await openQueryTestEngine(engineName, [source], { logs: events });
    });
    after(async () => {
      await engine.close();
    });

    test('cross join unnest of a record drops events without it; a left join keeps them', async () => {
      assert.deepEqual(await ids(engine.query, engine.catalog, dropped), ['e1', 'e4']);
      assert.deepEqual(await ids(engine.query, engine.catalog, comma), ['e1', 'e4']);
      assert.deepEqual(await ids(engine.query, engine.catalog, kept), ['e1', 'e2', 'e4']);
      assert.deepEqual(await ids(engine.query, engine.catalog, throughCte), ['e1', 'e4']);
      assert.deepEqual(await ids(engine.query, engine.catalog, inList), ['e1']);
    });

    test('the marker never shows in results or JSON text', async () => {
      const r = await rows(
        engine.query,
        engine.catalog,
        "select t.metadata, to_json_string(t.metadata) as j, to_json_string(m.request) as k, cast(m.request as string) as s, array_length(m.request) as n from logs t cross join unnest(t.metadata) m where t.id in ('e1', 'e4') order by t.id",
      );
      assert.ok(!JSON.stringify(r).includes('present'), JSON.stringify(r));
      assert.deepEqual((r[0]!.metadata as { request: unknown }[])[0]?.request, [{ method: 'GET' }]);
      assert.deepEqual(r[1]?.metadata, [{ request: [{}] }]);
      assert.deepEqual(JSON.parse(String(r[0]?.k ?? '')), { method: 'GET' });
      assert.equal(r[1]?.n, 1);
    });

    test('the presence test reads the marker', () => {
      const sql = prepareEndpointQuery({ saved: dropped, catalog: engine.catalog, sandboxable: false });
      const printed =
        engineName === 'duckdb'
          ? generateDuckDb(sql.ast, { catalog: engine.catalog }).sql
          : generateClickHouse(sql.ast, { catalog: engine.catalog, database: 'quarry_test' }).sql;
      assert.match(printed, /\$present/);
    });
  });
}

if (engines.includes('clickhouse')) {
  describe('a ClickHouse table not known to carry markers', () => {
    let engine: QueryTestEngine;
    before(async () => {
      engine = await openQueryTestEngine('clickhouse', [source], { logs: [] });
      // Rows as a version before markers wrote them.
      const text = events.map((e) => {
        const { id, timestamp, event_message, ...fields } = e;
        return JSON.stringify({ id, timestamp: Date.parse(timestamp) / 1000, event_message, fields });
      });
      await engine.connection!.client.command({ query: `INSERT INTO quarry_test.src_logs FORMAT JSONEachRow ${text.join('\n')}` });
    });
    after(async () => {
      await engine.close();
    });

    test('is tested the slow way and answers correctly', async () => {
      const catalog = makeCatalog([{ ...source, unmarkedRecords: true }]);
      const sql = prepareEndpointQuery({ saved: dropped, catalog, sandboxable: false });
      assert.match(generateClickHouse(sql.ast, { catalog, database: 'quarry_test' }).sql, /JSONAllPaths/);
      assert.deepEqual(await ids(engine.query, catalog, dropped), ['e1']);
      assert.deepEqual(await ids(engine.query, catalog, throughCte), ['e1']);
      // An object sent as {} left no path before markers: such a row reads as not carrying it.
      assert.deepEqual(await ids(engine.query, catalog, kept), ['e1', 'e2']);
    });
  });
}

describe('DuckDB tables from before markers, and schema growth', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'quarry-presence-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test('a table written before markers is migrated at open and answers correctly', async () => {
    const file = path.join(dir, 'old.duckdb');
    const old = await openDuckDb({ path: file, threads: 2 });
    const conn = await old.connect();
    const cols = Object.entries(source.schema.columns).map(([k, v]) => `"${k}" ${duckType(v)}`);
    await conn.run(`CREATE TABLE src_logs (${cols.join(', ')})`);
    const structure = JSON.stringify([
      {
        id: 'VARCHAR',
        timestamp: 'TIMESTAMP',
        event_message: 'VARCHAR',
        metadata: { request: { method: 'VARCHAR', path: 'VARCHAR' }, response: { status_code: 'BIGINT' }, tags: [{ k: 'VARCHAR', inner: { v: 'BIGINT' } }] },
      },
    ]);
    await conn.run(
      'INSERT INTO src_logs SELECT r.id, r.timestamp, r.event_message, r.metadata FROM (SELECT unnest(json_transform(CAST($rows AS JSON), $structure)) AS r)',
      { rows: JSON.stringify(events), structure },
    );
    conn.closeSync();
    old.close();

    const db = await openDuckDb({ path: file, threads: 2 });
    const storage = await DuckDbStorage.open(db);
    const heard: [number, number][] = [];
    const added = await storage.addPresenceMarkers((records, tables) => heard.push([records, tables]));
    assert.equal(added.length, 3, added.join('\n'));
    assert.deepEqual(heard, [[3, 1]], 'the person starting it hears what will take time, before it does');
    assert.deepEqual(await storage.addPresenceMarkers(() => assert.fail('nothing is left to add')), []);
    assert.deepEqual(await storage.describeTable('src_logs'), { columns: source.schema.columns });
    const query = new DuckDbQueryRunner({ connect: () => db.connect() });
    const catalog = makeCatalog([source]);
    assert.deepEqual(await ids(query, catalog, dropped), ['e1', 'e4']);
    assert.deepEqual(await ids(query, catalog, kept), ['e1', 'e2', 'e4']);
    query.close();
    await storage.close();
    db.close();
  });

  test('schema growth gives a new record its marker', async () => {
    const db = await openDuckDb({ path: path.join(dir, 'grow.duckdb'), threads: 2 });
    const storage = await DuckDbStorage.open(db);
    await storage.createSourceTable('src_logs');
    const base = { columns: { ...baseColumns } };
    const first = mergeSchema(base, { metadata: rec({ a: str }) });
    await storage.applySchemaChanges('src_logs', base, first.schema, first.changes);
    const one = storedEvent({ id: 'g1', timestamp: at, metadata: { a: 'x' } });
    await storage.append([{ table: 'src_logs', schema: first.schema, events: [one] }]);
    const grown = mergeSchema(first.schema, { metadata: rec({ extra: rec({ b: int }) }) });
    assert.ok(grown.changes.some((c) => c.kind === 'add_field'));
    await storage.applySchemaChanges('src_logs', first.schema, grown.schema, grown.changes);
    const two = storedEvent({ id: 'g2', timestamp: at, metadata: { a: 'y', extra: { b: 1 } } });
    await storage.append([{ table: 'src_logs', schema: grown.schema, events: [two] }]);
    const grownSource: SourceTable = { ...source, schema: grown.schema };
    const query = new DuckDbQueryRunner({ connect: () => db.connect() });
    const catalog = makeCatalog([grownSource]);
    assert.deepEqual(await ids(query, catalog, 'select t.id from logs t cross join unnest(t.metadata) m cross join unnest(m.extra) x order by t.id'), ['g2']);
    assert.deepEqual(await ids(query, catalog, 'select t.id from logs t cross join unnest(t.metadata) m order by t.id'), ['g1', 'g2']);
    assert.deepEqual(await storage.addPresenceMarkers(), []);
    query.close();
    await storage.close();
    db.close();
  });
});
