/**
 * OTLP/JSON logs requests → the typed request (src/ingest/otlp/json.ts): hand-written bodies as the
 * OpenTelemetry Collector and SDKs send them, the lenient spellings proto3's JSON mapping allows,
 * the same request as the library encodes it in binary (both decoders must agree), and the errors.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { QuarryError } from '../../src/errors.ts';
import { decodeLogsJson } from '../../src/ingest/otlp/json.ts';
import { defaultOtlpLimits } from '../../src/ingest/otlp/limits.ts';
import type { AnyValue, ExportLogsRequest, LogRecord } from '../../src/ingest/otlp/model.ts';
import { decodeLogsProtobuf } from '../../src/ingest/otlp/protobuf.ts';
import { type RequestInit, bytesOf, encodeRequest, requestJson } from './otlp-messages.ts';

/** As the Collector's otlphttp exporter writes it (encoding: json). */
const collectorBody = JSON.stringify({
  resourceLogs: [
    {
      resource: {
        attributes: [
          { key: 'service.name', value: { stringValue: 'checkout' } },
          { key: 'host.cpu', value: { intValue: '8' } },
        ],
      },
      scopeLogs: [
        {
          scope: { name: 'io.opentelemetry.example', version: '1.2.0' },
          logRecords: [
            {
              timeUnixNano: '1763719200123456789',
              observedTimeUnixNano: '1763719200200000000',
              severityNumber: 13,
              severityText: 'Warning',
              traceId: '5B8EFFF798038103D269B633813FC60C',
              spanId: 'EEE19B7EC3C1B174',
              flags: 1,
              body: { stringValue: 'payment retried' },
              attributes: [
                { key: 'attempt', value: { intValue: '2' } },
                { key: 'ratio', value: { doubleValue: 0.25 } },
                { key: 'ok', value: { boolValue: false } },
                { key: 'tags', value: { arrayValue: { values: [{ stringValue: 'a' }, { intValue: 3 }] } } },
                { key: 'ctx', value: { kvlistValue: { values: [{ key: 'region', value: { stringValue: 'eu' } }] } } },
                { key: 'raw', value: { bytesValue: 'AAH/' } },
                { key: 'nothing', value: {} },
              ],
              eventName: 'payment.retry',
              droppedAttributesCount: 1,
            },
          ],
          schemaUrl: 'https://opentelemetry.io/schemas/1.24.0',
        },
      ],
    },
  ],
});

function first(request: ExportLogsRequest): LogRecord {
  const record = request.resourceLogs[0]?.scopeLogs[0]?.logRecords[0];
  assert.ok(record);
  return record;
}

/** Bytes as arrays of numbers, so values decoded from either encoding compare equal. */
function comparable(request: ExportLogsRequest): unknown {
  return JSON.parse(
    JSON.stringify(request, function (this: Record<string, unknown>, key, value: unknown) {
      const raw = this[key]; // before toJSON: a Buffer's own toJSON would hide that it is bytes
      if (raw instanceof Uint8Array) return [...raw];
      if (typeof value === 'bigint') return `${value}n`;
      return typeof value === 'number' && Number.isNaN(value) ? 'NaN' : value;
    }),
  );
}

function refused(text: string, pattern: RegExp): void {
  assert.throws(
    () => decodeLogsJson(text),
    (e: unknown) => e instanceof QuarryError && e.status === 400 && pattern.test(e.message),
  );
}

function withRecord(record: unknown): string {
  return JSON.stringify({ resourceLogs: [{ scopeLogs: [{ logRecords: [record] }] }] });
}

