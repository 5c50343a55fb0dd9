/**
 * Helpers for the HTTP-level endpoint tests: ingest through the ingest API, run endpoints, manage
 * them. Everything goes over real HTTP to a server started with startTestServer().
 */
import assert from 'node:assert/strict';
import type { TestServer } from '../support/server.ts';

export type Row = Record<string, unknown>;

export interface QueryResponse {
  status: number;
  headers: Headers;
  rows: Row[];
  error?: { message: string; code: string; status: number; fields?: Record<string, string[]> };
}

const json = { 'content-type': 'application/json' };

/** Ingests `events` into the source named `source`; fails the test unless the API says Logged!. */
export async function ingest(s: TestServer, source: string, events: readonly Row[]): Promise<void> {
  const r = await s.fetch(`/api/logs?source_name=${encodeURIComponent(source)}`, {
    method: 'POST',
    headers: json,
    body: JSON.stringify(events),
  });
  const text = await r.text();
  assert.equal(r.status, 200, `ingest into ${source}: ${text}`);
}

/** Posts raw JSON text into `source` (so keys such as `__proto__` stay keys); the status and body. */
export async function postText(s: TestServer, source: string, text: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const r = await s.fetch(`/api/logs?source_name=${encodeURIComponent(source)}`, { method: 'POST', headers: json, body: text });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}

export interface QueryOptions {
  method?: 'GET' | 'POST';
  /** POST only: the JSON body. */
  body?: Row;
  headers?: Record<string, string>;
  /** Default: the private token; null sends none. */
  token?: string | null;
  /** Default `/api/endpoints/query`. */
  prefix?: string;
}

/** Runs an endpoint with `params` in the query string. */
export async function query(s: TestServer, idOrName: string, params: Record<string, string> = {}, options: QueryOptions = {}): Promise<QueryResponse> {
  const qs = new URLSearchParams(params).toString();
  const path = `${options.prefix ?? '/api/endpoints/query'}/${encodeURIComponent(idOrName)}${qs ? `?${qs}` : ''}`;
  const init: RequestInit = { method: options.method ?? 'GET', headers: { ...options.headers } };
  if (options.body !== undefined) {
    init.headers = { ...json, ...options.headers };
    init.body = JSON.stringify(options.body);
  }
  const r = await s.fetch(path, init, options.token === undefined ? undefined : options.token);
  const body = (await r.json()) as { result?: Row[]; error?: QueryResponse['error'] };
  const out: QueryResponse = { status: r.status, headers: r.headers, rows: body.result ?? [] };
  if (body.error) out.error = body.error;
  return out;
}

/** Runs an endpoint and fails the test unless it answers 200; returns the rows. */
export async function rows(s: TestServer, idOrName: string, params: Record<string, string> = {}, options: QueryOptions = {}): Promise<Row[]> {
  const r = await query(s, idOrName, params, options);
  assert.equal(r.status, 200, `${idOrName} ${JSON.stringify(params)}: ${JSON.stringify(r.error)}`);
  return r.rows;
}

export interface EndpointView {
  id: string;
  name: string;
  description: string | null;
  query: string;
  language: string;
  sandboxable: boolean;
  max_limit: number;
  cache_duration_seconds: number;
  proactive_requerying_seconds: number;
  enable_auth: boolean;
  redact_pii: boolean;
  labels: string | null;
  created_at: string;
  updated_at: string;
}

export async function manage(
  s: TestServer,
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
  path: string,
  body?: unknown,
  token?: string | null,
): Promise<{ status: number; body: unknown }> {
  const init: RequestInit = { method };
  if (body !== undefined) {
    init.headers = json;
    init.body = JSON.stringify(body);
  }
  const r = await s.fetch(path, init, token);
  const text = await r.text();
  return { status: r.status, body: text === '' ? null : (JSON.parse(text) as unknown) };
}

/** Creates an endpoint; fails the test unless the API answers 201. */
export async function createEndpoint(s: TestServer, input: Row): Promise<EndpointView> {
  const r = await manage(s, 'POST', '/api/endpoints', input);
  assert.equal(r.status, 201, `create endpoint: ${JSON.stringify(r.body)}`);
  return r.body as EndpointView;
}

/** Creates a source; returns its id. */
export async function createSource(s: TestServer, name: string): Promise<string> {
  const r = await manage(s, 'POST', '/api/sources', { name });
  assert.equal(r.status, 201, `create source: ${JSON.stringify(r.body)}`);
  return (r.body as { id: string }).id;
}

/** Creates an access token with the given scopes; returns its value. */
export async function createToken(s: TestServer, scopes: string[]): Promise<string> {
  const r = await manage(s, 'POST', '/api/access-tokens', { scopes, description: 'test' });
  assert.equal(r.status, 201, `create token: ${JSON.stringify(r.body)}`);
  const b = r.body as { token?: string; value?: string };
  const value = b.token ?? b.value;
  assert.ok(value, `token value in ${JSON.stringify(r.body)}`);
  return value;
}

/** ISO-8601 UTC with milliseconds, as Studio sends. */
export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** Unix microseconds, as results encode TIMESTAMP. */
export function micros(ms: number): number {
  return ms * 1000;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
