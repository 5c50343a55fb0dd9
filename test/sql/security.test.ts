/**
 * Escape attempts through a sandboxed caller query on `logs.all`. Each must be refused by the
 * front end (parse/validate/generate) before DuckDB sees anything, and its engine-level
 * equivalent must fail again on the locked-down database: either DuckDB's own parse tree check
 * (checkTranslatedSql) refuses it, or DuckDB itself does (no external access, frozen settings).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { logsAllSql } from '../../src/endpoints/supabase/index.ts';
import { generateClickHouse } from '../../src/engines/clickhouse/printer.ts';
import { generateDuckDb } from '../../src/engines/duckdb/generator.ts';
import { checkTranslatedSql, lockDownDuckDb } from '../../src/engines/duckdb/lockdown.ts';
import { DuckDbQueryRunner } from '../../src/engines/duckdb/runner.ts';
import { type ErrorCode, isQuarryError } from '../../src/errors.ts';
import { prepareEndpointQuery } from '../../src/sql/index.ts';
import type { SourceTable } from '../../src/storage/schema.ts';
import { supabaseData, supabaseSources } from './fixtures.ts';
import { insertEvents, makeCatalog, openTestDb, schema, str, type TestDb } from './support.ts';

const secret: SourceTable = { id: 'secret', name: 'secret.logs', table: 'src_secret', schema: schema({ token: str }) };
const sources = [...supabaseSources, secret];
/** Physical tables logs.all itself reads: the engine check allows these and nothing else. */
const endpointTables = supabaseSources.map((s) => s.table);
const endpointCtes = [
  'edge_logs',
  'postgres_logs',
  'function_edge_logs',
  'function_logs',
  'auth_logs',
  'realtime_logs',
  'storage_logs',
  'postgrest_logs',
  'pgbouncer_logs',
];

interface Attack {
  name: string;
  /** What the caller sends as `sql`. */
  sql: string;
  /** What the attack amounts to in DuckDB if it were passed through. */
  engine: string;
  /** DuckDB itself must refuse `engine` even without our parse-tree check. */
  lockedByDuckDb?: boolean;
}

const leak = 'SELECT token FROM src_secret';

