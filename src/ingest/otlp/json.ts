/**
 * An OTLP/JSON ExportLogsServiceRequest → the typed request (model.ts), by OTLP's JSON mapping:
 * proto3's JSON with trace and span ids as hex. Read leniently, as protobuf's JSON parsers read:
 * field names in lowerCamelCase or as in the .proto (`timeUnixNano`, `time_unix_nano`), 64-bit
 * integers as strings or numbers, the severity as a number or its enum name, `null` as unset, and
 * unknown fields ignored (OTLP requires it). A value of the wrong type refuses the request with a
 * 400 naming the field; an id that is not hex of the right length refuses only its record.
 */
import { QuarryError } from '../../errors.ts';
import { FieldPath } from './field-path.ts';
import { type OtlpLimits, defaultOtlpLimits, tooDeep, tooManyRecords } from './limits.ts';
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

type Obj = { [key: string]: unknown };

/** A value of the wrong type; the message names where. */
class ShapeError extends Error {}

interface State {
  readonly limits: OtlpLimits;
  readonly path: FieldPath;
  records: number;
  problem: string | undefined;
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;

const SEVERITY_NAMES: ReadonlyMap<string, number> = new Map([
  ['SEVERITY_NUMBER_UNSPECIFIED', 0],
  ...['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'FATAL'].flatMap((name, i) =>
    ['', '2', '3', '4'].map((n, j) => [`SEVERITY_NUMBER_${name}${n}`, i * 4 + j + 1] as const),
  ),
]);

type ValueKind = 'string' | 'bool' | 'int' | 'double' | 'array' | 'kvlist' | 'bytes';

const VALUE_KEYS: ReadonlyMap<string, ValueKind> = new Map([
  ['stringValue', 'string'],
  ['string_value', 'string'],
  ['boolValue', 'bool'],
  ['bool_value', 'bool'],
  ['intValue', 'int'],
  ['int_value', 'int'],
  ['doubleValue', 'double'],
  ['double_value', 'double'],
  ['arrayValue', 'array'],
  ['array_value', 'array'],
  ['kvlistValue', 'kvlist'],
  ['kvlist_value', 'kvlist'],
  ['bytesValue', 'bytes'],
  ['bytes_value', 'bytes'],
]);

export function decodeLogsJson(text: string, limits: OtlpLimits = defaultOtlpLimits): ExportLogsRequest {
  if (text.trim() === '') return { resourceLogs: [] };
  let root: unknown;
  try {
    root = JSON.parse(text);
  } catch (e) {
    throw new QuarryError('BAD_REQUEST', `The body is not valid JSON (${(e as Error).message}). Nothing was stored.`);
  }
  const s: State = { limits, path: new FieldPath(), records: 0, problem: undefined };
  try {
    const request = object(s, root);
    return { resourceLogs: request === undefined ? [] : list(s, request, 'resourceLogs', 'resource_logs', resourceLogs) };
  } catch (e) {
    if (e instanceof ShapeError) {
      throw new QuarryError('BAD_REQUEST', `The body is not a valid OTLP/JSON ExportLogsServiceRequest: ${e.message}. Nothing was stored.`);
    }
    throw e;
  }
}

/** An own field by its JSON name or its .proto name; null counts as unset. */
function field(o: Obj, json: string, proto: string): unknown {
  const v = Object.hasOwn(o, json) ? o[json] : Object.hasOwn(o, proto) ? o[proto] : undefined;
  return v === null ? undefined : v;
}

function wrong(s: State, expected: string, got: unknown): ShapeError {
  const where = s.path.toString();
  return new ShapeError(`${where === '' ? 'the body' : where} must be ${expected}, got ${describe(got)}`);
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return `a string (${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)})`;
  if (typeof value === 'object') return 'an object';
  return `a ${typeof value}`;
}

/** The message at `value`, undefined when unset. */
function object(s: State, value: unknown): Obj | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) throw wrong(s, 'an object', value);
  return value as Obj;
}

/** A repeated message field, each element decoded by `decode`. */
function list<T>(s: State, o: Obj, json: string, proto: string, decode: (s: State, element: Obj | undefined) => T): T[] {
  const v = field(o, json, proto);
  if (v === undefined) return [];
  s.path.push(json);
  if (!Array.isArray(v)) throw wrong(s, 'an array', v);
  s.path.pop();
  const out: T[] = [];
  for (let i = 0; i < v.length; i++) {
    s.path.push(json, i);
    out.push(decode(s, object(s, v[i])));
    s.path.pop();
  }
  return out;
}

