/**
 * The typed OTLP logs request → events (src/ingest/otlp/log-events.ts, any-value.ts, severity.ts,
 * logs.ts): Logflare's shape, the timestamp and message fallbacks, severity filled both ways,
 * values as JSON, and records refused one by one or the whole request when none is left.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { QuarryError } from '../../src/errors.ts';
import { jsonOf, objectOf } from '../../src/ingest/otlp/any-value.ts';
import { logEvents } from '../../src/ingest/otlp/log-events.ts';
import { readLogs } from '../../src/ingest/otlp/logs.ts';
import { type AnyValue, type ExportLogsRequest, type LogRecord, emptyLogRecord, emptyResource, emptyScope } from '../../src/ingest/otlp/model.ts';
import { fillSeverity, severityNumber, severityText } from '../../src/ingest/otlp/severity.ts';
import { bytesOf, encodeRequest } from './otlp-messages.ts';

const RECEIVED = 1_763_719_200_000_000n; // 2025-11-21T10:00:00Z in µs

function requestOf(...records: Partial<LogRecord>[]): ExportLogsRequest {
  return {
    resourceLogs: [
      {
        resource: { attributes: [{ key: 'service.name', value: { kind: 'string', value: 'checkout' } }], droppedAttributesCount: 0 },
        scopeLogs: [
          {
            scope: { name: 'lib', version: '1.0', attributes: [{ key: 'x', value: { kind: 'int', value: 1n } }], droppedAttributesCount: 0 },
            logRecords: records.map((r) => ({ ...emptyLogRecord(), ...r })),
            schemaUrl: '',
          },
        ],
        schemaUrl: '',
      },
    ],
  };
}

function eventOf(record: Partial<LogRecord>): Record<string, unknown> {
  const { events } = logEvents(requestOf(record), RECEIVED);
  assert.equal(events.length, 1);
  return events[0] as Record<string, unknown>;
}

const str = (value: string): AnyValue => ({ kind: 'string', value });

describe('OTLP log records as events', () => {
  it("stores a record in Logflare's shape", () => {
    const event = eventOf({
      timeUnixNano: 1763719200123456789n,
      severityNumber: 17,
      severityText: 'ERROR',
      body: str('payment failed'),
      attributes: [{ key: 'http.status_code', value: { kind: 'int', value: 502n } }],
      traceId: '5b8efff798038103d269b633813fc60c',
      spanId: 'eee19b7ec3c1b174',
    });
    assert.deepEqual(event, {
      timestamp: '2025-11-21T10:00:00.123456Z',
      event_message: 'payment failed',
      metadata: { type: 'otel_log' },
      resource: { 'service.name': 'checkout' },
      scope: { name: 'lib', version: '1.0', attributes: { x: 1 } },
      attributes: { 'http.status_code': 502 },
      body: 'payment failed',
      severity_number: 17,
      severity_text: 'ERROR',
      trace_id: '5b8efff798038103d269b633813fc60c',
      span_id: 'eee19b7ec3c1b174',
    });
  });

  it('takes the time, else the observed time, else the time the request arrived; zero is unset', () => {
    assert.equal(eventOf({ timeUnixNano: 1000n, observedTimeUnixNano: 5_000_000n }).timestamp, '1970-01-01T00:00:00.000001Z');
    assert.equal(eventOf({ observedTimeUnixNano: 1763719200999999999n }).timestamp, '2025-11-21T10:00:00.999999Z');
    assert.equal(eventOf({}).timestamp, '2025-11-21T10:00:00.000000Z');
    assert.equal(eventOf({ timeUnixNano: 18446744073709551615n }).timestamp, '2554-07-21T23:34:33.709551Z');
  });

  it('makes the event message of the string body, else the event name, else the body as JSON', () => {
    assert.equal(eventOf({ body: str(''), eventName: 'e' }).event_message, '');
    assert.equal(eventOf({ body: { kind: 'int', value: 7n }, eventName: 'user.login' }).event_message, 'user.login');
    assert.equal(eventOf({ body: { kind: 'kvlist', values: [{ key: 'a', value: { kind: 'bool', value: true } }] } }).event_message, '{"a":true}');
    assert.equal(eventOf({ body: { kind: 'double', value: 1.5 } }).event_message, '1.5');
    assert.equal(eventOf({}).event_message, null);
    const named = eventOf({ eventName: 'user.login', body: str('x') });
    assert.equal(named.event_name, 'user.login');
    assert.equal(Object.hasOwn(eventOf({}), 'event_name'), false);
  });

  it('fills the severity number from the text and the text from the number', () => {
    assert.deepEqual(pick(eventOf({ severityNumber: 9 })), [9, 'INFO']);
    assert.deepEqual(pick(eventOf({ severityNumber: 24 })), [24, 'FATAL']);
    assert.deepEqual(pick(eventOf({ severityText: 'warning' })), [13, 'warning']);
    assert.deepEqual(pick(eventOf({ severityText: 'Information', severityNumber: 10 })), [10, 'Information']);
    assert.deepEqual(pick(eventOf({ severityText: 'verbose-ish' })), [0, 'verbose-ish']);
    assert.deepEqual(pick(eventOf({ severityNumber: 99 })), [99, '']);
    assert.deepEqual(pick(eventOf({})), [0, '']);
  });

  it('stores values as JSON', () => {
    assert.equal(jsonOf({ kind: 'int', value: 9007199254740991n }), 9007199254740991);
    assert.equal(jsonOf({ kind: 'int', value: -9007199254740991n }), -9007199254740991);
    assert.equal(jsonOf({ kind: 'int', value: 9007199254740992n }), '9007199254740992');
    assert.equal(jsonOf({ kind: 'int', value: -9223372036854775808n }), '-9223372036854775808');
    assert.equal(jsonOf({ kind: 'double', value: Number.NaN }), 'NaN');
    assert.equal(jsonOf({ kind: 'double', value: Number.NEGATIVE_INFINITY }), '-Infinity');
    assert.equal(jsonOf({ kind: 'bytes', value: Uint8Array.from([0, 1, 255]) }), 'AAH/');
    assert.equal(jsonOf({ kind: 'empty' }), null);
    assert.deepEqual(jsonOf({ kind: 'array', values: [str('a'), { kind: 'empty' }, { kind: 'array', values: [] }] }), ['a', null, []]);
    const o = objectOf([
      { key: 'k', value: str('first') },
      { key: '__proto__', value: str('own') },
      { key: 'k', value: str('last') },
      { key: 'nested', value: { kind: 'kvlist', values: [{ key: 'a.b', value: { kind: 'bool', value: false } }] } },
    ]);
    assert.equal(o.k, 'last');
    assert.equal(Object.getOwnPropertyDescriptor(o, '__proto__')?.value, 'own');
    assert.equal(Object.getPrototypeOf(o), Object.prototype);
    assert.deepEqual(o.nested, { 'a.b': false });
  });

  it('leaves out the records it cannot store, counting them, and the whole resource or scope when that is the fault', () => {
    const request = requestOf({ body: str('kept') }, { body: str('bad'), problem: 'its traceId is 2 bytes long, not 16' }, { body: str('kept too') });
    const result = logEvents(request, RECEIVED);
    assert.deepEqual(
      result.events.map((e) => e.event_message),
      ['kept', 'kept too'],
    );
    assert.deepEqual([result.records, result.rejected], [3, 1]);
    assert.deepEqual(result.rejection, { where: 'resourceLogs[0].scopeLogs[0].logRecords[1]', problem: 'its traceId is 2 bytes long, not 16' });

    const badScope: ExportLogsRequest = {
      resourceLogs: [
        {
          resource: emptyResource(),
          schemaUrl: '',
          scopeLogs: [
            { scope: emptyScope(), schemaUrl: '', logRecords: [emptyLogRecord()] },
            { scope: emptyScope(), schemaUrl: '', logRecords: [emptyLogRecord(), emptyLogRecord()], problem: 'a value in it nests deeper than 128 levels' },
          ],
        },
      ],
    };
    const scoped = logEvents(badScope, RECEIVED);
    assert.deepEqual([scoped.events.length, scoped.rejected], [1, 2]);
    assert.equal(scoped.rejection?.where, 'resourceLogs[0].scopeLogs[1].scope');
  });

  it('answers a partial success when some records are refused, and 400 when all are', () => {
    const mixed = encodeRequest({ resourceLogs: [{ scopeLogs: [{ logRecords: [{ traceId: bytesOf('01') }, {}] }] }] });
    const intake = readLogs(mixed, 'protobuf', RECEIVED);
    assert.equal(intake.events.length, 1);
    assert.deepEqual(intake.partial, {
      rejected: 1,
      message:
        '1 of 2 log records were refused: the first, resourceLogs[0].scopeLogs[0].logRecords[0], because its traceId is 1 bytes long, not 16. The other records were stored.',
    });
    const none = encodeRequest({ resourceLogs: [{ scopeLogs: [{ logRecords: [{ traceId: bytesOf('01') }] }] }] });
    assert.throws(
      () => readLogs(none, 'protobuf', RECEIVED),
      (e: unknown) => e instanceof QuarryError && e.status === 400 && /1 of 1 log records were refused.*Nothing was stored/.test(e.message),
    );
    assert.deepEqual(readLogs(new Uint8Array(), 'protobuf', RECEIVED), { events: [] });
    assert.deepEqual(readLogs(Buffer.from('{"resourceLogs":[]}'), 'json', RECEIVED), { events: [] });
  });
});

describe('severity', () => {
  it('names each range and reads every short name and the usual spellings', () => {
    assert.deepEqual([1, 4, 5, 8, 9, 12, 13, 16, 17, 20, 21, 24].map(severityText), [
      'TRACE',
      'TRACE',
      'DEBUG',
      'DEBUG',
      'INFO',
      'INFO',
      'WARN',
      'WARN',
      'ERROR',
      'ERROR',
      'FATAL',
      'FATAL',
    ]);
    assert.deepEqual([0, 25, -1, 1.5].map(severityText), [undefined, undefined, undefined, undefined]);
    assert.deepEqual(
      ['trace', 'DEBUG3', ' Info ', 'INFO4', 'warn', 'Warning', 'error', 'ERR', 'critical', 'fatal', 'emergency', 'notice', 'nope'].map(severityNumber),
      [1, 7, 9, 12, 13, 13, 17, 17, 18, 21, 22, 10, undefined],
    );
    assert.deepEqual(fillSeverity(0, ''), { number: 0, text: '' });
  });
});

function pick(event: Record<string, unknown>): [unknown, unknown] {
  return [event.severity_number, event.severity_text];
}
