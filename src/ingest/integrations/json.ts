/**
 * `/json` (LogLayer's Logflare transport; Logflare's GenericJson): each event is kept whole under
 * `metadata`, and its JSON text is the event message. Unlike Logflare, an event's own `timestamp`
 * is also used as the event's time (Logflare stamps the receive time and keeps it in metadata only).
 */
import { type IntegrationRequest, type RawEvent, bodyObjects } from './shared.ts';

export function genericJsonEvents(req: IntegrationRequest): RawEvent[] {
  return bodyObjects(req).map(genericJsonEvent);
}

export function genericJsonEvent(event: RawEvent): RawEvent {
  const out: RawEvent = { event_message: JSON.stringify(event), metadata: event };
  if (event.timestamp !== undefined) out.timestamp = event.timestamp;
  return out;
}
