/**
 * Real Logflare clients as peers, on every engine, each pointed at the in-process service through its
 * own base-URL option:
 * - LogLayer with @loglayer/transport-logflare: `POST /logs/json?source=<id>`, `{"batch": [...]}` of
 *   `{message, metadata: {level, ...}}` (docs/INGEST.md, "Logflare's integration routes", `/json`);
 * - pino-logflare as a pino transport (worker thread, the documented way): `POST /logs?source=<id>`,
 *   `{"batch": [{message, timestamp, metadata: {level, context: {host, pid}, ...}}]}`;
 * - pino-logflare's createWriteStream (deprecated, in-process) naming its source by name:
 *   `POST /logs?source_name=<name>`.
 * Each sends, and the test reads the events back with logs.all-style SQL (`cross join
 * unnest(t.metadata) as m`) through an endpoint.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Worker } from 'node:worker_threads';
import { LogflareTransport } from '@loglayer/transport-logflare';
import { LogLayer } from 'loglayer';
import pino from 'pino';
import { createWriteStream } from 'pino-logflare';
import { createEndpoint, createSource, type Row, rows, sleep } from '../endpoints/http-support.ts';
import { engineEnv, engines } from '../support/engines.ts';
import { PRIVATE_TOKEN, startTestServer, type TestServer } from '../support/server.ts';

/** 2025-11-21T10:00:00.123Z: pino's `time`, fixed so the stored timestamp can be compared. */
const PINO_MS = Date.UTC(2025, 10, 21, 10, 0, 0, 123);

const LOGLAYER_READ =
  'select t.timestamp, t.event_message, m.message, n.level, n.order_id, n.customer, n.request_id from `clients.loglayer` as t cross join unnest(t.metadata) as m cross join unnest(m.metadata) as n order by n.order_id';
/** pino-logflare's events: `%s` the source, `%c` more columns of `metadata`. */
const PINO_READ = 'select t.timestamp, t.event_message, m.level, m.order_id, m.context%c from `%s` as t cross join unnest(t.metadata) as m order by m.order_id';
const pinoRead = (source: string, columns = ''): string => PINO_READ.replace('%s', source).replace('%c', columns);

function first(value: unknown): Record<string, unknown> {
  return (Array.isArray(value) ? value[0] : value) as Record<string, unknown>;
}

/**
 * Waits until `source` holds `n` events (the clients give nothing to wait on), then reads them with
 * `query`: the reading endpoint is made only then, as a query is checked against the fields stored.
 */
async function readWhen(s: TestServer, source: string, n: number, query: string): Promise<Row[]> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const [count] = await rows(s, `count.${source}`);
    if (count?.n === n) break;
    assert.ok(Date.now() < deadline, `${source}: ${JSON.stringify(count)} events, expected ${n}`);
    await sleep(50);
  }
  await createEndpoint(s, { name: `read.${source}`, query, cache_duration_seconds: 0 });
  return rows(s, `read.${source}`);
}

