/**
 * The ClickHouse engine cuts each event's fields out of the request's received text
 * (src/engines/clickhouse/rows-text.ts) instead of parsing and serialising them again. It must
 * store what the parse → conform → JSON.stringify path stores: every body below is ingested twice,
 * with and without its array text, into two sources of one chDB whose rows must then be equal.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type ClickHouseConnection, connectClickHouse } from '../../../src/engines/clickhouse/client.ts';
import type { ClickHouseEngine } from '../../../src/engines/clickhouse/index.ts';
import { openClickHouseEngine } from '../../../src/engines/clickhouse/index.ts';
import { cutFields, rowsText } from '../../../src/engines/clickhouse/rows-text.ts';
import type { TableBatch } from '../../../src/storage/port.ts';
import type { BodyFormat } from '../../../src/ingest/body.ts';
import { parseBody } from '../../../src/ingest/body.ts';
import { IngestService } from '../../../src/ingest/pipeline.ts';
import { prepareRequest } from '../../../src/ingest/prepare.ts';
import type { StoredEvent } from '../../../src/storage/event.ts';
import { cleanRawBodies } from '../../ingest/fixtures.ts';
import { engines } from '../../support/engines.ts';
import { withPresence } from '../../../src/storage/presence.ts';
import type { JsonObject } from '../../../src/storage/event.ts';

const skip = !engines.includes('clickhouse');

/** The element minus the members stored in their own columns, as the parse path sees it. */
function expected(element: Record<string, unknown>): Record<string, unknown> {
  const { id, timestamp, event_message, message, ...rest } = element;
  if (event_message !== undefined && event_message !== null && message !== undefined) rest.message = message;
  // With the presence marker in every record (src/storage/presence.ts), as both paths write it.
  return withPresence(rest as JsonObject);
}

describe('cutting fields out of the received text', () => {
  it('gives each element its members as received, without the base columns', () => {
    const bodies = [
      '[{"id":"a","timestamp":1,"event_message":"m","project":"p","metadata":{"request":{"path":"/x","n":1.5},"tags":["a","b"]}}]',
      // whitespace everywhere, pretty-printed
      '[\n  {\n    "timestamp" : "2026-11-20T10:00:00Z" ,\n    "a" : [ 1 , 2 ] ,\n    "b" : { "c" : true }\n  } ,\n  { "a" : [3] }\n]',
      // strings holding quotes, backslashes, brackets, commas and colons
      '[{"s":"a \\"quoted\\" {not: an, object} [nor, array] \\\\","t":"\\\\\\"","u":"\\u00e9\\n"}]',
      // a message that became the event message is not a field; one beside an event message is
      '[{"message":"moved","k":1},{"event_message":"em","message":"kept"},{"event_message":null,"message":"moved too"}]',
      // nulls stay (ClickHouse stores none), nested lists of records, numbers as written
      '[{"n":null,"l":[{"a":1},{"b":[{"c":null}]}],"f":1.0,"e":-2.5e-3,"z":0}]',
      // the base columns anywhere in the object, and an empty object
      '[{"k":"v","id":"x","timestamp":5},{},{"event_message":"only"}]',
    ];
    for (const body of bodies) {
      const parsed = JSON.parse(body) as Record<string, unknown>[];
      const cut = cutFields(body, parsed.length);
      assert.ok(cut, body);
      assert.deepEqual(
        cut.map((text) => JSON.parse(text) as unknown),
        parsed.map(expected),
        body,
      );
    }
  });

  it('declines what it cannot cut exactly, so the caller parses instead', () => {
    // an escaped key could spell a base column
    assert.equal(cutFields('[{"\\u0069d":"x","a":1}]', 1), undefined);
    // not an array of objects, or a count that does not match
    assert.equal(cutFields('{"a":1}', 1), undefined);
    assert.equal(cutFields('[{"a":1},2]', 2), undefined);
    assert.equal(cutFields('[{"a":1}]', 2), undefined);
    assert.equal(cutFields('[{"a":"unterminated}]', 1), undefined);
  });

  it('falls back to serialising when a number is past 64 bits', () => {
    const text = '[{"id":"w","timestamp":1,"big":123456789012345678901234567890,"x":1}]';
    const prepared = prepareRequest(JSON.parse(text) as Record<string, unknown>[], 0n, text);
    assert.equal(prepared.raw?.wideNumbers, true);
    const event: StoredEvent = { id: 'w', timestamp: 1_000_000n, event_message: null, fields: {}, raw: prepared.raw };
    const schema = { columns: { big: { kind: 'scalar', type: 'float' }, x: { kind: 'scalar', type: 'int' } } } as never;
    // JavaScript's serialisation writes the rounded number with an exponent, which ClickHouse reads.
    assert.equal(rowsText([event], schema), '{"id":"w","timestamp":"1.000000","event_message":null,"fields":{"big":1.2345678901234568e+29,"x":1}}\n');
  });
});

