/**
 * The OTLP messages as @bufbuild/protobuf reflection descriptors, built in code from the field
 * numbers of opentelemetry-proto (no `.proto` file): the tests encode requests and decode responses
 * with the library's own reflection, independently of Quarry's hand-written decoders.
 */
import { type DescMessage, type MessageInitShape, create, createFileRegistry, fromBinary, toBinary, toJson } from '@bufbuild/protobuf';
import { FieldDescriptorProto_Label, FieldDescriptorProto_Type, FileDescriptorProtoSchema } from '@bufbuild/protobuf/wkt';

const T = FieldDescriptorProto_Type;
const PKG = 'otlp.test';

function field(name: string, number: number, type: FieldDescriptorProto_Type, options: { message?: string; repeated?: boolean; oneof?: number } = {}) {
  return {
    name,
    number,
    type,
    label: options.repeated ? FieldDescriptorProto_Label.REPEATED : FieldDescriptorProto_Label.OPTIONAL,
    jsonName: name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()),
    ...(options.message === undefined ? {} : { typeName: `.${PKG}.${options.message}` }),
    ...(options.oneof === undefined ? {} : { oneofIndex: options.oneof }),
  };
}

const M = T.MESSAGE;
const file = create(FileDescriptorProtoSchema, {
  name: 'otlp-test.proto',
  package: PKG,
  syntax: 'proto3',
  messageType: [
    {
      name: 'AnyValue',
      oneofDecl: [{ name: 'value' }],
      field: [
        field('string_value', 1, T.STRING, { oneof: 0 }),
        field('bool_value', 2, T.BOOL, { oneof: 0 }),
        field('int_value', 3, T.INT64, { oneof: 0 }),
        field('double_value', 4, T.DOUBLE, { oneof: 0 }),
        field('array_value', 5, M, { message: 'ArrayValue', oneof: 0 }),
        field('kvlist_value', 6, M, { message: 'KeyValueList', oneof: 0 }),
        field('bytes_value', 7, T.BYTES, { oneof: 0 }),
      ],
    },
    { name: 'ArrayValue', field: [field('values', 1, M, { message: 'AnyValue', repeated: true })] },
    { name: 'KeyValueList', field: [field('values', 1, M, { message: 'KeyValue', repeated: true })] },
    { name: 'KeyValue', field: [field('key', 1, T.STRING), field('value', 2, M, { message: 'AnyValue' })] },
    {
      name: 'InstrumentationScope',
      field: [
        field('name', 1, T.STRING),
        field('version', 2, T.STRING),
        field('attributes', 3, M, { message: 'KeyValue', repeated: true }),
        field('dropped_attributes_count', 4, T.UINT32),
      ],
    },
    { name: 'Resource', field: [field('attributes', 1, M, { message: 'KeyValue', repeated: true }), field('dropped_attributes_count', 2, T.UINT32)] },
    {
      name: 'LogRecord',
      field: [
        field('time_unix_nano', 1, T.FIXED64),
        field('observed_time_unix_nano', 11, T.FIXED64),
        field('severity_number', 2, T.INT32),
        field('severity_text', 3, T.STRING),
        field('body', 5, M, { message: 'AnyValue' }),
        field('attributes', 6, M, { message: 'KeyValue', repeated: true }),
        field('dropped_attributes_count', 7, T.UINT32),
        field('flags', 8, T.FIXED32),
        field('trace_id', 9, T.BYTES),
        field('span_id', 10, T.BYTES),
        field('event_name', 12, T.STRING),
      ],
    },
    {
      name: 'ScopeLogs',
      field: [
        field('scope', 1, M, { message: 'InstrumentationScope' }),
        field('log_records', 2, M, { message: 'LogRecord', repeated: true }),
        field('schema_url', 3, T.STRING),
      ],
    },
    {
      name: 'ResourceLogs',
      field: [
        field('resource', 1, M, { message: 'Resource' }),
        field('scope_logs', 2, M, { message: 'ScopeLogs', repeated: true }),
        field('schema_url', 3, T.STRING),
      ],
    },
    { name: 'ExportLogsServiceRequest', field: [field('resource_logs', 1, M, { message: 'ResourceLogs', repeated: true })] },
    { name: 'ExportLogsPartialSuccess', field: [field('rejected_log_records', 1, T.INT64), field('error_message', 2, T.STRING)] },
    { name: 'ExportLogsServiceResponse', field: [field('partial_success', 1, M, { message: 'ExportLogsPartialSuccess' })] },
    { name: 'Any', field: [field('type_url', 1, T.STRING), field('value', 2, T.BYTES)] },
    { name: 'Status', field: [field('code', 1, T.INT32), field('message', 2, T.STRING), field('details', 3, M, { message: 'Any', repeated: true })] },
    { name: 'ErrorInfo', field: [field('reason', 1, T.STRING), field('domain', 2, T.STRING)] },
  ],
});

const registry = createFileRegistry(file, () => undefined);

function message(name: string): DescMessage {
  const desc = registry.getMessage(`${PKG}.${name}`);
  if (desc === undefined) throw new Error(`no message ${name}`);
  return desc;
}

export const ExportLogsServiceRequest = message('ExportLogsServiceRequest');
export const ExportLogsServiceResponse = message('ExportLogsServiceResponse');
export const Status = message('Status');
export const ErrorInfo = message('ErrorInfo');

/** The fields of a request as the library's message init takes them (camelCase, bigint, Uint8Array). */
export type RequestInit = MessageInitShape<typeof ExportLogsServiceRequest>;

export function encodeRequest(init: RequestInit): Uint8Array {
  return toBinary(ExportLogsServiceRequest, create(ExportLogsServiceRequest, init));
}

/**
 * The same request in OTLP/JSON: the library's proto3 JSON, with trace and span ids turned from
 * base64 into hex as OTLP wants them.
 */
export function requestJson(init: RequestInit): string {
  const json = toJson(ExportLogsServiceRequest, create(ExportLogsServiceRequest, init));
  return JSON.stringify(json, (key, value: unknown) =>
    (key === 'traceId' || key === 'spanId') && typeof value === 'string' ? Buffer.from(value, 'base64').toString('hex') : value,
  );
}

export interface DecodedResponse {
  partialSuccess?: { rejectedLogRecords: bigint; errorMessage: string };
}

export function decodeResponse(bytes: Uint8Array): DecodedResponse {
  return fromBinary(ExportLogsServiceResponse, bytes) as DecodedResponse;
}

export interface DecodedStatus {
  code: number;
  message: string;
  details: { typeUrl: string; value: Uint8Array }[];
  reason?: string;
  domain?: string;
}

/** A google.rpc.Status, with its first detail read as an ErrorInfo. */
export function decodeStatus(bytes: Uint8Array): DecodedStatus {
  const status = fromBinary(Status, bytes) as unknown as DecodedStatus;
  const first = status.details[0];
  if (first !== undefined) {
    const info = fromBinary(ErrorInfo, first.value) as unknown as { reason: string; domain: string };
    return { ...status, reason: info.reason, domain: info.domain };
  }
  return status;
}

/** `hex` as bytes. */
export function bytesOf(hex: string): Uint8Array {
  return Uint8Array.from(Buffer.from(hex, 'hex'));
}
