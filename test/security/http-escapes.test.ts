/**
 * Sandbox escape attempts against the real server, over HTTP (docs/API.md §4, docs/SQL.md,
 * docs/ARCHITECTURE.md "The sandbox is a security boundary").
 *
 * A caller of the sandboxable `logs.all` runs as project `attacker`. Every one of the nine Supabase
 * sources also holds rows of project `victim`, and a source the endpoint never reads
 * (`secret.logs`) holds a token. Every victim value and id carries the marker `QSECRET`, which no
 * attack text contains, so a marker in any response body (rows, error message, header) is a leak.
 *
 * Each attempt must fail safely: a 4xx with a clean message (no internal SQL, no physical table
 * name `src_<hex>`, no file path or stack trace) or a 200 holding only the attacker's rows.
 *
 * Tests that demonstrate a real break are left failing on purpose; see the report in the comments
 * above each of them ("BREAK"). The resource limits over HTTP (time limits, deep nesting, the query
 * that once broke the parser) are test/security/http-limits.test.ts, which runs alone.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createSource, ingest, type Row } from '../endpoints/http-support.ts';
import { PATH_OR_STACK } from '../support/disclosure.ts';
import { engineEnv, engines } from '../support/engines.ts';
import { PRIVATE_TOKEN, startTestServer, type TestServer } from '../support/server.ts';

const MARK = 'QSECRET';

interface Answer {
  status: number;
  text: string;
  headers: Headers;
  ms: number;
  json: { result?: Row[]; error?: { message: string; code: string; status: number } };
}

/** The nine sources `logs.all` reads, with where each keeps the project. */
const sources: { name: string; cte: string; where: 'top' | 'project' | 'project_ref' }[] = [
  { name: 'cloudflare.logs.prod', cte: 'edge_logs', where: 'top' },
  { name: 'postgres.logs', cte: 'postgres_logs', where: 'top' },
  { name: 'deno-relay-logs', cte: 'function_edge_logs', where: 'project_ref' },
  { name: 'deno-subhosting-events', cte: 'function_logs', where: 'project_ref' },
  { name: 'gotrue.logs.prod', cte: 'auth_logs', where: 'top' },
  { name: 'realtime.logs.prod', cte: 'realtime_logs', where: 'project' },
  { name: 'storage.logs.prod.2', cte: 'storage_logs', where: 'project' },
  { name: 'postgREST.logs.prod', cte: 'postgrest_logs', where: 'top' },
  { name: 'pgbouncer.logs.prod', cte: 'pgbouncer_logs', where: 'top' },
];

function eventFor(where: 'top' | 'project' | 'project_ref', project: string, i: number, secret: boolean, ts: number): Row {
  const tag = secret ? `${MARK}_${i}` : `mine_${i}`;
  const metadata: Row = { level: 'info', note: tag, request: { path: `/p/${tag}`, url: `https://x/${tag}` }, tags: [tag, 'x'] };
  const e: Row = { id: secret ? `${MARK}-id-${i}` : `own-id-${i}`, timestamp: new Date(ts).toISOString(), event_message: tag, metadata };
  if (where === 'top') e.project = project;
  else metadata[where] = project;
  return e;
}

