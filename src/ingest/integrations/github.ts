/**
 * `/github` (GitHub webhooks; Logflare's Logs.Github): one event per delivery. The message is
 * `<repository.full_name> | <sender.login> | <action>`; the payload is `metadata`, without every key
 * ending in `_url` (at any depth, as Logflare drops them: GitHub sends dozens of API links). Besides
 * `application/json`, GitHub's `application/x-www-form-urlencoded` form (`payload=<json>`) is read.
 */
import { type IntegrationRequest, type RawEvent, bad, field, interpolate, isObject, mediaType } from './shared.ts';

export function githubEvents(req: IntegrationRequest): RawEvent[] {
  const payload = readPayload(req);
  const message = [field(payload.repository, 'full_name'), field(payload.sender, 'login'), payload.action].map(interpolate).join(' | ');
  return [{ event_message: message, metadata: dropUrlKeys(payload) as RawEvent }];
}

function readPayload(req: IntegrationRequest): RawEvent {
  let text = req.text;
  if (mediaType(req.contentType) === 'application/x-www-form-urlencoded') {
    const form = new URLSearchParams(text).get('payload');
    if (form === null) throw bad('The GitHub webhook form body has no "payload" field.');
    text = form;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw bad(`The GitHub webhook payload is not valid JSON: ${(e as Error).message}.`);
  }
  if (!isObject(value)) throw bad('The GitHub webhook payload must be a JSON object.');
  return value;
}

export function dropUrlKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(dropUrlKeys);
  if (!isObject(value)) return value;
  const out: RawEvent = {};
  for (const [k, v] of Object.entries(value)) if (!k.endsWith('_url')) out[k] = dropUrlKeys(v);
  return out;
}
