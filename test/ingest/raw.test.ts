/**
 * Reading fields from the received JSON text (src/ingest/prepare.ts) must store exactly what the
 * sanitise → conform → JSON.stringify path stores: every body below is ingested twice, with and
 * without its array text, into two sources whose rows must then be equal.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { DuckDb } from '../../src/embedded-db/database.ts';
import { openDuckDb } from '../../src/embedded-db/database.ts';
import type { DuckDbSourceStorage } from '../../src/engines/duckdb/storage-open.ts';
import { openDuckDbSourceStorage } from '../../src/engines/duckdb/storage-open.ts';
import type { TableBatch } from '../../src/storage/port.ts';
import type { BodyFormat } from '../../src/ingest/body.ts';
import { parseBody } from '../../src/ingest/body.ts';
import { IngestService } from '../../src/ingest/pipeline.ts';
import { fitsSchema, prepareRequest } from '../../src/ingest/prepare.ts';
import { cleanRawBodies } from './fixtures.ts';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface Pair {
  db: DuckDb;
  stack: DuckDbSourceStorage;
  ingest: IngestService;
  /** Events that reached storage with `raw` set. */
  rawEvents: number;
  close(): Promise<void>;
}

async function open(): Promise<Pair> {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-raw-'));
  dirs.push(dir);
  const db = await openDuckDb({ path: join(dir, 'quarry.duckdb') });
  const stack = await openDuckDbSourceStorage(db);
  const pair: Pair = {
    db,
    stack,
    ingest: new IngestService({ sources: stack.sources, storage: stack.storage }),
    rawEvents: 0,
    async close() {
      await pair.ingest.close();
      await stack.close();
      db.close();
    },
  };
  const append = stack.storage.append.bind(stack.storage);
  stack.storage.append = (batches: readonly TableBatch[]) => {
    for (const b of batches) for (const e of b.events) if (e.raw !== undefined) pair.rawEvents++;
    return append(batches);
  };
  return pair;
}

