/**
 * OTLP/HTTP answers (src/ingest/otlp/response.ts), read back with the library's reflection: the
 * ExportLogsServiceResponse with and without partialSuccess, and google.rpc.Status with Quarry's
 * error code in an ErrorInfo, in protobuf and in JSON.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { QuarryError, errorCodes, statusOf } from '../../src/errors.ts';
import { exportLogsResponse, grpcCode, otlpEncoding, statusResponse } from '../../src/ingest/otlp/response.ts';
import { decodeResponse, decodeStatus } from './otlp-messages.ts';

describe('OTLP/HTTP responses', () => {
  it('tells the two encodings apart by Content-Type', () => {
    assert.equal(otlpEncoding('application/x-protobuf'), 'protobuf');
    assert.equal(otlpEncoding('Application/X-Protobuf; charset=binary'), 'protobuf');
    assert.equal(otlpEncoding('application/protobuf'), 'protobuf');
    assert.equal(otlpEncoding('application/json; charset=utf-8'), 'json');
    assert.equal(otlpEncoding('application/x-ndjson'), undefined);
    assert.equal(otlpEncoding('text/plain'), undefined);
    assert.equal(otlpEncoding(undefined), undefined);
  });

  it('answers a full success with an empty message, and a partial one with its counts', () => {
    assert.equal(exportLogsResponse('protobuf').length, 0);
    assert.deepEqual(decodeResponse(exportLogsResponse('protobuf')).partialSuccess, undefined);
    assert.equal(exportLogsResponse('json').toString(), '{}');
    const partial = { rejected: 3, message: '3 of 5 log records were refused: …' };
    assert.deepEqual(decodeResponse(exportLogsResponse('protobuf', partial)).partialSuccess, {
      $typeName: 'otlp.test.ExportLogsPartialSuccess',
      rejectedLogRecords: 3n,
      errorMessage: '3 of 5 log records were refused: …',
    });
    assert.deepEqual(JSON.parse(exportLogsResponse('json', partial).toString()), {
      partialSuccess: { rejectedLogRecords: '3', errorMessage: '3 of 5 log records were refused: …' },
    });
  });

  it('answers errors with a google.rpc.Status naming the code', () => {
    const error = new QuarryError('BAD_REQUEST', 'The body is not valid JSON.');
    const status = decodeStatus(statusResponse('protobuf', error));
    assert.deepEqual(
      [status.code, status.message, status.details[0]?.typeUrl, status.reason, status.domain],
      [3, 'The body is not valid JSON.', 'type.googleapis.com/google.rpc.ErrorInfo', 'BAD_REQUEST', 'quarry'],
    );
    assert.deepEqual(JSON.parse(statusResponse('json', new QuarryError('UNAUTHORIZED', 'No token.')).toString()), {
      code: 16,
      message: 'No token.',
      details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'UNAUTHORIZED', domain: 'quarry' }],
    });
  });

  it('gives every error code a gRPC code that agrees with its HTTP status', () => {
    const retryable = new Set([14]);
    for (const code of errorCodes) {
      const grpc = grpcCode(code);
      assert.ok(Number.isInteger(grpc) && grpc > 0 && grpc <= 16, code);
      // 503s are the only ones a client should retry, in either vocabulary.
      assert.equal(retryable.has(grpc), statusOf(code) === 503, code);
    }
  });
});