const attacks: Attack[] = [
  // other tables and sources
  { name: 'another source by backtick name', sql: 'select token from `secret.logs`', engine: leak },
  { name: 'another source by physical table name', sql: 'select token from src_secret', engine: leak },
  { name: "the endpoint's own source, bypassing its CTE", sql: 'select id from `cloudflare.logs.prod`', engine: 'SELECT id FROM src_secret' },
  {
    name: 'another source inside a parenthesised join',
    sql: 'select s.token from edge_logs e join (`secret.logs` s cross join unnest([1]) as x) on true',
    engine: leak,
  },
  {
    name: 'another source inside a LEFT JOIN of a parenthesised join',
    sql: 'select s.token from edge_logs e left join (src_secret s cross join unnest(s.token) as x) on true',
    engine: leak,
  },
  {
    name: 'a table function in a parenthesised join first in FROM',
    sql: 'select 1 as one from (edge_logs e cross join duckdb_tables() d)',
    engine: 'SELECT table_name FROM duckdb_tables()',
  },
  { name: 'schema-qualified table', sql: 'select token from main.src_secret', engine: 'SELECT token FROM main.src_secret' },
  { name: 'catalog-qualified table', sql: 'select token from memory.main.src_secret', engine: 'SELECT token FROM memory.main.src_secret' },
  { name: 'information_schema.tables', sql: 'select table_name from information_schema.tables', engine: 'SELECT table_name FROM information_schema.tables' },
  {
    name: 'BigQuery region information schema',
    sql: 'select job_id from `region-us`.INFORMATION_SCHEMA.JOBS',
    engine: 'SELECT table_name FROM information_schema.columns',
  },
  { name: 'duckdb_tables()', sql: 'select table_name from duckdb_tables()', engine: 'SELECT table_name FROM duckdb_tables()' },
  { name: 'duckdb_settings()', sql: 'select name from duckdb_settings()', engine: 'SELECT name FROM duckdb_settings()' },
  { name: 'duckdb_databases()', sql: 'select path from duckdb_databases()', engine: 'SELECT path FROM duckdb_databases()' },
  { name: 'pragma_table_info', sql: "select name from pragma_table_info('src_secret')", engine: "SELECT name FROM pragma_table_info('src_secret')" },
  { name: 'sqlite_master', sql: 'select sql from sqlite_master', engine: 'SELECT sql FROM sqlite_master' },
  { name: 'range() table function', sql: 'select x from range(10)', engine: 'SELECT range FROM range(10)' },
  { name: 'query() table function', sql: "select x from query('select 1 as x')", engine: "SELECT x FROM query('SELECT token AS x FROM src_secret')" },
  // files, network, environment
  { name: 'read_csv', sql: "select a from read_csv('/etc/passwd')", engine: "SELECT * FROM read_csv('/etc/passwd')", lockedByDuckDb: true },
  { name: 'read_csv_auto', sql: "select a from read_csv_auto('/etc/passwd')", engine: "SELECT * FROM read_csv_auto('/etc/passwd')", lockedByDuckDb: true },
  { name: 'read_text', sql: "select content from read_text('/etc/hostname')", engine: "SELECT content FROM read_text('/etc/hostname')", lockedByDuckDb: true },
  { name: 'read_blob', sql: "select content from read_blob('/etc/hostname')", engine: "SELECT content FROM read_blob('/etc/hostname')", lockedByDuckDb: true },
  { name: 'read_parquet', sql: "select a from read_parquet('/tmp/x.parquet')", engine: "SELECT * FROM read_parquet('/tmp/x.parquet')", lockedByDuckDb: true },
  { name: 'read_json', sql: "select a from read_json('/tmp/x.json')", engine: "SELECT * FROM read_json('/tmp/x.json')", lockedByDuckDb: true },
  { name: 'glob', sql: "select file from glob('/*')", engine: "SELECT file FROM glob('/*')", lockedByDuckDb: true },
  { name: 'file path as a table', sql: 'select a from `/etc/passwd`', engine: "SELECT * FROM '/etc/passwd'", lockedByDuckDb: true },
  { name: 'http URL as a table', sql: 'select a from `http://127.0.0.1:1/x.csv`', engine: "SELECT * FROM 'http://127.0.0.1:1/x.csv'", lockedByDuckDb: true },
  {
    name: 'read_text in a scalar subquery',
    sql: "select (select content from read_text('/etc/hostname')) as v",
    engine: "SELECT (SELECT content FROM read_text('/etc/hostname'))",
    lockedByDuckDb: true,
  },
  { name: 'getenv', sql: "select getenv('HOME') as v", engine: "SELECT getenv('HOME')" },
  { name: 'current_setting', sql: "select current_setting('threads') as v", engine: "SELECT current_setting('threads')" },
  { name: 'version()', sql: 'select version() as v', engine: 'SELECT version()' },
  { name: 'current_database()', sql: 'select current_database() as v', engine: 'SELECT current_database()' },
  { name: 'json_serialize_sql', sql: "select json_serialize_sql('select 1') as v", engine: "SELECT json_serialize_sql('SELECT 1')" },
  { name: 'external_query', sql: "select x from external_query('conn', 'select 1')", engine: "SELECT * FROM read_text('/etc/hostname')", lockedByDuckDb: true },
  { name: 'session_user', sql: 'select session_user() as v', engine: 'SELECT current_user' },
  { name: 'a lambda through list_transform', sql: 'select list_transform([1], x -> x) as v', engine: 'SELECT list_transform([1], x -> x)' },
  { name: 'system variable', sql: 'select @@project_id as v', engine: "SELECT current_setting('home_directory')" },
  // statements other than SELECT
  { name: 'ATTACH', sql: "ATTACH '/tmp/evil.db' AS evil", engine: "ATTACH '/tmp/evil.db' AS evil", lockedByDuckDb: true },
  { name: 'COPY TO a file', sql: "COPY edge_logs TO '/tmp/out.csv'", engine: "COPY src_secret TO '/tmp/out.csv'", lockedByDuckDb: true },
  { name: 'INSTALL an extension', sql: 'INSTALL httpfs', engine: 'INSTALL httpfs', lockedByDuckDb: true },
  { name: 'LOAD an extension', sql: 'LOAD httpfs', engine: 'LOAD httpfs', lockedByDuckDb: true },
  { name: 'SET a setting', sql: 'SET enable_external_access = true', engine: 'SET enable_external_access = true', lockedByDuckDb: true },
  { name: 'SET lock_configuration', sql: 'SET lock_configuration = false', engine: 'SET lock_configuration = false', lockedByDuckDb: true },
  { name: 'PRAGMA', sql: 'PRAGMA database_list', engine: 'PRAGMA database_list' },
  { name: 'DROP TABLE', sql: 'drop table edge_logs', engine: 'DROP TABLE src_secret' },
  { name: 'DELETE', sql: 'delete from edge_logs where true', engine: 'DELETE FROM src_secret' },
  { name: 'INSERT', sql: "insert into edge_logs (id) values ('x')", engine: "INSERT INTO src_secret (id) VALUES ('x')" },
  { name: 'UPDATE', sql: "update edge_logs set id = 'x' where true", engine: "UPDATE src_secret SET id = 'x'" },
  { name: 'CREATE TABLE AS', sql: 'create table x as select 1 as a', engine: 'CREATE TABLE x AS SELECT 1 AS a' },
  { name: 'CREATE MACRO / FUNCTION', sql: 'create temp function f(x int64) as (x)', engine: 'CREATE MACRO f(x) AS x' },
  { name: 'TRUNCATE', sql: 'truncate table edge_logs', engine: 'TRUNCATE src_secret' },
  { name: 'MERGE', sql: 'merge into edge_logs t using edge_logs s on t.id = s.id when matched then delete', engine: 'DELETE FROM src_secret' },
  {
    name: 'EXPORT DATA',
    sql: "EXPORT DATA OPTIONS(uri='gs://x/*.csv') AS select id from edge_logs",
    engine: "COPY (SELECT 1) TO '/tmp/x.csv'",
    lockedByDuckDb: true,
  },
  { name: 'EXECUTE IMMEDIATE', sql: "EXECUTE IMMEDIATE 'select 1'", engine: 'EXECUTE x' },
  { name: 'CALL', sql: 'CALL pragma_version()', engine: 'CALL pragma_version()' },
  { name: 'SHOW TABLES', sql: 'SHOW TABLES', engine: 'SHOW TABLES' },
  { name: 'DESCRIBE', sql: 'DESCRIBE edge_logs', engine: 'DESCRIBE src_secret' },
  { name: 'EXPLAIN', sql: 'EXPLAIN select id from edge_logs', engine: 'EXPLAIN SELECT token FROM src_secret' },
  // multiple statements and comment tricks
  { name: 'two statements', sql: 'select id from edge_logs; drop table edge_logs', engine: 'SELECT 1; DROP TABLE src_secret' },
  { name: 'two selects', sql: 'select 1 as a; select 2 as b', engine: 'SELECT 1; SELECT 2' },
  {
    name: 'statement hidden after a line comment',
    sql: 'select id from edge_logs -- harmless\n; delete from edge_logs where true',
    engine: 'SELECT 1; DELETE FROM src_secret',
  },
  { name: 'statement after a block comment', sql: 'select id from edge_logs /* ; */ ; select token from `secret.logs`', engine: `SELECT 1; ${leak}` },
  { name: 'table hidden behind a block comment', sql: 'select token from /* edge_logs */ `secret.logs`', engine: leak },
  { name: 'comment inside a name splits it', sql: 'select id from edge_/**/logs', engine: leak },
  // lookalikes
  { name: 'Cyrillic e in a CTE name', sql: 'select id from edgе_logs', engine: leak },
  { name: 'fullwidth letters in a CTE name', sql: 'select id from ｅdge_logs', engine: leak },
  { name: 'zero-width space in a backtick name', sql: 'select id from `edge_logs\u200b`', engine: leak },
  { name: 'trailing space in a backtick name', sql: 'select id from `edge_logs `', engine: leak },
  { name: 'case variant of a source name', sql: 'select token from `SECRET.LOGS`', engine: leak },
  // nested hiding places
  { name: 'derived table hiding a source', sql: 'select token from (select token from `secret.logs`) as s', engine: `SELECT token FROM (${leak})` },
  {
    name: 'union branch hiding a source',
    sql: 'select id from edge_logs union all select token from `secret.logs`',
    engine: `SELECT id FROM edge_logs UNION ALL ${leak}`,
  },
  {
    name: 'caller CTE reading a source',
    sql: 'with x as (select token from `secret.logs`) select token from x',
    engine: `WITH x AS (${leak}) SELECT token FROM x`,
  },
  {
    name: 'EXISTS subquery over a source',
    sql: 'select id from edge_logs where exists (select 1 from `secret.logs`)',
    engine: 'SELECT 1 WHERE EXISTS (SELECT 1 FROM src_secret)',
  },
  {
    name: 'IN subquery over a source',
    sql: 'select id from edge_logs where id in (select token from src_secret)',
    engine: 'SELECT 1 WHERE 1 IN (SELECT 1 FROM src_secret)',
  },
  {
    name: 'scalar subquery over a source',
    sql: 'select (select string_agg(token) from `secret.logs`) as v',
    engine: 'SELECT (SELECT string_agg(token) FROM src_secret)',
  },
  {
    name: 'join to a source',
    sql: 'select s.token from edge_logs e join `secret.logs` s on true',
    engine: 'SELECT s.token FROM edge_logs e JOIN src_secret s ON TRUE',
  },
  { name: 'comma join to a source', sql: 'select s.token from edge_logs e, `secret.logs` s', engine: 'SELECT s.token FROM edge_logs e, src_secret s' },
  {
    name: 'unnest over a subquery of a source',
    sql: 'select x from unnest((select array_agg(token) from `secret.logs`)) as x',
    engine: 'SELECT unnest((SELECT array_agg(token) FROM src_secret))',
  },
  {
    name: 'three levels deep',
    sql: 'select a from (select a from (select token as a from (select token from `secret.logs`)))',
    engine: `SELECT a FROM (SELECT token AS a FROM (${leak}))`,
  },
  // wildcards and other refused forms
  { name: 'SELECT *', sql: 'select * from edge_logs', engine: 'SELECT * FROM src_secret' },
  { name: 't.*', sql: 'select e.* from edge_logs e', engine: 'SELECT s.* FROM src_secret s' },
  { name: '* EXCEPT', sql: 'select * except (id) from edge_logs', engine: 'SELECT * EXCLUDE (id) FROM src_secret' },
  { name: 'wildcard inside a subquery', sql: 'select id from (select * from edge_logs)', engine: 'SELECT token FROM (SELECT * FROM src_secret)' },
  {
    name: 'WITH RECURSIVE (runaway query)',
    sql: 'with recursive r as (select 1 as n union all select n + 1 from r) select n from r',
    engine: 'WITH RECURSIVE r AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM r) SELECT n FROM r',
  },
  { name: 'positional placeholder', sql: 'select ? as v', engine: 'SELECT $1' },
];

