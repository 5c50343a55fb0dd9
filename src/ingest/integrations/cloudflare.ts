/**
 * `/cloudflare` (Cloudflare Logpush's HTTP destination): NDJSON, one Logpush record per line, sent
 * as `text/plain; charset=utf-8`, which Logflare (and so Quarry) reads as NDJSON. Records are stored
 * as they are, as Logflare's Raw processor does.
 */
import { bodyFormat, parseBody } from '../body.ts';
import { type IntegrationRequest, type RawEvent, mediaType } from './shared.ts';

export function cloudflareEvents(req: IntegrationRequest): RawEvent[] {
  const format = mediaType(req.contentType) === 'text/plain' ? 'ndjson' : bodyFormat(req.contentType);
  return parseBody(req.text, format).events;
}
