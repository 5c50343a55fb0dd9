/**
 * The real OpenTelemetry JS SDK as a client, on every engine: a LoggerProvider with a resource and a
 * BatchLogRecordProcessor exports through @opentelemetry/exporter-logs-otlp-http (OTLP/JSON, the
 * source by its id in `x-source`) and through @opentelemetry/exporter-logs-otlp-proto (protobuf,
 * gzipped, the source by `?source_name=`), each to its own source. Every export must succeed, and the
 * records read back through the query API with their message, severity, attributes of each type,
 * resource, scope, event name, trace context and time, the same from either encoding.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ROOT_CONTEXT, TraceFlags, trace } from '@opentelemetry/api';
import { type Logger, SeverityNumber } from '@opentelemetry/api-logs';
import { OTLPLogExporter as JsonExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPLogExporter as ProtoExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchLogRecordProcessor, type LogRecordExporter, LoggerProvider } from '@opentelemetry/sdk-logs';
import { createEndpoint, createSource, type Row, rows } from '../endpoints/http-support.ts';
import { engineEnv, engines } from '../support/engines.ts';
import { PRIVATE_TOKEN, startTestServer, type TestServer } from '../support/server.ts';

/** 2025-11-21T10:00:00Z as an HrTime, plus 1.234567 ms: the SDK keeps nanoseconds. */
const T0_S = Date.UTC(2025, 10, 21, 10, 0, 0) / 1000;
const T0_MICROS = T0_S * 1_000_000;
const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const SPAN_ID = 'b7ad6b7169203331';

const READ =
  'select timestamp, event_message, severity_number, severity_text, trace_id, span_id, event_name, attributes, resource, scope, body, metadata from `%s` order by timestamp';

/** What an exporter answered, export by export. */
interface Seen {
  codes: number[];
  errors: unknown[];
}

/** Wraps `exporter.export` to record each ExportResult (code 0 is SUCCESS). */
function watch<E extends LogRecordExporter>(exporter: E, seen: Seen): E {
  const exportBatch = exporter.export.bind(exporter);
  exporter.export = (logs, done) =>
    exportBatch(logs, (result) => {
      seen.codes.push(result.code);
      if (result.error !== undefined) seen.errors.push(result.error);
      done(result);
    });
  return exporter;
}

function emitAll(logger: Logger): void {
  const sampled = trace.setSpanContext(ROOT_CONTEXT, { traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: TraceFlags.SAMPLED });
  logger.emit({
    timestamp: [T0_S, 1_234_567],
    severityNumber: SeverityNumber.INFO,
    severityText: 'INFO',
    body: 'order placed',
    attributes: {
      order_id: 42,
      amount: 19.5,
      paid: true,
      customer: 'ada',
      tags: ['new', 'web'],
      cart: { items: 3, coupon: 'AUTUMN' },
      digest: new Uint8Array([1, 2, 3, 250]),
    },
    context: sampled,
  });
  logger.emit({
    timestamp: [T0_S, 2_000_000],
    severityNumber: SeverityNumber.ERROR,
    body: { reason: 'card declined', code: 51, retry: false, steps: ['auth', 'capture'] },
    attributes: { order_id: 43 },
  });
  logger.emit({
    timestamp: [T0_S, 3_000_000],
    severityNumber: SeverityNumber.WARN,
    severityText: 'Warning',
    eventName: 'checkout.retry',
    attributes: { order_id: 44 },
  });
}

function first(row: Row, field: string): Record<string, unknown> {
  const v = row[field];
  return (Array.isArray(v) ? v[0] : v) as Record<string, unknown>;
}

/** Each engine's rows, to compare at the end. */
const answers = new Map<string, Row[]>();

