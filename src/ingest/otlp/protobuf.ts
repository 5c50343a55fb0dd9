/**
 * A binary protobuf ExportLogsServiceRequest → the typed request (model.ts). The wire format is read
 * with @bufbuild/protobuf's BinaryReader (varints, fixed widths, UTF-8, skipping unknown fields);
 * the messages are decoded here by the field numbers of opentelemetry-proto (collector/logs/v1,
 * logs/v1, common/v1, resource/v1), so no `.proto` file or generated code is needed, and nesting is
 * bounded where it is read: an AnyValue past `maxValueDepth` is skipped by its length, not
 * decoded, and refuses its record.
 *
 * As protobuf parsers do, unknown fields (and known ones with an unexpected wire type) are skipped,
 * a singular field given twice keeps its last value (messages merge), and invalid UTF-8 in a string
 * becomes U+FFFD. Bytes that are not protobuf at all (a truncated field, a length running past its
 * message, a bad tag) refuse the whole request with a 400 naming where.
 */
import { BinaryReader, WireType } from '@bufbuild/protobuf/wire';
import { QuarryError } from '../../errors.ts';
import { FieldPath } from './field-path.ts';
import {
  type AnyValue,
  EMPTY_VALUE,
  type ExportLogsRequest,
  type InstrumentationScope,
  type KeyValue,
  type LogRecord,
  type Resource,
  type ResourceLogs,
  SPAN_ID_BYTES,
  type ScopeLogs,
  TRACE_ID_BYTES,
  emptyLogRecord,
  emptyResource,
  emptyScope,
} from './model.ts';
import { type OtlpLimits, defaultOtlpLimits, tooDeep, tooManyRecords } from './limits.ts';

/** A fault in the bytes found by this decoder (the reader throws its own for the rest). */
class MalformedError extends Error {}

interface State {
  readonly r: BinaryReader;
  readonly limits: OtlpLimits;
  readonly path: FieldPath;
  records: number;
  /** The first problem found in the part being decoded (see `capture`). */
  problem: string | undefined;
}

/** Handles one field of a message; false when it is not one the message reads (then it is skipped). */
type FieldReader = (no: number, wireType: WireType) => boolean;

const LEN = WireType.LengthDelimited;

export function decodeLogsProtobuf(bytes: Uint8Array, limits: OtlpLimits = defaultOtlpLimits): ExportLogsRequest {
  const s: State = { r: new BinaryReader(bytes), limits, path: new FieldPath(), records: 0, problem: undefined };
  const request: ExportLogsRequest = { resourceLogs: [] };
  try {
    fields(s, bytes.length, (no, wt) => {
      if (no !== 1 || wt !== LEN) return false;
      request.resourceLogs.push(nested(s, 'resource_logs', request.resourceLogs.length, resourceLogs));
      return true;
    });
  } catch (e) {
    throw badRequest(e, s.path);
  }
  return request;
}

function badRequest(e: unknown, path: FieldPath): unknown {
  if (e instanceof QuarryError) return e;
  // The reader throws plain Errors and RangeErrors about the bytes; anything else is a fault of ours.
  if (!(e instanceof MalformedError || e instanceof RangeError || (e instanceof Error && e.constructor === Error))) return e;
  const where = path.toString();
  const what = e.message === 'premature EOF' || e.message.startsWith('Offset is outside') ? 'the data ends in the middle of a field' : e.message;
  return new QuarryError(
    'BAD_REQUEST',
    `The body is not a valid protobuf ExportLogsServiceRequest: ${what} (${where === '' ? 'at the top level' : `in ${where}`}). Nothing was stored.`,
  );
}

/** Reads the fields of a message ending at `end`, skipping those `read` does not take. */
function fields(s: State, end: number, read: FieldReader): void {
  const r = s.r;
  while (r.pos < end) {
    const [no, wt] = r.tag();
    if (!read(no, wt)) r.skip(wt, no);
    if (r.pos > end) throw new MalformedError('a field runs past the end of its message');
  }
}