/** A scalar field read by `read`, which may throw `wrong` with the path set to the field. */
function scalar<T>(s: State, o: Obj, json: string, proto: string, unset: T, read: (s: State, v: unknown) => T): T {
  const v = field(o, json, proto);
  if (v === undefined) return unset;
  s.path.push(json);
  const out = read(s, v);
  s.path.pop();
  return out;
}

function string(s: State, v: unknown): string {
  if (typeof v !== 'string') throw wrong(s, 'a string', v);
  return v;
}

function integer(s: State, v: unknown, min: bigint, max: bigint): bigint {
  let n: bigint | undefined;
  if (typeof v === 'number' && Number.isInteger(v)) n = BigInt(v);
  else if (typeof v === 'string' && /^-?\d{1,20}$/.test(v)) n = BigInt(v);
  if (n === undefined) throw wrong(s, 'an integer (a number or a string of digits)', v);
  if (n < min || n > max) throw wrong(s, `an integer from ${min} to ${max}`, v);
  return n;
}

function fixed64(s: State, v: unknown): bigint {
  return integer(s, v, 0n, UINT64_MAX);
}

function int64(s: State, v: unknown): bigint {
  return integer(s, v, INT64_MIN, INT64_MAX);
}

function uint32(s: State, v: unknown): number {
  return Number(integer(s, v, 0n, 4294967295n));
}

function severityNumber(s: State, v: unknown): number {
  if (typeof v === 'string' && !/^-?\d+$/.test(v)) {
    const n = SEVERITY_NAMES.get(v);
    if (n === undefined) throw wrong(s, 'a severity number (0–24) or its name (SEVERITY_NUMBER_INFO, …)', v);
    return n;
  }
  return Number(integer(s, v, -2147483648n, 2147483647n));
}

function double(s: State, v: unknown): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'string') {
    if (v === 'NaN') return Number.NaN;
    if (v === 'Infinity') return Number.POSITIVE_INFINITY;
    if (v === '-Infinity') return Number.NEGATIVE_INFINITY;
    if (/^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(v)) return Number(v);
  }
  throw wrong(s, 'a number', v);
}

function bool(s: State, v: unknown): boolean {
  if (typeof v !== 'boolean') throw wrong(s, 'true or false', v);
  return v;
}

function base64(s: State, v: unknown): Uint8Array {
  if (typeof v !== 'string' || !/^[A-Za-z0-9+/_-]*={0,2}$/.test(v) || v.replace(/=+$/, '').length % 4 === 1) {
    throw wrong(s, 'base64 text', v);
  }
  return Buffer.from(v, 'base64');
}

/** An id as lower-case hex; '' when unset; a problem (refusing the record) when not `size` bytes of hex. */
function id(size: number, name: string) {
  return (s: State, v: unknown): string => {
    const text = string(s, v);
    if (text === '') return '';
    if (text.length !== size * 2 || !/^[0-9a-fA-F]*$/.test(text)) {
      s.problem ??= `its ${name} is not ${size} bytes written as ${size * 2} hex digits (got ${describe(text)})`;
      return '';
    }
    return text.toLowerCase();
  };
}

function capture(s: State, decode: () => void): string | undefined {
  const outer = s.problem;
  s.problem = undefined;
  decode();
  const found = s.problem;
  s.problem = outer;
  return found;
}

function resourceLogs(s: State, o: Obj | undefined): ResourceLogs {
  const out: ResourceLogs = { resource: emptyResource(), scopeLogs: [], schemaUrl: '' };
  if (o === undefined) return out;
  const problem = capture(s, () => {
    const r = scalar(s, o, 'resource', 'resource', undefined, (s, v) => object(s, v));
    if (r !== undefined) {
      s.path.push('resource');
      resource(s, r, out.resource);
      s.path.pop();
    }
  });
  if (problem !== undefined) out.problem = problem;
  out.scopeLogs = list(s, o, 'scopeLogs', 'scope_logs', scopeLogs);
  out.schemaUrl = scalar(s, o, 'schemaUrl', 'schema_url', '', string);
  return out;
}

function resource(s: State, o: Obj, into: Resource): void {
  into.attributes = list(s, o, 'attributes', 'attributes', attribute);
  into.droppedAttributesCount = scalar(s, o, 'droppedAttributesCount', 'dropped_attributes_count', 0, uint32);
}

