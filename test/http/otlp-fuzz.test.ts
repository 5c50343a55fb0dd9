/**
 * Fuzzed OTLP logs bodies over HTTP against the real service on every engine (fewer on ClickHouse:
 * the decoding is the same, only what storage makes of the events differs): random and mutated
 * protobuf and JSON bodies (test/ingest/otlp-fuzz-bodies.ts), some of them gzipped. None may get a
 * 500 or any status OTLP does not name, each is answered within a bound (so nothing stalls the
 * process), every answer is in the request's encoding, and a refused body stores nothing: the
 * source's count is read after every request. The seed is printed and can be set with
 * OTLP_FUZZ_SEED; OTLP_FUZZ_SCALE multiplies the number of bodies (a longer hunt: OTLP_FUZZ_SCALE=10).
 * The decoder alone gets 2,000 bodies (times OTLP_FUZZ_SCALE) in test/ingest/otlp-fuzz.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { createEndpoint, createSource, rows } from '../endpoints/http-support.ts';
import { decodeResponse, decodeStatus } from '../ingest/otlp-messages.ts';
import { fuzzBodies, randomSource, seedFromEnv } from '../ingest/otlp-fuzz-bodies.ts';
import { engineEnv, engines } from '../support/engines.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const SOURCE = 'fuzz.otel';
/** The decoding is the same on every engine; fewer bodies where each insert costs more. */
const SCALE = Math.max(1, Number(process.env.OTLP_FUZZ_SCALE) || 1);
const BODIES: Readonly<Record<string, number>> = { duckdb: 400 * SCALE, clickhouse: 150 * SCALE };
/** Far above what any body takes (a few ms): only a stall or a runaway decode reaches it. */
const BOUND_MS = 10_000;
const CONTENT_TYPES = { protobuf: 'application/x-protobuf', json: 'application/json' } as const;

for (const engine of engines) {
  describe(`OTLP/HTTP fuzzing on ${engine}`, () => {
    const bodies = BODIES[engine] ?? 150 * SCALE;
    let s: TestServer;
    before(async () => {
      s = await startTestServer(engineEnv(engine));
      await createSource(s, SOURCE);
      await createEndpoint(s, { name: 'fuzz.count', query: 'select count(*) as n from `fuzz.otel`', cache_duration_seconds: 0 });
      // A first event, so the source's table exists before the first count.
      const first = await s.fetch(`/api/logs?source_name=${SOURCE}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"message":"start"}',
      });
      assert.equal(first.status, 200);
    });
    after(() => s.close());

    it('no 500, no stall, answers in the request encoding, and a refused body stores nothing', { timeout: 600_000 }, async () => {
      const seed = seedFromEnv();
      const random = randomSource(seed ^ 0x5eed);
      const count = async () => Number((await rows(s, 'fuzz.count'))[0]?.n);
      let stored = await count();
      const statuses = new Map<number, number>();
      let slowest = 0;
      for (const { body, encoding, label } of fuzzBodies(seed, bodies)) {
        const gzip = random() < 0.2;
        const headers: Record<string, string> = { 'content-type': CONTENT_TYPES[encoding] };
        if (gzip) headers['content-encoding'] = 'gzip';
        const what = `seed ${seed}, ${label}${gzip ? ', gzipped' : ''}`;
        const started = performance.now();
        const r = await s.fetch(`/v1/logs?source_name=${SOURCE}`, { method: 'POST', headers, body: gzip ? gzipSync(body) : body });
        const answer = Buffer.from(await r.arrayBuffer());
        const took = performance.now() - started;
        slowest = Math.max(slowest, took);
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
        assert.ok([200, 400, 413].includes(r.status), `${what}: status ${r.status} ${answer.subarray(0, 300).toString()}`);
        assert.ok(took < BOUND_MS, `${what}: took ${took.toFixed(0)} ms`);
        assert.equal(r.headers.get('content-type'), CONTENT_TYPES[encoding], what);
        const now = await count();
        if (r.status === 200) {
          // The answer decodes, and says what was refused, if anything.
          if (encoding === 'protobuf') decodeResponse(answer);
          else assert.equal(typeof JSON.parse(answer.toString()), 'object', what);
          assert.ok(now >= stored, what);
        } else {
          const message = encoding === 'protobuf' ? decodeStatus(answer).message : (JSON.parse(answer.toString()) as { message: string }).message;
          assert.ok(message.length > 0 && !/\n\s+at |\/work\//.test(message), `${what}: ${message}`);
          assert.equal(now, stored, `${what}: a refused body stored ${now - stored} events`);
        }
        stored = now;
      }
      console.log(
        `OTLP HTTP fuzz on ${engine}, seed ${seed}: statuses ${JSON.stringify(Object.fromEntries(statuses))}, slowest ${slowest.toFixed(0)} ms, ${stored} events stored`,
      );
      assert.ok((statuses.get(200) ?? 0) > bodies / 20 && (statuses.get(400) ?? 0) > bodies / 20, JSON.stringify(Object.fromEntries(statuses)));
    });
  });
}
