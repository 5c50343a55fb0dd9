/**
 * Helpers for the contract acceptance tests (docs/API.md is the source of truth for every
 * assertion here).
 */
import assert from 'node:assert/strict';
import { PATH_OR_STACK } from '../support/disclosure.ts';
import type { TestServer } from '../support/server.ts';

export const json = { 'content-type': 'application/json' };

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  body: unknown;
}

/** fetch through the test server and read the body as JSON when it is JSON. */
export async function call(
  s: TestServer,
  method: string,
  path: string,
  options: { body?: unknown; raw?: string | Buffer; headers?: Record<string, string>; token?: string | null } = {},
): Promise<Answer> {
  const init: RequestInit = { method, headers: { ...options.headers } };
  if (options.body !== undefined) {
    init.headers = { ...json, ...options.headers };
    init.body = JSON.stringify(options.body);
  } else if (options.raw !== undefined) {
    init.headers = { ...json, ...options.headers };
    init.body = options.raw;
  }
  const r = await s.fetch(path, init, options.token);
  const text = await r.text();
  let body: unknown = null;
  try {
    body = text === '' ? null : JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: r.status, headers: r.headers, text, body };
}

/**
 * The contract's error shape: a real status and exactly
 * `{"error": {"message": <string>, "code": <code>, "status": <status>}}` (a 422 may add `fields`).
 */
export function assertError(a: Answer, status: number, code: string, message?: RegExp): { message: string; code: string } {
  assert.equal(a.status, status, `expected ${status} ${code}, got ${a.status}: ${a.text.slice(0, 500)}`);
  const body = a.body as { error?: { message?: unknown; code?: unknown; status?: unknown } };
  assert.ok(body && typeof body === 'object' && body.error && typeof body.error === 'object', `error envelope: ${a.text.slice(0, 500)}`);
  assert.deepEqual(Object.keys(body).sort(), ['error'], `only "error" at the top: ${a.text.slice(0, 300)}`);
  const keys = Object.keys(body.error)
    .filter((k) => k !== 'fields')
    .sort();
  assert.deepEqual(keys, ['code', 'message', 'status'], `error keys: ${a.text.slice(0, 300)}`);
  assert.equal(typeof body.error.message, 'string');
  assert.ok((body.error.message as string).length > 0, 'a human readable message');
  assert.equal(body.error.code, code, a.text.slice(0, 500));
  assert.equal(body.error.status, status);
  if (message) assert.match(body.error.message as string, message);
  // Never a stack trace or a source path.
  assert.doesNotMatch(a.text, PATH_OR_STACK);
  return body.error as { message: string; code: string };
}

export function result(a: Answer): Record<string, unknown>[] {
  assert.equal(a.status, 200, a.text.slice(0, 500));
  const body = a.body as { result?: unknown };
  assert.deepEqual(Object.keys(body as object), ['result'], `success envelope is {"result": [...]}: ${a.text.slice(0, 200)}`);
  assert.ok(Array.isArray(body.result));
  return body.result as Record<string, unknown>[];
}

/** Runs an endpoint by GET with `params` in the query string. */
export function run(
  s: TestServer,
  idOrName: string,
  params: Record<string, string> = {},
  options: { headers?: Record<string, string>; token?: string | null; prefix?: string } = {},
): Promise<Answer> {
  const qs = new URLSearchParams(params).toString();
  const path = `${options.prefix ?? '/api/endpoints/query'}/${encodeURIComponent(idOrName)}${qs ? `?${qs}` : ''}`;
  return call(s, 'GET', path, { headers: options.headers ?? {}, token: options.token });
}

/** Runs an endpoint by POST with a JSON body (and optional query string). */
export function runPost(
  s: TestServer,
  idOrName: string,
  body: Record<string, unknown>,
  params: Record<string, string> = {},
  options: { headers?: Record<string, string>; token?: string | null } = {},
): Promise<Answer> {
  const qs = new URLSearchParams(params).toString();
  return call(s, 'POST', `/api/endpoints/query/${encodeURIComponent(idOrName)}${qs ? `?${qs}` : ''}`, {
    body,
    headers: options.headers ?? {},
    token: options.token,
  });
}

export async function ingestAs(s: TestServer, source: string, events: unknown, token?: string | null): Promise<Answer> {
  return call(s, 'POST', `/api/logs?source_name=${encodeURIComponent(source)}`, { body: events, token });
}

export async function mustIngest(s: TestServer, source: string, events: unknown): Promise<void> {
  const a = await ingestAs(s, source, events);
  assert.equal(a.status, 200, `ingest into ${source}: ${a.text.slice(0, 300)}`);
  assert.deepEqual(a.body, { message: 'Logged!' });
}

export async function newEndpoint(s: TestServer, input: Record<string, unknown>): Promise<Record<string, unknown> & { id: string; name: string }> {
  const a = await call(s, 'POST', '/api/endpoints', { body: input });
  assert.equal(a.status, 201, `create endpoint: ${a.text.slice(0, 500)}`);
  return a.body as Record<string, unknown> & { id: string; name: string };
}

export async function newSource(s: TestServer, name: string): Promise<string> {
  const a = await call(s, 'POST', '/api/sources', { body: { name } });
  assert.equal(a.status, 201, `create source: ${a.text.slice(0, 300)}`);
  return (a.body as { id: string }).id;
}

export async function newToken(s: TestServer, scopes: string[]): Promise<{ id: string; value: string }> {
  const a = await call(s, 'POST', '/api/access-tokens', { body: { scopes, description: 'contract' } });
  assert.equal(a.status, 201, `create token: ${a.text.slice(0, 300)}`);
  const b = a.body as { id: string; token?: string; value?: string };
  const value = b.token ?? b.value;
  assert.ok(value);
  return { id: b.id, value };
}

export async function sourceIds(s: TestServer): Promise<Map<string, string>> {
  const a = await call(s, 'GET', '/api/sources');
  return new Map((a.body as { id: string; name: string }[]).map((x) => [x.name, x.id]));
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export const SUPABASE_SOURCES = [
  'cloudflare.logs.prod',
  'postgres.logs',
  'deno-relay-logs',
  'deno-subhosting-events',
  'gotrue.logs.prod',
  'realtime.logs.prod',
  'storage.logs.prod.2',
  'postgREST.logs.prod',
  'pgbouncer.logs.prod',
];
