/**
 * Runs Studio's page templates the way Studio sends them: events ingested over HTTP into the nine
 * Supabase sources (their schemas grow from the events, as in production), then each template sent
 * to `logs.all` as a caller `sql` with Studio's parameters, on every engine (a service per engine).
 * Expected rows are written from the fixture by hand or plain code, never from an engine.
 *
 * The engines' services run side by side (each case only reads), and on each a few cases at a time
 * (the service queues what its per-token limit does not run at once).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { ErrorCode } from '../../../src/errors.ts';
import { ingest, query, type Row } from '../../endpoints/http-support.ts';
import { engineEnv, engines } from '../../support/engines.ts';
import { startTestServer, type TestServer } from '../../support/server.ts';

export type { Row };

/** Events per source name, as Vector sends them (`timestamp` ISO text, no `id` needed). */
export type Fixture = Record<string, Row[]>;

export interface PageCase {
  name: string;
  /** Where Studio builds the query: a path in supabase/supabase and the commit it was read at. */
  from: { path: string; commit: string };
  /** The template instantiated as Studio's code does. */
  sql: string;
  /** Parameters besides `sql` (Studio sends iso_timestamp_start / iso_timestamp_end); `project` defaults to 'default'. */
  params?: Record<string, string>;
  /** The rows (only the keys given are compared), or the error a clean 400 carries. */
  expect: Row[] | { error: ErrorCode; message?: RegExp };
  /** Compare as multisets (the query states no total order). */
  unordered?: boolean;
  /**
   * `LIMIT n` without a total order (BigQuery returns any n rows): the answer must be `pick` rows,
   * each one of `expect`, no row twice.
   */
  pick?: number;
}

const key = (r: Row) => JSON.stringify(Object.entries(r).sort(([a], [b]) => a.localeCompare(b)));

function project(actual: Row[], expected: Row[]): Row[] {
  const keys = expected.length > 0 ? Object.keys(expected[0]!) : undefined;
  return actual.map((row) => Object.fromEntries((keys ?? Object.keys(row)).map((k) => [k, row[k] ?? null])));
}

export async function runCase(s: TestServer, c: PageCase): Promise<void> {
  const params = { project: 'default', ...c.params, sql: c.sql };
  const r = await query(s, 'logs.all', params);
  if (!Array.isArray(c.expect)) {
    assert.equal(r.status, 400, `expected a 400, got ${r.status}: ${JSON.stringify(r.rows).slice(0, 500)}`);
    assert.equal(r.error?.code, c.expect.error, r.error?.message);
    if (c.expect.message) assert.match(r.error?.message ?? '', c.expect.message);
    return;
  }
  assert.equal(r.status, 200, `${r.status}: ${JSON.stringify(r.error)}`);
  const actual = project(r.rows, c.expect);
  if (c.pick !== undefined) {
    assert.equal(actual.length, c.pick, `row count; got ${JSON.stringify(r.rows)}`);
    const allowed = new Set(c.expect.map(key));
    const seen = new Set<string>();
    for (const row of actual) {
      assert.ok(allowed.has(key(row)), `unexpected row ${JSON.stringify(row)}`);
      assert.ok(!seen.has(key(row)), `row twice ${JSON.stringify(row)}`);
      seen.add(key(row));
    }
    return;
  }
  assert.equal(actual.length, c.expect.length, `row count; got ${JSON.stringify(r.rows)}`);
  if (c.unordered) assert.deepEqual(actual.map(key).sort(), c.expect.map(key).sort());
  else assert.deepEqual(actual, c.expect);
}

/** Cases run at once on one service: its per-token limit runs two, the rest wait their turn. */
const CASES_AT_ONCE = 4;

/** One describe per engine, side by side: a service started on it, `fixture` ingested, every case run. */
export function pageCorpus(title: string, fixture: Fixture, cases: readonly PageCase[]): void {
  describe(title, { concurrency: true }, () => {
    for (const engine of engines) {
      describe(`${title} on ${engine}`, { concurrency: CASES_AT_ONCE }, () => {
        let s: TestServer;
        before(async () => {
          s = await startTestServer(engineEnv(engine));
          // The sources are independent: ingested at once.
          await Promise.all(Object.entries(fixture).map(([source, events]) => (events.length > 0 ? ingest(s, source, events) : undefined)));
        });
        after(() => s.close());
        for (const c of cases) test(c.name, () => runCase(s, c));
      });
    }
  });
}
