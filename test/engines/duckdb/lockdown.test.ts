/** The engine-side second check remembers passes only for the exact (SQL, allowed tables, CTEs). */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { DuckDBConnection } from '@duckdb/node-api';
import { openDuckDb, type DuckDb } from '../../../src/embedded-db/database.ts';
import { checkTranslatedSql, clearTranslatedSqlVerdicts } from '../../../src/engines/duckdb/lockdown.ts';
import { isQuarryError } from '../../../src/errors.ts';

let db: DuckDb;
let conn: DuckDBConnection;

before(async () => {
  db = await openDuckDb({ path: ':memory:' });
  conn = await db.connect();
  clearTranslatedSqlVerdicts();
});

after(() => db.close());

const refused = (e: unknown) => isQuarryError(e) && e.code === 'QUERY_NOT_ALLOWED';

describe('checkTranslatedSql verdicts', () => {
  test('a pass is remembered for the same SQL and allowed set only', async () => {
    const sql = 'SELECT "t"."a" AS "a" FROM "src_a" AS "t"';
    await checkTranslatedSql(conn, sql, { tables: ['src_a'], ctes: [] });
    await checkTranslatedSql(conn, sql, { tables: ['src_a'], ctes: [] });
    await assert.rejects(checkTranslatedSql(conn, sql, { tables: ['src_b'], ctes: [] }), refused);
    await assert.rejects(checkTranslatedSql(conn, sql, { tables: [], ctes: [] }), refused);
  });

  test('a refusal is given every time', async () => {
    const sql = 'SELECT "t"."a" AS "a" FROM read_csv(\'/etc/passwd\') AS "t"';
    for (let i = 0; i < 3; i++) await assert.rejects(checkTranslatedSql(conn, sql, { tables: ['src_a'], ctes: [] }), refused);
  });

  test('every distinct SQL text is checked by DuckDB', async () => {
    await checkTranslatedSql(conn, 'SELECT "t"."a" AS "a" FROM "src_a" AS "t"', { tables: ['src_a'], ctes: [] });
    await assert.rejects(
      checkTranslatedSql(conn, 'SELECT "t"."a" AS "a" FROM "src_a" AS "t" WHERE getenv(\'HOME\') IS NULL', { tables: ['src_a'], ctes: [] }),
      refused,
    );
  });
});
