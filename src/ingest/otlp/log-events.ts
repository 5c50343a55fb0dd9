/**
 * The typed logs request → one event per LogRecord, shaped as Logflare stores OTLP logs (its
 * `Logs.OtelLog`: `metadata.type` "otel_log", `resource` and `attributes` as objects, `scope` with
 * its name, version and attributes, `body`, `severity_number`, `severity_text`, `trace_id` and
 * `span_id` as lower-case hex, '' when unset), with these differences (docs/INGEST.md,
 * "OpenTelemetry (OTLP/HTTP)"):
 * - `timestamp`: the record's time, else its observed time, else the time the request arrived (a
 *   zero time is unset, never 1970);
 * - `event_message`: a string body, else the event name, else the body as JSON text;
 * - the severity number and text fill each other (severity.ts);
 * - `event_name` is kept when set;
 * - a record that cannot be stored (a malformed id, a value nested too deep) is left out and
 *   counted, where Logflare would store it mangled or fail the request.
 */
import { jsonText } from '../../storage/json-text.ts';
import type { JsonObject, JsonValue } from '../../storage/event.ts';
import { formatTimestamp } from '../../time.ts';
import type { RawEvent } from '../body.ts';
import { jsonOf, objectOf } from './any-value.ts';
import type { ExportLogsRequest, InstrumentationScope, LogRecord } from './model.ts';
import { fillSeverity } from './severity.ts';

export interface LogEvents {
  events: RawEvent[];
  /** Log records in the request. */
  records: number;
  /** Log records left out. */
  rejected: number;
  /** Where the first record left out is, and why it was. */
  rejection?: Rejection;
}

export interface Rejection {
  /** `resourceLogs[0].scopeLogs[1].logRecords[2]` (or the resource or scope that refused it). */
  where: string;
  problem: string;
}

const NANOS_PER_MICRO = 1000n;

/** `receivedMicros`: when the request arrived, the timestamp of records that carry no time. */
export function logEvents(request: ExportLogsRequest, receivedMicros: bigint): LogEvents {
  const out: LogEvents = { events: [], records: 0, rejected: 0 };
  request.resourceLogs.forEach((rl, r) => {
    const resource = objectOf(rl.resource.attributes);
    rl.scopeLogs.forEach((sl, s) => {
      const scope = scopeObject(sl.scope);
      const shared: Rejection | undefined =
        rl.problem !== undefined
          ? { where: `resourceLogs[${r}].resource`, problem: rl.problem }
          : sl.problem !== undefined
            ? { where: `resourceLogs[${r}].scopeLogs[${s}].scope`, problem: sl.problem }
            : undefined;
      sl.logRecords.forEach((record, i) => {
        out.records++;
        const refused: Rejection | undefined =
          shared ?? (record.problem === undefined ? undefined : { where: `resourceLogs[${r}].scopeLogs[${s}].logRecords[${i}]`, problem: record.problem });
        if (refused !== undefined) {
          out.rejected++;
          out.rejection ??= refused;
          return;
        }
        out.events.push(logEvent(record, resource, scope, receivedMicros));
      });
    });
  });
  return out;
}

function scopeObject(scope: InstrumentationScope): JsonObject {
  return { name: scope.name, version: scope.version, attributes: objectOf(scope.attributes) };
}

function logEvent(record: LogRecord, resource: JsonObject, scope: JsonObject, receivedMicros: bigint): RawEvent {
  const body = jsonOf(record.body);
  const severity = fillSeverity(record.severityNumber, record.severityText);
  const event: RawEvent = {
    timestamp: formatTimestamp(timestampMicros(record, receivedMicros)),
    event_message: eventMessage(record, body),
    metadata: { type: 'otel_log' },
    resource,
    scope,
    attributes: objectOf(record.attributes),
    body,
    severity_number: severity.number,
    severity_text: severity.text,
    trace_id: record.traceId,
    span_id: record.spanId,
  };
  if (record.eventName !== '') event.event_name = record.eventName;
  return event;
}

function timestampMicros(record: LogRecord, receivedMicros: bigint): bigint {
  const nanos = record.timeUnixNano > 0n ? record.timeUnixNano : record.observedTimeUnixNano;
  return nanos > 0n ? nanos / NANOS_PER_MICRO : receivedMicros;
}

function eventMessage(record: LogRecord, body: JsonValue): string | null {
  if (record.body.kind === 'string') return record.body.value;
  if (record.eventName !== '') return record.eventName;
  return body === null ? null : jsonText(body);
}
