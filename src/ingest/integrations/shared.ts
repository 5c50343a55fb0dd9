/** What every integration mapping shares: its input, the 400 it throws, and small JSON helpers. */
import { QuarryError } from '../../errors.ts';
import { type RawEvent, bodyFormat, parseBody } from '../body.ts';

export type { RawEvent };

/** One request as an integration mapping sees it: the decoded body text and the headers. */
export interface IntegrationRequest {
  text: string;
  contentType: string | undefined;
  headers: Readonly<Record<string, string | string[] | undefined>>;
}

export function bad(message: string): QuarryError {
  return new QuarryError('BAD_REQUEST', message);
}

export function isObject(value: unknown): value is RawEvent {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The media type of a Content-Type, lower-cased, without parameters. */
export function mediaType(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

/** The body's JSON objects, as generic ingest reads them (object, array, {"batch": [...]}, NDJSON). */
export function bodyObjects(req: IntegrationRequest): RawEvent[] {
  return parseBody(req.text, bodyFormat(req.contentType)).events;
}

/** Elixir's string interpolation of a value: nothing for nil, text as is, numbers as written. */
export function interpolate(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

export function field(value: unknown, key: string): unknown {
  return isObject(value) ? value[key] : undefined;
}