/** Clean error / body: no marker, no physical table name, no internals. */
function assertClean(a: Answer, what: string, request = what): void {
  assert.ok(!a.text.includes(MARK), `${what}: a victim value leaked: ${a.text.slice(0, 400)}`);
  const warnings = a.headers.get('x-query-warnings') ?? '';
  assert.ok(!warnings.includes(MARK), `${what}: a victim value leaked in X-Query-Warnings: ${warnings}`);
  if (a.status >= 400) {
    const message = a.json.error?.message ?? '';
    assert.ok(a.json.error, `${what}: error without the error shape: ${a.text.slice(0, 300)}`);
    assert.doesNotMatch(message, /src_[0-9a-f]{8,}/, `${what}: a physical table name leaked: ${message}`);
    for (const table of ['_quarry_tokens', '_quarry_sources', '_quarry_endpoints', '_quarry_schema']) {
      if (!request.includes(table)) assert.ok(!message.includes(table), `${what}: a metadata table name leaked: ${message}`);
    }
    assert.doesNotMatch(message, /"__[dtu]\d+"|\bSELECT\b.*\bFROM\b.*"|\$project|CAST\(/, `${what}: generated SQL leaked: ${message}`);
    assert.doesNotMatch(message, PATH_OR_STACK, `${what}: a path or stack trace leaked: ${message}`);
  }
}

for (const engine of engines) {
  describe(engine, () => {
    describe('sandbox escapes over HTTP (logs.all as project "attacker")', () => {
      let s: TestServer;
      let secretSourceId = '';
      const now = Date.now();

      async function send(
        params: Record<string, string>,
        init: { method?: 'GET' | 'POST'; body?: unknown; token?: string | null } = {},
        path = '/api/endpoints/query/logs.all',
      ): Promise<Answer> {
        const qs = new URLSearchParams(params).toString();
        const headers: Record<string, string> = {};
        const req: RequestInit = { method: init.method ?? 'GET', headers };
        if (init.body !== undefined) {
          headers['content-type'] = 'application/json';
          req.body = typeof init.body === 'string' ? init.body : JSON.stringify(init.body);
        }
        const t = Date.now();
        const r = await s.fetch(`${path}${qs ? `?${qs}` : ''}`, req, init.token === undefined ? PRIVATE_TOKEN : init.token);
        const text = await r.text();
        let json: Answer['json'] = {};
        try {
          json = JSON.parse(text) as Answer['json'];
        } catch {
          // asserted by callers
        }
        return { status: r.status, text, headers: r.headers, ms: Date.now() - t, json };
      }

      /** Sends `sql` as the attacker (GET), checks it failed safely, returns the answer. */
      async function attack(sql: string, extra: Record<string, string> = {}): Promise<Answer> {
        assert.ok(!sql.includes(MARK), 'attack text must not contain the marker');
        const a = await send({ project: 'attacker', ...extra, sql });
        assertSafe(a, sql);
        return a;
      }

      function assertSafe(a: Answer, what: string): void {
        assert.ok([200, 400, 404, 422, 504].includes(a.status), `${what}: unexpected status ${a.status}: ${a.text.slice(0, 300)}`);
        assertClean(a, what);
        if (a.status === 200) {
          assert.ok(Array.isArray(a.json.result), `${what}: 200 without result`);
          assert.ok(a.json.result!.length <= 1000, `${what}: more rows than max_limit`);
        }
      }

      before(async () => {
        s = await startTestServer(engineEnv(engine));
        for (const [i, src] of sources.entries()) {
          const events: Row[] = [];
          for (let k = 0; k < 3; k++) events.push(eventFor(src.where, 'attacker', i * 10 + k, false, now - 60_000 + k));
          events.push(eventFor(src.where, 'victim', i, true, now - 30_000));
          await ingest(s, src.name, events);
        }
        // Enough rows of the attacker's own for a row-count channel (see the OFFSET/LIMIT tests).
        await ingest(
          s,
          'cloudflare.logs.prod',
          Array.from({ length: 60 }, (_, k) => eventFor('top', 'attacker', 1000 + k, false, now - 120_000 + k)),
        );
        secretSourceId = await createSource(s, 'secret.logs');
        await ingest(s, 'secret.logs', [{ project: 'attacker', token: `${MARK}_TOKEN_9f3`, event_message: `${MARK}_secret_source` }]);
      });

      after(async () => {
        await s?.close();
      });

      test('baseline: the attacker sees only its own rows, the victim only its own', async () => {
        const mine = await attack('select id, event_message from edge_logs');
        assert.equal(mine.status, 200);
        assert.ok(mine.json.result!.length > 0);
        for (const r of mine.json.result!) assert.match(String(r.event_message), /^mine_/);
        const theirs = await send({ project: 'victim', sql: 'select count(*) as c from edge_logs' });
        assert.equal(theirs.status, 200);
        assert.deepEqual(theirs.json.result, [{ c: 1 }]);
      });

      // ---- other tables, sources, metadata ---------------------------------------------------------

      const tableAttacks: string[] = [
        'select id from `cloudflare.logs.prod`',
        'select id from cloudflare.logs.prod',
        'select id from `cloudflare`.`logs`.`prod`',
        'select id from `CLOUDFLARE.LOGS.PROD`',
        'select id from `postgREST.logs.prod`',
        'select id from `postgrest.logs.prod`',
        'select token from `secret.logs`',
        'select token from `secret`.`logs`',
        'select id from prod',
        'select id from `_quarry_tokens`',
        'select id from _quarry_sources',
        'select id from `_quarry_endpoints`',
        'select id from `_quarry_schema`',
        'select id from main._quarry_tokens',
        'select id from `main`.`_quarry_tokens`',
        'select table_name from information_schema.tables',
        'select table_name from `region-us`.INFORMATION_SCHEMA.TABLES',
        'select name from duckdb_tables()',
        "select c from read_csv('/etc/passwd')",
        'select c from `/etc/passwd`',
        "select c from 'data/quarry.duckdb'",
        'select id from edge_logs, `cloudflare.logs.prod`',
        'select e.id from edge_logs e join `postgres.logs` p on true',
        'select id from edge_logs where exists (select 1 from `postgres.logs`)',
        'select id from edge_logs where id in (select id from `postgres.logs`)',
        'select (select max(id) from `postgres.logs`) as x from edge_logs',
        'select id from edge_logs union all select id from `postgres.logs`',
        'select id from edge_logs except distinct select id from `_quarry_tokens`',
        'select id from (select id from (select id from `gotrue.logs.prod`))',
        'select id from edge_logs qualify row_number() over (partition by (select max(id) from `postgres.logs`)) = 1',
        'select id from edge_logs order by (select max(id) from `postgres.logs`)',
        'select array_agg(id order by (select max(id) from `postgres.logs`)) as x from edge_logs',
        'select x from unnest((select array_agg(id) from `postgres.logs`)) as x',
        'select id from edge_logs where timestamp > timestamp_sub(current_timestamp(), interval (select count(*) from `postgres.logs`) day)',
        'select id from edge_logs e left join unnest((select array_agg(id) from `postgres.logs`)) as x on true',
        'select id from `edge_logs` for system_time as of current_timestamp()',
        'select id from edge_logs tablesample system (10 percent)',
        'select id from edge_logs.metadata',
        'select id from `edge_logs.metadata`',
        'select id from `edge_logs`.`metadata`',
        'select id from `edge_logs\u0000`',
        'select id from `edge_logs `',
        'select id from `ＥＤＧＥ_LOGS`',
        'select id from `edge_logſ`',
        'select id from `\u212Aey`',
        'select id from /* c */ `cloudflare.logs.prod` -- x',
        'select id from edge_logs; select id from `cloudflare.logs.prod`',
      ];
      for (const sql of tableAttacks) {
        test(`table: ${sql.slice(0, 120)}`, async () => {
          const a = await attack(sql);
          assert.notEqual(a.status, 200, `expected a refusal, got ${a.text.slice(0, 300)}`);
        });
      }

      // ---- CTE shadowing and scope --------------------------------------------------------------

      const cteAttacks: string[] = [
        // a caller CTE may not reuse a saved CTE's name (in any case)
        'with edge_logs as (select id from `cloudflare.logs.prod`) select id from edge_logs',
        'with EDGE_LOGS as (select id from postgres_logs) select id from edge_logs',
        'with `Edge_Logs` as (select id from postgres_logs) select id from edge_logs',
        // recursive, self and forward references
        'with recursive r as (select id from edge_logs union all select id from r) select id from r',
        'with a as (select id from b), b as (select id from `postgres.logs`) select id from a',
        'with `cloudflare.logs.prod` as (select id from `cloudflare.logs.prod`) select id from `cloudflare.logs.prod`',
        'with `_quarry_tokens` as (select id from `_quarry_tokens`) select id from `_quarry_tokens`',
        // nested WITH shadowing a saved CTE, reading a source
        'select id from (with edge_logs as (select id from `cloudflare.logs.prod`) select id from edge_logs)',
        'select id from edge_logs where id in (with edge_logs as (select id from `cloudflare.logs.prod`) select id from edge_logs)',
        // a CTE visible only inside a subquery, used outside it
        'select id from (with x as (select id from edge_logs) select id from x) q, x',
        // identifiers with quotes, backticks, SQL in names
        'with `a"b` as (select id from edge_logs) select id from `a"b`',
        'with `x" AS (SELECT token FROM src_x) --` as (select id from edge_logs) select id from `x" AS (SELECT token FROM src_x) --`',
        'select id as `x"; select 1 --` from edge_logs',
        'select e.id from edge_logs as `e" , "src_x` ',
        'select `id"` from edge_logs',
        'select `metadata`.`note"` as n from edge_logs',
      ];
      for (const sql of cteAttacks) {
        test(`cte/scope: ${sql.slice(0, 120)}`, async () => {
          await attack(sql);
        });
      }

      test('a caller CTE named like a source is only an alias of the caller own rows', async () => {
        const a = await attack(
          'with `cloudflare.logs.prod` as (select id, event_message from edge_logs) select b.id, b.event_message from `cloudflare.logs.prod` b',
        );
        assert.equal(a.status, 200);
        for (const r of a.json.result!) assert.match(String(r.event_message), /^mine_/);
      });

      test('correlated subqueries, windows, set operations and joins over all CTEs return only own rows', async () => {
        const union = sources.map((x) => `select id, event_message from ${x.cte}`).join(' union all ');
        for (const sql of [
          union,
          `select count(*) as c from (${union})`,
          'select e.id, (select count(*) from postgres_logs p where p.id != e.id) as c from edge_logs e',
          'select id, count(*) over () as c, first_value(event_message) over (order by timestamp) as f from edge_logs',
          'select id from edge_logs e where exists (select 1 from auth_logs a where a.event_message != e.event_message)',
          'select a.id from edge_logs a full join postgres_logs b on a.id = b.id',
          'select x from edge_logs cross join unnest(metadata) as m cross join unnest(m.tags) as x',
          'select m.project_ref as p from function_logs cross join unnest(metadata) as m',
          'select id from storage_logs where metadata.project = @project',
          'select id from edge_logs intersect distinct select id from edge_logs',
        ]) {
          const a = await attack(sql);
          assert.equal(a.status, 200, `${sql}: ${a.text.slice(0, 300)}`);
        }
      });

      // ---- LIMIT / OFFSET subqueries (BREAK) ------------------------------------------------------
      //
      // The generator translates LIMIT/OFFSET through `constant()` (src/engines/duckdb/generator.ts,
      // `const t = this.expr(e, new Scope(undefined), false)`), i.e. with an EMPTY CTE environment.
      // A subquery there resolves every table name through the catalogue, as a source. The validator
      // (src/sql/walk.ts) sees the caller's CTE of that name in scope and lets it through, and the
      // engine-side check allows every physical table the saved query reads. So a caller CTE named
      // like a source, plus `OFFSET (subquery)`, reads the source's physical table with no project
      // filter. A string-typed subquery is wrapped in CAST(... AS BIGINT), so DuckDB's conversion
      // error echoes the value in the response.

      test('regression: OFFSET (subquery) on a caller CTE named like a source reads the raw source, all projects', async () => {
        const a = await attack(
          "with `cloudflare.logs.prod` as (select id from edge_logs) select id from edge_logs offset (select max(event_message) from `cloudflare.logs.prod` where project = 'victim')",
        );
        assert.notEqual(a.status, 200);
      });

      test('regression: same through a nested LIMIT, on another source, concatenating every project', async () => {
        await attack(
          "with `postgres.logs` as (select id from edge_logs) select id from (select id from edge_logs limit (select string_agg(concat(project, ':', id, ':', event_message), ' | ') from `postgres.logs`))",
        );
      });

      test('regression: blind row-count channel (no error needed): reconstruct a victim message', async () => {
        // Each answer has strpos(alphabet, k-th character) rows: one request per character.
        const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789abcdefghijklmnopqrstuvwxyz';
        let recovered = '';
        for (let k = 1; k <= 12; k++) {
          const a = await attack(
            `with \`cloudflare.logs.prod\` as (select id from edge_logs) select id from (select id from edge_logs limit (select cast(strpos('${alphabet}', substr(max(event_message), ${k}, 1)) as string) from \`cloudflare.logs.prod\` where project = 'victim'))`,
          );
          if (a.status !== 200) break;
          const n = a.json.result!.length;
          if (n === 0) break;
          recovered += alphabet[n - 1];
        }
        assert.ok(!recovered.startsWith(MARK), `recovered the victim's event_message through row counts: ${recovered}`);
      });

      test('regression: any source by name: the refusal leaks its physical table, a CTE of that name passes the engine check', async () => {
        // Step 1: the engine-side check names the physical table (= the source id) in its message.
        const first = await send({
          project: 'attacker',
          sql: 'with `secret.logs` as (select id from edge_logs) select id from edge_logs offset (select max(token) from `secret.logs`)',
        });
        const leakedName = /src_[0-9a-f]{32}/.exec(first.text)?.[0];
        const physical = `src_${secretSourceId.toLowerCase().replace(/[^a-z0-9]/g, '')}`;
        // Step 2: a caller CTE named like the physical table (pruned as unused, so DuckDB binds the
        // name to the real table) is added to the engine check's allow-list (runner.ts cteNames()).
        const second = await send({
          project: 'attacker',
          sql: `with \`secret.logs\` as (select id from edge_logs), ${leakedName ?? physical} as (select id from edge_logs) select id from edge_logs offset (select max(token) from \`secret.logs\`)`,
        });
        assertClean(first, 'step 1');
        assertClean(second, 'step 2');
      });

      test('regression: the same OFFSET trick works on usage.api-counts (any sandboxable endpoint)', async () => {
        const a = await send(
          {
            project: 'attacker',
            interval: '1day',
            sql: "with `cloudflare.logs.prod` as (select start from dates) select start from dates offset (select string_agg(event_message, ',') from `cloudflare.logs.prod` where project = 'victim')",
          },
          {},
          '/api/endpoints/query/usage.api-counts',
        );
        assertSafe(a, 'usage.api-counts offset');
      });

      // LEAK (schema, lower severity): every project's rows of a source share one STRUCT type, the
      // union of every key any project ever sent. Results encode the whole STRUCT, so the attacker's
      // own `metadata` shows the victim's key names as null members (also on the plain saved query,
      // without `sql`), and X-Query-Warnings answers "has any project ever sent this path?". Keys are
      // often data (header names, user ids, e-mails as keys). Records now leave out the members a row
      // never carried. Whether *some* event of the source carried a path stays observable through
      // X-Query-Warnings: docs/API.md §4 defines the header that way (accepted, documented in SQL.md).
      test('key names only another project ever sent do not appear in the caller rows', async () => {
        await ingest(s, 'pgbouncer.logs.prod', [{ project: 'victim', event_message: 'v', metadata: { victimonlykey: 'x' } }]);
        const a = await attack('select metadata from pgbouncer_logs');
        assert.equal(a.status, 200);
        assert.ok(!a.text.includes('victimonlykey'), `the victim's key name is visible: ${a.text.slice(0, 300)}`);
      });

      test('LIMIT / OFFSET of plain values and parameters stay harmless', async () => {
        for (const sql of [
          'select id from edge_logs limit @project',
          'select id from edge_logs limit 5 offset @iso_timestamp_start',
          "select id from edge_logs limit cast('3' as int64)",
          'select id from edge_logs limit 99999999999999999999999',
          'select id from edge_logs limit 2 offset 9223372036854775807',
          'select id from edge_logs limit (select 2)',
          'select id from edge_logs limit (select count(*) from edge_logs)',
          'select id from edge_logs offset (select cast(count(*) as string) from edge_logs)',
        ]) {
          await attack(sql);
        }
      });

      // ---- literals, escaping, comments -----------------------------------------------------------

      const literalAttacks: string[] = [
        "select id from edge_logs where event_message = 'a\\' or true or \\'a'",
        "select id from edge_logs where event_message = 'x'' or project = ''victim'",
        "select 'a\\'; select token from src_x; --' as x",
        "select r'\\'' as x",
        "select r'\\' as x, ' or 1=1 --' as y",
        "select '''triple ' quoted''' as x",
        'select """triple " dq""" as x',
        'select "double \\" quoted; select 1" as x',
        "select b'bytes' as x",
        "select e'\\x27 or 1=1' as x",
        "select E'\\'' as x",
        "select '\\u0027 or true --' as x",
        "select '\\x00' as x",
        "select 'nul\u0000byte' as x",
        "select '$project' as x, '$1' as y, '?' as z",
        "select id from edge_logs where event_message like '%\\\\%' escape '\\\\'",
        "select id from edge_logs where regexp_contains(event_message, r'(?i)victim')",
        "select id -- comment ' \n from edge_logs",
        'select id /* \' " ` */ from edge_logs',
        'select 0x7fffffffffffffff as x',
        'select 1e400 as x',
        'select json_value(\'{"a":"b"}\', \'$.a\') as x',
        "select json_value(event_message, '$') as x from edge_logs",
        "select format_timestamp('%Y\\' || 1', current_timestamp()) as x",
      ];
      for (const sql of literalAttacks) {
        test(`literal: ${JSON.stringify(sql).slice(0, 120)}`, async () => {
          await attack(sql);
        });
      }

      // ---- functions outside the allow-list, catalogue, settings, environment ------------------------

      const functionAttacks: string[] = [
        "select getenv('HOME') as x",
        "select current_setting('enable_external_access') as x",
        'select version() as x',
        "select json_serialize_sql('select 1') as x",
        "select query_table('src_x') as x",
        "select read_text('/etc/hostname') as x",
        'select duckdb_extensions() as x',
        'select `main`.lower(event_message) as x from edge_logs',
        'select system.lower(event_message) as x from edge_logs',
        'select safe.lower(event_message) as x from edge_logs',
        'select `lower`(event_message) as x from edge_logs',
        'select LOWER(event_message) as x from edge_logs',
        'select list_transform([1], x -> x) as x',
        'select @@version as x',
        'select @@project_id as x',
        'select typeof(event_message) as x from edge_logs',
        "select struct_extract(metadata, 'note') as x from edge_logs",
        'select to_json(metadata) as x from edge_logs',
        "select timestamp('2020-01-01', '../../../../etc/passwd') as x",
        'select count(*) filter (where true) as x from edge_logs',
        'select array_agg(distinct id) over () as x from edge_logs',
        'select hasOwnProperty(id) as x from edge_logs',
        'select constructor(id) as x from edge_logs',
        'select __proto__(id) as x from edge_logs',
        'select toString(id) as x from edge_logs',
        'select offset(1) as x',
        'select ordinal(1) as x',
      ];
      for (const sql of functionAttacks) {
        test(`function: ${sql.slice(0, 120)}`, async () => {
          const a = await attack(sql);
          if (a.status === 200) {
            // Only an allow-listed spelling may run (LOWER, `lower`); never a catalogue/setting value.
            assert.match(sql, /lower`?\(/i, `${sql} ran: ${a.text.slice(0, 200)}`);
          }
        });
      }

      test('statements other than SELECT', async () => {
        for (const sql of [
          "ATTACH '/tmp/evil.db' AS evil",
          "COPY (select 1) TO '/tmp/out.csv'",
          'SET enable_external_access = true',
          'INSTALL httpfs',
          'PRAGMA database_list',
          "CALL query('select 1')",
          'DELETE FROM `cloudflare.logs.prod` WHERE true',
          'create table x as select id from edge_logs',
          'select id from edge_logs; DROP TABLE `_quarry_tokens`',
          'EXPORT DATA OPTIONS(uri="gs://x") AS select id from edge_logs',
          'DECLARE x INT64',
          'EXECUTE IMMEDIATE "select 1"',
        ]) {
          const a = await attack(sql);
          assert.equal(a.status, 400, `${sql}: ${a.text.slice(0, 300)}`);
        }
      });

      // ---- parameters and request shapes ------------------------------------------------------------

      test('parameter values are data, never SQL', async () => {
        for (const project of ["attacker' or '1'='1", "x' OR project = 'victim' --", 'victim\u0000', '%', '.*', 'VICTIM', ' victim', 'victim ']) {
          const a = await send({ project, sql: 'select id, event_message from edge_logs' });
          assertSafe(a, project);
          assert.equal(a.status, 200);
          assert.deepEqual(a.json.result, [], `project=${JSON.stringify(project)}`);
        }
        const ts = await send({ project: 'attacker', iso_timestamp_start: "' or true --", sql: 'select id from edge_logs' });
        assertSafe(ts, 'iso_timestamp_start');
      });

      test('undeclared, LQL-internal and system parameters are refused', async () => {
        for (const sql of [
          'select id from edge_logs where @secret is null',
          'select id from edge_logs where @__lql_0 is null',
          'select @project.x as x',
          'select id from edge_logs where project = @`project`',
          'select id from edge_logs where @@project = 1',
          'select id from edge_logs where ? is null',
          'select id from edge_logs where $project is null',
          'select id from edge_logs where $1 is null',
        ]) {
          const a = await attack(sql, { secret: 'victim', __lql_0: 'victim' });
          assert.notEqual(a.status, 200, `${sql}: ${a.text.slice(0, 300)}`);
        }
      });

      test('sql in the query string and in the body: the body wins and is sandboxed', async () => {
        const a = await send(
          { project: 'attacker', sql: 'select id from edge_logs' },
          { method: 'POST', body: { project: 'attacker', sql: 'select token from `secret.logs`' } },
        );
        assertSafe(a, 'body sql');
        assert.equal(a.status, 400);
        const b = await send(
          { project: 'victim', sql: 'select token from `secret.logs`' },
          { method: 'POST', body: { project: 'attacker', sql: 'select id, event_message from edge_logs' } },
        );
        assertSafe(b, 'query string project');
        assert.equal(b.status, 200);
        // A repeated parameter binds its last value.
        const c = await s.fetch(
          `/api/endpoints/query/logs.all?project=victim&project=attacker&sql=${encodeURIComponent('select event_message from edge_logs')}`,
        );
        const text = await c.text();
        assert.ok(!text.includes(MARK), text);
      });

      test('non-string sql / lql / parameter values', async () => {
        for (const body of [
          { project: 'attacker', sql: ['select token from `secret.logs`'] },
          { project: 'attacker', sql: { toString: 'select 1' } },
          { project: 'attacker', sql: 1 },
          { project: ['attacker', 'x'], sql: 'select id from edge_logs' },
          { project: { $ne: 'x' }, sql: 'select id from edge_logs' },
          { project: null, sql: 'select id from edge_logs' },
          { project: 'attacker', sql: '', lql: 'f:edge_logs' },
          { project: 'attacker', lql: ['f:edge_logs'] },
          { __proto__: { project: 'victim' }, sql: 'select id from edge_logs' },
        ]) {
          const a = await send({}, { method: 'POST', body });
          assertSafe(a, JSON.stringify(body));
        }
        const raw = await send({}, { method: 'POST', body: '{"project":"attacker","sql":"select id from edge_logs","sql":"select token from `secret.logs`"}' });
        assertSafe(raw, 'duplicate json keys');
        assert.equal(raw.status, 400);
      });

      test('odd values the engine cannot take are 400 INVALID_QUERY, not 500', async () => {
        for (const sql of ['select 1e400 as x', "select timestamp('2020-01-01', '../../etc/passwd') as t"]) {
          const a = await attack(sql);
          assert.equal(a.status, 400, sql);
          assert.equal(a.json.error?.code, 'INVALID_QUERY', sql);
        }
      });

      test('legacy path and endpoint id routes are sandboxed the same way', async () => {
        const a = await send({ project: 'attacker', sql: 'select token from `secret.logs`' }, {}, '/endpoints/query/logs.all');
        assertSafe(a, 'legacy');
        assert.equal(a.status, 400);
        const b = await send({ project: 'attacker', sql: 'select id from edge_logs' }, {}, '/api/endpoints/query/..%2Fsources');
        assertSafe(b, 'path traversal in the endpoint name');
      });

      // ---- LQL -------------------------------------------------------------------------------------

      const lqlAttacks: string[] = [
        'f:cloudflare.logs.prod',
        'f:_quarry_tokens',
        'f:EDGE_LOGS',
        'f:edge_logs f:postgres_logs',
        'f:edge_logs project:victim',
        'f:edge_logs m.project_ref:victim',
        'f:edge_logs "\' or 1=1 --"',
        'f:edge_logs event_message:"x\\" or \\"1\\"=\\"1"',
        'f:edge_logs event_message:"\\\\\' ; select 1"',
        "f:edge_logs ~'.*'",
        'f:edge_logs ~"(a+)+$"',
        'f:edge_logs m.tags:@>~".*"',
        'f:edge_logs s:t.project',
        'f:edge_logs s:edge_logs.id',
        'f:edge_logs s:metadata..note',
        'f:edge_logs s:id@x"y',
        'f:edge_logs s:id@__proto__',
        'f:edge_logs c:count(project) c:group_by(t::minute)',
        'f:edge_logs c:max(metadata.note) c:group_by(t::day)',
        "f:edge_logs m.note:(a') or (true)",
        'f:edge_logs t:>2000-01-01T00:00:00Z',
        'f:edge_logs t:1..9999999999999999999',
        `f:edge_logs ${Array.from({ length: 100 }, (_, i) => `m.level:${i}`).join(' ')}`,
      ];
      for (const lql of lqlAttacks) {
        test(`lql: ${lql.slice(0, 120)}`, async () => {
          assert.ok(!lql.includes(MARK));
          const a = await send({ project: 'attacker', lql });
          assertSafe(a, lql);
          assertClean(a, lql, lql);
        });
      }
    });
  });
}