let n = 0;
function sources(): { plain: { id: string; name: string }; raw: { id: string; name: string } } {
  n++;
  return {
    plain: { id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`, name: `plain.${n}` },
    raw: { id: `00000000-0000-4000-9000-${String(n).padStart(12, '0')}`, name: `raw.${n}` },
  };
}

async function rows(p: Pair, name: string): Promise<unknown[]> {
  const entry = p.stack.sources.catalog.sourceByName(name);
  assert.ok(entry);
  const conn = await p.db.connect();
  try {
    const reader = await conn.runAndReadAll(`SELECT * FROM ${entry.table} ORDER BY id`);
    return reader.getRowObjectsJson();
  } finally {
    conn.closeSync();
  }
}

/** Ingests the bodies both ways; returns the rows of the raw source after checking they match. */
/** Every event gets an id and a timestamp so both sources hold identical rows. */
async function both(p: Pair, bodies: (string | [string, BodyFormat])[]): Promise<unknown[]> {
  const s = sources();
  for (const b of bodies) {
    const [text, format] = typeof b === 'string' ? [b, 'json' as const] : b;
    await p.ingest.ingest(s.plain, parseBody(text, format).events);
    const parsed = parseBody(text, format);
    await p.ingest.ingest(s.raw, parsed.events, parsed.arrayText);
  }
  const plain = await rows(p, s.plain.name);
  const raw = await rows(p, s.raw.name);
  assert.deepEqual(raw, plain);
  assert.deepEqual(p.stack.sources.catalog.sourceByName(s.raw.name)?.schema, p.stack.sources.catalog.sourceByName(s.plain.name)?.schema);
  return raw;
}

const ts = '2026-11-20T10:00:00.123456Z';

describe('fields read from the received text', () => {
  it('stores what re-serialising stores, and is used for clean events', async () => {
    const p = await open();
    const before = p.rawEvents;
    const got = await both(p, cleanRawBodies(ts));
    assert.equal(got.length, 6);
    assert.equal(p.rawEvents - before, 6, 'every event went through the raw path');
    // Integers past 2^53 keep every digit (JavaScript's parse would round them).
    const s = sources();
    const big = parseBody('[{"id":"g","timestamp":1,"n":9007199254740993}]', 'json');
    await p.ingest.ingest(s.raw, big.events, big.arrayText);
    assert.deepEqual(await rows(p, s.raw.name), [{ id: 'g', timestamp: '1970-01-01 00:00:01', event_message: null, n: '9007199254740993' }]);
    await p.close();
  });

  it('falls back, per request, where the text would store something else', async () => {
    const p = await open();
    const before = p.rawEvents;
    await both(p, [
      // keys that sanitising renames, at the top and nested
      '[{"id":"a1","timestamp":1,"cf-ray":"r","metadata":{"x-y":1}}]',
      '[{"id":"a2","timestamp":2,"metadata":{"2xx":true}}]',
      // a reserved BigQuery prefix, which Logflare's rule escapes
      '[{"id":"a22","timestamp":22,"_TABLE_x":1,"metadata":{"_PARTITIONTIME":"t"}}]',
      // case variants of reserved names and of each other
      '[{"id":"a3","timestamp":3,"ID":"dup","Timestamp":"t"}]',
      '[{"id":"a4","timestamp":4,"Foo":1},{"id":"a5","timestamp":5,"foo":2}]',
      '[{"id":"a6","timestamp":6,"foo":3}]',
      // a conflict within one request, and one with the stored schema
      '[{"id":"a7","timestamp":7,"v":1},{"id":"a8","timestamp":8,"v":"one"}]',
      '[{"id":"a9","timestamp":9,"w":"text"}]',
      '[{"id":"a10","timestamp":10,"w":5}]',
      '[{"id":"a11","timestamp":11,"w":{"deep":[1,2]}}]',
      // typeless containers
      '[{"id":"a12","timestamp":12,"r":{"k":"v"}}]',
      '[{"id":"a13","timestamp":13,"r":[]}]',
      '[{"id":"a14","timestamp":14,"r":{}},{"id":"a15","timestamp":15,"l":[null]},{"id":"a16","timestamp":16,"l":[[],[1]]}]',
      // message as a field, then a message that becomes the event message
      '[{"id":"a17","timestamp":17,"event_message":"m","message":"field"}]',
      '[{"id":"a18","timestamp":18,"message":"moved"}]',
      // a float column receiving integers, and a list of records
      '[{"id":"a19","timestamp":19,"f":1.5,"items":[{"a":1},{"b":"x"}]}]',
      '[{"id":"a20","timestamp":20,"f":2,"items":[{"a":2,"b":"y"}]}]',
      // a lone surrogate in the event message
      '[{"id":"a21","timestamp":21,"event_message":"bad \\ud800 text","k":"v"}]',
    ]);
    assert.ok(p.rawEvents - before > 0, 'clean requests still take the raw path');
    await p.close();
  });

  it('marks only requests that need no conversion as readable', () => {
    const okEvents = [
      { a: 1, b: { c: 'x' } },
      { a: 2.5, b: { d: [true] } },
    ];
    const ok = prepareRequest(okEvents, 0n, JSON.stringify(okEvents));
    assert.deepEqual(ok.raw, { text: JSON.stringify(okEvents), count: 2, elements: okEvents, keys: ['a', 'b'] });
    assert.deepEqual(Object.keys(ok.observed ?? {}), ['a', 'b']);
    for (const events of [[{ a: 1 }, { a: 'x' }], [{ 'a-b': 1 }], [{ _TABLE_x: 1 }], [{ a: [] }], [{ a: {} }], [{ ID: 1 }], [{ ab: 1, AB: 2 }]]) {
      assert.equal(prepareRequest(events, 0n, JSON.stringify(events)).raw, undefined, JSON.stringify(events));
    }
    const observed = prepareRequest([{ a: 1, b: { c: 'x' } }], 0n, '[{"a":1,"b":{"c":"x"}}]').observed;
    assert.equal(
      fitsSchema(observed, { a: { kind: 'scalar', type: 'float' }, b: { kind: 'record', fields: { c: { kind: 'scalar', type: 'string' } } } }),
      true,
    );
    assert.equal(
      fitsSchema(observed, { a: { kind: 'scalar', type: 'string' }, b: { kind: 'record', fields: { c: { kind: 'scalar', type: 'string' } } } }),
      false,
    );
    assert.equal(fitsSchema(observed, { A: { kind: 'scalar', type: 'int' }, b: { kind: 'record', fields: { c: { kind: 'scalar', type: 'string' } } } }), false);
  });
});
