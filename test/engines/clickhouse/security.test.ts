/**
 * The ClickHouse engine's own defences, behind the front end (test/sql/security.test.ts refuses the
 * same attacks before any engine): each attack, written in ClickHouse SQL as if it had got past the
 * generator, must be refused by the parse-tree check (EXPLAIN AST); those marked `readonly` must
 * also fail when run raw with the per-query settings every caller query carries (chDB has no users
 * or profiles, so read-only mode is the engine's own lock).
 */
import assert from 'node:assert/strict';
import type { ClickHouseConnection } from '../../../src/engines/clickhouse/client.ts';
import { after, before, describe, test } from 'node:test';
import { logsAllSql } from '../../../src/endpoints/supabase/index.ts';
import { checkTranslatedSql, clearTranslatedSqlVerdicts, querySettings, treeProblem } from '../../../src/engines/clickhouse/lockdown.ts';
import { isQuarryError } from '../../../src/errors.ts';
import { prepareEndpointQuery } from '../../../src/sql/index.ts';
import type { SourceTable } from '../../../src/storage/schema.ts';
import { supabaseData, supabaseSources } from '../../sql/fixtures.ts';
import { schema, str } from '../../sql/support.ts';
import { engines, openQueryTestEngine, type QueryTestEngine } from '../../support/engines.ts';

const secret: SourceTable = { id: 'secret', name: 'secret.logs', table: 'src_secret', schema: schema({ token: str }) };
const db = 'quarry_test';
const allowed = { database: db, tables: supabaseSources.map((s) => s.table), ctes: ['edge_logs', 'postgres_logs'] };

interface Attack {
  name: string;
  sql: string;
  /** Read-only mode itself must refuse it when run raw. */
  readonly?: boolean;
}

const attacks: Attack[] = [
  { name: 'another source table', sql: `SELECT token FROM ${db}.src_secret` },
  { name: 'another source, unqualified', sql: 'SELECT token FROM src_secret' },
  { name: 'the catalogue table', sql: `SELECT schema_json FROM ${db}._quarry_catalog` },
  { name: 'another database', sql: 'SELECT name FROM default.t' },
  { name: 'system.tables', sql: 'SELECT name FROM system.tables' },
  { name: 'system.users', sql: 'SELECT name FROM system.users' },
  { name: 'system.settings', sql: 'SELECT name FROM system.settings' },
  { name: 'system.processes', sql: 'SELECT query FROM system.processes' },
  { name: 'information_schema', sql: 'SELECT table_name FROM information_schema.tables' },
  { name: 'file()', sql: "SELECT line FROM file('/etc/passwd', 'LineAsString')", readonly: true },
  { name: 'url()', sql: "SELECT line FROM url('http://127.0.0.1:1/x', 'LineAsString')", readonly: true },
  { name: 's3()', sql: "SELECT line FROM s3('http://127.0.0.1:1/b/k', 'LineAsString')", readonly: true },
  { name: 'remote()', sql: "SELECT token FROM remote('127.0.0.1:1', 'quarry_test', 'src_secret')", readonly: true },
  { name: 'mysql()', sql: "SELECT a FROM mysql('127.0.0.1:1', 'd', 't', 'u', 'p')", readonly: true },
  { name: 'postgresql()', sql: "SELECT a FROM postgresql('127.0.0.1:1', 'd', 't', 'u', 'p')", readonly: true },
  { name: 'executable()', sql: "SELECT x FROM executable('ls', 'LineAsString', 'x String')" },
  { name: 'merge() over every table', sql: `SELECT token FROM merge('${db}', '.*')` },
  { name: 'numbers() table function', sql: 'SELECT number FROM numbers(10)' },
  { name: 'generateRandom()', sql: "SELECT a FROM generateRandom('a String')" },
  { name: 'view() table function', sql: `SELECT token FROM view(SELECT token FROM ${db}.src_secret)` },
  { name: 'dictionary function', sql: "SELECT dictGet('d', 'a', toUInt64(1))" },
  { name: 'file() scalar function', sql: "SELECT file('/etc/passwd')" },
  { name: 'settings introspection', sql: "SELECT getSetting('readonly')" },
  { name: 'host introspection', sql: 'SELECT hostName()' },
  { name: 'a SETTINGS clause', sql: 'SELECT 1 SETTINGS readonly = 0', readonly: true },
  { name: 'SET', sql: 'SET readonly = 0', readonly: true },
  { name: 'INSERT', sql: `INSERT INTO ${db}.src_edge (id) VALUES ('x')`, readonly: true },
  { name: 'DROP TABLE', sql: `DROP TABLE ${db}.src_edge`, readonly: true },
  { name: 'TRUNCATE', sql: `TRUNCATE TABLE ${db}.src_edge`, readonly: true },
  { name: 'ALTER DELETE', sql: `ALTER TABLE ${db}.src_edge DELETE WHERE 1`, readonly: true },
  { name: 'CREATE TABLE', sql: `CREATE TABLE ${db}.x (a Int8) ENGINE = Memory`, readonly: true },
  { name: 'KILL QUERY', sql: 'KILL QUERY WHERE 1' },
  { name: 'SYSTEM', sql: 'SYSTEM DROP DNS CACHE', readonly: true },
  { name: 'two statements', sql: `SELECT 1; DROP TABLE ${db}.src_edge` },
  { name: 'a wildcard', sql: `SELECT * FROM ${db}.src_edge` },
  { name: 'SAMPLE', sql: `SELECT id FROM ${db}.src_edge SAMPLE 1 / 10` },
  { name: 'a subquery hiding a source', sql: `SELECT a FROM (SELECT token AS a FROM ${db}.src_secret) AS s` },
  { name: 'a CTE hiding a source', sql: `WITH x AS (SELECT token FROM ${db}.src_secret) SELECT token FROM x` },
  { name: 'IN over a source', sql: `SELECT id FROM ${db}.src_edge AS e WHERE e.id IN (SELECT token FROM ${db}.src_secret)` },
];

