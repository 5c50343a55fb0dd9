/**
 * Typed values reach an engine with the typed-parameter capability as typed values, and any other
 * engine as text: never as NULL.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { createSqlBackend } from '../../src/endpoints/sql-backend.ts';
import { openDuckDb, type DuckDb } from '../../src/embedded-db/database.ts';
import { DuckDbQueryRunner } from '../../src/engines/duckdb/runner.ts';
import { openDuckDbSourceStorage } from '../../src/engines/duckdb/storage-open.ts';
import type { ParamValue, QueryEngine } from '../../src/query/port.ts';
import type { SourceTables } from '../../src/storage/sources.ts';

let db: DuckDb;
let sources: SourceTables;
let closeStorage: () => Promise<void>;
before(async () => {
  db = await openDuckDb({ path: ':memory:' });
  const opened = await openDuckDbSourceStorage(db);
  closeStorage = opened.close;
  sources = opened.sources;
  await sources.ensure({ id: randomUUID(), name: 'bind.events' });
});
after(async () => {
  await closeStorage();
  db.close();
});

test('typed values go to a typed-parameter engine as they are, to any other as text', async () => {
  const real = new DuckDbQueryRunner({ connect: () => db.connect() });
  const seen: Record<string, ParamValue | null | undefined>[] = [];
  const spy = (typed: boolean): QueryEngine => ({
    capabilities: { typedParams: typed },
    check: (q) => real.check(q),
    run: (q, params, o) => {
      seen.push({ ...params });
      return real.run(q, params, o);
    },
  });
  const saved = 'select @n as n, @since as since, @s as s from (select 1)';
  const params = {
    n: { type: 'int', value: 41n },
    since: { type: 'timestamp', micros: 1_000_000n },
    s: 'text',
  } as const;
  for (const typed of [true, false]) {
    const backend = createSqlBackend({ catalog: sources.catalog, engine: spy(typed) });
    const info = await backend.inspect(saved);
    const result = await backend.execute({ saved, info, sandboxable: false, caller: null, params, maxRows: 10, timeoutMs: 5000 });
    if (typed) {
      assert.deepEqual(seen.at(-1), params);
      assert.deepEqual(result.rows, [{ n: 41, since: 1_000_000, s: 'text' }]);
    } else {
      assert.deepEqual(seen.at(-1), { n: '41', since: '1970-01-01 00:00:01.000000', s: 'text' });
      assert.deepEqual(result.rows, [{ n: '41', since: '1970-01-01 00:00:01.000000', s: 'text' }]);
    }
  }
  real.close();
});
