/**
 * The DuckDB engine's settings as its definition reads them (nothing is opened): sizes are
 * checked when the service starts, with the setting's name in the message.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { duckDb } from '../../../src/engines/duckdb/definition.ts';

const context = { dataDir: '/nonexistent', memoryBudgetBytes: 2 ** 31 };

describe('DuckDB settings', () => {
  it('DUCKDB_IDLE_CHECKPOINT: off when unset or `off`, a size otherwise; anything else is refused by name', () => {
    for (const value of [undefined, 'off', 'OFF', '64MiB', '1048576']) {
      assert.doesNotThrow(() => duckDb.configure(value === undefined ? {} : { DUCKDB_IDLE_CHECKPOINT: value }, context), String(value));
    }
    for (const value of ['lots', '0', '-5MiB', '64 parsecs']) {
      assert.throws(() => duckDb.configure({ DUCKDB_IDLE_CHECKPOINT: value }, context), /DUCKDB_IDLE_CHECKPOINT must be a size/, value);
    }
  });

  it("DUCKDB_ROW_GROUP_SIZE: a multiple of 2048 up to DuckDB's 122880, refused by name otherwise", () => {
    for (const value of [undefined, '2048', '16384', '120832', '122880']) {
      assert.doesNotThrow(() => duckDb.configure(value === undefined ? {} : { DUCKDB_ROW_GROUP_SIZE: value }, context), String(value));
    }
    for (const value of ['0', '1000', '3000', '124928', '1048576', 'big', '-2048']) {
      assert.throws(() => duckDb.configure({ DUCKDB_ROW_GROUP_SIZE: value }, context), /DUCKDB_ROW_GROUP_SIZE must be/, value);
    }
  });

  it('DUCKDB_CHECKPOINT_THRESHOLD: a size, refused by name otherwise', () => {
    assert.doesNotThrow(() => duckDb.configure({ DUCKDB_CHECKPOINT_THRESHOLD: '256MiB' }, context));
    assert.throws(() => duckDb.configure({ DUCKDB_CHECKPOINT_THRESHOLD: 'big' }, context), /DUCKDB_CHECKPOINT_THRESHOLD must be a size/);
  });
});
