/**
 * src/time.ts: the one rule set for time as text (ISO-8601 / RFC 3339 → unix µs, and µs → text),
 * and the callers that read and write times through it agreeing with it: ingest's `timestamp`,
 * LQL's `t:` values, the encoders.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { timestampMicros } from '../../src/engines/clickhouse/encode.ts';
import { timestampText } from '../../src/engines/clickhouse/rows-text.ts';
import { datetimeString } from '../../src/engines/duckdb/encode.ts';
import { parseTimestamp as ingestTimestamp } from '../../src/ingest/normalise.ts';
import { parseLql } from '../../src/lql/parse.ts';
import {
  civilFromDays,
  civilMicros,
  daysFromCivil,
  formatDate,
  formatDatetime,
  formatSqlTimestamp,
  formatTimestamp,
  formatUnixSeconds,
  parseDate,
  parseTime,
  parseTimestamp,
  parseZonedTimestamp,
} from '../../src/time.ts';

const T = 1_795_255_200_000_000n; // 2026-11-21T10:00:00Z

describe('reading', () => {
  test('the three forms: a date, a date-time without a zone (UTC), with one', () => {
    assert.deepEqual(parseTime('2026-11-21'), { micros: T - 36_000_000_000n, form: 'date' });
    assert.deepEqual(parseTime('2026-11-21T10:00:00'), { micros: T, form: 'local' });
    assert.deepEqual(parseTime('2026-11-21T10:00:00Z'), { micros: T, form: 'zoned' });
  });

  test('separators, seconds, fractions and zones as RFC 3339 and ISO 8601 spell them', () => {
    const same = [
      '2026-11-21T10:00:00Z',
      '2026-11-21 10:00:00Z',
      '2026-11-21t10:00:00z',
      '2026-11-21T10:00Z',
      '2026-11-21T10:00:00.000Z',
      '2026-11-21T10:00:00,0Z',
      '2026-11-21T12:30:00+02:30',
      '2026-11-21T12:30:00+0230',
      '2026-11-21T12:00:00+02',
      '2026-11-21T05:00:00-05:00',
      '2026-11-21T10:00:00+00:00',
      '2026-11-21T10:00:00-00:00',
    ];
    for (const text of same) assert.equal(parseTimestamp(text), T, text);
  });

  test('fractions are kept to the microsecond, later digits dropped, never rounded', () => {
    assert.equal(parseTimestamp('2026-11-21T10:00:00.5Z'), T + 500_000n);
    assert.equal(parseTimestamp('2026-11-21T10:00:00.123456Z'), T + 123_456n);
    assert.equal(parseTimestamp('2026-11-21T10:00:00.1234569Z'), T + 123_456n);
    assert.equal(parseTimestamp('2026-11-21T10:00:00.999999999999Z'), T + 999_999n);
  });

  test('a leap second reads as the next minute', () => {
    assert.equal(parseTimestamp('2026-11-21T09:59:60Z'), T);
  });

  test('before 1970 and far from it', () => {
    assert.equal(parseTimestamp('1969-12-31T23:59:59.999999Z'), -1n);
    assert.equal(parseTimestamp('0001-01-01T00:00:00Z'), -62_135_596_800_000_000n);
    assert.equal(parseTimestamp('9999-12-31T23:59:59.999999Z'), 253_402_300_799_999_999n);
    assert.equal(parseDate('0050-03-01'), daysFromCivil(50, 3, 1));
  });

  test('anything else is refused', () => {
    const bad = [
      '',
      'now',
      '1700000000',
      '2026-11-21T24:00:00Z',
      '2026-11-21T10:60:00Z',
      '2026-11-21T10:00:61Z',
      '2026-11-31T10:00:00Z',
      '2026-02-29',
      '2026-13-01',
      '2026-1-01',
      '26-11-21',
      '2026-11-21T10',
      '2026-11-21T1:00:00Z',
      '2026-11-21T10:00:00.Z',
      '2026-11-21T10:00:00+24:00',
      '2026-11-21T10:00:00+02:60',
      '2026-11-21T10:00:00+2',
      '2026-11-21T10:00:00 Z',
      ' 2026-11-21T10:00:00Z',
      '2026-11-21T10:00:00Z ',
      '2026-W47-6',
      '2026-325',
      '+012026-11-21',
    ];
    for (const text of bad) assert.equal(parseTime(text), undefined, text);
    assert.equal(parseDate('2026-11-21T00:00:00Z'), undefined);
  });

  test('callers pick forms: a zone is required by ingest, a typed timestamp takes all three', () => {
    assert.equal(parseZonedTimestamp('2026-11-21T10:00:00'), undefined);
    assert.equal(parseZonedTimestamp('2026-11-21'), undefined);
    assert.equal(parseZonedTimestamp('2026-11-21T10:00:00Z'), T);
    assert.equal(parseTimestamp('2026-11-21T10:00:00'), T);
  });

  test('civil times in a zone, checked as text is', () => {
    assert.equal(civilMicros(2026, 11, 21, 12, 30, 0, '', 150), T);
    assert.equal(civilMicros(2026, 2, 29, 0, 0, 0, ''), undefined);
    assert.equal(civilMicros(2026, 11, 21, 10, 0, 0, '0000019'), T + 1n);
  });
});

describe('writing', () => {
  test('every spelling of one instant', () => {
    const t = T + 123_456n;
    assert.equal(formatTimestamp(t), '2026-11-21T10:00:00.123456Z');
    assert.equal(formatSqlTimestamp(t), '2026-11-21 10:00:00.123456');
    assert.equal(formatDatetime(t), '2026-11-21T10:00:00.123456');
    assert.equal(formatDatetime(T), '2026-11-21T10:00:00');
    assert.equal(formatUnixSeconds(t), '1795255200.123456');
    assert.equal(formatDate(Number(T / 86_400_000_000n)), '2026-11-21');
    assert.equal(formatTimestamp(T), '2026-11-21T10:00:00.000000Z');
  });

  test('before 1970 the fraction counts forward from the second before', () => {
    assert.equal(formatTimestamp(-1n), '1969-12-31T23:59:59.999999Z');
    assert.equal(formatSqlTimestamp(-1n), '1969-12-31 23:59:59.999999');
    assert.equal(formatDatetime(-1n), '1969-12-31T23:59:59.999999');
    assert.equal(formatUnixSeconds(-1n), '-1.999999');
    assert.equal(formatDate(-1), '1969-12-31');
  });

  test('years past 9999 in the expanded form, as JavaScript writes them', () => {
    assert.equal(formatTimestamp(253_402_300_800_000_000n), '+010000-01-01T00:00:00.000000Z');
    assert.equal(formatDate(daysFromCivil(-1, 1, 1)), '-000001-01-01');
  });

  test('writing and reading agree with JavaScript dates, both ways', () => {
    for (let i = 0; i < 2000; i++) {
      const ms = Math.floor((i / 2000 - 0.5) * 2 * 253_402_300_799_000) + (i % 7) * 86_399_999;
      const micros = BigInt(ms) * 1000n + BigInt(i % 1000);
      const iso = new Date(ms).toISOString();
      if (iso.startsWith('-') || iso.startsWith('+')) continue;
      const expected = `${iso.slice(0, 23)}${String(i % 1000).padStart(3, '0')}Z`;
      assert.equal(formatTimestamp(micros), expected);
      assert.equal(parseTimestamp(expected), micros);
    }
    for (const days of [-719_162, -1, 0, 59, 60, 11_016, 2_932_896]) {
      const { year, month, day } = civilFromDays(days);
      assert.equal(daysFromCivil(year, month, day), days);
      assert.equal(formatDate(days), new Date(days * 86_400_000).toISOString().slice(0, 10));
    }
  });
});

describe('the callers read and write through it', () => {
  test('ingest: ISO text with a zone, else the ingest time', () => {
    assert.equal(ingestTimestamp('2026-11-21t10:00:00Z'), T);
    assert.equal(ingestTimestamp('2026-11-21T10:00:60+00:01'), T);
    assert.equal(ingestTimestamp('2026-11-21T10:00:00'), undefined);
  });

  test('LQL: a t: value is the same instant, written as engines read it', () => {
    const rules = parseLql('t:2026-11-21T12:30:00.000001+02:30', { now: new Date(Number(T / 1000n)) });
    assert.match(JSON.stringify(rules), /2026-11-21 10:00:00\.000001/);
  });

  test('the encoders', () => {
    assert.equal(timestampMicros('2026-11-21 10:00:00.123456'), Number(T + 123_456n));
    assert.equal(timestampMicros('2026-11-21'), Number(T - 36_000_000_000n));
    assert.equal(timestampMicros('not a time'), 'not a time');
    assert.equal(datetimeString(T + 5n), '2026-11-21T10:00:00.000005');
    assert.equal(datetimeString(-1n), '1969-12-31T23:59:59.999999');
    assert.equal(timestampText(-1n), '-1.999999');
  });
});
