/**
 * OTLP/HTTP logs ingest end to end, on every engine: requests encoded by @bufbuild/protobuf's
 * reflection (test/ingest/otlp-messages.ts) and OTLP/JSON written by hand as the OpenTelemetry
 * Collector sends it, compressed or not, on every path and with every way of naming the source;
 * the events are read back through the query API. Then the answers: ExportLogsServiceResponse with
 * partialSuccess, google.rpc.Status errors in the request's encoding (400, 401, 404, 413, 415, 503
 * with Retry-After), traces and metrics refused, CORS preflight.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { deflateSync, gzipSync } from 'node:zlib';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify from 'fastify';
import { QuarryError } from '../../src/errors.ts';
import { otlpRoutes } from '../../src/http/otlp-routes.ts';
import { createEndpoint, createSource, type Row, rows } from '../endpoints/http-support.ts';
import { bytesOf, decodeResponse, decodeStatus, encodeRequest, type RequestInit } from '../ingest/otlp-messages.ts';
import { PATH_OR_STACK } from '../support/disclosure.ts';
import { engineEnv, engines } from '../support/engines.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const SOURCE = 'otel.logs';
const PROTOBUF = 'application/x-protobuf';
const JSON_TYPE = 'application/json';

/** 2025-11-21T10:00:00Z, in the units OTLP and the query results use. */
const T0_MS = Date.UTC(2025, 10, 21, 10, 0, 0);
const T0_NANOS = BigInt(T0_MS) * 1_000_000n;
const micros = (nanos: bigint) => Number(nanos / 1000n);

const str = (value: string) => ({ value: { case: 'stringValue' as const, value } });

/** As an SDK's protobuf exporter sends a batch: one resource, one scope, several records. */
const sdkRequest: RequestInit = {
  resourceLogs: [
    {
      resource: { attributes: [{ key: 'service.name', value: str('checkout') }] },
      scopeLogs: [
        {
          scope: { name: 'checkout-logger', version: '2.1.0' },
          logRecords: [
            {
              timeUnixNano: T0_NANOS + 1_000_000n,
              observedTimeUnixNano: T0_NANOS + 2_000_000n,
              severityNumber: 9,
              body: str('order placed'),
              attributes: [
                { key: 'order_id', value: { value: { case: 'intValue', value: 42n } } },
                { key: 'amount', value: { value: { case: 'doubleValue', value: 19.5 } } },
              ],
              traceId: bytesOf('0af7651916cd43dd8448eb211c80319c'),
              spanId: bytesOf('b7ad6b7169203331'),
            },
            {
              // No time: the observed time stands in.
              observedTimeUnixNano: T0_NANOS + 3_000_000n,
              severityText: 'ERROR',
              body: str('payment declined'),
              attributes: [{ key: 'order_id', value: { value: { case: 'intValue', value: 43n } } }],
            },
            {
              timeUnixNano: T0_NANOS + 4_000_000n,
              severityNumber: 13,
              eventName: 'checkout.retry',
              attributes: [{ key: 'order_id', value: { value: { case: 'intValue', value: 44n } } }],
            },
          ],
        },
      ],
    },
  ],
};

/** As the Collector's otlphttp exporter writes OTLP/JSON (hex ids, int64 as strings, enums as numbers). */
const collectorJson = `{"resourceLogs":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"billing"}}]},
"scopeLogs":[{"scope":{"name":"billing-logger"},"logRecords":[
{"timeUnixNano":"${T0_NANOS + 5_000_000n}","severityNumber":17,"severityText":"Error",
 "traceId":"5B8EFFF798038103D269B633813FC60C","spanId":"EEE19B7EC3C1B174",
 "body":{"stringValue":"invoice failed"},
 "attributes":[{"key":"order_id","value":{"intValue":"45"}},{"key":"amount","value":{"doubleValue":7.25}}]},
{"timeUnixNano":"${T0_NANOS + 6_000_000n}","severityNumber":9,"body":{"stringValue":"invoice sent"},
 "attributes":[{"key":"order_id","value":{"intValue":46}}]}
]}]}]}`;

interface Answer {
  status: number;
  type: string | null;
  retryAfter: string | null;
  body: Buffer;
}

async function post(s: TestServer, path: string, body: Uint8Array | string, headers: Record<string, string>, token?: string | null): Promise<Answer> {
  const r = await s.fetch(path, { method: 'POST', headers, body }, token);
  return { status: r.status, type: r.headers.get('content-type'), retryAfter: r.headers.get('retry-after'), body: Buffer.from(await r.arrayBuffer()) };
}

