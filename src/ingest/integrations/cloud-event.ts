/**
 * `/cloud-event` (CloudEvents over HTTP). Binary mode: the attributes are the `ce-*` headers and
 * the body is the data (a JSON object, or an array of them). Structured mode
 * (`application/cloudevents+json`, or `application/cloudevents-batch+json` for several): the
 * attributes are the top-level keys and `data` is the data. Each stored event is the data's keys,
 * plus `cloud_event` holding the attributes (header names without `ce-`, `-` as `_`, as Logflare
 * stores them) and `timestamp` from the `time` attribute. Logflare reads binary mode only: a
 * structured request there stores the envelope with an empty `cloud_event`.
 */
import { parseBody } from '../body.ts';
import { type IntegrationRequest, type RawEvent, bad, isObject, mediaType } from './shared.ts';

const STRUCTURED = 'application/cloudevents+json';
const BATCH = 'application/cloudevents-batch+json';

export function cloudEventEvents(req: IntegrationRequest): RawEvent[] {
  const type = mediaType(req.contentType);
  if (type === STRUCTURED || type === BATCH) return structured(req.text, type === BATCH);
  const attributes = headerAttributes(req.headers);
  if (attributes.specversion === undefined) {
    throw bad(
      'A CloudEvents request needs its attributes: send the ce-specversion, ce-id, ce-source and ce-type headers (binary mode), or Content-Type application/cloudevents+json (structured mode).',
    );
  }
  return parseBody(req.text, 'json').events.map((data) => withAttributes(data, attributes));
}

/** The `ce-*` headers, named as Logflare stores them. */
export function headerAttributes(headers: IntegrationRequest['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (!lower.startsWith('ce-') || value === undefined) continue;
    out[lower.slice(3).replaceAll('-', '_')] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

function structured(text: string, batch: boolean): RawEvent[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw bad(`The CloudEvents body is not valid JSON: ${(e as Error).message}.`);
  }
  const envelopes = batch ? value : [value];
  if (!Array.isArray(envelopes)) throw bad('A CloudEvents batch (application/cloudevents-batch+json) must be a JSON array of events.');
  return envelopes.map((envelope, i) => {
    const where = batch ? `The CloudEvent at index ${i}` : 'The CloudEvent';
    if (!isObject(envelope)) throw bad(`${where} is not a JSON object.`);
    const { data, data_base64, ...attributes } = envelope;
    if (attributes.specversion === undefined) throw bad(`${where} has no "specversion" attribute.`);
    const payload: RawEvent = isObject(data) ? data : data === undefined && data_base64 === undefined ? {} : { data: data ?? data_base64 };
    return withAttributes(payload, attributes);
  });
}

function withAttributes(data: RawEvent, attributes: RawEvent): RawEvent {
  const out: RawEvent = { ...data, cloud_event: attributes };
  if (attributes.time !== undefined) out.timestamp = attributes.time;
  return out;
}