let t: TestDb;

before(async () => {
  t = await openTestDb(sources, { ...supabaseData });
  await insertEvents(t.conn, secret, [{ id: 's', timestamp: '2026-11-21T10:00:00Z', event_message: 'x', token: 'TOP-SECRET' }]);
  await lockDownDuckDb(t.conn, { memoryLimit: '1GB' });
});

after(() => t.db.close());

const catalog = () => makeCatalog(sources);

/** The front end and each engine's generator: each must refuse before any engine runs a thing. */
const generators = {
  duckdb: (ast: Parameters<typeof generateDuckDb>[0]) => generateDuckDb(ast, { catalog: catalog(), maxRows: 1000 }),
  clickhouse: (ast: Parameters<typeof generateDuckDb>[0]) => generateClickHouse(ast, { catalog: catalog(), database: 'quarry', maxRows: 1000 }),
};

function prepare(sql: string, generator: keyof typeof generators = 'duckdb') {
  const prepared = prepareEndpointQuery({ saved: logsAllSql, caller: { sql }, catalog: catalog(), sandboxable: true });
  return generators[generator](prepared.ast);
}

test('the security suite holds at least 60 escape attempts', () => {
  assert.ok(attacks.length >= 60, `${attacks.length} attacks`);
});

for (const generator of Object.keys(generators) as (keyof typeof generators)[]) {
  describe(`refused before the engine (${generator} generator)`, () => {
    for (const a of attacks) {
      test(a.name, () => {
        assert.throws(
          () => prepare(a.sql, generator),
          (e: unknown) => {
            assert.ok(isQuarryError(e), String(e));
            // Refused as not allowed, or as unparseable: either way before any engine.
            const allowed: ErrorCode[] = ['QUERY_NOT_ALLOWED', 'PARSE_ERROR'];
            assert.ok(allowed.includes(e.code), `${e.code}: ${e.message}`);
            assert.doesNotMatch(e.message, /SELECT .* FROM "|"src_/);
            return true;
          },
        );
      });
    }
  });
}

