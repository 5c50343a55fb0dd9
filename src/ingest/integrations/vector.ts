/**
 * `/vector` (Vector's HTTP sink, JSON array or NDJSON; Logflare's Logs.Vector): `message` becomes
 * the event message (else the JSON text of the rest), `timestamp` the event's time, everything else
 * goes under `metadata`, and a `project` is also kept at the top level (Supabase clusters on it).
 * Logflare answers 500 for an event without `timestamp`; here it gets the receive time.
 */
import { type IntegrationRequest, type RawEvent, bodyObjects } from './shared.ts';

export function vectorEvents(req: IntegrationRequest): RawEvent[] {
  return bodyObjects(req).map(vectorEvent);
}

export function vectorEvent(event: RawEvent): RawEvent {
  const { message, timestamp, ...rest } = event;
  const hasMessage = 'message' in event;
  const out: RawEvent = { event_message: hasMessage ? message : JSON.stringify(rest), metadata: rest };
  if (timestamp !== undefined && timestamp !== null) out.timestamp = timestamp;
  if (hasMessage && event.project !== undefined) out.project = event.project;
  return out;
}