for (const engine of engines) {
  describe(`LogLayer and pino-logflare on ${engine}`, () => {
    let s: TestServer;
    let loglayerSource: string;
    let pinoSource: string;

    before(async () => {
      s = await startTestServer(engineEnv(engine));
      loglayerSource = await createSource(s, 'clients.loglayer');
      pinoSource = await createSource(s, 'clients.pino');
      await createSource(s, 'clients.pino-stream');
      for (const name of ['clients.loglayer', 'clients.pino', 'clients.pino-stream']) {
        await createEndpoint(s, { name: `count.${name}`, query: `select count(*) as n from \`${name}\``, cache_duration_seconds: 0 });
      }
    });
    after(() => s?.close());

    it('LogLayer (transport-logflare) posts to /logs/json; message, level and metadata read back', async () => {
      const statuses: number[] = [];
      const errors: unknown[] = [];
      const transport = new LogflareTransport({
        url: s.url,
        sourceId: loglayerSource,
        apiKey: PRIVATE_TOKEN,
        batchSize: 3,
        maxRetries: 0,
        onError: (e) => errors.push(e),
        onDebugReqRes: ({ req, res }) => {
          statuses.push(res.status);
          assert.match(req.url, /\/logs\/json\?source=/);
        },
      });
      const log = new LogLayer({ transport }).withContext({ request_id: 'req-7' });
      const sentFrom = Date.now();
      log.withMetadata({ order_id: 1, customer: 'ada' }).info('order placed');
      log.withMetadata({ order_id: 2 }).warn('stock low');
      log.withMetadata({ order_id: 3 }).error('payment failed');
      const got = await readWhen(s, 'clients.loglayer', 3, LOGLAYER_READ);
      const sentUntil = Date.now();
      assert.deepEqual(errors, []);
      assert.deepEqual(statuses, [200], 'one batch of three, answered 200');
      assert.deepEqual(
        got.map((r) => [r.message, r.level, r.order_id, r.customer ?? null, r.request_id]),
        [
          ['order placed', 'info', 1, 'ada', 'req-7'],
          ['stock low', 'warn', 2, null, 'req-7'],
          ['payment failed', 'error', 3, null, 'req-7'],
        ],
      );
      // `/json` keeps each event whole: its JSON text is the message (Logflare's GenericJson).
      assert.deepEqual(JSON.parse(got[0]?.event_message as string), {
        message: 'order placed',
        metadata: { level: 'info', request_id: 'req-7', order_id: 1, customer: 'ada' },
      });
      // LogLayer sends no time: the receive time is stored (to the microsecond).
      for (const r of got) {
        assert.ok((r.timestamp as number) >= sentFrom * 1000 && (r.timestamp as number) <= sentUntil * 1000, String(r.timestamp));
      }
    });

    it('pino-logflare as a pino transport posts to /logs?source=; message, time, level and context read back', async () => {
      const transport = pino.transport({
        target: 'pino-logflare',
        options: { apiKey: PRIVATE_TOKEN, sourceToken: pinoSource, apiBaseUrl: s.url, batchSize: 10, batchTimeout: 50 },
      });
      const logger = pino({ level: 'debug', timestamp: () => `,"time":${PINO_MS}` }, transport).child({ service_area: 'checkout' });
      logger.debug({ order_id: 1 }, 'cart opened');
      logger.info({ order_id: 2, amount: 19.5 }, 'order placed');
      logger.warn({ order_id: 3 }, 'stock low');
      logger.error({ order_id: 4 }, 'payment failed');
      logger.fatal({ order_id: 5 }, 'shutting down');
      // The worker flushes after batchTimeout. Ending the transport first would deadlock: thread-stream's
      // end() waits synchronously for the worker, whose requests this same thread must answer.
      const got = await readWhen(s, 'clients.pino', 5, pinoRead('clients.pino', ', m.service_area, m.amount'));
      // Not transport.end(): it blocks this thread until the worker is done, and a request of the
      // worker's still unanswered then (a retry, a last flush, an answer not yet written on a loaded
      // machine) waits for this thread: 10 s, then an error. Everything sent has been read back.
      // The stream then reports the worker's exit as an error, which is expected here.
      transport.on('error', () => undefined);
      await (transport as unknown as { worker: Worker }).worker.terminate();
      assert.deepEqual(
        got.map((r) => [r.timestamp, r.event_message, r.level, r.order_id]),
        [
          [PINO_MS * 1000, 'cart opened', 'debug', 1],
          [PINO_MS * 1000, 'order placed', 'info', 2],
          [PINO_MS * 1000, 'stock low', 'warning', 3],
          [PINO_MS * 1000, 'payment failed', 'error', 4],
          [PINO_MS * 1000, 'shutting down', 'critical', 5],
        ],
      );
      // The child's bindings and each call's object are metadata keys beside level and context.
      assert.deepEqual(
        got.map((r) => [r.service_area, r.amount ?? null]),
        [
          ['checkout', null],
          ['checkout', 19.5],
          ['checkout', null],
          ['checkout', null],
          ['checkout', null],
        ],
      );
      const context = first(got[1]?.context);
      assert.equal(context.pid, process.pid);
      assert.equal(typeof context.host, 'string');
    });

    it("pino-logflare's createWriteStream names its source by name (/logs?source_name=)", async () => {
      const stream = createWriteStream({ apiKey: PRIVATE_TOKEN, sourceName: 'clients.pino-stream', apiBaseUrl: s.url, size: 2 });
      const logger = pino({ timestamp: () => `,"time":${PINO_MS}` }, stream);
      logger.info({ order_id: 1 }, 'first');
      logger.warn({ order_id: 2 }, 'second');
      logger.info({ order_id: 3 }, 'third');
      stream.end();
      const got = await readWhen(s, 'clients.pino-stream', 3, pinoRead('clients.pino-stream'));
      assert.deepEqual(
        got.map((r) => [r.timestamp, r.event_message, r.level, r.order_id]),
        [
          [PINO_MS * 1000, 'first', 'info', 1],
          [PINO_MS * 1000, 'second', 'warning', 2],
          [PINO_MS * 1000, 'third', 'info', 3],
        ],
      );
    });
  });
}