function jsonOf(a: Answer): Record<string, unknown> {
  return JSON.parse(a.body.toString('utf8')) as Record<string, unknown>;
}

function record(row: Row, field: string): Record<string, unknown> {
  const v = row[field];
  return (Array.isArray(v) ? v[0] : v) as Record<string, unknown>;
}

/** Each engine's rows, to compare at the end. */
const answers = new Map<string, Row[]>();

for (const engine of engines) {
  describe(`OTLP/HTTP logs on ${engine}`, () => {
    let s: TestServer;
    let sourceId: string;
    before(async () => {
      s = await startTestServer(engineEnv(engine));
      sourceId = await createSource(s, SOURCE);
      await createSource(s, 'otel.other');
      await createEndpoint(s, {
        name: 'otel.read',
        query:
          'select timestamp, event_message, severity_number, severity_text, trace_id, span_id, event_name, attributes, resource, scope, metadata ' +
          'from `otel.logs` order by timestamp',
        cache_duration_seconds: 0,
      });
      await createEndpoint(s, { name: 'otel.count', query: 'select count(*) as n from `otel.logs`', cache_duration_seconds: 0 });
    });
    after(() => s.close());

    const count = async () => Number((await rows(s, 'otel.count'))[0]?.n);

    it('stores a protobuf batch and answers an empty ExportLogsServiceResponse in protobuf', async () => {
      const a = await post(s, `/v1/logs?source_name=${SOURCE}`, encodeRequest(sdkRequest), { 'content-type': PROTOBUF });
      assert.equal(a.status, 200, a.body.toString());
      assert.equal(a.type, PROTOBUF);
      assert.equal(a.body.length, 0);
      assert.equal(decodeResponse(a.body).partialSuccess, undefined);
    });

    it("stores the Collector's OTLP/JSON, gzipped, and answers {} in JSON", async () => {
      const a = await post(s, `/v1/logs?source=${sourceId}`, gzipSync(collectorJson), { 'content-type': JSON_TYPE, 'content-encoding': 'gzip' });
      assert.equal(a.status, 200, a.body.toString());
      assert.equal(a.type, JSON_TYPE);
      assert.deepEqual(jsonOf(a), {});
    });

    it('reads every record back with its time, message, severity, ids and attributes', async () => {
      const got = await rows(s, 'otel.read');
      assert.equal(got.length, 5);
      assert.deepEqual(
        got.map((r) => [r.timestamp, r.event_message, r.severity_number, r.severity_text, r.trace_id, r.span_id]),
        [
          [micros(T0_NANOS + 1_000_000n), 'order placed', 9, 'INFO', '0af7651916cd43dd8448eb211c80319c', 'b7ad6b7169203331'],
          [micros(T0_NANOS + 3_000_000n), 'payment declined', 17, 'ERROR', '', ''],
          [micros(T0_NANOS + 4_000_000n), 'checkout.retry', 13, 'WARN', '', ''],
          [micros(T0_NANOS + 5_000_000n), 'invoice failed', 17, 'Error', '5b8efff798038103d269b633813fc60c', 'eee19b7ec3c1b174'],
          [micros(T0_NANOS + 6_000_000n), 'invoice sent', 9, 'INFO', '', ''],
        ],
      );
      assert.deepEqual(
        got.map((r) => record(r, 'attributes').order_id),
        [42, 43, 44, 45, 46],
      );
      assert.equal(record(got[0] as Row, 'attributes').amount, 19.5);
      assert.equal(got[2]?.event_name, 'checkout.retry');
      assert.deepEqual(record(got[0] as Row, 'metadata'), { type: 'otel_log' });
      const scope = record(got[3] as Row, 'scope');
      assert.equal(scope.name, 'billing-logger');
      // The resource's `service.name` under its stored (column-safe) name.
      assert.deepEqual(Object.values(record(got[0] as Row, 'resource')), ['checkout']);
      assert.deepEqual(Object.values(record(got[4] as Row, 'resource')), ['billing']);
      answers.set(engine, got);
    });

    it('is mounted under every ingest prefix, with the source by id header too', async () => {
      const one = (text: string) => encodeRequest({ resourceLogs: [{ scopeLogs: [{ logRecords: [{ body: str(text) }] }] }] });
      const before = await count();
      for (const prefix of ['/logs', '/api/logs', '/api/events']) {
        const a = await post(s, `${prefix}/v1/logs?source_name=${SOURCE}`, one(prefix), { 'content-type': PROTOBUF });
        assert.equal(a.status, 200, `${prefix}: ${a.body.toString()}`);
      }
      for (const header of ['x-source', 'x-collection']) {
        const a = await post(s, '/v1/logs', deflateSync(one(header)), { 'content-type': PROTOBUF, 'content-encoding': 'deflate', [header]: sourceId });
        assert.equal(a.status, 200, `${header}: ${a.body.toString()}`);
      }
      assert.equal(await count(), before + 5);
      // An empty request is a success that stores nothing, in either encoding.
      const empty = await post(s, `/v1/logs?source_name=${SOURCE}`, '', { 'content-type': PROTOBUF });
      assert.deepEqual([empty.status, empty.type, empty.body.length], [200, PROTOBUF, 0]);
      const emptyJson = await post(s, `/v1/logs?source_name=${SOURCE}`, '{"resourceLogs":[]}', { 'content-type': 'application/json; charset=utf-8' });
      assert.deepEqual([emptyJson.status, emptyJson.type, jsonOf(emptyJson)], [200, JSON_TYPE, {}]);
      assert.equal(await count(), before + 5);
    });

    it('stores the good records of a batch with bad ones and says how many it refused', async () => {
      const before = await count();
      const json = `{"resourceLogs":[{"scopeLogs":[{"logRecords":[
        {"body":{"stringValue":"fine"}},
        {"body":{"stringValue":"bad id"},"traceId":"W47/95gDgQPSabYzgT/GDA=="},
        {"body":{"stringValue":"short span"},"spanId":"abcd"}]}]}]}`;
      const a = await post(s, `/v1/logs?source_name=${SOURCE}`, json, { 'content-type': JSON_TYPE });
      assert.equal(a.status, 200);
      const partial = jsonOf(a).partialSuccess as Record<string, unknown>;
      assert.equal(partial.rejectedLogRecords, '2');
      assert.match(
        partial.errorMessage as string,
        /2 of 3 log records were refused: the first, resourceLogs\[0\]\.scopeLogs\[0\]\.logRecords\[1\], because its traceId/,
      );
      const p = await post(
        s,
        `/v1/logs?source_name=${SOURCE}`,
        encodeRequest({ resourceLogs: [{ scopeLogs: [{ logRecords: [{ body: str('ok') }, { traceId: bytesOf('00') }] }] }] }),
        { 'content-type': PROTOBUF },
      );
      assert.equal(p.status, 200);
      assert.equal(decodeResponse(p.body).partialSuccess?.rejectedLogRecords, 1n);
      assert.equal(await count(), before + 2);
    });

    it('answers errors as a google.rpc.Status in the request encoding, storing nothing', async () => {
      const before = await count();
      const cases: [string, Promise<Answer>, number, string][] = [
        ['no token', post(s, `/v1/logs?source_name=${SOURCE}`, encodeRequest(sdkRequest), { 'content-type': PROTOBUF }, null), 401, 'UNAUTHORIZED'],
        ['unknown source', post(s, '/v1/logs?source_name=nope', encodeRequest(sdkRequest), { 'content-type': PROTOBUF }), 404, 'NOT_FOUND'],
        ['no source', post(s, '/v1/logs', encodeRequest(sdkRequest), { 'content-type': PROTOBUF }), 400, 'BAD_REQUEST'],
        ['not protobuf', post(s, `/v1/logs?source_name=${SOURCE}`, Buffer.from([0x0a, 0xff, 0xff, 0x03]), { 'content-type': PROTOBUF }), 400, 'BAD_REQUEST'],
        [
          'corrupt gzip',
          post(s, `/v1/logs?source_name=${SOURCE}`, Buffer.from('not gzip'), { 'content-type': PROTOBUF, 'content-encoding': 'gzip' }),
          400,
          'BAD_REQUEST',
        ],
        [
          'unknown encoding',
          post(s, `/v1/logs?source_name=${SOURCE}`, encodeRequest(sdkRequest), { 'content-type': PROTOBUF, 'content-encoding': 'zstd' }),
          415,
          'UNSUPPORTED_MEDIA_TYPE',
        ],
        ['traces', post(s, `/v1/traces?source_name=${SOURCE}`, encodeRequest(sdkRequest), { 'content-type': PROTOBUF }), 404, 'NOT_FOUND'],
        ['metrics', post(s, `/api/logs/v1/metrics?source_name=${SOURCE}`, encodeRequest(sdkRequest), { 'content-type': PROTOBUF }), 404, 'NOT_FOUND'],
      ];
      for (const [what, answer, status, reason] of cases) {
        const a = await answer;
        assert.equal(a.status, status, `${what}: ${a.body.toString()}`);
        assert.equal(a.type, PROTOBUF, what);
        const st = decodeStatus(a.body);
        assert.equal(st.reason, reason, what);
        assert.ok(st.message.length > 10 && !PATH_OR_STACK.test(st.message), `${what}: ${st.message}`);
      }
      const traces = decodeStatus((await post(s, `/v1/traces?source_name=${SOURCE}`, '', { 'content-type': PROTOBUF })).body);
      assert.match(traces.message, /stores logs only: OTLP traces are not accepted/);

      const json = await post(s, `/v1/logs?source_name=${SOURCE}`, '{"resourceLogs":{}}', { 'content-type': JSON_TYPE });
      assert.equal(json.status, 400);
      assert.equal(json.type, JSON_TYPE);
      const body = jsonOf(json);
      assert.equal(body.code, 3);
      assert.match(body.message as string, /resourceLogs must be an array, got an object/);
      assert.deepEqual(body.details, [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'BAD_REQUEST', domain: 'quarry' }]);

      const text = await post(s, `/v1/logs?source_name=${SOURCE}`, 'hello', { 'content-type': 'text/plain' });
      assert.equal(text.status, 415);
      assert.equal(text.type, JSON_TYPE);
      assert.match(jsonOf(text).message as string, /Content-Type "text\/plain" is not an OTLP encoding: send application\/x-protobuf or application\/json/);
      assert.equal(await count(), before);
    });

    it('answers a browser preflight', async () => {
      const r = await s.fetch(
        '/v1/logs',
        {
          method: 'OPTIONS',
          headers: { origin: 'https://page.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
        },
        null,
      );
      assert.equal(r.status, 204);
      assert.equal(r.headers.get('access-control-allow-origin'), '*');
    });
  });
}