describe('refused again by the locked engine', () => {
  for (const a of attacks) {
    test(a.name, async () => {
      const conn = await t.db.connect();
      try {
        await assert.rejects(async () => {
          await checkTranslatedSql(conn, a.engine, { tables: endpointTables, ctes: endpointCtes });
          await conn.run(a.engine);
        });
        if (a.lockedByDuckDb) await assert.rejects(conn.run(a.engine), 'DuckDB itself must refuse this once locked');
      } finally {
        conn.closeSync();
      }
    });
  }
});

describe('the locked database keeps working for the service', () => {
  test('ingest-style inserts still work after lockdown', async () => {
    await insertEvents(t.conn, secret, [{ id: 's2', timestamp: '2026-11-21T10:01:00Z', event_message: 'y', token: 'x' }]);
    const r = await t.conn.runAndReadAll('SELECT count(*)::INTEGER AS n FROM src_secret');
    assert.deepEqual(r.getRowObjectsJson(), [{ n: 2 }]);
  });

  test('legitimate caller queries run through the checked, locked runner', async () => {
    const runner = new DuckDbQueryRunner({ connect: () => t.db.connect() });
    try {
      const prepared = prepareEndpointQuery({
        saved: logsAllSql,
        caller: { sql: 'select count(*) as n from edge_logs cross join unnest(metadata) as m where regexp_contains(m.request.path, "rest")' },
        catalog: catalog(),
        sandboxable: true,
      });
      const r = await runner.run(prepared, { project: 'default' }, { timeoutMs: 5000, maxRows: 10 });
      assert.deepEqual(r.rows, [{ n: 3 }]);
    } finally {
      runner.close();
    }
  });

  test('a parameter value crafted as SQL stays a value', async () => {
    const runner = new DuckDbQueryRunner({ connect: () => t.db.connect() });
    try {
      const prepared = prepareEndpointQuery({ saved: logsAllSql, catalog: catalog(), sandboxable: true });
      const evil = "default' OR '1'='1'; DROP TABLE src_edge; --";
      const r = await runner.run(prepared, { project: evil, iso_timestamp_start: "'); DROP TABLE src_secret; --" }, { timeoutMs: 5000, maxRows: 10 });
      assert.deepEqual(r.rows, []);
      const still = await t.conn.runAndReadAll('SELECT count(*)::INTEGER AS n FROM src_edge');
      assert.deepEqual(still.getRowObjectsJson(), [{ n: 8 }]);
    } finally {
      runner.close();
    }
  });

  test('a non-sandboxable endpoint refuses caller SQL', () => {
    assert.throws(
      () => prepareEndpointQuery({ saved: logsAllSql, caller: { sql: 'select id from edge_logs' }, catalog: catalog(), sandboxable: false }),
      (e: unknown) => isQuarryError(e) && e.code === 'BAD_REQUEST',
    );
  });
});
