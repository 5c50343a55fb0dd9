/**
 * LQL through HTTP: `lql` on the seeded logs.all endpoint against events ingested through the
 * ingest API, one test per construct class; expected rows are computed here from the events.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ingest, query, type Row, rows } from '../endpoints/http-support.ts';
import { type TestServer, startTestServer } from '../support/server.ts';

const P = 'lqlproj';
const now = Date.now();
const minutesAgo = (m: number) => new Date(now - m * 60_000).toISOString();

interface Edge {
  id: string;
  minutesAgo: number;
  message: string;
  status: number;
  path: string;
  tags: string[];
  cached?: boolean;
}

const edges: Edge[] = [
  { id: 'e1', minutesAgo: 1, message: 'GET /rest/v1/todos 200', status: 200, path: '/rest/v1/todos', tags: ['prod', 'api'], cached: true },
  { id: 'e2', minutesAgo: 2, message: 'POST /auth/v1/token 401', status: 401, path: '/auth/v1/token', tags: ['prod'] },
  { id: 'e3', minutesAgo: 3, message: 'GET /rest/v1/items 500 upstream error', status: 500, path: '/rest/v1/items', tags: ['staging'], cached: false },
  { id: 'e4', minutesAgo: 61, message: 'GET /storage/v1/object 503 Upstream Error', status: 503, path: '/storage/v1/object', tags: [] },
  { id: 'e5', minutesAgo: 62, message: 'GET /rest/v1/todos 204', status: 204, path: '/rest/v1/todos', tags: ['prod'] },
  { id: 'e6', minutesAgo: 3 * 24 * 60, message: 'old GET /rest/v1/todos 200', status: 200, path: '/rest/v1/todos', tags: ['prod'] },
];

function edgeEvent(e: Edge, project = P): Row {
  const metadata: Row = {
    request: { method: e.message.split(' ')[0], path: e.path },
    response: { status_code: e.status },
    tags: e.tags,
  };
  if (e.cached !== undefined) metadata.cached = e.cached;
  return { id: e.id, timestamp: minutesAgo(e.minutesAgo), project, event_message: e.message, metadata };
}

const ids = (rs: Row[]) => rs.map((r) => r.id);
const newestFirst = (es: Edge[]) => [...es].sort((a, b) => a.minutesAgo - b.minutesAgo).map((e) => e.id);

describe('lql on logs.all over HTTP', () => {
  let s: TestServer;
  const lql = (q: string, extra: Record<string, string> = {}) => rows(s, 'logs.all', { project: P, lql: q, ...extra });

  before(async () => {
    s = await startTestServer();
    await ingest(s, 'cloudflare.logs.prod', [...edges.map((e) => edgeEvent(e)), edgeEvent({ ...edges[0]!, id: 'other' }, 'otherproj')]);
    await ingest(s, 'postgres.logs', [
      { id: 'p1', timestamp: minutesAgo(5), project: P, event_message: 'connection received', metadata: { parsed: { error_severity: 'LOG' } } },
      { id: 'p2', timestamp: minutesAgo(6), project: P, event_message: 'relation "x" does not exist', metadata: { parsed: { error_severity: 'ERROR' } } },
    ]);
  });
  after(() => s.close());

  test('f: picks the CTE; no select gives timestamp, id and message, newest first, only the project', async () => {
    const r = await lql('f:edge_logs');
    assert.equal(r.length, edges.length);
    assert.deepEqual(Object.keys(r[0]!), ['timestamp', 'id', 'event_message']);
    const ts = r.map((x) => x.timestamp as number);
    assert.deepEqual(
      ts,
      [...ts].sort((a, b) => b - a),
    );
  });

  test('free text word and quoted phrase (case-sensitive)', async () => {
    const word = await lql('f:edge_logs s:id upstream');
    assert.deepEqual(ids(word), ['e3']);
    const phrase = await lql('f:edge_logs s:id "Upstream Error"');
    assert.deepEqual(ids(phrase), ['e4']);
  });

  test('regex on the message, with (?i)', async () => {
    const r = await lql('f:edge_logs s:id ~"(?i)upstream error"');
    assert.deepEqual(ids(r), newestFirst(edges.filter((e) => /upstream error/i.test(e.message))));
  });

  test('nested field filters: equality, comparison, range, regex, negation', async () => {
    const eq = await lql('f:edge_logs s:id m.response.status_code:401');
    assert.deepEqual(ids(eq), ['e2']);
    const ge = await lql('f:edge_logs s:id m.response.status_code:>=500');
    assert.deepEqual(ids(ge), newestFirst(edges.filter((e) => e.status >= 500)));
    const range = await lql('f:edge_logs s:id m.response.status_code:200..299');
    assert.deepEqual(ids(range), newestFirst(edges.filter((e) => e.status >= 200 && e.status <= 299)));
    const re = await lql('f:edge_logs s:id m.request.path:~^/rest');
    assert.deepEqual(ids(re), newestFirst(edges.filter((e) => e.path.startsWith('/rest'))));
    const neg = await lql('f:edge_logs s:id -m.request.path:~^/rest');
    assert.deepEqual(ids(neg), newestFirst(edges.filter((e) => !e.path.startsWith('/rest'))));
  });

  test('booleans and NULL', async () => {
    assert.deepEqual(ids(await lql('f:edge_logs s:id m.cached:true')), ['e1']);
    assert.deepEqual(ids(await lql('f:edge_logs s:id m.cached:false')), ['e3']);
    const missing = await lql('f:edge_logs s:id m.cached:NULL');
    assert.deepEqual(ids(missing), newestFirst(edges.filter((e) => e.cached === undefined)));
  });

  test('array includes: @> and @>~', async () => {
    assert.deepEqual(ids(await lql('f:edge_logs s:id m.tags:@>staging')), ['e3']);
    const re = await lql('f:edge_logs s:id m.tags:@>~^pro');
    assert.deepEqual(ids(re), newestFirst(edges.filter((e) => e.tags.some((t) => t.startsWith('pro')))));
  });

  test('time filters: last@, explicit bounds', async () => {
    const lastDay = await lql('f:edge_logs s:id t:last@2d');
    assert.ok(!ids(lastDay).includes('e6'));
    assert.ok(ids(lastDay).includes('e1'));
    const since = minutesAgo(30);
    const r = await lql(`f:edge_logs s:id t:>${since}`);
    assert.deepEqual(ids(r), newestFirst(edges.filter((e) => e.minutesAgo < 30)));
  });

  test('selects with aliases', async () => {
    const r = await lql('f:edge_logs s:id s:m.response.status_code@status m.response.status_code:401');
    assert.deepEqual(r, [{ id: 'e2', status: 401 }]);
  });

  test('charts: count per hour, ordered by time, named timestamp and count', async () => {
    const r = await lql('f:edge_logs c:count(*) c:group_by(t::hour)');
    const buckets = new Map<number, number>();
    for (const e of edges) {
      const t = Date.parse(minutesAgo(e.minutesAgo));
      const hour = Math.floor(t / 3_600_000) * 3_600_000 * 1000;
      buckets.set(hour, (buckets.get(hour) ?? 0) + 1);
    }
    const expected = [...buckets.entries()].sort((a, b) => a[0] - b[0]).map(([timestamp, count]) => ({ timestamp, count }));
    // Bucket boundaries are computed from the same timestamps, to the microsecond.
    assert.deepEqual(
      r.map((x) => ({ timestamp: x.timestamp, count: x.count })),
      expected,
    );
  });

  test('chart aggregates over nested fields', async () => {
    const r = await lql('f:edge_logs c:max(m.response.status_code) c:group_by(t::day) t:last@1d');
    const recent = edges.filter((e) => e.minutesAgo < 24 * 60);
    assert.equal(Math.max(...r.map((x) => x.max as number)), Math.max(...recent.map((e) => e.status)));
  });

  test('another CTE: postgres_logs by severity', async () => {
    const r = await lql('f:postgres_logs s:id s:event_message m.parsed.error_severity:ERROR');
    assert.deepEqual(r, [{ id: 'p2', event_message: 'relation "x" does not exist' }]);
  });

  test('values are bound, never spliced: a quote in a value is just text', async () => {
    const r = await lql(`f:edge_logs s:id "' OR 1=1 --"`);
    assert.deepEqual(r, []);
  });

  test('sql beats lql', async () => {
    const r = await rows(s, 'logs.all', { project: P, lql: 'f:edge_logs s:id', sql: "select id from postgres_logs where id = 'p1'" });
    assert.deepEqual(r, [{ id: 'p1' }]);
  });

  test('the same LQL asked again answers for the moment: events written in between, a field whose type changed, other values', async () => {
    // A project of its own, so the other tests' rows stay as they are. The service remembers the
    // query an LQL text makes (src/sql/index.ts); each ask must still read the data and the schema
    // as they are now.
    const again = async (q: string) => {
      const r = await query(s, 'logs.all', { project: 'lqlagain', lql: q });
      assert.equal(r.status, 200, `${q}: ${JSON.stringify(r.error)}`);
      return ids(r.rows).sort();
    };
    const event = (id: string, code: number | string) => ({
      id,
      timestamp: minutesAgo(1),
      project: 'lqlagain',
      event_message: `code ${code}`,
      metadata: { again_code: code },
    });
    const text = 'f:edge_logs s:id m.again_code:007';
    // A number field: 007 is read as the number 7.
    await ingest(s, 'cloudflare.logs.prod', [event('a1', 7)]);
    for (let i = 0; i < 2; i++) assert.deepEqual(await again(text), ['a1'], `ask ${i + 1} on a number field`);
    // Text in the same field makes it a text field: 007 is now the text '007', which only a2 holds.
    await ingest(s, 'cloudflare.logs.prod', [event('a2', '007')]);
    for (let i = 0; i < 2; i++) assert.deepEqual(await again(text), ['a2'], `ask ${i + 1} once the field holds text`);
    await ingest(s, 'cloudflare.logs.prod', [event('a3', '007')]);
    assert.deepEqual(await again(text), ['a2', 'a3'], 'after another write');
    // The same shape with other values: the values are the request's own.
    assert.deepEqual(await again('f:edge_logs s:id m.again_code:008'), []);
    assert.deepEqual(await again(text), ['a2', 'a3'], 'the first text again');
  });

  test('errors are 400 with stable codes, never 500', async () => {
    const cases: [string, string, RegExp][] = [
      ['m.response.status_code:>>>', 'PARSE_ERROR', /line 1/],
      ['s:id', 'QUERY_NOT_ALLOWED', /edge_logs/],
      ['f:nope', 'QUERY_NOT_ALLOWED', /nope/],
      ['f:edge_logs f:postgres_logs', 'PARSE_ERROR', /from rule/],
      ['f:edge_logs "never closed', 'PARSE_ERROR', /never closed/],
      ['f:edge_logs s:no_such_column', 'INVALID_QUERY', /no_such_column/],
    ];
    for (const [q, code, message] of cases) {
      const r = await query(s, 'logs.all', { project: P, lql: q });
      assert.equal(r.status, 400, `${q}: ${JSON.stringify(r.error)}`);
      assert.equal(r.error?.code, code, q);
      assert.match(r.error?.message ?? '', message, q);
    }
  });
});
