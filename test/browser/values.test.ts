/**
 * How the explorer reads a result's columns (src/web/values.js, a browser module run here under
 * Node): which are timestamps, numbers, records; and how instants are written.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

interface Values {
  analyse(rows: Record<string, unknown>[]): { name: string; kind: string }[];
  isTimestampValue(v: unknown): boolean;
  describeTimestamp(us: number): string;
}

const modulePath: string = '../../src/web/values.js';
const { analyse, isTimestampValue, describeTimestamp } = (await import(modulePath)) as Values;

const US = Date.UTC(2026, 10, 21, 10, 0, 0) * 1000;

describe('explorer result columns', () => {
  test('integer unix microseconds between 2000 and 2100 are timestamps; counts, ms and seconds are not', () => {
    assert.equal(isTimestampValue(US), true);
    assert.equal(isTimestampValue(946_684_800_000_000), true);
    assert.equal(isTimestampValue(4_102_444_800_000_000), false);
    assert.equal(isTimestampValue(US / 1000), false, 'milliseconds');
    assert.equal(isTimestampValue(US / 1e6), false, 'seconds');
    assert.equal(isTimestampValue(US + 0.5), false, 'not an integer');
    assert.equal(isTimestampValue(String(US)), false);
    assert.equal(isTimestampValue(42), false);
  });

  test('each column gets the one kind its non-null values share, in first-seen order', () => {
    const cols = analyse([
      { t: null, n: 1, s: 'a', r: [{ a: 1 }], l: [1, 2], b: true, m: 1 },
      { t: US, n: 2.5, s: null, r: null, l: [], b: false, m: 'x', late: US },
    ]);
    assert.deepEqual(cols, [
      { name: 't', kind: 'timestamp' },
      { name: 'n', kind: 'number' },
      { name: 's', kind: 'string' },
      { name: 'r', kind: 'record' },
      { name: 'l', kind: 'list' },
      { name: 'b', kind: 'bool' },
      { name: 'm', kind: 'mixed' },
      { name: 'late', kind: 'timestamp' },
    ]);
  });

  test('DATETIME and DATE text is a datetime column; other text beside it makes it a string column', () => {
    assert.deepEqual(analyse([{ d: '2026-11-21' }, { d: '2026-11-21T10:00:00' }, { d: '2026-11-21T10:00:00.123456' }]), [{ name: 'd', kind: 'datetime' }]);
    assert.deepEqual(analyse([{ d: '2026-11-21' }, { d: 'soon' }]), [{ name: 'd', kind: 'string' }]);
    assert.deepEqual(analyse([{ d: '2026-11-21T10:00:00Z' }]), [{ name: 'd', kind: 'string' }], 'an offset is not DATETIME');
  });

  test('a column of timestamps and smaller numbers is numeric (no chart on a guess)', () => {
    assert.deepEqual(analyse([{ x: US }, { x: 5 }]), [{ name: 'x', kind: 'number' }]);
    assert.deepEqual(analyse([{ x: 5 }, { x: US }]), [{ name: 'x', kind: 'number' }]);
    assert.deepEqual(analyse([{ x: null }]), [{ name: 'x', kind: 'null' }]);
  });

  test('the tooltip names the exact instant in UTC with microseconds, also before 1970', () => {
    assert.equal(describeTimestamp(US + 123_456), `2026-11-21T10:00:00.123456Z (${US + 123_456} µs since 1970)`);
    assert.equal(describeTimestamp(-1), '1969-12-31T23:59:59.999999Z (-1 µs since 1970)');
  });
});