describe('ClickHouse stores the cut text as it stores serialised events', { skip }, () => {
  let dir: string;
  let engine: ClickHouseEngine;
  let reader: ClickHouseConnection;
  let ingest: IngestService;
  let rawEvents = 0;
  let n = 0;

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'quarry-rows-text-'));
    // Text rows: binary ones (the default on chDB) are rows-binary.test.ts's.
    engine = await openClickHouseEngine({ chdbPath: dir, database: 'quarry', binaryRows: false });
    const storage = engine.storage;
    const append = storage.append.bind(storage);
    storage.append = (batches: readonly TableBatch[]) => {
      for (const b of batches) for (const e of b.events) if (e.raw !== undefined) rawEvents++;
      return append(batches);
    };
    ingest = new IngestService({ sources: engine.sources, storage });
    reader = await connectClickHouse({ chdbPath: dir, database: 'quarry' });
  });

  after(async () => {
    await ingest?.close();
    await reader?.close();
    await engine?.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function rows(name: string): Promise<unknown[]> {
    const entry = engine.sources.catalog.sourceByName(name);
    assert.ok(entry);
    const result = await reader.client.query({
      query: `SELECT id, toString(timestamp) AS t, event_message, toJSONString(fields) AS f FROM quarry.${entry.table} ORDER BY id`,
      format: 'JSONEachRow',
    });
    return (await result.json()) as unknown[];
  }

  /** Ingests the bodies both ways; returns the rows of the raw source after checking they match. */
  async function both(bodies: (string | [string, BodyFormat])[]): Promise<unknown[]> {
    n++;
    const plain = { id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`, name: `plain.${n}` };
    const raw = { id: `00000000-0000-4000-9000-${String(n).padStart(12, '0')}`, name: `raw.${n}` };
    for (const b of bodies) {
      const [text, format] = typeof b === 'string' ? [b, 'json' as const] : b;
      await ingest.ingest(plain, parseBody(text, format).events);
      const parsed = parseBody(text, format);
      await ingest.ingest(raw, parsed.events, parsed.arrayText);
    }
    const got = await rows(raw.name);
    assert.deepEqual(got, await rows(plain.name));
    assert.deepEqual(engine.sources.catalog.sourceByName(raw.name)?.schema, engine.sources.catalog.sourceByName(plain.name)?.schema);
    return got;
  }

  const ts = '2026-11-20T10:00:00.123456Z';

  it('stores the same rows, through the cut for clean requests', async () => {
    const before = rawEvents;
    const got = await both([
      ...cleanRawBodies(ts),
      '[\n {\n  "id" : "g",\n  "timestamp" : 3,\n  "s" : "a \\"q\\" {x: [y]} \\\\",\n  "m" : { "k" : [ { "a" : 1 } , { "a" : 2 } ] }\n }\n]',
      '[{"id":"h","timestamp":4,"event_message":"em","message":"kept as a field","f":1.0}]',
    ]);
    assert.equal(got.length, 8);
    assert.equal(rawEvents - before, 8, 'every event went through the cut');
  });

  it('stores the same rows where the text takes the serialising path', async () => {
    await both([
      '[{"id":"a1","timestamp":1,"cf-ray":"r","metadata":{"x-y":1}}]',
      '[{"id":"a2","timestamp":2,"v":1},{"id":"a3","timestamp":3,"v":"one"}]',
      '[{"id":"a4","timestamp":4,"w":{"deep":[1,2]}},{"id":"a5","timestamp":5,"w":"text"}]',
      '[{"id":"a6","timestamp":6,"big":18446744073709551616000,"small":-1e300}]',
      '[{"\\u0069d":"a7","timestamp":7,"k":"escaped key"}]',
    ]);
  });

  it('keeps the first of a repeated key, as DuckDB does, instead of refusing the insert', async () => {
    n++;
    const source = { id: `00000000-0000-4000-a000-${String(n).padStart(12, '0')}`, name: `dup.${n}` };
    const text = '[{"id":"d1","timestamp":1,"m":{"k":"first","k":"last"}}]';
    const parsed = parseBody(text, 'json');
    await ingest.ingest(source, parsed.events, parsed.arrayText);
    assert.deepEqual(await rows(source.name), [{ id: 'd1', t: '1970-01-01 00:00:01.000000', event_message: null, f: '{"m":{"$present":true,"k":"first"}}' }]);
  });
});
