/**
 * No stale answers (issue 19): the same query text asked before and after an ingest sees the new
 * rows, on every engine, over HTTP. DuckDB keeps a prepared statement's plan, optimised with the
 * table's statistics of that time, after inserts: a literal filter outside a column's min/max then
 * stayed empty for as long as the statement was reused.
 *
 * Each form reads a source of its own, seeded with one event whose id sorts before every id the
 * form looks for and whose time is before every time it asks about, so the first ask is a filter
 * outside the table's statistics: the case a stale plan answers with nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createEndpoint, createSource, ingest, query, type Row } from '../endpoints/http-support.ts';
import { engineEnv, engines } from '../support/engines.ts';
import { type TestServer, startTestServer } from '../support/server.ts';

/** Whole seconds, an hour ago: inside any retention, clear of the clock. */
const T0 = Math.floor((Date.now() - 3_600_000) / 1000) * 1000;

/** `TIMESTAMP '…'` text (UTC, milliseconds) for a time in ms. */
function timestampLiteral(ms: number): string {
  return `TIMESTAMP '${new Date(ms).toISOString().replace('T', ' ').replace('Z', '')}'`;
}

function events(ids: readonly string[], fromMs: number): Row[] {
  return ids.map((id, i) => ({ id, timestamp: new Date(fromMs + i).toISOString(), event_message: `event ${id}` }));
}

function range(prefix: string, from: number, count: number): string[] {
  return Array.from({ length: count }, (_, i) => `${prefix}${String(from + i).padStart(4, '0')}`);
}

for (const engine of engines) {
  describe(`${engine}: the same text asked again after an ingest sees the new rows`, () => {
    let s: TestServer;

    before(async () => {
      s = await startTestServer(engineEnv(engine));
    });
    after(() => s.close());

    /** A source holding one early event, and an uncached sandboxable endpoint over it. */
    async function sourceWithEndpoint(name: string): Promise<string> {
      const source = `stale.${name}`;
      await createSource(s, source);
      await ingest(s, source, events(['0_seed'], T0));
      await createEndpoint(s, {
        name: source,
        query: `with logs as (select id, timestamp, event_message from \`${source}\`) select id from logs`,
        sandboxable: true,
        cache_duration_seconds: 0,
      });
      return source;
    }

    /** The caller's `sql` (sent in a POST body: a long IN list outgrows a URL) answering one count. */
    async function count(endpoint: string, sql: string): Promise<number> {
      const r = await query(s, endpoint, {}, { method: 'POST', body: { sql } });
      assert.equal(r.status, 200, JSON.stringify(r.error));
      assert.equal(r.headers.get('x-cache'), 'MISS');
      return Number(r.rows[0]?.n);
    }

    async function lqlRows(endpoint: string, lql: string): Promise<number> {
      const r = await query(s, endpoint, { lql });
      assert.equal(r.status, 200, JSON.stringify(r.error));
      return r.rows.length;
    }

    /**
     * Asks, ingests `first`, asks twice, ingests `second`, asks again: each answer must count every
     * row ingested before it.
     */
    async function askAroundIngests(source: string, ask: () => Promise<number>, first: Row[], second: Row[]): Promise<void> {
      assert.equal(await ask(), 0, 'before the ingest');
      await ingest(s, source, first);
      assert.equal(await ask(), first.length, 'the same text right after the ingest');
      assert.equal(await ask(), first.length, 'the same text a third time');
      await ingest(s, source, second);
      assert.equal(await ask(), first.length + second.length, 'the same text after a second ingest');
    }

    test('a literal IN list of ids', async () => {
      const source = await sourceWithEndpoint('in_list');
      const ids = range('in_', 0, 1000);
      const sql = `select count(*) as n from logs where id in (${ids.map((id) => `'${id}'`).join(', ')})`;
      await askAroundIngests(source, () => count(source, sql), events(ids.slice(0, 600), T0 + 1000), events(ids.slice(600), T0 + 2000));
    });

    test('a time literal just ahead of the newest event', async () => {
      const source = await sourceWithEndpoint('time_literal');
      const sql = `select count(*) as n from logs where timestamp > ${timestampLiteral(T0 + 1)}`;
      await askAroundIngests(source, () => count(source, sql), events(range('ts_', 0, 50), T0 + 1000), events(range('ts_', 50, 50), T0 + 2000));
    });

    test('equality on an id', async () => {
      const source = await sourceWithEndpoint('id_equality');
      const sql = `select count(*) as n from logs where id = 'eq_0001'`;
      await askAroundIngests(source, () => count(source, sql), events(['eq_0001'], T0 + 1000), events(['eq_0001'], T0 + 2000));
    });

    test('LQL: an id and a time filter', async () => {
      const source = await sourceWithEndpoint('lql');
      await askAroundIngests(source, () => lqlRows(source, 'id:lql_0001'), events(['lql_0001'], T0 + 1000), events(['lql_0001'], T0 + 2000));
      const since = new Date(T0 + 3000).toISOString();
      await askAroundIngests(source, () => lqlRows(source, `t:>${since}`), events(range('lqt_', 0, 5), T0 + 4000), events(range('lqt_', 5, 5), T0 + 5000));
    });

    test('a literal in the saved query itself', async () => {
      const source = 'stale.saved_literal';
      await createSource(s, source);
      await ingest(s, source, events(['0_seed'], T0));
      await createEndpoint(s, {
        name: source,
        query: `select count(*) as n from \`${source}\` as t where t.id in ('sv_0001', 'sv_0002')`,
        cache_duration_seconds: 0,
      });
      const ask = async () => {
        const r = await query(s, source);
        assert.equal(r.status, 200, JSON.stringify(r.error));
        return Number(r.rows[0]?.n);
      };
      await askAroundIngests(source, ask, events(['sv_0001'], T0 + 1000), events(['sv_0002'], T0 + 2000));
    });
  });
}
