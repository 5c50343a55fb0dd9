/**
 * What errors reveal (issue 20): a token that may run only one endpoint sends every kind of failing
 * query we know of (escape attempts, scope tricks, type and grouping errors, values that fail to
 * convert, statements too large or too deep) to a sandboxable endpoint whose saved query holds
 * distinctive fragments. No response may carry a fragment of the saved query, generated SQL,
 * internal aliases, physical table or database names, settings, or row values the caller did not
 * write; nothing a client sends may be a 500. On every engine.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createEndpoint, createSource, createToken, ingest } from '../endpoints/http-support.ts';
import { engineEnv, engines } from '../support/engines.ts';
import { type TestServer, startTestServer } from '../support/server.ts';

const SOURCE = 'zq.hidden.source';

/** The saved query: every fragment marked below must stay inside the service. */
const SAVED = `with items as (
  select t.id, t.timestamp, t.event_message, t.metadata, t.num, 'kumquat_literal' as label
  from \`${SOURCE}\` as t
  where t.project = @project and t.event_message != 'xylophone_marker' and t.secret_col != 'marmoset'
)
select id, label from items order by timestamp desc`;

/** Text that must never come back (case-insensitive unless a RegExp says otherwise). */
const FORBIDDEN: (string | RegExp)[] = [
  'kumquat',
  'xylophone',
  'marmoset',
  'secret_col',
  'zq.hidden',
  '@project',
  /\bproject\b/i,
  // row values of the source the caller never typed
  'row_value_walrus',
  // generated SQL and its pieces
  /\bSELECT\b[\s\S]*\bFROM\b/i,
  /\bWITH\s+\S+\s+AS\s*\(/i,
  /\bWHERE\s*\(/,
  /\bCAST\(/,
  'In query',
  'In scope',
  '__',
  /src_[0-9a-f]/i,
  /`quarry/,
  /quarry(_test)?\./,
  'fields.',
  'SETTINGS',
  'max_execution_time',
  'readonly',
  'log_comment',
  'quarry:',
  'Stack trace',
  'DB::Exception',
  'Code: ',
];

/** Failing queries collected from the suites (test/sql/security.test.ts, test/security/http-escapes.test.ts, test/http/endpoints-query.test.ts, …), over the CTE `items`. */
const FAILING: string[] = [
  // refused by the front end
  'select * from items',
  'select id from nope',
  'delete from items where true',
  'select id from items; select id from items',
  'select session_user() as u from items',
  "select a from read_csv('/etc/passwd')",
  'select table_name from information_schema.tables',
  'select id from `_quarry_tokens`',
  'select id from main._quarry_tokens',
  'select name from duckdb_tables()',
  "select getenv('HOME') as v",
  "select current_setting('threads') as v",
  'select version() as v',
  'select @@project_id as v',
  "ATTACH '/tmp/evil.db' AS evil",
  'SET enable_external_access = true',
  'drop table items',
  'EXPLAIN select id from items',
  'select id from items -- harmless\n; delete from items where true',
  'select id from items tablesample system (10 percent)',
  'select id from `items\u0000`',
  'with items as (select id from `cloudflare.logs.prod`) select id from items',
  'with recursive r as (select id from items union all select id from r) select id from r',
  'with a as (select id from b), b as (select id from items) select id from a',
  'select id from (with x as (select id from items) select id from x) q, x',
  'select `id"` from items',
  'select `metadata`.`note"` as n from items',
  'select id from items where timestamp_add(timestamp, interval 1 fortnight) > timestamp',
  'select extract(nope from timestamp) as x from items',
  'select id from items limit -1',
  'select timestamp_trunc(timestamp, fortnight) as x from items',
  // names and grouping
  'select no_such_column from items',
  'select lag(id) over (order by nope) as x from items',
  'select id, count(*) as c from items',
  'select id from items group by label',
  'select event_message, count(*) as c from items group by id',
  'select id from items group by 1 having id',
  'select id from items order by 5',
  'select sum(count(*)) as x from items',
  'select id from items where count(*) > 1',
  // types
  'select id + 1 as x from items',
  'select sum(id) as s from items',
  'select avg(event_message) as s from items',
  'select substr(id, "a") as x from items',
  'select date_diff(timestamp, "x", day) as d from items',
  'select string_agg(id, num) as d from items',
  'select t.id from items t join items u on t.id',
  'select id from items union all select num from items',
  "select if(true, 1, 'a') as x from items",
  'select case when true then 1 else event_message end as x from items',
  'select max(id) over (partition by num order by timestamp rows between 5 following and 1 preceding) as d from items',
  // values that fail while rows are read (messages must not carry them)
  'select cast(id as int64) as x from items',
  'select cast(event_message as int64) as x from items',
  'select label from items where label = 1',
  'select cast(label as int64) as x from items',
  'select cast(label as date) as x from items',
  'select cast(label as timestamp) as x from items',
  'select parse_timestamp("%Y", label) as x from items',
  'select from_base64(label) as x from items',
  'select regexp_contains(id, label) as x from items',
  'select regexp_contains(id, "(") as x from items',
  'select id from items where num = "abc"',
  'select id from items where timestamp > "notatime"',
  'select div(num, 0) as x from items',
  'select generate_array(1, 10, 0) as x from items',
  'select repeat(id, -1) as x from items',
  'select lpad(id, -5) as x from items',
  'select m.n from items cross join unnest(metadata) as m where m.n = "x"',
  // too large or too deep
  `select id from items where ${'('.repeat(300)}num > 1${')'.repeat(300)}`,
  `select ${Array.from({ length: 5000 }, () => 'num').join('+')} as x from items`,
  `select id from items where event_message = '${'a'.repeat(300_000)}'`,
  `select id from items where event_message = '${'a'.repeat(5_000_000)}'`,
];

for (const engine of engines) {
  describe(`errors reveal nothing internal (${engine})`, () => {
    let s: TestServer;
    let endpointId: string;
    let token: string;
    let table: string;

    before(async () => {
      s = await startTestServer(engineEnv(engine));
      const sourceId = await createSource(s, SOURCE);
      await ingest(s, SOURCE, [
        { id: 'e1', project: 'p1', event_message: 'one', secret_col: 'row_value_walrus', num: 5, metadata: { n: 1, tag: 'x' } },
        { id: 'e2', project: 'p1', event_message: 'two', secret_col: 'row_value_walrus', num: 7, metadata: { n: 2, tag: 'y' } },
      ]);
      const ep = await createEndpoint(s, { name: 'zq.items', query: SAVED, sandboxable: true });
      endpointId = ep.id;
      token = await createToken(s, [`query:endpoint:${ep.id}`]);
      const r = await s.fetch(`/api/sources/${sourceId}`);
      table = String(((await r.json()) as { table?: string }).table ?? `src_${sourceId.replaceAll('-', '')}`);
    });
    after(() => s?.close());

    // DuckDB's messages are mapped in src/engines/duckdb/runner.ts (mapDuckDbError), outside this
    // change: its conversion errors still quote the value ("Could not convert string '…'"), and an
    // invalid window frame fails its statement check with a 500. Reported, not hidden.
    test('every failing query answers a 4xx that quotes nothing of ours', async () => {
      const statuses = new Map<number, number>();
      const problems: string[] = [];
      for (const sql of FAILING) {
        const r = await s.fetch(
          `/api/endpoints/query/${endpointId}`,
          { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ project: 'p1', sql }) },
          token,
        );
        const text = await r.text();
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
        const shown = `${sql.slice(0, 100)} → ${r.status} ${text.slice(0, 400)}`;
        if (r.status >= 500) problems.push(`a client's query answered ${shown}`);
        if (r.status === 200) continue;
        const message = (JSON.parse(text) as { error: { message: string } }).error.message;
        for (const f of FORBIDDEN) {
          const found = typeof f === 'string' ? message.toLowerCase().includes(f.toLowerCase()) : f.test(message);
          if (found) problems.push(`${String(f)} in ${shown}`);
        }
        if (message.includes(table)) problems.push(`the physical table in ${shown}`);
        if (message.length > 400) problems.push(`a long message (${message.length}) for ${shown}`);
      }
      assert.deepEqual(problems, []);
      assert.ok((statuses.get(400) ?? 0) >= FAILING.length - 10, `mostly 400s: ${JSON.stringify([...statuses])}`);
    });

    test('a statement too large for the engine is a 400 that says so', async () => {
      const sql = `select id from items where event_message = '${'a'.repeat(5_000_000)}'`;
      const r = await s.fetch(
        `/api/endpoints/query/${endpointId}`,
        { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ project: 'p1', sql }) },
        token,
      );
      const body = (await r.json()) as { error?: { code: string; message: string } };
      if (engine === 'clickhouse') {
        assert.equal(r.status, 400, JSON.stringify(body).slice(0, 300));
        assert.equal(body.error?.code, 'QUERY_TOO_COMPLEX');
        assert.match(body.error?.message ?? '', /MiB/);
      } else {
        assert.ok(r.status < 500, JSON.stringify(body).slice(0, 300));
      }
    });

    test('a 300 KB statement runs (past ClickHouse’s default max_query_size of 256 KiB)', async () => {
      const sql = `select id from items where event_message != '${'a'.repeat(300_000)}' order by id`;
      const r = await s.fetch(
        `/api/endpoints/query/${endpointId}`,
        { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ project: 'p1', sql }) },
        token,
      );
      const body = (await r.json()) as { result?: { id: string }[] };
      assert.equal(r.status, 200, JSON.stringify(body).slice(0, 300));
      assert.deepEqual(body.result, [{ id: 'e1' }, { id: 'e2' }]);
    });
  });
}