describe('OTLP/HTTP logs: the engines agree', () => {
  it('the same rows on every engine', { skip: engines.length < 2 }, () => {
    const [first, ...others] = [...answers.values()];
    for (const other of others) assert.deepEqual(other, first);
  });
});

describe('OTLP/HTTP limits and overload', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ INGEST_BODY_LIMIT_BYTES: '4096' });
    await createSource(s, SOURCE);
  });
  after(() => s.close());

  it('lists the OTLP routes in the OpenAPI document', async () => {
    const doc = (await (await s.fetch('/api/openapi.json')).json()) as { paths: Record<string, Record<string, { summary?: string }>> };
    assert.match(doc.paths['/v1/logs']?.post?.summary ?? '', /OpenTelemetry logs/);
    assert.match(doc.paths['/api/logs/v1/logs']?.post?.summary ?? '', /OpenTelemetry logs/);
    assert.match(doc.paths['/v1/traces']?.post?.summary ?? '', /refused/);
    assert.equal(doc.paths['/v1/logs']?.options, undefined);
  });

  it('refuses a body past the limit, compressed or not, with 413', async () => {
    const big = encodeRequest({ resourceLogs: [{ scopeLogs: [{ logRecords: [{ body: str('x'.repeat(10_000)) }] }] }] });
    const plain = await post(s, `/v1/logs?source_name=${SOURCE}`, big, { 'content-type': PROTOBUF });
    assert.equal(plain.status, 413);
    assert.equal(decodeStatus(plain.body).reason, 'PAYLOAD_TOO_LARGE');
    const bomb = await post(s, `/v1/logs?source_name=${SOURCE}`, gzipSync(big), { 'content-type': PROTOBUF, 'content-encoding': 'gzip' });
    assert.equal(bomb.status, 413);
    assert.equal(decodeStatus(bomb.body).reason, 'PAYLOAD_TOO_LARGE');
  });

  it('passes an overloaded ingest on as 503 with Retry-After', async () => {
    const app = Fastify().withTypeProvider<TypeBoxTypeProvider>();
    app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
    await app.register(otlpRoutes, {
      bodyLimitBytes: 1 << 20,
      ingest: {
        ingest: async () => {
          throw new QuarryError('OVERLOADED', 'Ingest is saturated; retry after 2 s.', { retryAfter: 2 });
        },
      },
    });
    const r = await app.inject({ method: 'POST', url: '/v1/logs', headers: { 'content-type': PROTOBUF }, payload: Buffer.from(encodeRequest(sdkRequest)) });
    assert.equal(r.statusCode, 503);
    assert.equal(r.headers['retry-after'], '2');
    assert.equal(decodeStatus(r.rawPayload).code, 14);
    await app.close();
  });
});
