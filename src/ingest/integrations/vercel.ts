/**
 * `/vercel` (Vercel log drains: a JSON array, or NDJSON, of log objects; Logflare's Logs.Vercel).
 * The event message is `<source> | <statusCode> | <host> | <path> | <clientIp> | <userAgent>` from
 * the `proxy` object, as Logflare writes it; the whole log object is `metadata`, with
 * `proxy.userAgent` joined into one string; `timestamp` is the log's (unix milliseconds).
 * Where Logflare loses the message, Quarry keeps it: a build log is `build | <message>` (Logflare:
 * `build | ` with the message gone), and a log without `proxy` that has a message is
 * `<source> | <message>` (Logflare: `lambda |  |  |  |  | `). Logflare's parse of Lambda report lines
 * (`parsedLambdaMessage`) is not done.
 */
import { type IntegrationRequest, type RawEvent, bodyObjects, field, interpolate, isObject } from './shared.ts';

export function vercelEvents(req: IntegrationRequest): RawEvent[] {
  return bodyObjects(req).map(vercelEvent);
}

export function vercelEvent(log: RawEvent): RawEvent {
  const source = interpolate(log.source);
  const metadata = joinUserAgent(log);
  const proxy = metadata.proxy;
  let message: string;
  if (isObject(proxy)) {
    const parts = ['statusCode', 'host', 'path', 'clientIp', 'userAgent'].map((k) => interpolate(field(proxy, k)));
    message = [source, ...parts].join(' | ');
  } else {
    message = log.message === undefined || log.message === null ? source : `${source} | ${interpolate(log.message)}`;
  }
  const out: RawEvent = { event_message: message, metadata };
  if (log.timestamp !== undefined) out.timestamp = log.timestamp;
  return out;
}

function joinUserAgent(log: RawEvent): RawEvent {
  const proxy = log.proxy;
  if (!isObject(proxy) || !Array.isArray(proxy.userAgent)) return log;
  return { ...log, proxy: { ...proxy, userAgent: proxy.userAgent.map(interpolate).join(',') } };
}
