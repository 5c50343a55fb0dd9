/**
 * DUCKDB_ROW_GROUP_SIZE: the engine, opened from its definition as the service opens it, writes
 * row groups of that many rows; a data folder written at one size opens and grows at another, and
 * at DuckDB's own (the file opened as the default database again), losing nothing; closing still
 * checkpoints the log; spills go beside the file, not into the working directory.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { DuckDBInstance } from '@duckdb/node-api';
import { openDuckDb } from '../../../src/embedded-db/database.ts';
import { duckDb } from '../../../src/engines/duckdb/definition.ts';
import { baseColumns } from '../../../src/storage/schema.ts';
import { storedEvent } from '../../support/engines.ts';
import { tempDirs } from '../../support/temp-dirs.ts';

const tempDir = tempDirs('row-groups');
const TABLE = 'src_rows';
const schema = { columns: { ...baseColumns } };

/** Opens the engine on `dataDir` with `env`, appends `count` events in requests of 1,000 (one commit each), closes it. */
async function ingest(dataDir: string, env: Record<string, string>, first: number, count: number): Promise<void> {
  const engine = await duckDb.configure(env, { dataDir, memoryBudgetBytes: 2 ** 30 }).open();
  try {
    await engine.storage.createSourceTable(TABLE);
    for (let start = first; start < first + count; start += 1000) {
      const events = Array.from({ length: 1000 }, (_, i) =>
        storedEvent({ id: `e${start + i}`, timestamp: '2026-11-28T12:00:00Z', event_message: `m${start + i}` }),
      );
      await engine.storage.append([{ table: TABLE, schema, events }]);
    }
  } finally {
    await engine.close();
  }
}

/** Rows, distinct ids and the row counts of the table's row groups, read from the closed file. */
async function inspect(file: string): Promise<{ rows: number; ids: number; groups: number[] }> {
  const instance = await DuckDBInstance.create(file, { access_mode: 'READ_ONLY' });
  try {
    const conn = await instance.connect();
    const [[rows, ids]] = (await conn.runAndReadAll(`SELECT count(*), count(DISTINCT id) FROM ${TABLE}`)).getRows() as [[bigint, bigint]];
    const groups = (
      await conn.runAndReadAll(
        `SELECT row_group_id, max(start + count) - min(start) FROM pragma_storage_info('${TABLE}') WHERE column_name = 'id' GROUP BY ALL ORDER BY 1`,
      )
    )
      .getRows()
      .map((r) => Number(r[1]));
    conn.closeSync();
    return { rows: Number(rows), ids: Number(ids), groups };
  } finally {
    instance.closeSync();
  }
}

test('row groups hold DUCKDB_ROW_GROUP_SIZE rows; a folder grows across sizes and back to DuckDB’s own without a loss', async () => {
  const dir = await tempDir();
  const file = path.join(dir, 'quarry.duckdb');

  await ingest(dir, { DUCKDB_ROW_GROUP_SIZE: '4096' }, 0, 20_000);
  assert.ok(!existsSync(`${file}.wal`), 'closing checkpointed the log');
  const small = await inspect(file);
  assert.equal(small.rows, 20_000);
  assert.equal(small.ids, 20_000);
  assert.deepEqual(small.groups, [4096, 4096, 4096, 4096, 3616]);

  // The default (16,384) on the same folder: the last, partly filled group fills to it.
  await ingest(dir, {}, 20_000, 20_000);
  const grown = await inspect(file);
  assert.equal(grown.rows, 40_000);
  assert.equal(grown.ids, 40_000);
  assert.ok(
    grown.groups.every((n) => n <= 16_384),
    `groups: ${grown.groups.join(', ')}`,
  );
  assert.ok(grown.groups.length < 40_000 / 4096, `groups: ${grown.groups.join(', ')}`);

  // DuckDB's own size opens the file as the default database, as before the setting existed.
  await ingest(dir, { DUCKDB_ROW_GROUP_SIZE: '122880' }, 40_000, 5_000);
  const back = await inspect(file);
  assert.equal(back.rows, 45_000);
  assert.equal(back.ids, 45_000);
});

test('attached, every connection works in the file and spills beside it', async () => {
  const dir = await tempDir();
  const file = path.join(dir, 'quarry.duckdb');
  const db = await openDuckDb({ path: file, rowGroupSize: 8192 });
  try {
    for (let i = 0; i < 3; i++) {
      const conn = await db.connect();
      const [[catalog, temp]] = (await conn.runAndReadAll("SELECT current_database(), current_setting('temp_directory')")).getRows() as [[string, string]];
      assert.equal(catalog, 'quarry');
      assert.equal(temp, `${file}.tmp`);
      db.disconnect(conn);
    }
  } finally {
    db.close();
  }
});
