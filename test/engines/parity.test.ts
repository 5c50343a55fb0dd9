/**
 * Engine parity over HTTP: every behaviour of the query API a client can observe (docs/API.md §4:
 * response formats, value encoding, parameter binding, row and byte caps, errors, time limits,
 * X-Query-Warnings) asked of a real service on each engine, with the same events sent through the
 * ingest API. Each case checks the documented answer on every engine, then the engines' answers are
 * compared with each other: status, Content-Type, framing, X-Query-Warnings, X-Cache, Retry-After,
 * and the body (its bytes; with object members in key order where the record member order has a
 * case of its own; for errors an engine reports, status and code; RESULT_TOO_LARGE's message with
 * its figures left out). Differences docs/SQL.md lists are asserted per engine instead.
 *
 * One service per engine for the whole file, with a small response cap and time limit so that
 * RESULT_TOO_LARGE and QUERY_TIMEOUT are reached quickly. The cases are in parity-cases.ts; a case
 * that fails names an engine defect.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type EngineName, engineEnv, engines } from '../support/engines.ts';
import { type TestServer, startTestServer } from '../support/server.ts';
import {
  AWKWARD_EVENTS,
  type Answer,
  BULK_EVENTS,
  CASES,
  ENDPOINTS,
  canonicalBody,
  LATE_EVENTS,
  LATE_SOURCE,
  MANY_EVENTS,
  MANY_SOURCE,
  type ParityCase,
  type ParityRequest,
  SOURCE,
} from './parity-cases.ts';

/** 5,000 rows of 1 KB pass it; every other case's result stays well under it. */
const RESPONSE_CAP = '64KiB';
/** Counted from the request's arrival; every case but the slow one answers well within it. */
const TIMEOUT_MS = '2000';

const JSON_HEADERS = { 'content-type': 'application/json' };

async function post(s: TestServer, path: string, body: string): Promise<void> {
  const r = await s.fetch(path, { method: 'POST', headers: JSON_HEADERS, body });
  const text = await r.text();
  assert.ok(r.status === 200 || r.status === 201, `POST ${path}: ${r.status} ${text.slice(0, 500)}`);
}

async function send(s: TestServer, req: ParityRequest): Promise<Answer> {
  const qs = [new URLSearchParams(req.params ?? {}).toString(), req.query ?? ''].filter((x) => x !== '').join('&');
  const path = `/api/endpoints/query/${encodeURIComponent(req.endpoint)}${qs ? `?${qs}` : ''}`;
  const init: RequestInit = { method: req.method ?? 'GET', headers: { ...req.headers } };
  if (req.body !== undefined) {
    init.headers = { ...JSON_HEADERS, ...req.headers };
    init.body = JSON.stringify(req.body);
  }
  const r = await s.fetch(path, init);
  const text = await r.text();
  const answer: Answer = {
    status: r.status,
    contentType: r.headers.get('content-type'),
    warnings: r.headers.get('x-query-warnings'),
    retryAfter: r.headers.get('retry-after'),
    cache: r.headers.get('x-cache'),
    framing: r.headers.get('transfer-encoding') === 'chunked' ? 'chunked' : r.headers.has('content-length') ? 'length' : 'none',
    text,
  };
  if (answer.contentType?.startsWith('application/json')) answer.json = JSON.parse(text);
  return answer;
}

/** Each case's answer per engine, compared once every engine has run. */
const answers = new Map<string, Map<EngineName, Answer>>();

for (const engine of engines) {
  describe(`query API on ${engine}`, () => {
    let s: TestServer;

    before(async () => {
      s = await startTestServer({ ...engineEnv(engine), QUERY_MAX_RESPONSE_BYTES: RESPONSE_CAP, QUERY_TIMEOUT_MS: TIMEOUT_MS });
      await post(s, '/api/sources', JSON.stringify({ name: SOURCE }));
      await post(s, '/api/sources', JSON.stringify({ name: LATE_SOURCE }));
      await post(s, '/api/sources', JSON.stringify({ name: MANY_SOURCE }));
      // Saved while its source has no field: a column no event carried is accepted (docs/SQL.md).
      await post(s, '/api/endpoints', JSON.stringify(ENDPOINTS.late));
      await post(s, `/api/logs?source_name=${SOURCE}`, AWKWARD_EVENTS);
      await post(s, `/api/logs?source_name=${SOURCE}`, JSON.stringify(BULK_EVENTS));
      await post(s, `/api/logs?source_name=${LATE_SOURCE}`, JSON.stringify(LATE_EVENTS));
      await post(s, `/api/logs?source_name=${MANY_SOURCE}`, JSON.stringify(MANY_EVENTS));
      for (const [key, endpoint] of Object.entries(ENDPOINTS)) {
        if (key !== 'late') await post(s, '/api/endpoints', JSON.stringify(endpoint));
      }
    });
    after(() => s?.close());

    for (const c of CASES) {
      test(c.name, async () => {
        const a = await send(s, c.request);
        if (!answers.has(c.name)) answers.set(c.name, new Map());
        answers.get(c.name)?.set(engine, a);
        c.check(a, engine);
      });
    }
  });
}

/** The part of an answer every engine must give alike (see `Sameness`). */
function comparable(c: ParityCase, a: Answer): unknown {
  const head = { status: a.status, contentType: a.contentType, framing: a.framing, warnings: a.warnings, cache: a.cache, retryAfter: a.retryAfter };
  switch (c.same) {
    case 'bytes':
      return { ...head, text: a.text };
    case 'canonical':
      return { ...head, text: canonicalBody(a) };
    case 'error':
    case 'error-loose': {
      const error = (a.json as { error?: { code?: string; status?: number; message?: string } } | undefined)?.error;
      if (!error) return { ...head, text: a.text };
      const message = c.same === 'error-loose' ? error.message?.replace(/\d[\d,.]*/g, '#') : undefined;
      return { ...head, code: error.code, errorStatus: error.status, message };
    }
    case 'documented':
      return undefined;
  }
}

describe('query API: the engines agree', () => {
  for (const c of CASES) {
    const skip = engines.length < 2 ? 'one engine available' : c.same === 'documented' ? 'a documented difference, asserted per engine' : false;
    test(c.name, { skip }, () => {
      const byEngine = answers.get(c.name);
      assert.ok(byEngine && byEngine.size === engines.length, 'the case ran on every engine');
      const [first, ...others] = engines;
      const expected = comparable(c, byEngine.get(first as EngineName) as Answer);
      for (const other of others) {
        assert.deepEqual(comparable(c, byEngine.get(other) as Answer), expected, `${other} differs from ${first}`);
      }
    });
  }
});
