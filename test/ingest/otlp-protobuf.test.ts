/**
 * Binary OTLP logs requests → the typed request (src/ingest/otlp/protobuf.ts), against requests the
 * library's own reflection encodes (otlp-messages.ts), and bytes written by hand for what no encoder
 * writes: unknown fields, wrong wire types, truncations, lengths past the end, invalid UTF-8.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import { QuarryError } from '../../src/errors.ts';
import { defaultOtlpLimits } from '../../src/ingest/otlp/limits.ts';
import type { AnyValue, ExportLogsRequest, LogRecord } from '../../src/ingest/otlp/model.ts';
import { decodeLogsProtobuf } from '../../src/ingest/otlp/protobuf.ts';
import { type RequestInit, bytesOf, encodeRequest } from './otlp-messages.ts';

const LEN = WireType.LengthDelimited;

function oneRecord(record: Record<string, unknown>): RequestInit {
  return { resourceLogs: [{ scopeLogs: [{ logRecords: [record] }] }] } as RequestInit;
}

function firstRecord(request: ExportLogsRequest): LogRecord {
  const record = request.resourceLogs[0]?.scopeLogs[0]?.logRecords[0];
  assert.ok(record, 'one record');
  return record;
}

/** Bytes as plain Uint8Array, so decoded values compare equal whatever buffer they view. */
function plain(value: AnyValue): unknown {
  switch (value.kind) {
    case 'bytes':
      return { kind: 'bytes', value: [...value.value] };
    case 'array':
      return { kind: 'array', values: value.values.map(plain) };
    case 'kvlist':
      return { kind: 'kvlist', values: value.values.map((kv) => ({ key: kv.key, value: plain(kv.value) })) };
    default:
      return value;
  }
}

function refused(bytes: Uint8Array, pattern: RegExp, status = 400): void {
  assert.throws(
    () => decodeLogsProtobuf(bytes),
    (e: unknown) => e instanceof QuarryError && e.status === status && pattern.test(e.message),
  );
}

/** A request whose only record is `record` (the record's bytes as given). */
function wrapRecord(record: Uint8Array): Uint8Array {
  const scopeLogs = new BinaryWriter().tag(2, LEN).bytes(record).finish();
  const resourceLogs = new BinaryWriter().tag(2, LEN).bytes(scopeLogs).finish();
  return new BinaryWriter().tag(1, LEN).bytes(resourceLogs).finish();
}

