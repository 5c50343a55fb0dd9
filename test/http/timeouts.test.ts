/**
 * HTTP timeouts over real sockets: slow bodies and slow headers are cut with a 408 in the usual
 * error shape after a bounded time, and idle keep-alive connections are closed.
 *
 * The three cases wait on the server's timers, each on connections of its own: they run at once.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { PUBLIC_TOKEN, startTestServer, type TestServer } from '../support/server.ts';

interface Outcome {
  /** Everything the server sent. */
  text: string;
  /** Milliseconds from connecting until the server closed the connection. */
  closedAfterMs: number;
}

/**
 * Connects, writes `head`, then one byte every `dripMs` until the server closes the connection
 * (or `giveUpMs` passes: then the outcome says so with closedAfterMs = Infinity).
 */
function slowClient(url: string, head: string, dripMs: number, giveUpMs: number): Promise<Outcome> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const started = performance.now();
    const socket = net.connect(Number(port), hostname);
    let text = '';
    let timer: NodeJS.Timeout | undefined;
    const finish = (closedAfterMs: number) => {
      clearInterval(timer);
      clearTimeout(giveUp);
      socket.destroy();
      resolve({ text, closedAfterMs });
    };
    const giveUp = setTimeout(() => finish(Number.POSITIVE_INFINITY), giveUpMs);
    socket.on('connect', () => {
      socket.write(head);
      timer = setInterval(() => {
        if (socket.writable) socket.write('x');
      }, dripMs);
    });
    socket.on('data', (d) => {
      text += d.toString();
    });
    socket.on('error', () => undefined);
    socket.on('close', () => finish(performance.now() - started));
  });
}

describe('HTTP timeouts', { concurrency: true }, () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ HTTP_HEADERS_TIMEOUT_MS: '1000', HTTP_REQUEST_TIMEOUT_MS: '2000', HTTP_KEEP_ALIVE_TIMEOUT_MS: '1500' });
  });
  after(() => s.close());

  it('100 connections sending a body one byte at a time are each cut with a 408 soon after the request timeout (2 s)', async () => {
    const head =
      `POST /api/logs?source_name=cloudflare.logs.prod HTTP/1.1\r\nHost: x\r\nX-API-KEY: ${PUBLIC_TOKEN}\r\n` +
      'Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n[';
    const outcomes = await Promise.all(Array.from({ length: 100 }, () => slowClient(s.url, head, 400, 10_000)));
    for (const o of outcomes) {
      assert.ok(o.closedAfterMs < 6000, `closed after ${o.closedAfterMs} ms`);
      assert.match(o.text, /^HTTP\/1\.1 408 /);
      const body = JSON.parse(o.text.slice(o.text.indexOf('\r\n\r\n') + 4)) as { error: { code: string; status: number } };
      assert.equal(body.error.code, 'REQUEST_TIMEOUT');
      assert.equal(body.error.status, 408);
    }
    // The service still answers.
    assert.equal((await s.fetch('/health')).status, 200);
  });

  it('headers sent one byte at a time are cut with a 408 soon after the headers timeout (1 s)', async () => {
    const o = await slowClient(s.url, 'GET /health HTTP/1.1\r\nX-Slow: ', 300, 10_000);
    assert.ok(o.closedAfterMs < 5000, `closed after ${o.closedAfterMs} ms`);
    assert.match(o.text, /^HTTP\/1\.1 408 /);
  });

  it('an idle keep-alive connection is closed after the keep-alive timeout', async () => {
    const { hostname, port } = new URL(s.url);
    const closedAfter = await new Promise<number>((resolve, reject) => {
      const socket = net.connect(Number(port), hostname);
      let started = 0;
      socket.on('connect', () => socket.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n'));
      socket.once('data', () => {
        started = performance.now();
      });
      socket.on('error', reject);
      socket.on('close', () => resolve(performance.now() - started));
    });
    assert.ok(closedAfter >= 1000 && closedAfter < 6000, `closed after ${closedAfter} ms`);
  });
});
