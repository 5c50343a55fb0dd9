/**
 * Embedded chDB inserts rows as RowBinary where every value fits (src/engines/clickhouse/rows-binary.ts)
 * and as JSONEachRow text otherwise. The binary form must store exactly what the text form stores:
 * every body below is ingested through the real pipeline into two databases of one chDB, one
 * engine writing binary rows and one writing text, and each row's columns, JSON paths, their
 * ClickHouse types and values must be equal.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type ClickHouseConnection, connectClickHouse } from '../../../src/engines/clickhouse/client.ts';
import type { ClickHouseEngine } from '../../../src/engines/clickhouse/index.ts';
import { openClickHouseEngine } from '../../../src/engines/clickhouse/index.ts';
import { rowsBinary } from '../../../src/engines/clickhouse/rows-binary.ts';
import type { TableBatch } from '../../../src/storage/port.ts';
import { type BodyFormat, parseBody } from '../../../src/ingest/body.ts';
import { IngestService } from '../../../src/ingest/pipeline.ts';
import { generateEvents } from '../../../src/demo/generator.ts';
import { cleanRawBodies } from '../../ingest/fixtures.ts';
import { engines } from '../../support/engines.ts';

const skip = !engines.includes('clickhouse');

function holdsList(value: unknown): boolean {
  if (Array.isArray(value)) return true;
  return value !== null && typeof value === 'object' && Object.values(value).some(holdsList);
}

describe('RowBinary rows store what JSONEachRow rows store', { skip }, () => {
  let dir: string;
  let binary: ClickHouseEngine;
  let text: ClickHouseEngine;
  let reader: ClickHouseConnection;
  let ingestBinary: IngestService;
  let ingestText: IngestService;
  /** Per batch handed to the binary engine: whether it went as RowBinary. */
  let formats: boolean[] = [];
  let n = 0;

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'quarry-rows-binary-'));
    binary = await openClickHouseEngine({ chdbPath: dir, database: 'qbin' });
    text = await openClickHouseEngine({ chdbPath: dir, database: 'qtext', binaryRows: false });
    const append = binary.storage.append.bind(binary.storage);
    binary.storage.append = (batches: readonly TableBatch[]) => {
      for (const b of batches) formats.push(rowsBinary(b.events, b.schema) !== undefined);
      return append(batches);
    };
    ingestBinary = new IngestService({ sources: binary.sources, storage: binary.storage });
    ingestText = new IngestService({ sources: text.sources, storage: text.storage });
    reader = await connectClickHouse({ chdbPath: dir, database: 'qbin' });
  });

  after(async () => {
    await ingestBinary?.close();
    await ingestText?.close();
    await reader?.close();
    await binary?.close();
    await text?.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function rows(engine: ClickHouseEngine, name: string): Promise<unknown[]> {
    const entry = engine.sources.catalog.sourceByName(name);
    assert.ok(entry);
    const result = await reader.client.query({
      query: `SELECT id, toString(timestamp) AS t, event_message, toJSONString(fields) AS f,
                toJSONString(arraySort(JSONAllPathsWithTypes(fields)::Array(Tuple(String, String)))) AS types
              FROM ${engine.database}.${entry.table} ORDER BY id, t`,
      format: 'JSONEachRow',
    });
    return (await result.json()) as unknown[];
  }

  /** Ingests the bodies into both engines (received text and parsed alike); returns the rows after checking they match. */
  async function both(bodies: (string | [string, BodyFormat])[]): Promise<unknown[]> {
    n++;
    const source = { id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`, name: `s.${n}` };
    for (const b of bodies) {
      const [body, format] = typeof b === 'string' ? [b, 'json' as const] : b;
      for (const ingest of [ingestBinary, ingestText]) {
        const parsed = parseBody(body, format);
        await ingest.ingest(source, parsed.events, parsed.arrayText);
      }
    }
    const got = await rows(binary, source.name);
    assert.deepEqual(got, await rows(text, source.name));
    return got;
  }

  const ts = '2026-11-20T10:00:00.123456Z';

  it('stores the demo events of every Supabase source alike, and writes all but list-holding ones as binary', async () => {
    const bySource = new Map<string, Record<string, unknown>[]>();
    for (const { source, event } of generateEvents({ count: 900, seed: 7, now: Date.parse(ts), days: 1, withIds: true })) {
      bySource.set(source, [...(bySource.get(source) ?? []), event as Record<string, unknown>]);
    }
    for (const [name, events] of bySource) {
      formats = [];
      const got = await both([JSON.stringify(events)]);
      assert.equal(got.length, events.length, name);
      const hasList = events.some(holdsList);
      assert.deepEqual(formats, [!hasList], `${name}: ${hasList ? 'text' : 'binary'}`);
    }
  });

  it('stores awkward values alike: long and multi-byte strings, newlines, extreme numbers, many paths', async () => {
    formats = [];
    const many: Record<string, number> = {};
    for (let i = 0; i < 300; i++) many[`k${i}`] = i;
    const got = await both([
      JSON.stringify([
        { id: 'a', timestamp: ts, event_message: 'x'.repeat(200), s: 'é€😀 中文', nl: '\n\n', nul: 'a\u0000b', ctl: '\u0001\u001f' },
        { id: 'b', timestamp: ts, event_message: null, long: 'y'.repeat(20_000), nested: { deep: { deeper: { v: 'ok' } } } },
        { id: 'c', timestamp: ts, i: [0, -1, 10, 266, 2 ** 53 - 1, -(2 ** 53 - 1)].length, zero: 0, neg: -1, ten: 10, big: 2 ** 53 - 1, small: -(2 ** 53 - 1) },
        { id: 'd', timestamp: ts, f: 1.5, g: -2.25, tiny: 1e-300, t: true, u: false, o: { n: null }, p: { q: {} } },
        { id: 'e', timestamp: ts, ...many },
        { id: 'f', timestamp: ts, message: 'moved into the event message', k: 1 },
        { id: 'g', timestamp: ts, event_message: 'kept', message: 'a field here', top: null, o: { inner: null, v: 1 } },
        { id: 'h', timestamp: ts, ключ: 'значение', o: { ü: 1 } },
      ]),
    ]);
    assert.equal(got.length, 8);
    assert.deepEqual(formats, [true]);
  });

  it('sends as text what it does not write as binary, and still stores it alike', async () => {
    const bodies = [
      '[{"id":"a","timestamp":1,"l":[1,2,3]}]',
      '[{"id":"b","timestamp":2,"l":[{"x":1},{"y":"z"}]}]',
      '[{"id":"c","timestamp":3,"w":9007199254740993}]',
      '[{"id":"d","timestamp":4,"z":-0}]',
      // integral as a double, far past 2^53: ClickHouse reads a Float64 where JavaScript sees an integer
      '[{"id":"e","timestamp":5,"huge":1.7976931348623157e308}]',
    ];
    for (const body of bodies) {
      formats = [];
      await both([body]);
      assert.deepEqual(formats, [false], body);
    }
  });

  it('stores requests that take the serialising path (conflicting kinds, unsafe keys) alike', async () => {
    await both([
      ...cleanRawBodies(ts),
      '[{"id":"a1","timestamp":1,"cf-ray":"r","metadata":{"x-y":1}}]',
      '[{"id":"a2","timestamp":2,"v":1},{"id":"a3","timestamp":3,"v":"one"}]',
      '[{"id":"a4","timestamp":4,"w":{"deep":{"k":1}}},{"id":"a5","timestamp":5,"w":"text"}]',
    ]);
  });

  it('keeps the last of a repeated key (as JavaScript parses it), where text rows keep the first', async () => {
    n++;
    const source = { id: `00000000-0000-4000-a000-${String(n).padStart(12, '0')}`, name: `dup.${n}` };
    const body = '[{"id":"d1","timestamp":1,"m":{"k":"first","k":"last"}}]';
    for (const ingest of [ingestBinary, ingestText]) {
      const parsed = parseBody(body, 'json');
      await ingest.ingest(source, parsed.events, parsed.arrayText);
    }
    const f = (got: unknown[]) => (got as { f: string }[]).map((r) => r.f);
    assert.deepEqual(f(await rows(binary, source.name)), ['{"m":{"$present":true,"k":"last"}}']);
    assert.deepEqual(f(await rows(text, source.name)), ['{"m":{"$present":true,"k":"first"}}']);
  });

  it('leaves no scratch file behind', async () => {
    const parent = path.join(dir, 'quarry-insert-scratch');
    for (const folder of await readdir(parent)) assert.deepEqual(await readdir(path.join(parent, folder)), [], folder);
  });
});