/** A length-delimited message at the reader's position, decoded by `decode`. */
function nested<T>(s: State, name: string, index: number, decode: (s: State, end: number) => T): T {
  const r = s.r;
  const length = r.uint32();
  const end = r.pos + length;
  if (end > r.len) throw new MalformedError(`a length of ${length} bytes runs past the end of the body`);
  s.path.push(name, index);
  const value = decode(s, end);
  s.path.pop();
  return value;
}

/** Runs `decode` and returns the first problem it found, leaving the enclosing part's as it was. */
function capture(s: State, decode: () => void): string | undefined {
  const outer = s.problem;
  s.problem = undefined;
  decode();
  const found = s.problem;
  s.problem = outer;
  return found;
}

function resourceLogs(s: State, end: number): ResourceLogs {
  const out: ResourceLogs = { resource: emptyResource(), scopeLogs: [], schemaUrl: '' };
  const problem = capture(s, () =>
    fields(s, end, (no, wt) => {
      if (wt !== LEN) return false;
      switch (no) {
        case 1:
          nested(s, 'resource', -1, (s, e) => resource(s, e, out.resource));
          return true;
        case 2:
          out.scopeLogs.push(nested(s, 'scope_logs', out.scopeLogs.length, scopeLogs));
          return true;
        case 3:
          out.schemaUrl = s.r.string();
          return true;
        default:
          return false;
      }
    }),
  );
  if (problem !== undefined) out.problem = problem;
  return out;
}

function resource(s: State, end: number, into: Resource): void {
  fields(s, end, (no, wt) => {
    if (no === 1 && wt === LEN) {
      into.attributes.push(nested(s, 'attributes', into.attributes.length, attribute));
      return true;
    }
    if (no === 2 && wt === WireType.Varint) {
      into.droppedAttributesCount = s.r.uint32();
      return true;
    }
    return false;
  });
}

function scopeLogs(s: State, end: number): ScopeLogs {
  const out: ScopeLogs = { scope: emptyScope(), logRecords: [], schemaUrl: '' };
  let scopeProblem: string | undefined;
  fields(s, end, (no, wt) => {
    if (wt !== LEN) return false;
    switch (no) {
      case 1:
        {
          const problem = capture(s, () => nested(s, 'scope', -1, (s, e) => scope(s, e, out.scope)));
          scopeProblem ??= problem;
        }
        return true;
      case 2:
        out.logRecords.push(nested(s, 'log_records', out.logRecords.length, logRecord));
        return true;
      case 3:
        out.schemaUrl = s.r.string();
        return true;
      default:
        return false;
    }
  });
  if (scopeProblem !== undefined) out.problem = scopeProblem;
  return out;
}

function scope(s: State, end: number, into: InstrumentationScope): void {
  fields(s, end, (no, wt) => {
    if (no === 4 && wt === WireType.Varint) {
      into.droppedAttributesCount = s.r.uint32();
      return true;
    }
    if (wt !== LEN) return false;
    switch (no) {
      case 1:
        into.name = s.r.string();
        return true;
      case 2:
        into.version = s.r.string();
        return true;
      case 3:
        into.attributes.push(nested(s, 'attributes', into.attributes.length, attribute));
        return true;
      default:
        return false;
    }
  });
}

function logRecord(s: State, end: number): LogRecord {
  if (++s.records > s.limits.maxLogRecords) throw tooManyRecords(s.limits);
  const r = s.r;
  const out = emptyLogRecord();
  const problem = capture(s, () =>
    fields(s, end, (no, wt) => {
      switch (no) {
        case 1:
          if (wt !== WireType.Bit64) return false;
          out.timeUnixNano = BigInt(r.fixed64());
          return true;
        case 11:
          if (wt !== WireType.Bit64) return false;
          out.observedTimeUnixNano = BigInt(r.fixed64());
          return true;
        case 2:
          if (wt !== WireType.Varint) return false;
          out.severityNumber = r.int32();
          return true;
        case 3:
          if (wt !== LEN) return false;
          out.severityText = r.string();
          return true;
        case 5:
          if (wt !== LEN) return false;
          out.body = nested(s, 'body', -1, (s, e) => anyValue(s, e, 1));
          return true;
        case 6:
          if (wt !== LEN) return false;
          out.attributes.push(nested(s, 'attributes', out.attributes.length, attribute));
          return true;
        case 7:
          if (wt !== WireType.Varint) return false;
          out.droppedAttributesCount = r.uint32();
          return true;
        case 8:
          if (wt !== WireType.Bit32) return false;
          out.flags = r.fixed32();
          return true;
        case 9:
          if (wt !== LEN) return false;
          out.traceId = idHex(s, r.bytes(), TRACE_ID_BYTES, 'traceId');
          return true;
        case 10:
          if (wt !== LEN) return false;
          out.spanId = idHex(s, r.bytes(), SPAN_ID_BYTES, 'spanId');
          return true;
        case 12:
          if (wt !== LEN) return false;
          out.eventName = r.string();
          return true;
        default:
          return false;
      }
    }),
  );
  if (problem !== undefined) out.problem = problem;
  return out;
}

