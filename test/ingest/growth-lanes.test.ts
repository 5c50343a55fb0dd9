/**
 * Schema growth beside the group commit (src/ingest/pipeline.ts): a source whose schema is growing
 * holds up only its own requests, and a growth that fails for one request fails that request alone.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { openDuckDb } from '../../src/embedded-db/database.ts';
import { openDuckDbSourceStorage } from '../../src/engines/duckdb/storage-open.ts';
import { QuarryError } from '../../src/errors.ts';
import { IngestService } from '../../src/ingest/pipeline.ts';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function open(maxFields = 10_000) {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-lanes-'));
  dirs.push(dir);
  const db = await openDuckDb({ path: join(dir, 'quarry.duckdb') });
  const stack = await openDuckDbSourceStorage(db);
  const ingest = new IngestService({
    sources: stack.sources,
    storage: stack.storage,
    limits: { maxFields, maxTypedFields: 10_000, maxDepth: 20, maxKeyLength: 128 },
  });
  const count = async (table: string): Promise<number> => {
    const conn = await db.connect();
    try {
      return Number((await conn.runAndReadAll(`SELECT count(*) FROM ${table}`)).getRows()[0]?.[0]);
    } finally {
      db.disconnect(conn);
    }
  };
  return {
    stack,
    ingest,
    count,
    async close() {
      await ingest.close();
      await stack.close();
      db.close();
    },
  };
}

const A = { id: '00000000-0000-4000-8000-00000000000a', name: 'lanes.a' };
const B = { id: '00000000-0000-4000-8000-00000000000b', name: 'lanes.b' };

test('while one source waits for its schema change, another source commits', { timeout: 30_000 }, async () => {
  const s = await open();
  try {
    await s.ingest.ingest(A, [{ message: 'first', x: 1 }]);
    await s.ingest.ingest(B, [{ message: 'first', x: 1 }]);
    const tableA = s.stack.sources.catalog.sourceById(A.id)?.table as string;
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const real = s.stack.storage.applySchemaChanges.bind(s.stack.storage);
    s.stack.storage.applySchemaChanges = async (table, before, after, changes) => {
      if (table === tableA) await gate;
      return real(table, before, after, changes);
    };
    let grownA = false;
    const pendingA = s.ingest.ingest(A, [{ message: 'grows', fresh: 'new key' }]).then(() => {
      grownA = true;
    });
    // Same source, fits the old schema: must wait behind the change (order within a source).
    let laterA = false;
    const pendingLaterA = s.ingest.ingest(A, [{ message: 'later', x: 2 }]).then(() => {
      laterA = true;
    });
    await s.ingest.ingest(B, [{ message: 'bystander', x: 2 }]);
    await s.ingest.ingest(B, [{ message: 'bystander', y: 'new key too' }]);
    assert.equal(grownA, false, 'the held change has not finished');
    assert.equal(laterA, false, 'a later request of the growing source waits for it');
    assert.equal(await s.count(s.stack.sources.catalog.sourceById(B.id)?.table as string), 3);
    release();
    await Promise.all([pendingA, pendingLaterA]);
    assert.equal(await s.count(tableA), 3);
  } finally {
    await s.close();
  }
});

test('a growth refused for one request fails that request alone', async () => {
  const s = await open(5);
  try {
    await s.ingest.ingest(A, [{ message: 'first', x: 1 }]);
    const wide: Record<string, unknown> = { message: 'too wide' };
    for (let k = 0; k < 10; k++) wide[`k${k}`] = k;
    const results = await Promise.allSettled([
      s.ingest.ingest(A, [{ message: 'fits the limit', y: 'one more field' }]),
      s.ingest.ingest(A, [wide]),
      s.ingest.ingest(A, [{ message: 'no new field', x: 3 }]),
    ]);
    assert.equal(results[0]?.status, 'fulfilled');
    assert.equal(results[2]?.status, 'fulfilled');
    assert.equal(results[1]?.status, 'rejected');
    const e = (results[1] as PromiseRejectedResult).reason;
    assert.ok(e instanceof QuarryError && e.code === 'BAD_REQUEST', String(e));
    assert.equal(await s.count(s.stack.sources.catalog.sourceById(A.id)?.table as string), 3);
  } finally {
    await s.close();
  }
});
