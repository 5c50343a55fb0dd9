import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { brotliCompressSync, constants, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { createEndpoint, createSource, manage, rows } from '../endpoints/http-support.ts';
import { PRIVATE_TOKEN, type TestServer, startTestServer } from '../support/server.ts';

const SOURCE = 'encoded.events';
const LIMIT = 64 * 1024;

type Encoder = (body: Buffer) => Buffer;

/** Brotli's default quality (11) takes seconds over the bombs below. */
const fastBrotli = { params: { [constants.BROTLI_PARAM_QUALITY]: 4 } };

/** Each Content-Encoding value a client may send, with how it compresses. */
const encoders: [name: string, header: string, encode: Encoder][] = [
  ['gzip', 'gzip', (b) => gzipSync(b)],
  ['x-gzip', 'x-gzip', (b) => gzipSync(b)],
  ['deflate (zlib)', 'deflate', (b) => deflateSync(b)],
  ['deflate (raw)', 'deflate', (b) => deflateRawSync(b)],
  ['br', 'br', (b) => brotliCompressSync(b, fastBrotli)],
  ['BR, upper case', 'BR', (b) => brotliCompressSync(b, fastBrotli)],
];

interface Answer {
  status: number;
  error?: { code: string; message: string };
}

async function post(s: TestServer, path: string, body: Buffer, headers: Record<string, string>, method = 'POST'): Promise<Answer> {
  const res = await s.fetch(path, { method, headers: { 'content-type': 'application/json', ...headers }, body });
  const text = await res.text();
  const json = text === '' ? {} : (JSON.parse(text) as { error?: Answer['error'] });
  return { status: res.status, ...(json.error ? { error: json.error } : {}) };
}

const ingestPath = `/api/logs?source_name=${SOURCE}`;

/**
 * Sends `chunks` as a chunked body (no Content-Length), pausing between them, or stops after them
 * without finishing the request when `abort`; the status, or 0 when aborted.
 */
function sendChunked(url: string, path: string, encoding: string, chunks: Buffer[], abort = false): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': encoding, 'x-api-key': PRIVATE_TOKEN },
    });
    req.on('response', (res) => {
      let text = '';
      res.on('data', (c: Buffer) => {
        text += c.toString('utf8');
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', (e) => (abort ? resolve({ status: 0, text: String(e) }) : reject(e)));
    const write = (i: number): void => {
      if (i === chunks.length) {
        if (abort) {
          req.destroy();
          resolve({ status: 0, text: 'aborted' });
        } else req.end();
        return;
      }
      req.write(chunks[i] as Buffer);
      setTimeout(() => write(i + 1), 20);
    };
    write(0);
  });
}

describe('Content-Encoding on request bodies', () => {
  let s: TestServer;
  /** Every event_message stored in SOURCE, sorted. */
  const stored = async (): Promise<string[]> => (await rows(s, 'encoded.all')).map((r) => String(r.event_message));
  /** The messages each test sent and expects back. */
  const sent: string[] = [];

  before(async () => {
    s = await startTestServer({ INGEST_BODY_LIMIT_BYTES: String(LIMIT) });
    await createSource(s, SOURCE);
    await createEndpoint(s, {
      name: 'encoded.all',
      query: `with e as (select t.id, t.event_message from \`${SOURCE}\` as t) select event_message from e order by event_message`,
      sandboxable: true,
      max_limit: 10000,
    });
  });
  after(() => s.close());

  test('every encoding round trips: the events stored are exactly those sent', async () => {
    for (const [name, header, encode] of encoders) {
      const batch = [`${name} 1`, `${name} 2 ünïcødé ✓`];
      const json = Buffer.from(JSON.stringify(batch.map((event_message) => ({ event_message }))));
      const r = await post(s, ingestPath, encode(json), { 'content-encoding': header });
      assert.equal(r.status, 200, `${name}: ${JSON.stringify(r.error)}`);
      const ndjson = Buffer.from(`{"event_message":"${name} ndjson"}\n`);
      const n = await post(s, ingestPath, encode(ndjson), { 'content-encoding': header, 'content-type': 'application/x-ndjson' });
      assert.equal(n.status, 200, `${name} ndjson: ${JSON.stringify(n.error)}`);
      sent.push(...batch, `${name} ndjson`);
    }
    // identity is no encoding; a body just under the limit once decoded is accepted.
    const plain = await post(s, ingestPath, Buffer.from('{"event_message":"identity"}'), { 'content-encoding': 'identity' });
    assert.equal(plain.status, 200);
    const padded = JSON.stringify({ event_message: 'just under', pad: 'p'.repeat(LIMIT - 100) });
    assert.equal((await post(s, ingestPath, deflateSync(padded), { 'content-encoding': 'deflate' })).status, 200);
    sent.push('identity', 'just under');
    assert.deepEqual(await stored(), [...sent].sort());
  });

  test('a decompression bomb is a 413 and stores nothing, in each encoding', async () => {
    const bomb = Buffer.alloc(8 * 1024 * 1024, ' ');
    for (const [name, header, encode] of encoders) {
      const body = encode(Buffer.concat([Buffer.from('[{"event_message":"bomb"}'), bomb, Buffer.from(']')]));
      assert.ok(body.length < LIMIT, `${name}: the compressed bomb fits the limit (${body.length} bytes)`);
      const r = await post(s, ingestPath, body, { 'content-encoding': header });
      assert.equal(r.status, 413, name);
      assert.equal(r.error?.code, 'PAYLOAD_TOO_LARGE');
      assert.match(r.error?.message ?? '', new RegExp(`decompressed request body is larger than the limit of ${LIMIT} bytes`));
    }
    // Just over the limit once decoded, and a compressed body itself over the limit.
    const over = JSON.stringify({ event_message: 'just over', pad: 'p'.repeat(LIMIT) });
    assert.equal((await post(s, ingestPath, brotliCompressSync(over), { 'content-encoding': 'br' })).status, 413);
    assert.equal((await post(s, ingestPath, gzipSync(randomBytes(LIMIT + 1024)), { 'content-encoding': 'gzip' })).status, 413);
    // The service still takes the next request, on the same connections.
    assert.equal((await post(s, ingestPath, gzipSync('{"event_message":"after the bomb"}'), { 'content-encoding': 'gzip' })).status, 200);
    sent.push('after the bomb');
    assert.deepEqual(await stored(), [...sent].sort());
  });

  test('a corrupt body is a 400 naming the encoding, and stores nothing', async () => {
    const json = Buffer.from('[{"event_message":"corrupt"}]');
    const truncated = (b: Buffer) => b.subarray(0, b.length - 6);
    const cases: [string, Buffer][] = [
      ['gzip', Buffer.from('not gzip at all')],
      ['gzip', truncated(gzipSync(json))],
      ['deflate', Buffer.from('not deflate')],
      ['deflate', truncated(deflateSync(json))],
      ['deflate', Buffer.from([0x78])],
      ['br', Buffer.from('not brotli, not brotli')],
      ['br', truncated(brotliCompressSync(json))],
    ];
    for (const [encoding, body] of cases) {
      const r = await post(s, ingestPath, body, { 'content-encoding': encoding });
      assert.equal(r.status, 400, `${encoding} ${body.toString('hex')}`);
      assert.equal(r.error?.code, 'BAD_REQUEST');
      assert.match(r.error?.message ?? '', new RegExp(`not valid ${encoding} data although Content-Encoding says ${encoding}`));
    }
    assert.deepEqual(await stored(), [...sent].sort());
  });

  test('an unknown encoding, or several, is a 415 naming it, and stores nothing', async () => {
    const body = Buffer.from('{"event_message":"unknown encoding"}');
    for (const [header, named] of [
      ['zstd', '"zstd"'],
      ['compress', '"compress"'],
      ['gzip, br', '"gzip, br"'],
    ]) {
      const r = await post(s, ingestPath, body, { 'content-encoding': header as string });
      assert.equal(r.status, 415, header);
      assert.equal(r.error?.code, 'UNSUPPORTED_MEDIA_TYPE');
      assert.ok(r.error?.message.includes(named as string), r.error?.message);
      assert.match(r.error?.message ?? '', /gzip, deflate, br/);
    }
    // The token is checked first: no token is a 401 whatever the encoding.
    const res = await s.fetch(ingestPath, { method: 'POST', headers: { 'content-encoding': 'zstd' }, body }, null);
    assert.equal(res.status, 401);
    assert.deepEqual(await stored(), [...sent].sort());
  });

  test('management and query routes take compressed bodies too', async () => {
    const created = await post(s, '/api/sources', brotliCompressSync(JSON.stringify({ name: 'encoded.other' })), { 'content-encoding': 'br' });
    assert.equal(created.status, 201, JSON.stringify(created.error));
    const listed = (await manage(s, 'GET', '/api/sources')).body as { id: string; name: string }[];
    const other = listed.find((x) => x.name === 'encoded.other');
    assert.ok(other);
    const patched = await post(
      s,
      `/api/sources/${other.id}`,
      deflateRawSync(JSON.stringify({ retention_days: 7 })),
      { 'content-encoding': 'deflate' },
      'PATCH',
    );
    assert.equal(patched.status, 200, JSON.stringify(patched.error));

    const sql = 'select event_message from e where event_message like "gzip%" order by event_message';
    for (const [name, header, encode] of encoders) {
      const res = await s.fetch('/api/endpoints/query/encoded.all', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-encoding': header },
        body: encode(Buffer.from(JSON.stringify({ sql }))),
      });
      const body = (await res.json()) as { result: { event_message: string }[] };
      assert.equal(res.status, 200, `${name}: ${JSON.stringify(body)}`);
      assert.deepEqual(
        body.result.map((r) => r.event_message),
        ['gzip 1', 'gzip 2 ünïcødé ✓', 'gzip ndjson'],
      );
    }
    const bomb = await post(s, '/api/endpoints/query/encoded.all', gzipSync(Buffer.alloc(8 * 1024 * 1024, ' ')), { 'content-encoding': 'gzip' });
    assert.equal(bomb.status, 413);
    const corrupt = await post(s, '/api/sources', Buffer.from('{"name":"x"}'), { 'content-encoding': 'br' });
    assert.equal(corrupt.status, 400);
    assert.match(corrupt.error?.message ?? '', /not valid br data/);
    const unknown = await post(s, '/api/sources', Buffer.from('{"name":"x"}'), { 'content-encoding': 'zstd' });
    assert.equal(unknown.status, 415);
    const names = ((await manage(s, 'GET', '/api/sources')).body as { name: string }[]).map((x) => x.name);
    assert.ok(!names.includes('x'), 'no source made from a refused body');
  });

  test('a streamed body decodes whatever its chunks, and a streamed one over the limit is a 413', async () => {
    const zlib = deflateSync(JSON.stringify([{ event_message: 'streamed zlib' }]));
    const raw = deflateRawSync(JSON.stringify([{ event_message: 'streamed raw' }]));
    for (const body of [zlib, raw]) {
      // One byte first: which deflate it is waits for the second.
      const chunks = [body.subarray(0, 1), body.subarray(1, 3), body.subarray(3)];
      const r = await sendChunked(s.url, ingestPath, 'deflate', chunks);
      assert.equal(r.status, 200, r.text);
    }
    sent.push('streamed raw', 'streamed zlib');
    const noise = gzipSync(randomBytes(LIMIT * 2));
    const big = await sendChunked(s.url, ingestPath, 'gzip', [noise.subarray(0, LIMIT / 2), noise.subarray(LIMIT / 2)]);
    assert.equal(big.status, 413, big.text);
    assert.match(big.text, /larger than the limit/);
    // A client gone half-way through a compressed body leaves the service as it was.
    const half = gzipSync(JSON.stringify([{ event_message: 'never finished', pad: 'x'.repeat(10_000) }]));
    assert.equal((await sendChunked(s.url, ingestPath, 'gzip', [half.subarray(0, 20)], true)).status, 0);
    assert.deepEqual(await stored(), [...sent].sort());
  });

  test('a request without a body is not refused for its Content-Encoding header', async () => {
    const res = await s.fetch('/api/endpoints/query/encoded.all', { headers: { 'content-encoding': 'zstd' } });
    assert.equal(res.status, 200, await res.text());
  });
});