/** An id's lower-case hex; '' when unset; a problem when it is not `size` bytes long. */
function idHex(s: State, bytes: Uint8Array, size: number, name: string): string {
  if (bytes.length === 0) return '';
  if (bytes.length !== size) {
    s.problem ??= `its ${name} is ${bytes.length} bytes long, not ${size}`;
    return '';
  }
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

/** A KeyValue that is an attribute (its value at level 1). */
function attribute(s: State, end: number): KeyValue {
  return keyValue(s, end, 1);
}

function keyValue(s: State, end: number, depth: number): KeyValue {
  const out: KeyValue = { key: '', value: EMPTY_VALUE };
  fields(s, end, (no, wt) => {
    if (wt !== LEN) return false;
    if (no === 1) {
      out.key = s.r.string();
      return true;
    }
    if (no === 2) {
      out.value = nested(s, 'value', -1, (s, e) => anyValue(s, e, depth));
      return true;
    }
    return false;
  });
  return out;
}

/** An AnyValue at nesting `depth`: past the bound it is skipped whole and its record refused. */
function anyValue(s: State, end: number, depth: number): AnyValue {
  if (depth > s.limits.maxValueDepth) {
    s.problem ??= tooDeep(s.limits);
    s.r.pos = end;
    return EMPTY_VALUE;
  }
  const r = s.r;
  let value: AnyValue = EMPTY_VALUE;
  fields(s, end, (no, wt) => {
    switch (no) {
      case 1:
        if (wt !== LEN) return false;
        value = { kind: 'string', value: r.string() };
        return true;
      case 2:
        if (wt !== WireType.Varint) return false;
        value = { kind: 'bool', value: r.bool() };
        return true;
      case 3:
        if (wt !== WireType.Varint) return false;
        value = { kind: 'int', value: BigInt(r.int64()) };
        return true;
      case 4:
        if (wt !== WireType.Bit64) return false;
        value = { kind: 'double', value: r.double() };
        return true;
      case 5:
        if (wt !== LEN) return false;
        value = nested(s, 'array_value', -1, (s, e) => arrayValue(s, e, depth));
        return true;
      case 6:
        if (wt !== LEN) return false;
        value = nested(s, 'kvlist_value', -1, (s, e) => kvlistValue(s, e, depth));
        return true;
      case 7:
        if (wt !== LEN) return false;
        value = { kind: 'bytes', value: r.bytes() };
        return true;
      default:
        return false;
    }
  });
  return value;
}

function arrayValue(s: State, end: number, depth: number): AnyValue {
  const values: AnyValue[] = [];
  fields(s, end, (no, wt) => {
    if (no !== 1 || wt !== LEN) return false;
    values.push(nested(s, 'values', values.length, (s, e) => anyValue(s, e, depth + 1)));
    return true;
  });
  return { kind: 'array', values };
}

function kvlistValue(s: State, end: number, depth: number): AnyValue {
  const values: KeyValue[] = [];
  fields(s, end, (no, wt) => {
    if (no !== 1 || wt !== LEN) return false;
    values.push(nested(s, 'values', values.length, (s, e) => keyValue(s, e, depth + 1)));
    return true;
  });
  return { kind: 'kvlist', values };
}
