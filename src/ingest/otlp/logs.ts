/**
 * One OTLP logs request body → the events to store and what the answer says about refused records:
 * nothing when every record is stored, a partialSuccess naming the first refused record when some
 * are, and a 400 (nothing stored) when every record of a non-empty request is refused.
 */
import { QuarryError } from '../../errors.ts';
import type { RawEvent } from '../body.ts';
import { decodeLogsJson } from './json.ts';
import { type OtlpLimits, defaultOtlpLimits } from './limits.ts';
import { logEvents } from './log-events.ts';
import type { ExportLogsRequest } from './model.ts';
import { decodeLogsProtobuf } from './protobuf.ts';
import type { OtlpEncoding, PartialSuccess } from './response.ts';

export interface LogsIntake {
  events: RawEvent[];
  partial?: PartialSuccess;
}

export function decodeLogs(body: Uint8Array, encoding: OtlpEncoding, limits: OtlpLimits = defaultOtlpLimits): ExportLogsRequest {
  switch (encoding) {
    case 'protobuf':
      return decodeLogsProtobuf(body, limits);
    case 'json':
      return decodeLogsJson(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8'), limits);
  }
}

/** `receivedMicros`: when the request arrived, the time of records that carry none. */
export function readLogs(body: Uint8Array, encoding: OtlpEncoding, receivedMicros: bigint, limits: OtlpLimits = defaultOtlpLimits): LogsIntake {
  const result = logEvents(decodeLogs(body, encoding, limits), receivedMicros);
  if (result.rejection === undefined) return { events: result.events };
  const why = `${result.rejected} of ${result.records} log records were refused: the first, ${result.rejection.where}, because ${result.rejection.problem}`;
  if (result.events.length === 0) throw new QuarryError('BAD_REQUEST', `${why}. Nothing was stored.`);
  return { events: result.events, partial: { rejected: result.rejected, message: `${why}. The other records were stored.` } };
}
