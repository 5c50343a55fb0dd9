/**
 * Isolation by structure (issue 20), on every engine, over real HTTP on loopback: through
 * `logs.all?project=A`, a caller's `sql` sees project A's rows and only the fields A's events
 * carry, however it serialises a record and whatever it names its columns.
 *
 * - Every way a record becomes text (TO_JSON_STRING, CAST / SAFE_CAST / `::text`, CONCAT, `||`,
 *   STRING_AGG, ARRAY_TO_STRING, the JSON functions; records nested in records, in lists, in
 *   STRUCTs the query builds) leaves out NULL members: the typed record carries every field any
 *   project's events added, and a NULL member is one this row's event did not carry.
 * - Caller aliases named like what the saved query's project filter reads (`project`, `t`,
 *   `fields`, `` `t.fields.project` ``, `timestamp`, …) never bind to it, also with ClickHouse's
 *   `prefer_column_name_to_alias` turned off (the top-n rewrite keeps such a query in a scope of
 *   its own instead of merging it into the filter's SELECT).
 *
 * No response (status and body, errors included) may hold project B's values or a field name
 * only B's events carry.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { settingsForTests } from '../../src/engines/clickhouse/lockdown.ts';
import { ingest } from '../endpoints/http-support.ts';
import { engineEnv, engines } from '../support/engines.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/** Values and field names only project B's events hold. */
const B_ONLY = [
  'b-event',
  'b message',
  'b-host',
  'b-secret-value',
  'b-nested-value',
  'b-item-value',
  'secret_b_field',
  'secret_b_nested',
  'secret_b_item',
  'bonly_record',
];

const EDGE = 'cloudflare.logs.prod';

const EVENTS = [
  {
    id: 'a-event-1',
    timestamp: '2026-01-01T00:00:01Z',
    project: 'A',
    event_message: 'a message 1',
    metadata: { host: 'a-host', request: { path: '/a' }, items: [{ k: 'a' }, { k: 'b', n: 1 }] },
  },
  {
    id: 'b-event',
    timestamp: '2026-01-01T00:00:02Z',
    project: 'B',
    event_message: 'b message',
    metadata: {
      host: 'b-host',
      secret_b_field: 'b-secret-value',
      request: { path: '/b', secret_b_nested: 'b-nested-value' },
      bonly_record: { x: 1 },
      items: [{ k: 'z', secret_b_item: 'b-item-value' }],
    },
  },
  {
    id: 'a-event-2',
    timestamp: '2026-01-01T00:00:03Z',
    project: 'A',
    event_message: 'a message 2',
    metadata: { host: 'a-host', request: { path: '/a2' } },
  },
];

/** Every form that turns a record (or a value holding one) into text. */
const SERIALISATIONS: readonly string[] = [
  'select to_json_string(t.metadata) as j from edge_logs t',
  'select to_json_string(metadata) as j from edge_logs',
  'select to_json_string(t.metadata.request) as j from edge_logs t',
  'select to_json_string(t.metadata.items) as j from edge_logs t',
  'select to_json_string(m.request) as j from edge_logs cross join unnest(metadata) as m',
  'select to_json_string(struct(t.metadata as m, t.id as id)) as j from edge_logs t',
  'select to_json_string([t.metadata]) as j from edge_logs t',
  'select to_json_string(array_agg(t.metadata)) as j from edge_logs t',
  'select cast(t.metadata as string) as j from edge_logs t',
  'select safe_cast(t.metadata as string) as j from edge_logs t',
  'select t.metadata::text as j from edge_logs t',
  'select cast(t.metadata.items as string) as j from edge_logs t',
  "select concat('x', t.metadata) as j from edge_logs t",
  "select t.metadata || 'x' as j from edge_logs t",
  'select string_agg(t.metadata) as j from edge_logs t',
  "select string_agg(cast(t.metadata as string), ';') as j from edge_logs t",
  "select array_to_string([t.metadata], ',') as j from edge_logs t",
  "select array_to_string(t.metadata.items, ',') as j from edge_logs t",
  "select json_query(t.metadata, '$') as j from edge_logs t",
  "select json_extract(t.metadata, '$.request') as j from edge_logs t",
  "select json_value(t.metadata, '$.secret_b_field') as j from edge_logs t",
  "select json_extract_scalar(t.metadata, '$.request.secret_b_nested') as j from edge_logs t",
  'select id, to_json_string(t.metadata) as j from edge_logs t order by timestamp desc limit 10',
  "select id, to_json_string(t.metadata) as j from edge_logs t where id != 'x' order by timestamp desc limit 10",
  'select max(to_json_string(t.metadata)) as j from edge_logs t',
  'select t.metadata as j from edge_logs t',
];

/**
 * Caller aliases named like what the CTE's project filter reads, in queries the top-n rewrite
 * would merge with the CTE (a row-wise WHERE, ORDER BY a CTE column, a constant LIMIT), plus
 * the plain-projection forms.
 */
