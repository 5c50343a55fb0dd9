/**
 * The typed OTLP logs request both decoders produce (protobuf.ts, json.ts): the messages of
 * opentelemetry-proto's `collector/logs/v1` ExportLogsServiceRequest, with the fields Quarry reads.
 * Unset scalars hold their proto3 defaults (0, ''), so "unset" and "zero" are the same thing, as on
 * the wire.
 *
 * A part that could be decoded but cannot be stored (an id of the wrong length, a value nested past
 * the bound of limits.ts) carries a `problem`: the records it covers are refused one by one and counted in
 * the response's partialSuccess, while the rest of the request is stored.
 */

export type AnyValue =
  | { readonly kind: 'string'; readonly value: string }
  | { readonly kind: 'bool'; readonly value: boolean }
  | { readonly kind: 'int'; readonly value: bigint }
  | { readonly kind: 'double'; readonly value: number }
  | { readonly kind: 'bytes'; readonly value: Uint8Array }
  | { readonly kind: 'array'; readonly values: readonly AnyValue[] }
  | { readonly kind: 'kvlist'; readonly values: readonly KeyValue[] }
  /** No value set (an empty AnyValue, or a value left out). */
  | { readonly kind: 'empty' };

export const EMPTY_VALUE: AnyValue = Object.freeze({ kind: 'empty' });

export interface KeyValue {
  key: string;
  value: AnyValue;
}

export interface Resource {
  attributes: KeyValue[];
  droppedAttributesCount: number;
}

export interface InstrumentationScope {
  name: string;
  version: string;
  attributes: KeyValue[];
  droppedAttributesCount: number;
}

export interface LogRecord {
  /** Nanoseconds since the epoch; 0 is unset. */
  timeUnixNano: bigint;
  observedTimeUnixNano: bigint;
  /** SeverityNumber: 0 unspecified, 1–24 TRACE … FATAL4; other values kept as sent. */
  severityNumber: number;
  severityText: string;
  body: AnyValue;
  attributes: KeyValue[];
  droppedAttributesCount: number;
  flags: number;
  /** Lower-case hex of the 16 bytes, '' when unset. */
  traceId: string;
  /** Lower-case hex of the 8 bytes, '' when unset. */
  spanId: string;
  eventName: string;
  /** Why this record cannot be stored, when it cannot. */
  problem?: string;
}

export interface ScopeLogs {
  scope: InstrumentationScope;
  logRecords: LogRecord[];
  schemaUrl: string;
  /** Why no record of this scope can be stored (its attributes), when none can. */
  problem?: string;
}

export interface ResourceLogs {
  resource: Resource;
  scopeLogs: ScopeLogs[];
  schemaUrl: string;
  /** Why no record of this resource can be stored (its attributes), when none can. */
  problem?: string;
}

export interface ExportLogsRequest {
  resourceLogs: ResourceLogs[];
}

export const TRACE_ID_BYTES = 16;
export const SPAN_ID_BYTES = 8;

export function emptyResource(): Resource {
  return { attributes: [], droppedAttributesCount: 0 };
}

export function emptyScope(): InstrumentationScope {
  return { name: '', version: '', attributes: [], droppedAttributesCount: 0 };
}

export function emptyLogRecord(): LogRecord {
  return {
    timeUnixNano: 0n,
    observedTimeUnixNano: 0n,
    severityNumber: 0,
    severityText: '',
    body: EMPTY_VALUE,
    attributes: [],
    droppedAttributesCount: 0,
    flags: 0,
    traceId: '',
    spanId: '',
    eventName: '',
  };
}
