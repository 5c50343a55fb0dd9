import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ingest, query } from '../endpoints/http-support.ts';
import { type TestServer, startTestServer } from '../support/server.ts';

let s: TestServer;
before(async () => {
  s = await startTestServer({ QUERY_MAX_CONCURRENCY: '1', QUERY_MAX_QUEUE: '0' });
  const events = Array.from({ length: 5000 }, (_, i) => ({
    project: 'p',
    event_message: `message ${i} ${'x'.repeat(i % 50)}`,
    metadata: { request: { path: `/rest/v1/t${i % 97}` } },
  }));
  await ingest(s, 'cloudflare.logs.prod', events);
});
after(() => s.close());

test('past the query concurrency and queue limits a query gets 503 OVERLOADED with Retry-After, never a hang', async () => {
  const sql =
    'select r.path, count(*) as n, max(length(t.event_message)) as m from edge_logs t ' +
    'cross join unnest(t.metadata) as md cross join unnest(md.request) as r ' +
    "where regexp_contains(t.event_message, 'message [0-9]+ x') group by r.path order by n desc";
  const results = await Promise.all(Array.from({ length: 12 }, () => query(s, 'logs.all', { project: 'p', sql })));
  const statuses = results.map((r) => r.status);
  assert.ok(statuses.includes(200), `some succeed: ${statuses}`);
  const refused = results.filter((r) => r.status === 503);
  assert.ok(refused.length > 0, `some are refused: ${statuses}`);
  assert.ok(
    statuses.every((x) => x === 200 || x === 503),
    `${statuses}`,
  );
  for (const r of refused) {
    assert.equal(r.error?.code, 'OVERLOADED');
    assert.equal(r.headers.get('retry-after'), '1');
  }
  // Once the burst is over, queries run again.
  assert.equal((await query(s, 'logs.all', { project: 'p', sql })).status, 200);
});