for (const engine of engines.filter((e) => e === 'clickhouse')) {
  describe(engine, () => {
    let t: QueryTestEngine;
    let raw: ClickHouseConnection;
    before(async () => {
      t = await openQueryTestEngine(engine, [...supabaseSources, secret], supabaseData);
      raw = t.connection as ClickHouseConnection;
    });
    after(() => t.close());

    test('the suite holds at least 35 attacks', () => {
      assert.ok(attacks.length >= 35);
    });

    describe('refused by the parse-tree check', () => {
      for (const a of attacks) {
        test(a.name, async () => {
          clearTranslatedSqlVerdicts();
          await assert.rejects(checkTranslatedSql(raw.reader, a.sql, allowed), (e: unknown) => {
            assert.ok(isQuarryError(e), String(e));
            assert.ok(['QUERY_NOT_ALLOWED', 'INTERNAL'].includes(e.code), e.message);
            assert.doesNotMatch(e.message, /src_|quarry_test/);
            return true;
          });
        });
      }
    });

    describe('refused by read-only mode when run raw', () => {
      for (const a of attacks.filter((x) => x.readonly)) {
        test(a.name, async () => {
          const settings = querySettings({ timeoutMs: 2000, maxRows: 10, maxMemoryBytes: 1e9 });
          await assert.rejects(raw.reader.command({ query: a.sql.startsWith('SELECT') ? a.sql + settings : `${a.sql}${settings}` }));
        });
      }
    });

    test('an allowed query passes the check', async () => {
      const prepared = prepareEndpointQuery({
        saved: logsAllSql,
        caller: { sql: 'select count(*) as n from edge_logs' },
        catalog: t.catalog,
        sandboxable: true,
      });
      const r = await t.query.run(prepared, { project: 'default' }, { timeoutMs: 5000, maxRows: 10 });
      assert.deepEqual(r.rows, [{ n: 7 }]);
      assert.equal(treeProblem('SelectWithUnionQuery (children 1)', allowed), undefined);
    });

    test('a parameter value crafted as SQL stays a value', async () => {
      const prepared = prepareEndpointQuery({ saved: logsAllSql, catalog: t.catalog, sandboxable: true });
      const evil = "default' OR '1'='1'; DROP TABLE src_edge; --";
      const r = await t.query.run(prepared, { project: evil, iso_timestamp_start: "'); DROP TABLE src_secret; --" }, { timeoutMs: 5000, maxRows: 10 });
      assert.deepEqual(r.rows, []);
      const still = await raw.reader.query({ query: `SELECT count() AS n FROM ${db}.src_edge`, format: 'JSONEachRow' });
      assert.deepEqual(await still.json(), [{ n: 8 }]);
    });

    test('the service connection still writes after caller queries ran read-only', async () => {
      await raw.client.command({ query: `INSERT INTO ${db}.src_secret (id, timestamp, fields) VALUES ('s2', now64(6), '{}')` });
      const n = await raw.client.query({ query: `SELECT count() AS n FROM ${db}.src_secret`, format: 'JSONEachRow' });
      assert.deepEqual(await n.json(), [{ n: 1 }]);
    });
  });
}
