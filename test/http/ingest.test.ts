import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { openDuckDb } from '../../src/embedded-db/database.ts';
import { edgeEvent } from '../ingest/fixtures.ts';
import { spawnService } from '../support/process.ts';
import { PUBLIC_TOKEN, startTestServer } from '../support/server.ts';

interface IngestServer {
  url: string;
  sourceId(name: string): string;
  createToken(scopes: string[]): Promise<string>;
  close(): Promise<void>;
}

async function startIngestServer(dataDir: string, env: Record<string, string> = {}): Promise<IngestServer> {
  const s = await startTestServer(env, dataDir);
  const sources = (await (await s.fetch('/api/sources')).json()) as { id: string; name: string }[];
  return {
    url: s.url,
    sourceId: (name) => sources.find((x) => x.name === name)?.id ?? '',
    async createToken(scopes) {
      const r = await s.fetch('/api/access-tokens', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ scopes }),
      });
      return ((await r.json()) as { token: string }).token;
    },
    close: () => s.stop(),
  };
}

const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'quarry-http-ingest-'));
  dirs.push(d);
  return d;
};
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Every stored event of a source, read straight from the database of a stopped server. */
async function storedEvents(dataDir: string, sourceName: string, columns = 'id, event_message'): Promise<Record<string, unknown>[]> {
  const db = await openDuckDb({ path: join(dataDir, 'quarry.duckdb') });
  try {
    const conn = await db.connect();
    const entry = await conn.runAndReadAll('SELECT table_name FROM _quarry_schema WHERE source_name = $n', { n: sourceName });
    const table = entry.getRows()[0]?.[0];
    if (typeof table !== 'string') return [];
    return (await conn.runAndReadAll(`SELECT ${columns} FROM ${table} ORDER BY timestamp, id`)).getRowObjectsJson() as Record<string, unknown>[];
  } finally {
    db.close();
  }
}

function post(
  url: string,
  path: string,
  body: string | Buffer,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: unknown; headers: Headers }> {
  return fetch(url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': PUBLIC_TOKEN, ...headers },
    body,
  }).then(async (r) => ({ status: r.status, json: await r.json(), headers: r.headers }));
}

describe('POST /api/logs', () => {
  let dir: string;
  let server: IngestServer;
  before(async () => {
    dir = tempDir();
    server = await startIngestServer(dir, { INGEST_BODY_LIMIT_BYTES: String(64 * 1024) });
  });

  it('accepts every body form on every route and stores the events', async () => {
    const src = 'postgres.logs';
    const cases: [string, string | Buffer, Record<string, string>][] = [
      ['/api/logs?source_name=postgres.logs', JSON.stringify({ event_message: 'object' }), {}],
      ['/logs?source_name=postgres.logs', JSON.stringify([{ event_message: 'array 1' }, { message: 'array 2' }]), {}],
      [`/api/events?source=${server.sourceId(src)}`, JSON.stringify({ batch: [{ event_message: 'batch' }] }), {}],
      ['/api/logs?source_name=postgres.logs', '{"event_message":"ndjson 1"}\n{"event_message":"ndjson 2"}\n', { 'content-type': 'application/x-ndjson' }],
      ['/api/logs?source_name=postgres.logs', gzipSync(JSON.stringify([{ event_message: 'gzip' }])), { 'content-encoding': 'gzip' }],
      ['/api/logs?source_name=postgres.logs', JSON.stringify({ event_message: 'query token' }), { 'x-api-key': '' }],
    ];
    for (const [path, body, headers] of cases) {
      const p = headers['x-api-key'] === '' ? `${path}&api_key=${PUBLIC_TOKEN}` : path;
      const h = { ...headers };
      if (h['x-api-key'] === '') delete h['x-api-key'];
      const res = await fetch(server.url + p, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(p.includes('api_key') ? {} : { 'x-api-key': PUBLIC_TOKEN }), ...h },
        body,
      });
      assert.equal(res.status, 200, `${p}: ${await res.clone().text()}`);
      assert.deepEqual(await res.json(), { message: 'Logged!' });
    }
    await server.close();
    const messages = (await storedEvents(dir, src)).map((r) => r.event_message).sort();
    assert.deepEqual(messages, ['array 1', 'array 2', 'batch', 'gzip', 'ndjson 1', 'ndjson 2', 'object', 'query token']);
    server = await startIngestServer(dir, { INGEST_BODY_LIMIT_BYTES: String(64 * 1024) });
  });

  it('answers each error with its status and stores nothing from a rejected request', async () => {
    const q = '/api/logs?source_name=gotrue.logs.prod';
    const bad = await post(server.url, q, JSON.stringify([{ event_message: 'ok' }, 'not an event']));
    assert.equal(bad.status, 400);
    assert.match(JSON.stringify(bad.json), /index 1 is not a JSON object/);
    assert.equal((await post(server.url, q, '{"a":')).status, 400);
    assert.equal((await post(server.url, '/api/logs', '{}')).status, 400);
    assert.equal((await post(server.url, q, '{}', { 'x-api-key': 'nope' })).status, 401);
    assert.equal((await fetch(server.url + q, { method: 'POST', body: '{}' })).status, 401);
    const other = await server.createToken([`ingest:source:${server.sourceId('postgres.logs')}`]);
    assert.equal((await post(server.url, q, '{}', { 'x-api-key': other })).status, 403);
    assert.equal((await post(server.url, '/api/logs?source_name=no.such.source', '{}')).status, 404);
    assert.equal((await post(server.url, `/api/logs?source=${crypto.randomUUID()}`, '{}')).status, 404);
    const big = JSON.stringify([{ event_message: 'x'.repeat(70 * 1024) }]);
    const tooLarge = await post(server.url, q, big);
    assert.equal(tooLarge.status, 413);
    assert.equal((tooLarge.json as { error: { code: string } }).error.code, 'PAYLOAD_TOO_LARGE');
    const bomb = gzipSync(Buffer.alloc(200 * 1024, ' '));
    assert.equal((await post(server.url, q, bomb, { 'content-encoding': 'gzip' })).status, 413);
    assert.equal((await post(server.url, q, 'not gzip', { 'content-encoding': 'gzip' })).status, 400);
    const scoped = await server.createToken([`ingest:source:${server.sourceId('gotrue.logs.prod')}`]);
    assert.equal((await post(server.url, q, '{"event_message":"scoped"}', { 'x-api-key': scoped })).status, 200);
    await server.close();
    assert.deepEqual(
      (await storedEvents(dir, 'gotrue.logs.prod')).map((r) => r.event_message),
      ['scoped'],
    );
  });
});

describe('durability', () => {
  it('keeps every acknowledged event after kill -9 right after a 200', async () => {
    const dir = tempDir();
    const service = await spawnService(dir);
    const url = service.url;
    const acknowledged: string[] = [];
    let i = 0;
    // Several clients at once so acknowledgements come from group commits.
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        for (let r = 0; r < 5; r++) {
          const events = Array.from({ length: 50 }, () => ({ ...edgeEvent(i), id: `ack-${i++}` }));
          const res = await post(url, '/api/logs?source_name=cloudflare.logs.prod', JSON.stringify(events));
          assert.equal(res.status, 200);
          for (const e of events) acknowledged.push(e.id);
        }
      }),
    );
    await service.kill9();
    const stored = new Set((await storedEvents(dir, 'cloudflare.logs.prod', 'id')).map((r) => r.id));
    const missing = acknowledged.filter((id) => !stored.has(id));
    assert.equal(acknowledged.length, 1000);
    assert.deepEqual(missing, []);
  });
});
