/**
 * `/netlify` (Netlify log drains, JSON; Logflare's Logs.Netlify). A log with `timestamp` and
 * `log_type` keeps everything but the timestamp as `metadata`; its message is
 * `<log_type> | <method> | <status_code> | <request_id> | <path>` for a function log,
 * `<log_type> | <method> | <status_code> | <client_ip> | <request_id> | <url> | <user_agent>` for a
 * traffic log, else the log's JSON text. Logflare answers 500 for a `log_type` other than `traffic`
 * and `functions` (deploys, edge functions); Quarry stores those with the JSON message. Netlify's
 * validation request (`{"message": …}`) is stored as Logflare stores it, `metadata.log_type`
 * `validate`.
 */
import { type IntegrationRequest, type RawEvent, bad, bodyObjects, interpolate } from './shared.ts';

const FUNCTION_KEYS = ['log_type', 'method', 'status_code', 'request_id', 'path'];
const TRAFFIC_KEYS = ['log_type', 'method', 'status_code', 'client_ip', 'request_id', 'url', 'user_agent'];

export function netlifyEvents(req: IntegrationRequest): RawEvent[] {
  return bodyObjects(req).map(netlifyEvent);
}

export function netlifyEvent(log: RawEvent, index = 0): RawEvent {
  if (log.timestamp !== undefined && log.log_type !== undefined) {
    const { timestamp, ...metadata } = log;
    return { event_message: netlifyMessage(metadata), metadata, timestamp };
  }
  if (log.message !== undefined) return { event_message: log.message, metadata: { log_type: 'validate' } };
  throw bad(`The Netlify log at index ${index} has neither "timestamp" and "log_type" nor "message".`);
}

function netlifyMessage(log: RawEvent): string {
  for (const keys of [FUNCTION_KEYS, TRAFFIC_KEYS]) {
    if (keys.every((k) => k in log)) return keys.map((k) => interpolate(log[k])).join(' | ');
  }
  return JSON.stringify(log);
}
