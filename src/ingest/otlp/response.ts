/**
 * What an OTLP/HTTP request is answered with, in the request's own encoding (the spec requires the
 * response's Content-Type to be the request's): an ExportLogsServiceResponse, with `partialSuccess`
 * only when records were refused; and for every 4xx and 5xx a google.rpc.Status whose `message` is
 * Quarry's error message and whose one detail is a google.rpc.ErrorInfo carrying Quarry's stable
 * error code as its `reason` (docs/API.md §4) and "quarry" as its domain. The JSON forms follow
 * proto3's JSON mapping (int64 as a string, an Any as its fields with `@type`).
 */
import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import type { ErrorCode, QuarryError } from '../../errors.ts';

export type OtlpEncoding = 'protobuf' | 'json';

export const OTLP_CONTENT_TYPES: Readonly<Record<OtlpEncoding, string>> = {
  protobuf: 'application/x-protobuf',
  json: 'application/json',
};

/** The encoding a request's Content-Type names; undefined for any other type. */
export function otlpEncoding(contentType: string | undefined): OtlpEncoding | undefined {
  const type = (contentType ?? '').split(';')[0]?.trim().toLowerCase();
  if (type === 'application/x-protobuf' || type === 'application/protobuf') return 'protobuf';
  if (type === 'application/json') return 'json';
  return undefined;
}

export interface PartialSuccess {
  rejected: number;
  message: string;
}

const LEN = WireType.LengthDelimited;
const ERROR_INFO_TYPE = 'type.googleapis.com/google.rpc.ErrorInfo';
const ERROR_DOMAIN = 'quarry';

/** ExportLogsServiceResponse: `partial_success` (1) = ExportLogsPartialSuccess { rejected_log_records (1), error_message (2) }. */
export function exportLogsResponse(encoding: OtlpEncoding, partial?: PartialSuccess): Buffer {
  switch (encoding) {
    case 'protobuf': {
      const w = new BinaryWriter();
      if (partial !== undefined) w.tag(1, LEN).fork().tag(1, WireType.Varint).int64(partial.rejected).tag(2, LEN).string(partial.message).join();
      return Buffer.from(w.finish());
    }
    case 'json': {
      const body = partial === undefined ? {} : { partialSuccess: { rejectedLogRecords: String(partial.rejected), errorMessage: partial.message } };
      return Buffer.from(JSON.stringify(body));
    }
  }
}

/** google.rpc.Status: code (1), message (2), details (3, Any: type_url (1), value (2)); ErrorInfo: reason (1), domain (2). */
export function statusResponse(encoding: OtlpEncoding, error: QuarryError): Buffer {
  const code = grpcCode(error.code);
  switch (encoding) {
    case 'protobuf': {
      const info = new BinaryWriter().tag(1, LEN).string(error.code).tag(2, LEN).string(ERROR_DOMAIN).finish();
      const w = new BinaryWriter().tag(1, WireType.Varint).int32(code).tag(2, LEN).string(error.message);
      w.tag(3, LEN).fork().tag(1, LEN).string(ERROR_INFO_TYPE).tag(2, LEN).bytes(info).join();
      return Buffer.from(w.finish());
    }
    case 'json':
      return Buffer.from(JSON.stringify({ code, message: error.message, details: [{ '@type': ERROR_INFO_TYPE, reason: error.code, domain: ERROR_DOMAIN }] }));
  }
}

/** The gRPC status code nearest each error (OTLP clients go by the HTTP status; this is for people). */
export function grpcCode(code: ErrorCode): number {
  switch (code) {
    case 'BAD_REQUEST':
    case 'PARSE_ERROR':
    case 'QUERY_NOT_ALLOWED':
    case 'INVALID_QUERY':
    case 'QUERY_TOO_COMPLEX':
    case 'RESULT_TOO_LARGE':
    case 'VALIDATION_FAILED':
    case 'UNSUPPORTED_MEDIA_TYPE':
      return 3; // INVALID_ARGUMENT
    case 'QUERY_TIMEOUT':
    case 'REQUEST_TIMEOUT':
      return 4; // DEADLINE_EXCEEDED
    case 'NOT_FOUND':
      return 5;
    case 'CONFLICT':
      return 6; // ALREADY_EXISTS
    case 'FORBIDDEN':
      return 7; // PERMISSION_DENIED
    case 'PAYLOAD_TOO_LARGE':
    case 'INSUFFICIENT_STORAGE':
      return 8; // RESOURCE_EXHAUSTED
    case 'INTERNAL':
      return 13;
    case 'OVERLOADED':
    case 'UNAVAILABLE':
      return 14; // UNAVAILABLE
    case 'UNAUTHORIZED':
      return 16; // UNAUTHENTICATED
  }
}