describe('OTLP/JSON logs request', () => {
  it("reads the Collector's JSON", () => {
    const request = decodeLogsJson(collectorBody);
    assert.deepEqual(request.resourceLogs[0]?.resource.attributes, [
      { key: 'service.name', value: { kind: 'string', value: 'checkout' } },
      { key: 'host.cpu', value: { kind: 'int', value: 8n } },
    ]);
    assert.equal(request.resourceLogs[0]?.scopeLogs[0]?.schemaUrl, 'https://opentelemetry.io/schemas/1.24.0');
    const record = first(request);
    assert.deepEqual(
      { ...record, attributes: record.attributes.map((a) => a.key) },
      {
        timeUnixNano: 1763719200123456789n,
        observedTimeUnixNano: 1763719200200000000n,
        severityNumber: 13,
        severityText: 'Warning',
        body: { kind: 'string', value: 'payment retried' },
        attributes: ['attempt', 'ratio', 'ok', 'tags', 'ctx', 'raw', 'nothing'],
        droppedAttributesCount: 1,
        flags: 1,
        traceId: '5b8efff798038103d269b633813fc60c',
        spanId: 'eee19b7ec3c1b174',
        eventName: 'payment.retry',
      },
    );
    const values = Object.fromEntries(record.attributes.map((a) => [a.key, a.value]));
    assert.deepEqual(values.tags, {
      kind: 'array',
      values: [
        { kind: 'string', value: 'a' },
        { kind: 'int', value: 3n },
      ],
    });
    assert.deepEqual(values.ctx, { kind: 'kvlist', values: [{ key: 'region', value: { kind: 'string', value: 'eu' } }] });
    assert.deepEqual([...((values.raw as AnyValue & { kind: 'bytes' }).value ?? [])], [0, 1, 255]);
    assert.deepEqual(values.nothing, { kind: 'empty' });
  });

  it('decodes what the binary decoder decodes, for the same request', () => {
    const init: RequestInit = {
      resourceLogs: [
        {
          resource: { attributes: [{ key: 'service.name', value: { value: { case: 'stringValue', value: 'svc' } } }] },
          scopeLogs: [
            {
              scope: { name: 'lib', version: '2', attributes: [{ key: 's', value: { value: { case: 'doubleValue', value: Number.NaN } } }] },
              logRecords: [
                {
                  timeUnixNano: 18446744073709551615n,
                  severityNumber: 21,
                  body: {
                    value: {
                      case: 'kvlistValue',
                      value: {
                        values: [
                          { key: 'big', value: { value: { case: 'intValue', value: -9223372036854775808n } } },
                          { key: 'bin', value: { value: { case: 'bytesValue', value: new Uint8Array([251, 255]) } } },
                          {
                            key: 'list',
                            value: {
                              value: { case: 'arrayValue', value: { values: [{ value: { case: 'doubleValue', value: Number.POSITIVE_INFINITY } }, {}] } },
                            },
                          },
                        ],
                      },
                    },
                  },
                  traceId: bytesOf('0af7651916cd43dd8448eb211c80319c'),
                  spanId: bytesOf('b7ad6b7169203331'),
                  flags: 4294967295,
                  eventName: 'e',
                },
                {},
              ],
            },
          ],
        },
        {},
      ],
    };
    assert.deepEqual(comparable(decodeLogsJson(requestJson(init))), comparable(decodeLogsProtobuf(encodeRequest(init))));
  });

  it('takes the .proto field names, enum names, integers as numbers, null as unset, and ignores unknown fields', () => {
    const request = decodeLogsJson(
      JSON.stringify({
        resource_logs: [
          {
            resource: { attributes: [{ key: 'k', value: { int_value: 5 } }], dropped_attributes_count: '2' },
            unknown: { anything: [1, 2] },
            scope_logs: [
              {
                scope: null,
                log_records: [
                  {
                    time_unix_nano: 1763719200000000000,
                    severity_number: 'SEVERITY_NUMBER_ERROR2',
                    severity_text: null,
                    trace_id: '',
                    body: { kvlist_value: { values: [{ key: 'a', value: { string_value: 'b' } }] } },
                    futureField: true,
                  },
                ],
              },
            ],
          },
        ],
      }),
    );
    assert.deepEqual(request.resourceLogs[0]?.resource, { attributes: [{ key: 'k', value: { kind: 'int', value: 5n } }], droppedAttributesCount: 2 });
    const record = first(request);
    assert.equal(record.timeUnixNano, 1763719200000000000n);
    assert.equal(record.severityNumber, 18);
    assert.equal(record.severityText, '');
    assert.equal(record.traceId, '');
    assert.deepEqual(record.body, { kind: 'kvlist', values: [{ key: 'a', value: { kind: 'string', value: 'b' } }] });
    assert.deepEqual(decodeLogsJson(''), { resourceLogs: [] });
    assert.deepEqual(decodeLogsJson('{}'), { resourceLogs: [] });
    assert.deepEqual(first(decodeLogsJson(withRecord({ body: { doubleValue: '-Infinity' } }))).body, { kind: 'double', value: Number.NEGATIVE_INFINITY });
    assert.deepEqual(first(decodeLogsJson(withRecord({ body: { doubleValue: '1.5e3' } }))).body, { kind: 'double', value: 1500 });
  });

  it('refuses a value of the wrong type, naming the field', () => {
    refused('{"resourceLogs":', /not valid JSON/);
    refused('[1]', /the body must be an object, got an array/);
    refused('{"resourceLogs":{}}', /resourceLogs must be an array, got an object/);
    refused(
      '{"resourceLogs":[{"scopeLogs":[{"logRecords":[{}, "x"]}]}]}',
      /resourceLogs\[0\]\.scopeLogs\[0\]\.logRecords\[1\] must be an object, got a string \("x"\)/,
    );
    refused(withRecord({ timeUnixNano: 'soon' }), /logRecords\[0\]\.timeUnixNano must be an integer/);
    refused(withRecord({ timeUnixNano: '-1' }), /timeUnixNano must be an integer from 0 to 18446744073709551615/);
    refused(withRecord({ severityNumber: 'SEVERITY_NUMBER_LOUD' }), /severityNumber must be a severity number \(0–24\) or its name/);
    refused(withRecord({ severityText: 3 }), /severityText must be a string, got a number/);
    refused(withRecord({ body: { intValue: 1.5 } }), /body\.intValue must be an integer/);
    refused(withRecord({ body: { intValue: '9223372036854775808' } }), /body\.intValue must be an integer from -9223372036854775808/);
    refused(withRecord({ body: { boolValue: 'true' } }), /body\.boolValue must be true or false/);
    refused(withRecord({ body: { bytesValue: 'not base64!' } }), /body\.bytesValue must be base64 text/);
    refused(withRecord({ body: { stringValue: 'a', intValue: 1 } }), /body must be one value/);
    refused(withRecord({ body: 'text' }), /body must be an object, got a string/);
    refused(
      withRecord({ attributes: [{ key: 'k', value: { arrayValue: { values: [{}, 7] } } }] }),
      /attributes\[0\]\.value\.arrayValue\.values\[1\] must be an object/,
    );
    refused(withRecord({ traceId: 5 }), /traceId must be a string/);
  });

  it('refuses only the record whose id is not hex of the right length', () => {
    const request = decodeLogsJson(
      JSON.stringify({
        resourceLogs: [
          {
            scopeLogs: [
              {
                logRecords: [
                  { traceId: 'W47/95gDgQPSabYzgT/GDA==' }, // base64, as Logflare reads it: not OTLP
                  { spanId: 'EEE19B7EC3C1B1' },
                  { traceId: 'zz8efff798038103d269b633813fc60c' },
                  { traceId: '5b8efff798038103d269b633813fc60c', spanId: 'eee19b7ec3c1b174' },
                ],
              },
            ],
          },
        ],
      }),
    );
    const problems = request.resourceLogs[0]?.scopeLogs[0]?.logRecords.map((r) => r.problem);
    assert.deepEqual(problems, [
      'its traceId is not 16 bytes written as 32 hex digits (got a string ("W47/95gDgQPSabYzgT/GDA=="))',
      'its spanId is not 8 bytes written as 16 hex digits (got a string ("EEE19B7EC3C1B1"))',
      'its traceId is not 16 bytes written as 32 hex digits (got a string ("zz8efff798038103d269b633813fc60c"))',
      undefined,
    ]);
  });

  it('bounds nesting: a deeper value refuses its record, however deep the JSON', () => {
    const nest = (levels: number) => `${'{"arrayValue":{"values":['.repeat(levels - 1)}{"stringValue":"leaf"}${']}}'.repeat(levels - 1)}`;
    const max = defaultOtlpLimits.maxValueDepth;
    assert.equal(first(decodeLogsJson(`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":${nest(max)}}]}]}]}`)).problem, undefined);
    assert.match(first(decodeLogsJson(`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":${nest(max + 1)}}]}]}]}`)).problem ?? '', /nests deeper than 128/);
    assert.match(first(decodeLogsJson(`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":${nest(200_000)}}]}]}]}`)).problem ?? '', /nests deeper/);
    const scope = decodeLogsJson(`{"resourceLogs":[{"scopeLogs":[{"scope":{"attributes":[{"key":"k","value":${nest(max + 1)}}]},"logRecords":[{}]}]}]}`);
    assert.match(scope.resourceLogs[0]?.scopeLogs[0]?.problem ?? '', /nests deeper/);
  });

  it('refuses a request of more records than the limit with 413', () => {
    const body = JSON.stringify({ resourceLogs: [{ scopeLogs: [{ logRecords: [{}, {}, {}] }] }] });
    assert.throws(
      () => decodeLogsJson(body, { ...defaultOtlpLimits, maxLogRecords: 2 }),
      (e: unknown) => e instanceof QuarryError && e.status === 413,
    );
  });
});
