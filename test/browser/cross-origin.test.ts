/**
 * CORS in a real browser (Debian's Chromium through playwright-core; docs/API.md §7): a page served
 * from another origin (another loopback port) ingests with a preflighted JSON POST and a gzip body,
 * runs an endpoint and reads its rows, reads an error's JSON, and is refused by the browser on a
 * management route and on a request header the preflight does not allow.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { createEndpoint, createSource, createToken } from '../endpoints/http-support.ts';
import { PRIVATE_TOKEN, PUBLIC_TOKEN, startTestServer, type TestServer } from '../support/server.ts';
import { launchChromium } from './chromium.ts';

const SOURCE = 'browser.cors';
const ENDPOINT = 'browser.cors.messages';

/** What `call` in the page answers: the status and body, or the error a refused fetch throws. */
type Outcome = { status: number; xCache: string | null; body: string } | { error: string; name: string };

const browser = await launchChromium({ timezoneId: 'UTC', viewport: { width: 800, height: 600 } });

if ('skip' in browser) {
  console.log(`browser tests skipped: ${browser.skip}`);
  test('cross-origin calls in Chromium', { skip: browser.skip }, () => {});
} else {
  describe('cross-origin calls in Chromium', () => {
    let s: TestServer;
    let other: Server;
    let page: Page;
    let queryToken: string;
    const consoleErrors: string[] = [];

    before(async () => {
      s = await startTestServer();
      await createSource(s, SOURCE);
      await createEndpoint(s, {
        name: ENDPOINT,
        query: `select t.event_message from \`${SOURCE}\` as t order by t.event_message`,
      });
      queryToken = await createToken(s, ['query']);
      // The page's origin: the same host, another port, so every call to Quarry is cross-origin.
      other = createServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end('<!doctype html><title>another site</title><p>another site</p>');
      });
      await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
      const { port } = other.address() as AddressInfo;
      page = await browser.context.newPage();
      page.setDefaultTimeout(10_000);
      page.on('console', (m) => {
        if (m.type() === 'error') consoleErrors.push(m.text());
      });
      await page.goto(`http://127.0.0.1:${port}/`);
      assert.notEqual(new URL(page.url()).origin, new URL(s.url).origin);
    });

    after(async () => {
      await browser.close();
      await new Promise((resolve) => other?.close(resolve));
      await s?.close();
    });

    /** fetch from the page; `gzip` compresses the body with the browser's CompressionStream. */
    function call(url: string, init: { method?: string; headers?: Record<string, string>; body?: string; gzip?: boolean }): Promise<Outcome> {
      return page.evaluate(
        async ({ url, init }) => {
          try {
            let body: string | ArrayBuffer | undefined = init.body;
            if (init.gzip && init.body !== undefined) {
              const stream = new Blob([init.body]).stream().pipeThrough(new CompressionStream('gzip'));
              body = await new Response(stream).arrayBuffer();
            }
            const res = await fetch(url, { method: init.method ?? 'GET', headers: init.headers, body });
            return { status: res.status, xCache: res.headers.get('x-cache'), body: await res.text() };
          } catch (e) {
            return { error: String(e), name: (e as Error).name };
          }
        },
        { url, init },
      );
    }

    /** An answer the page could read at all carried the CORS header (the page cannot read that header itself). */
    function ok(o: Outcome, status: number): { status: number; xCache: string | null; body: string } {
      assert.ok(!('error' in o), `expected ${status}, the browser refused: ${JSON.stringify(o)}`);
      assert.equal(o.status, status, o.body);
      return o;
    }

    function refused(o: Outcome): void {
      assert.ok('error' in o, `expected the browser to refuse, got ${JSON.stringify(o)}`);
      assert.equal(o.name, 'TypeError', o.error);
    }

    test('a page ingests JSON with X-API-Key (a preflighted request) and a gzip body', async () => {
      const json = await call(`${s.url}/api/logs?source_name=${SOURCE}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-API-Key': PUBLIC_TOKEN },
        body: JSON.stringify([{ event_message: 'from the page, json 1' }, { event_message: 'from the page, json 2' }]),
      });
      assert.deepEqual(JSON.parse(ok(json, 200).body), { message: 'Logged!' });

      assert.equal(await page.evaluate(() => typeof CompressionStream), 'function', 'Chromium has CompressionStream');
      const gzip = await call(`${s.url}/api/events?source_name=${SOURCE}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip', 'X-API-Key': PUBLIC_TOKEN },
        body: JSON.stringify({ event_message: 'from the page, gzip' }),
        gzip: true,
      });
      assert.deepEqual(JSON.parse(ok(gzip, 200).body), { message: 'Logged!' });
    });

    test('a page runs an endpoint and reads the rows it ingested, by GET and by POST', async () => {
      const expected = [{ event_message: 'from the page, gzip' }, { event_message: 'from the page, json 1' }, { event_message: 'from the page, json 2' }];
      const get = await call(`${s.url}/api/endpoints/query/${ENDPOINT}`, { headers: { 'X-API-Key': queryToken } });
      assert.deepEqual((JSON.parse(ok(get, 200).body) as { result: unknown[] }).result, expected);
      // Exposed (Access-Control-Expose-Headers), so the page may read it.
      assert.ok(ok(get, 200).xCache, 'X-Cache readable by the page');
      const post = await call(`${s.url}/endpoints/query/${ENDPOINT}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${queryToken}` },
        body: '{}',
      });
      assert.deepEqual((JSON.parse(ok(post, 200).body) as { result: unknown[] }).result, expected);
    });

    test('a page reads the JSON of an error answer', async () => {
      const badIngest = await call(`${s.url}/api/logs?source_name=${SOURCE}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-API-Key': 'not-a-token' },
        body: '[{"event_message":"never stored"}]',
      });
      const ingestError = JSON.parse(ok(badIngest, 401).body) as { error?: { code?: string } };
      assert.ok(ingestError.error?.code, JSON.stringify(badIngest));

      const badQuery = await call(`${s.url}/api/endpoints/query/no.such.endpoint`, { headers: { 'X-API-Key': queryToken } });
      const queryError = JSON.parse(ok(badQuery, 404).body) as { error?: { code?: string } };
      assert.ok(queryError.error?.code, JSON.stringify(badQuery));
    });

    test('the browser refuses a management call and a header the preflight does not allow', async () => {
      consoleErrors.length = 0;
      refused(await call(`${s.url}/api/sources`, { headers: { 'X-API-Key': PRIVATE_TOKEN } }));
      refused(await call(`${s.url}/api/access-tokens`, { headers: { Authorization: `Bearer ${PRIVATE_TOKEN}` } }));
      refused(
        await call(`${s.url}/api/logs?source_name=${SOURCE}`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', 'X-API-Key': PUBLIC_TOKEN, 'X-Not-Allowed': '1' },
          body: '[{"event_message":"never sent"}]',
        }),
      );
      assert.ok(
        consoleErrors.some((m) => m.includes('CORS')),
        `Chromium says CORS refused it: ${consoleErrors.join(' | ')}`,
      );
      // The refused ingest never reached the handler: still the three events.
      const rows = await call(`${s.url}/api/endpoints/query/${ENDPOINT}`, { headers: { 'X-API-Key': queryToken } });
      assert.equal((JSON.parse(ok(rows, 200).body) as { result: unknown[] }).result.length, 3);
    });
  });
}
