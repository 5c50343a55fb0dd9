/**
 * Records every stored event carried (src/storage/carried.ts), through the real ingest pipeline and
 * catalogue on every engine: Studio's count over three UNNESTs reads no presence marker while every
 * event carried the records, and keeps giving BigQuery's answer the moment one event does not,
 * asked the same way before and after each write; the state survives a restart.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { generateClickHouse } from '../../src/engines/clickhouse/printer.ts';
import { generateDuckDb } from '../../src/engines/duckdb/generator.ts';
import type { Engine } from '../../src/engines/engine.ts';
import { engineDefinition } from '../../src/engines/registry.ts';
import { parseBody } from '../../src/ingest/body.ts';
import { IngestService } from '../../src/ingest/pipeline.ts';
import { prepareEndpointQuery } from '../../src/sql/index.ts';
import { engines } from '../support/engines.ts';

const source = { id: '00000000-0000-4000-8000-00000000c0de', name: 'edge' };
const threeUnnests = 'select count(*) as n from edge t cross join unnest(t.metadata) m cross join unnest(m.request) r cross join unnest(m.response) s';
const responseOnly = 'select count(*) as n from edge t cross join unnest(t.metadata) m cross join unnest(m.response) s';
const inCte =
  'with e as (select id, metadata from edge where id is not null) select count(*) as n from e cross join unnest(e.metadata) m cross join unnest(m.request) r cross join unnest(m.response) s';

let seq = 0;
function event(carries: { request?: boolean; response?: boolean; metadata?: boolean } = {}): Record<string, unknown> {
  seq++;
  const base = { id: `ev-${seq}`, timestamp: new Date(Date.UTC(2026, 10, 27, 10, 0, seq % 60)).toISOString(), event_message: `m${seq}` };
  if (carries.metadata === false) return base;
  const metadata: Record<string, unknown> = { host: 'h' };
  if (carries.request !== false) metadata.request = { method: 'GET', headers: { ua: 'x' } };
  if (carries.response !== false) metadata.response = { status_code: 200 };
  return { ...base, metadata };
}

for (const engineName of engines) {
  describe(`records every event carried, through ingest, on ${engineName}`, () => {
    let dir: string;
    let engine: Engine;
    let ingest: IngestService;
    /** What BigQuery answers: events with both records, events with a response. */
    const expected = { both: 0, response: 0 };

    const open = async () => {
      const definition = engineDefinition(engineName);
      assert.ok(definition);
      engine = await definition.configure({ ...definition.selfContained.env }, { dataDir: dir, memoryBudgetBytes: 2 ** 30 }).open();
      ingest = new IngestService({ sources: engine.sources, storage: engine.storage });
    };
    const close = async () => {
      await ingest.close();
      await engine.close();
    };
    const send = async (events: Record<string, unknown>[]) => {
      await ingest.ingest(source, events);
      for (const e of events) {
        const m = e.metadata as Record<string, unknown> | undefined;
        if (m?.response !== undefined) expected.response++;
        if (m?.response !== undefined && m.request !== undefined) expected.both++;
      }
    };
    const count = async (sql: string) => {
      const catalog = engine.sources.catalog;
      const r = await engine.query.run(prepareEndpointQuery({ saved: sql, catalog, sandboxable: false }), {}, { timeoutMs: 30_000, maxRows: 10 });
      return Number(r.rows[0]?.n);
    };
    /** How many presence markers the engine's SQL for `sql` reads, as the catalogue stands. */
    const markers = (sql: string) => {
      const catalog = engine.sources.catalog;
      const { ast } = prepareEndpointQuery({ saved: sql, catalog, sandboxable: false });
      const printed = engineName === 'duckdb' ? generateDuckDb(ast, { catalog }).sql : generateClickHouse(ast, { catalog, database: 'q' }).sql;
      return printed.split('$present').length - 1;
    };
    const check = async (label: string) => {
      for (const sql of [threeUnnests, inCte]) assert.equal(await count(sql), expected.both, `${label}: ${sql}`);
      assert.equal(await count(responseOnly), expected.response, label);
    };

    before(async () => {
      dir = await mkdtemp(path.join(tmpdir(), 'quarry-carried-'));
      await open();
    });
    after(async () => {
      await close();
      await rm(dir, { recursive: true, force: true });
    });

    test('while every event carried both records, the count reads no marker', async () => {
      await send(Array.from({ length: 40 }, () => event()));
      await check('all carried');
      assert.equal(markers(threeUnnests), 0);
      assert.equal(markers(inCte), 0);
    });

    test('the same query, asked around each write, drops the events without a record at once', async () => {
      for (let round = 0; round < 6; round++) {
        await check(`before round ${round}`);
        const batch = Array.from({ length: 10 }, () => event());
        if (round === 2) batch[4] = event({ request: false });
        if (round === 4) batch[7] = event({ metadata: false });
        await send(batch);
        await check(`after round ${round}`);
        // Once an event lacked `request`, it is tested (its test implies `metadata`'s); once one
        // lacked `metadata`, `response` too.
        if (round === 2) assert.deepEqual([markers(threeUnnests), markers(responseOnly)], [1, 0]);
        if (round === 4) assert.deepEqual([markers(threeUnnests), markers(responseOnly)], [2, 1]);
      }
    });

    test('requests in flight at once, some without a record: every answer after them is right', async () => {
      const sends: Promise<void>[] = [];
      for (let i = 0; i < 16; i++) {
        const batch = Array.from({ length: 25 }, () => event());
        if (i % 5 === 3) batch[i] = event({ response: false });
        sends.push(send(batch));
      }
      await Promise.all(sends);
      await check('after concurrent sends');
    });

    test('the catalogue keeps what every event carried across a restart', async () => {
      await close();
      await open();
      await check('after restart');
      assert.equal(markers(threeUnnests), 2);
      await send([event()]);
      await check('after restart and a write');
    });
  });

  describe(`what storage reads decides, not the parsed events, on ${engineName}`, () => {
    let dir: string;
    let engine: Engine;
    let ingest: IngestService;
    before(async () => {
      dir = await mkdtemp(path.join(tmpdir(), 'quarry-carried-'));
      const definition = engineDefinition(engineName);
      assert.ok(definition);
      engine = await definition.configure({ ...definition.selfContained.env }, { dataDir: dir, memoryBudgetBytes: 2 ** 30 }).open();
      ingest = new IngestService({ sources: engine.sources, storage: engine.storage });
    });
    after(async () => {
      await ingest.close();
      await engine.close();
      await rm(dir, { recursive: true, force: true });
    });
    /** Sends `text` as the HTTP route does: parsed, with the received text beside the events. */
    const post = async (source: { id: string; name: string }, text: string) => {
      const { events, arrayText } = parseBody(text, 'json');
      await ingest.ingest(source, events, arrayText);
    };
    const count = async (sql: string) => {
      const catalog = engine.sources.catalog;
      const r = await engine.query.run(prepareEndpointQuery({ saved: sql, catalog, sandboxable: false }), {}, { timeoutMs: 30_000, maxRows: 10 });
      return Number(r.rows[0]?.n);
    };

    test('a `message` record that becomes the event message is not carried', async () => {
      const src = { id: '00000000-0000-4000-8000-00000000a001', name: 'moved' };
      await post(src, JSON.stringify([{ event_message: 'x', message: { k: 1 } }]));
      await post(src, JSON.stringify([{ message: { k: 2 } }]));
      assert.equal(await count('select count(*) as n from moved t cross join unnest(t.message) m'), 1);
    });

    test('a key written twice in one event, or spelt with an escape, is not judged from the parsed value', async () => {
      const src = { id: '00000000-0000-4000-8000-00000000a002', name: 'twice' };
      await post(src, JSON.stringify([{ id: 'a', metadata: { request: { m: 'GET' } } }]));
      // DuckDB's reader keeps the first of two values and JSON.parse the last: which one is stored
      // is the engine's, and the answer must agree with it.
      await post(src, '[{"id":"b","metadata":null,"metadata":{"request":{"m":"PUT"}}}]');
      await post(src, '[{"id":"c","metadata":{"request":null,"request":{"m":"PUT"}}}]');
      await post(src, '[{"id":"d","metadata":{"req\u0075est":null,"request":{"m":"PUT"}}}]');
      const stored = await count("select count(*) as n from twice t where to_json_string(t.metadata) like '%PUT%' or t.id = 'a'");
      const unnested = await count('select count(*) as n from twice t cross join unnest(t.metadata) m cross join unnest(m.request) r');
      const reference = await count(
        'select count(*) as n from twice t cross join unnest(t.metadata) m left join unnest(m.request) r on true where r.m is not null',
      );
      assert.equal(unnested, reference, `stored with a request: ${stored}`);
    });
  });

  describe(`a source whose first events lacked a record, on ${engineName}`, () => {
    test('never counts the record as carried', async () => {
      const dir = await mkdtemp(path.join(tmpdir(), 'quarry-carried-'));
      const definition = engineDefinition(engineName);
      assert.ok(definition);
      const engine = await definition.configure({ ...definition.selfContained.env }, { dataDir: dir, memoryBudgetBytes: 2 ** 30 }).open();
      const ingest = new IngestService({ sources: engine.sources, storage: engine.storage });
      try {
        const late = { id: '00000000-0000-4000-8000-00000000beef', name: 'late' };
        await ingest.ingest(late, [{ event_message: 'no records yet' }]);
        await ingest.ingest(late, [{ event_message: 'now with one', metadata: { request: { method: 'GET' } } }]);
        const catalog = engine.sources.catalog;
        const sql = 'select count(*) as n from late t cross join unnest(t.metadata) m cross join unnest(m.request) r';
        const r = await engine.query.run(prepareEndpointQuery({ saved: sql, catalog, sandboxable: false }), {}, { timeoutMs: 30_000, maxRows: 10 });
        assert.equal(Number(r.rows[0]?.n), 1);
        assert.deepEqual(catalog.sourceById(late.id)?.schema.carried, []);
      } finally {
        await ingest.close();
        await engine.close();
        await rm(dir, { recursive: true, force: true });
      }
    });
  });
}