describe('OTLP protobuf logs request', () => {
  it('reads every field of a record, its scope and its resource', () => {
    const request = decodeLogsProtobuf(
      encodeRequest({
        resourceLogs: [
          {
            resource: { attributes: [{ key: 'service.name', value: { value: { case: 'stringValue', value: 'checkout' } } }], droppedAttributesCount: 2 },
            schemaUrl: 'https://opentelemetry.io/schemas/1.24.0',
            scopeLogs: [
              {
                scope: {
                  name: 'my.library',
                  version: '1.0.0',
                  attributes: [{ key: 'a', value: { value: { case: 'boolValue', value: true } } }],
                  droppedAttributesCount: 1,
                },
                logRecords: [
                  {
                    timeUnixNano: 1544712660300000000n,
                    observedTimeUnixNano: 1544712660300000001n,
                    severityNumber: 10,
                    severityText: 'Information',
                    body: { value: { case: 'stringValue', value: 'Example log record' } },
                    attributes: [{ key: 'string.attribute', value: { value: { case: 'stringValue', value: 'some string' } } }],
                    droppedAttributesCount: 3,
                    flags: 1,
                    traceId: bytesOf('5b8efff798038103d269b633813fc60c'),
                    spanId: bytesOf('eee19b7ec3c1b174'),
                    eventName: 'checkout.done',
                  },
                ],
              },
            ],
          },
        ],
      }),
    );
    const rl = request.resourceLogs[0];
    assert.deepEqual(rl?.resource, { attributes: [{ key: 'service.name', value: { kind: 'string', value: 'checkout' } }], droppedAttributesCount: 2 });
    assert.equal(rl?.schemaUrl, 'https://opentelemetry.io/schemas/1.24.0');
    assert.deepEqual(rl?.scopeLogs[0]?.scope, {
      name: 'my.library',
      version: '1.0.0',
      attributes: [{ key: 'a', value: { kind: 'bool', value: true } }],
      droppedAttributesCount: 1,
    });
    assert.deepEqual(firstRecord(request), {
      timeUnixNano: 1544712660300000000n,
      observedTimeUnixNano: 1544712660300000001n,
      severityNumber: 10,
      severityText: 'Information',
      body: { kind: 'string', value: 'Example log record' },
      attributes: [{ key: 'string.attribute', value: { kind: 'string', value: 'some string' } }],
      droppedAttributesCount: 3,
      flags: 1,
      traceId: '5b8efff798038103d269b633813fc60c',
      spanId: 'eee19b7ec3c1b174',
      eventName: 'checkout.done',
    });
  });

  it('reads every kind of value', () => {
    const values: [RequestInit, unknown][] = [];
    const kinds = [
      [
        { case: 'stringValue', value: 'é 😀' },
        { kind: 'string', value: 'é 😀' },
      ],
      [
        { case: 'boolValue', value: false },
        { kind: 'bool', value: false },
      ],
      [
        { case: 'intValue', value: -9223372036854775808n },
        { kind: 'int', value: -9223372036854775808n },
      ],
      [
        { case: 'intValue', value: 9223372036854775807n },
        { kind: 'int', value: 9223372036854775807n },
      ],
      [
        { case: 'doubleValue', value: -0.5 },
        { kind: 'double', value: -0.5 },
      ],
      [
        { case: 'doubleValue', value: Number.NaN },
        { kind: 'double', value: Number.NaN },
      ],
      [
        { case: 'bytesValue', value: new Uint8Array([0, 255, 7]) },
        { kind: 'bytes', value: [0, 255, 7] },
      ],
      [
        { case: 'arrayValue', value: { values: [{ value: { case: 'stringValue', value: 'x' } }, {}] } },
        {
          kind: 'array',
          values: [{ kind: 'string', value: 'x' }, { kind: 'empty' }],
        },
      ],
      [
        { case: 'kvlistValue', value: { values: [{ key: 'k', value: { value: { case: 'intValue', value: 1n } } }, { key: 'none' }] } },
        {
          kind: 'kvlist',
          values: [
            { key: 'k', value: { kind: 'int', value: 1n } },
            { key: 'none', value: { kind: 'empty' } },
          ],
        },
      ],
    ] as const;
    for (const [value, expected] of kinds) values.push([oneRecord({ body: { value } } as never), expected]);
    for (const [init, expected] of values) {
      assert.deepEqual(plain(firstRecord(decodeLogsProtobuf(encodeRequest(init))).body), expected);
    }
    assert.deepEqual(firstRecord(decodeLogsProtobuf(encodeRequest(oneRecord({})))).body, { kind: 'empty' });
  });

  it('reads an empty body as an empty request, and an empty record with every default', () => {
    assert.deepEqual(decodeLogsProtobuf(new Uint8Array()), { resourceLogs: [] });
    const record = firstRecord(decodeLogsProtobuf(encodeRequest(oneRecord({}))));
    assert.equal(record.timeUnixNano, 0n);
    assert.equal(record.traceId, '');
    assert.equal(record.problem, undefined);
  });

  it('skips unknown fields and known fields of another wire type, as protobuf parsers do', () => {
    const record = new BinaryWriter()
      .tag(99, WireType.Varint)
      .uint32(5)
      .tag(3, WireType.Varint) // severity_text is a string: skipped
      .uint32(7)
      .tag(4, LEN) // reserved 4
      .string('old')
      .tag(50, WireType.Bit32)
      .fixed32(1)
      .tag(51, WireType.Bit64)
      .fixed64(1n)
      .tag(52, WireType.StartGroup)
      .tag(1, WireType.Varint)
      .uint32(1)
      .tag(52, WireType.EndGroup)
      .tag(2, WireType.Varint)
      .int32(17)
      .finish();
    const decoded = firstRecord(decodeLogsProtobuf(wrapRecord(record)));
    assert.equal(decoded.severityNumber, 17);
    assert.equal(decoded.severityText, '');
  });

  it('merges a message given twice and keeps the last of a scalar', () => {
    const attribute = (key: string) => new BinaryWriter().tag(1, LEN).string(key).finish();
    const resourceA = new BinaryWriter().tag(1, LEN).bytes(attribute('a')).finish();
    const resourceB = new BinaryWriter().tag(1, LEN).bytes(attribute('b')).tag(2, WireType.Varint).uint32(4).finish();
    const resourceLogs = new BinaryWriter().tag(1, LEN).bytes(resourceA).tag(1, LEN).bytes(resourceB).tag(3, LEN).string('x').tag(3, LEN).string('y').finish();
    const request = decodeLogsProtobuf(new BinaryWriter().tag(1, LEN).bytes(resourceLogs).finish());
    assert.deepEqual(
      request.resourceLogs[0]?.resource.attributes.map((a) => a.key),
      ['a', 'b'],
    );
    assert.equal(request.resourceLogs[0]?.resource.droppedAttributesCount, 4);
    assert.equal(request.resourceLogs[0]?.schemaUrl, 'y');
  });

  it('reads invalid UTF-8 as U+FFFD', () => {
    const text = new BinaryWriter()
      .tag(3, LEN)
      .bytes(new Uint8Array([0x61, 0xff, 0xfe, 0x62, 0xc3]))
      .finish();
    assert.equal(firstRecord(decodeLogsProtobuf(wrapRecord(text))).severityText, 'a\ufffd\ufffdb\ufffd');
  });

  it('refuses bytes that are not protobuf, naming where', () => {
    const good = encodeRequest(oneRecord({ body: { value: { case: 'stringValue', value: 'hello world' } }, severityText: 'INFO' }));
    refused(good.subarray(0, good.length - 3), /ends in the middle of a field|runs past the end/);
    refused(Uint8Array.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]), /length of 4294967295 bytes runs past the end of the body \(at the top level\)/);
    refused(Uint8Array.from([0x00]), /illegal tag: field no 0/);
    refused(Uint8Array.from([0x0c]), /wire type 4/);
    refused(Uint8Array.from([0x0f]), /illegal tag/);
    refused(wrapRecord(Uint8Array.from([0x10, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01])), /invalid varint.*log_records\[0\]/);
    // A record whose body claims more bytes than its record holds.
    const record = new BinaryWriter().tag(5, LEN).uint32(200).finish();
    refused(wrapRecord(record), /runs past the end.*in resource_logs\[0\]\.scope_logs\[0\]\.log_records\[0\]/);
    refused(
      wrapRecord(
        new BinaryWriter()
          .tag(5, LEN)
          .bytes(new Uint8Array([0x0a, 0x05, 0x61]))
          .finish(),
      ),
      /resource_logs\[0\]\.scope_logs\[0\]\.log_records\[0\]\.body/,
    );
    refused(new TextEncoder().encode('{"resourceLogs":[]}'), /not a valid protobuf ExportLogsServiceRequest/);
  });

  it('refuses only the record whose trace or span id has the wrong length', () => {
    const request = decodeLogsProtobuf(
      encodeRequest({
        resourceLogs: [{ scopeLogs: [{ logRecords: [{ traceId: bytesOf('0102') }, { spanId: bytesOf('01020304050607') }, { traceId: new Uint8Array(16) }] }] }],
      }),
    );
    const records = request.resourceLogs[0]?.scopeLogs[0]?.logRecords ?? [];
    assert.equal(records[0]?.problem, 'its traceId is 2 bytes long, not 16');
    assert.equal(records[1]?.problem, 'its spanId is 7 bytes long, not 8');
    assert.equal(records[2]?.problem, undefined);
    assert.equal(records[2]?.traceId, '0'.repeat(32));
  });

  it('bounds nesting: a value past the bound is skipped by its length and refuses its record only', () => {
    // AnyValue{array_value: ArrayValue{values: …}} `levels` deep around a string, built outside in
    // (copying the inner bytes at every level would take quadratic time).
    const deep = (levels: number): Uint8Array => {
      const leaf = new BinaryWriter().tag(1, LEN).string('leaf').finish();
      const headers: Uint8Array[] = [];
      let size = leaf.length;
      for (let i = 1; i < levels; i++) {
        const values = new BinaryWriter().tag(1, LEN).uint32(size).finish();
        size += values.length;
        const array = new BinaryWriter().tag(5, LEN).uint32(size).finish();
        size += array.length;
        headers.push(values, array);
      }
      return Buffer.concat([...headers.reverse(), leaf]);
    };
    const max = defaultOtlpLimits.maxValueDepth;
    const atBound = firstRecord(decodeLogsProtobuf(wrapRecord(new BinaryWriter().tag(5, LEN).bytes(deep(max)).finish())));
    assert.equal(atBound.problem, undefined);
    let v: AnyValue = atBound.body;
    let levels = 1;
    while (v.kind === 'array') {
      v = v.values[0] as AnyValue;
      levels++;
    }
    assert.deepEqual([levels, v], [max, { kind: 'string', value: 'leaf' }]);

    const tooDeep = new BinaryWriter()
      .tag(5, LEN)
      .bytes(deep(max + 1))
      .tag(3, LEN)
      .string('after')
      .finish();
    const past = firstRecord(decodeLogsProtobuf(wrapRecord(tooDeep)));
    assert.equal(past.problem, `a value in it nests deeper than ${max} levels`);
    assert.equal(past.severityText, 'after', 'the fields after the deep value are still read');

    // 100 000 levels decode in bounded time and stack.
    const started = Date.now();
    const huge = firstRecord(decodeLogsProtobuf(wrapRecord(new BinaryWriter().tag(5, LEN).bytes(deep(100_000)).finish())));
    assert.match(huge.problem ?? '', /nests deeper/);
    assert.ok(Date.now() - started < 5000);

    // Resource and scope attributes too.
    const kv = new BinaryWriter()
      .tag(1, LEN)
      .string('k')
      .tag(2, LEN)
      .bytes(deep(max + 1))
      .finish();
    const resource = new BinaryWriter().tag(1, LEN).bytes(kv).finish();
    const rl = new BinaryWriter().tag(1, LEN).bytes(resource).finish();
    const request = decodeLogsProtobuf(new BinaryWriter().tag(1, LEN).bytes(rl).finish());
    assert.match(request.resourceLogs[0]?.problem ?? '', /nests deeper/);
  });

  it('refuses a request of more records than the limit with 413', () => {
    const many = encodeRequest({ resourceLogs: [{ scopeLogs: [{ logRecords: Array.from({ length: 11 }, () => ({})) }] }] });
    assert.equal(decodeLogsProtobuf(many, { ...defaultOtlpLimits, maxLogRecords: 11 }).resourceLogs[0]?.scopeLogs[0]?.logRecords.length, 11);
    assert.throws(
      () => decodeLogsProtobuf(many, { ...defaultOtlpLimits, maxLogRecords: 10 }),
      (e: unknown) => e instanceof QuarryError && e.status === 413 && /more than 10 log records/.test(e.message),
    );
  });
});