function scopeLogs(s: State, o: Obj | undefined): ScopeLogs {
  const out: ScopeLogs = { scope: emptyScope(), logRecords: [], schemaUrl: '' };
  if (o === undefined) return out;
  const problem = capture(s, () => {
    const sc = scalar(s, o, 'scope', 'scope', undefined, (s, v) => object(s, v));
    if (sc !== undefined) {
      s.path.push('scope');
      scope(s, sc, out.scope);
      s.path.pop();
    }
  });
  if (problem !== undefined) out.problem = problem;
  out.logRecords = list(s, o, 'logRecords', 'log_records', logRecord);
  out.schemaUrl = scalar(s, o, 'schemaUrl', 'schema_url', '', string);
  return out;
}

function scope(s: State, o: Obj, into: InstrumentationScope): void {
  into.name = scalar(s, o, 'name', 'name', '', string);
  into.version = scalar(s, o, 'version', 'version', '', string);
  into.attributes = list(s, o, 'attributes', 'attributes', attribute);
  into.droppedAttributesCount = scalar(s, o, 'droppedAttributesCount', 'dropped_attributes_count', 0, uint32);
}

const traceId = id(TRACE_ID_BYTES, 'traceId');
const spanId = id(SPAN_ID_BYTES, 'spanId');

function logRecord(s: State, o: Obj | undefined): LogRecord {
  if (++s.records > s.limits.maxLogRecords) throw tooManyRecords(s.limits);
  const out = emptyLogRecord();
  if (o === undefined) return out;
  const problem = capture(s, () => {
    out.timeUnixNano = scalar(s, o, 'timeUnixNano', 'time_unix_nano', 0n, fixed64);
    out.observedTimeUnixNano = scalar(s, o, 'observedTimeUnixNano', 'observed_time_unix_nano', 0n, fixed64);
    out.severityNumber = scalar(s, o, 'severityNumber', 'severity_number', 0, severityNumber);
    out.severityText = scalar(s, o, 'severityText', 'severity_text', '', string);
    out.body = scalar(s, o, 'body', 'body', EMPTY_VALUE, (s, v) => anyValue(s, v, 1));
    out.attributes = list(s, o, 'attributes', 'attributes', attribute);
    out.droppedAttributesCount = scalar(s, o, 'droppedAttributesCount', 'dropped_attributes_count', 0, uint32);
    out.flags = scalar(s, o, 'flags', 'flags', 0, uint32);
    out.traceId = scalar(s, o, 'traceId', 'trace_id', '', traceId);
    out.spanId = scalar(s, o, 'spanId', 'span_id', '', spanId);
    out.eventName = scalar(s, o, 'eventName', 'event_name', '', string);
  });
  if (problem !== undefined) out.problem = problem;
  return out;
}

function attribute(s: State, o: Obj | undefined): KeyValue {
  return keyValue(s, o, 1);
}

function keyValue(s: State, o: Obj | undefined, depth: number): KeyValue {
  if (o === undefined) return { key: '', value: EMPTY_VALUE };
  return {
    key: scalar(s, o, 'key', 'key', '', string),
    value: scalar(s, o, 'value', 'value', EMPTY_VALUE, (s, v) => anyValue(s, v, depth)),
  };
}

/** An AnyValue at nesting `depth`: past the bound it is not read, and its record is refused. */
function anyValue(s: State, v: unknown, depth: number): AnyValue {
  const o = object(s, v);
  if (o === undefined) return EMPTY_VALUE;
  if (depth > s.limits.maxValueDepth) {
    s.problem ??= tooDeep(s.limits);
    return EMPTY_VALUE;
  }
  let value: AnyValue = EMPTY_VALUE;
  let chosen: ValueKind | undefined;
  for (const key of Object.keys(o)) {
    const kind = VALUE_KEYS.get(key);
    const x = o[key];
    if (kind === undefined || x === null) continue;
    if (chosen !== undefined && chosen !== kind) throw wrong(s, 'one value (an AnyValue sets one of its fields)', o);
    chosen = kind;
    s.path.push(key);
    value = oneValue(s, kind, x, depth);
    s.path.pop();
  }
  return value;
}

function oneValue(s: State, kind: ValueKind, v: unknown, depth: number): AnyValue {
  switch (kind) {
    case 'string':
      return { kind, value: string(s, v) };
    case 'bool':
      return { kind, value: bool(s, v) };
    case 'int':
      return { kind, value: int64(s, v) };
    case 'double':
      return { kind, value: double(s, v) };
    case 'bytes':
      return { kind, value: base64(s, v) };
    case 'array': {
      const o = object(s, v);
      return { kind, values: o === undefined ? [] : list(s, o, 'values', 'values', (s, e) => anyValue(s, e, depth + 1)) };
    }
    case 'kvlist': {
      const o = object(s, v);
      return { kind, values: o === undefined ? [] : list(s, o, 'values', 'values', (s, e) => keyValue(s, e, depth + 1)) };
    }
  }
}
