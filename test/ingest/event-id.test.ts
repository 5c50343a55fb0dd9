import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatUuidV7, newEventId } from '../../src/ingest/event-id.ts';

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

test('new ids are version-7 UUIDs carrying the time in their first 48 bits', () => {
  const ms = Date.UTC(2026, 10, 21, 10, 0, 0, 123);
  const id = newEventId(ms);
  assert.match(id, V7);
  assert.equal(Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16), ms);
});

test('ids sort by time and never repeat', () => {
  const ids = Array.from({ length: 5000 }, (_, i) => newEventId(1_795_000_000_000 + Math.floor(i / 10)));
  assert.equal(new Set(ids).size, ids.length);
  const prefixes = ids.map((i) => i.slice(0, 13));
  assert.deepEqual(prefixes, [...prefixes].sort());
});

test('formatting is fixed by time and random bytes', () => {
  const random = Uint8Array.from([0xff, 1, 0xff, 2, 3, 4, 5, 6, 7, 8]);
  assert.equal(formatUuidV7(0, random), '00000000-0000-7f01-bf02-030405060708');
});