const ALIAS_ATTACKS: readonly string[] = [
  "select id, 'A' as project from edge_logs where id != 'x' order by timestamp desc limit 10",
  "select id, 'A' as project from edge_logs order by timestamp desc limit 10",
  "select id, event_message, 'A' as `t.fields.project` from edge_logs where id != 'x' order by timestamp desc limit 10",
  "select event_message as m, struct(struct('A' as project) as fields) as t from edge_logs where id != 'x' order by timestamp desc limit 10",
  "select event_message as m, struct('A' as project) as fields from edge_logs where id != 'x' order by timestamp desc limit 10",
  "select event_message as m, struct('A' as project) as `t.fields` from edge_logs where id != 'x' order by timestamp desc limit 10",
  "select event_message, 'A' as t from edge_logs where id != 'x' order by timestamp desc limit 10",
  "select event_message, timestamp_seconds(1) as timestamp from edge_logs where id != 'x' order by timestamp desc limit 10",
  "select event_message, 'A' as metadata from edge_logs where id != 'x' order by timestamp desc limit 10",
  "select event_message as m, struct(struct('A' as project) as fields, 'y' as id, timestamp_seconds(1) as timestamp) as t from edge_logs where id != 'x' order by timestamp desc limit 10",
  "select event_message, 'A' as __p1 from edge_logs where id != 'x' order by timestamp desc limit 10",
  "select m.host as host, 'A' as project from edge_logs cross join unnest(metadata) as m where m.host is not null order by timestamp desc limit 10",
];

interface Answer {
  status: number;
  text: string;
}

async function run(s: TestServer, sql: string): Promise<Answer> {
  const qs = new URLSearchParams({ project: 'A', sql }).toString();
  const r = await s.fetch(`/api/endpoints/query/logs.all?${qs}`);
  return { status: r.status, text: await r.text() };
}

function assertNothingOfB(a: Answer, sql: string): void {
  for (const b of B_ONLY) assert.ok(!a.text.includes(b), `${sql}\n→ ${a.status} holds "${b}": ${a.text}`);
}

for (const engine of engines) {
  describe(`isolation by structure (${engine})`, () => {
    let s: TestServer;
    before(async () => {
      s = await startTestServer(engineEnv(engine));
      await ingest(s, EDGE, EVENTS);
    });
    after(async () => {
      settingsForTests.preferColumnNameToAlias = true;
      await s?.close();
    });

    test('the fixture: project B has a row and B-only fields that A can read by name', async () => {
      const a = await run(s, 'select id, t.metadata.secret_b_field as f from edge_logs t');
      assert.equal(a.status, 200, a.text);
      assert.deepEqual(
        JSON.parse(a.text)
          .result.map((r: { id: string }) => r.id)
          .sort(),
        ['a-event-1', 'a-event-2'],
      );
    });

    test('a record serialised for a row shows only the members its event carried', async () => {
      const a = await run(s, "select to_json_string(t.metadata) as j from edge_logs t where id = 'a-event-1'");
      assert.equal(a.status, 200, a.text);
      const j = JSON.parse(JSON.parse(a.text).result[0].j);
      assert.deepEqual(j, { host: 'a-host', request: { path: '/a' }, items: [{ k: 'a' }, { k: 'b', n: 1 }] });
    });

    for (const sql of SERIALISATIONS) {
      test(`serialised: ${sql}`, async () => {
        const a = await run(s, sql);
        assert.ok(a.status === 200 || a.status === 400, `${sql}: ${a.status} ${a.text}`);
        assertNothingOfB(a, sql);
      });
    }

    for (const sql of [
      'select lower(t.metadata) as x from edge_logs t',
      "select greatest(t.metadata, 'x') as x from edge_logs t",
      'select t.metadata + 1 as x from edge_logs t',
      "select concat(t.metadata.request, 1) as x from edge_logs t where t.metadata.request = 'x'",
    ]) {
      test(`an error about a record names no field of another project: ${sql}`, async () => {
        const a = await run(s, sql);
        assert.ok(a.status === 200 || a.status === 400, `${sql}: ${a.status} ${a.text}`);
        assertNothingOfB(a, sql);
      });
    }

    for (const sql of [
      'select id from edge_logs t where cast(t.metadata.secret_b_field as int64) > 0',
      "select id from edge_logs t where to_base64(cast(t.metadata.secret_b_field as bytes)) = 'x'",
      'select count(*) as n from edge_logs t where cast(t.metadata.request.secret_b_nested as float64) > 0',
    ]) {
      test(`a caller's expression that would raise only on project B's rows answers 200: ${sql}`, async () => {
        const a = await run(s, sql);
        assert.equal(a.status, 200, `${sql}: ${a.text}`);
        assertNothingOfB(a, sql);
      });
    }

    for (const prefer of [true, false]) {
      describe(`caller aliases, prefer_column_name_to_alias ${prefer ? 'on' : 'off'}`, () => {
        before(() => {
          settingsForTests.preferColumnNameToAlias = prefer;
        });
        after(() => {
          settingsForTests.preferColumnNameToAlias = true;
        });
        for (const sql of ALIAS_ATTACKS) {
          test(`alias: ${sql}`, async () => {
            const a = await run(s, sql);
            assert.equal(a.status, 200, `${sql}: ${a.text}`);
            assertNothingOfB(a, sql);
            // Only A's two events, never more rows than A has.
            assert.ok((JSON.parse(a.text).result as unknown[]).length <= 2, `${sql}: ${a.text}`);
          });
        }
      });
    }
  });
}
