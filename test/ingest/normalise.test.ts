import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { normaliseEvent, parseTimestamp } from '../../src/ingest/normalise.ts';

const NOW = 1_700_000_000_000_000n;
const T = 1_763_632_800_123_456n; // 2025-11-20T10:00:00.123456Z

describe('normaliseEvent', () => {
  it('reads timestamps in every precision', () => {
    assert.equal(parseTimestamp('2025-11-20T10:00:00.123456Z'), T);
    assert.equal(parseTimestamp('2025-11-20T12:30:00.123456+02:30'), T);
    assert.equal(parseTimestamp('2025-11-20T05:00:00.123456789-0500'), T);
    assert.equal(parseTimestamp(1_763_632_800), 1_763_632_800_000_000n);
    assert.equal(parseTimestamp(1_763_632_800.5), 1_763_632_800_500_000n);
    assert.equal(parseTimestamp(1_763_632_800_123), 1_763_632_800_123_000n);
    assert.equal(parseTimestamp(1_763_632_800_123_456), T);
    assert.equal(parseTimestamp('1763632800123456789'), T);
    assert.equal(parseTimestamp('1763632800123'), 1_763_632_800_123_000n);
  });

  it('falls back to the ingest time for missing, offset-less or unparseable timestamps', () => {
    for (const timestamp of [undefined, null, '2025-11-20T10:00:00', 'yesterday', '2025-13-01T00:00:00Z', true, {}]) {
      assert.equal(normaliseEvent({ timestamp, event_message: 'x' }, NOW).timestamp, NOW, String(timestamp));
    }
  });

  it('keeps a given id and makes one otherwise', () => {
    assert.equal(normaliseEvent({ id: 'abc' }, NOW).id, 'abc');
    const made = normaliseEvent({}, NOW).id;
    assert.match(made, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.notEqual(normaliseEvent({}, NOW).id, made);
  });

  it('takes event_message, else message', () => {
    const fromMessage = normaliseEvent({ message: 'hello', level: 'info' }, NOW);
    assert.equal(fromMessage.event_message, 'hello');
    assert.deepEqual(fromMessage.fields, { level: 'info' });
    const both = normaliseEvent({ event_message: 'a', message: 'b' }, NOW);
    assert.equal(both.event_message, 'a');
    assert.deepEqual(both.fields, { message: 'b' });
    assert.equal(normaliseEvent({ event_message: { a: 1 } }, NOW).event_message, '{"a":1}');
    assert.equal(normaliseEvent({}, NOW).event_message, null);
  });

  it('keeps every other key at any depth, with column-safe names', () => {
    const event = {
      project: 'default',
      metadata: { request: { 'cf-ray': 'r1', headers: { 'x.forwarded': 'y' } }, '2xx': 1, empty: null },
      Timestamp: 'shadow',
      ID: 7,
      list: [{ 'a b': 1 }],
    };
    // Logflare's rule (src/ingest/keys.ts), every source's since it was adopted.
    assert.deepEqual(normaliseEvent(event, NOW).fields, {
      project: 'default',
      metadata: { request: { _cf_ray: 'r1', headers: { _x_forwarded: 'y' } }, _2xx: 1 },
      Timestamp_2: 'shadow',
      ID_2: 7,
      list: [{ _a_b: 1 }],
    });
    // The legacy rule, which sources created before it keep.
    assert.deepEqual(normaliseEvent(event, NOW, undefined, 'legacy').fields, {
      project: 'default',
      metadata: { request: { cf_ray: 'r1', headers: { x_forwarded: 'y' } }, _2xx: 1 },
      Timestamp_2: 'shadow',
      ID_2: 7,
      list: [{ a_b: 1 }],
    });
  });

  it('keeps keys that collide after sanitising or by case', () => {
    assert.deepEqual(normaliseEvent({ m: { 'a-b': 1, _a_b: 2, _A_B: 3 } }, NOW).fields, { m: { _a_b: 1, _a_b_2: 2, _A_B_3: 3 } });
    const e = normaliseEvent({ m: { 'a-b': 1, a_b: 2, A_B: 3 } }, NOW, undefined, 'legacy');
    assert.deepEqual(e.fields, { m: { a_b: 1, a_b_2: 2, A_B_3: 3 } });
  });
});