for (const engine of engines) {
  describe(`OpenTelemetry JS SDK exporters on ${engine}`, () => {
    let s: TestServer;
    const json: Seen = { codes: [], errors: [] };
    const proto: Seen = { codes: [], errors: [] };
    let provider: LoggerProvider;

    before(async () => {
      s = await startTestServer(engineEnv(engine));
      const jsonSource = await createSource(s, 'sdk.json');
      await createSource(s, 'sdk.proto');
      for (const name of ['sdk.json', 'sdk.proto']) {
        await createEndpoint(s, { name: `read.${name}`, query: READ.replace('%s', name), cache_duration_seconds: 0 });
      }
      const jsonExporter = watch(new JsonExporter({ url: `${s.url}/v1/logs`, headers: { 'x-api-key': PRIVATE_TOKEN, 'x-source': jsonSource } }), json);
      const protoExporter = watch(
        new ProtoExporter({
          url: `${s.url}/api/logs/v1/logs?source_name=sdk.proto`,
          headers: { 'x-api-key': PRIVATE_TOKEN },
          compression: 'gzip' as NonNullable<ConstructorParameters<typeof ProtoExporter>[0]>['compression'],
        }),
        proto,
      );
      provider = new LoggerProvider({
        resource: resourceFromAttributes({ 'service.name': 'checkout', 'service.version': '2.1.0' }),
        processors: [new BatchLogRecordProcessor({ exporter: jsonExporter }), new BatchLogRecordProcessor({ exporter: protoExporter })],
      });
    });
    after(async () => {
      await provider?.shutdown();
      await s?.close();
    });

    it('exports through both exporters, every export a success', async () => {
      emitAll(provider.getLogger('checkout-logger', '1.4.0'));
      await provider.forceFlush();
      for (const [what, seen] of [
        ['OTLP/JSON', json],
        ['protobuf', proto],
      ] as const) {
        assert.deepEqual(seen.errors, [], what);
        assert.ok(seen.codes.length > 0, `${what}: nothing exported`);
        assert.ok(
          seen.codes.every((c) => c === 0),
          `${what}: ${seen.codes}`,
        );
      }
    });

    it('reads every record back, the same from either encoding', async () => {
      const fromJson = await rows(s, 'read.sdk.json');
      const fromProto = await rows(s, 'read.sdk.proto');
      assert.equal(fromJson.length, 3);
      assert.deepEqual(fromProto, fromJson);
      const got = fromJson;
      assert.deepEqual(
        got.map((r) => [r.timestamp, r.event_message, r.severity_number, r.severity_text, r.trace_id, r.span_id, r.event_name ?? null]),
        [
          [T0_MICROS + 1234, 'order placed', 9, 'INFO', TRACE_ID, SPAN_ID, null],
          [T0_MICROS + 2000, '{"reason":"card declined","code":51,"retry":false,"steps":["auth","capture"]}', 17, 'ERROR', '', '', null],
          [T0_MICROS + 3000, 'checkout.retry', 13, 'Warning', '', '', 'checkout.retry'],
        ],
      );
      const [placed, declined] = got as [Row, Row, Row];
      const attributes = first(placed, 'attributes');
      assert.equal(attributes.order_id, 42);
      assert.equal(attributes.amount, 19.5);
      assert.equal(attributes.paid, true);
      assert.equal(attributes.customer, 'ada');
      assert.deepEqual(attributes.tags, ['new', 'web']);
      assert.deepEqual(first(attributes as Row, 'cart'), { items: 3, coupon: 'AUTUMN' });
      assert.equal(attributes.digest, Buffer.from([1, 2, 3, 250]).toString('base64'));
      // The first record's string body typed the source's `body` field as text, so a map body
      // after it is kept as its JSON text (as any ingest keeps a value of another type).
      const body = typeof declined.body === 'string' ? (JSON.parse(declined.body) as unknown) : first(declined, 'body');
      assert.deepEqual(body, { reason: 'card declined', code: 51, retry: false, steps: ['auth', 'capture'] });
      // The resource's attributes under their stored (column-safe) names.
      assert.deepEqual(Object.values(first(placed, 'resource')), ['checkout', '2.1.0']);
      const scope = first(placed, 'scope');
      assert.deepEqual([scope.name, scope.version], ['checkout-logger', '1.4.0']);
      assert.deepEqual(first(placed, 'metadata'), { type: 'otel_log' });
      answers.set(engine, got);
    });
  });
}

describe('OpenTelemetry JS SDK exporters: the engines agree', () => {
  it('the same rows on every engine', { skip: engines.length < 2 }, () => {
    const [one, ...others] = [...answers.values()];
    for (const other of others) assert.deepEqual(other, one);
  });
});
