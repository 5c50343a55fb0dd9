/**
 * The explorer's files over HTTP (no browser): the page and its modules with the right types and
 * headers, revalidation by ETag, and nothing else of the file system reachable.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import { type TestServer, startTestServer } from '../support/server.ts';

describe('explorer assets', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.close());

  test('/ is the page, needs no token, and forbids scripts and forms from anywhere else', async () => {
    const r = await s.fetch('/', {}, null);
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-type'), 'text/html; charset=utf-8');
    const csp = r.headers.get('content-security-policy') ?? '';
    assert.match(csp, /script-src 'self'/);
    assert.match(csp, /form-action 'none'/);
    assert.match(csp, /connect-src 'self'/);
    assert.equal(r.headers.get('x-content-type-options'), 'nosniff');
    const html = await r.text();
    assert.match(html, /<script type="module" src="\/explorer\/main\.js"><\/script>/);
  });

  test('every file the page and its modules name is served with its type', async () => {
    const html = await (await s.fetch('/', {}, null)).text();
    const named = [...html.matchAll(/(?:src|href)="(\/explorer\/[^"]+)"/g)].map((m) => m[1] as string);
    const modules = ['/explorer/main.js'];
    const seen = new Set<string>();
    while (modules.length > 0) {
      const url = modules.pop() as string;
      if (seen.has(url)) continue;
      seen.add(url);
      const r = await s.fetch(url, {}, null);
      assert.equal(r.status, 200, url);
      assert.equal(r.headers.get('content-type'), 'text/javascript; charset=utf-8', url);
      const code = await r.text();
      for (const m of code.matchAll(/^import .* from '(\.\/[^']+)';$/gm)) {
        modules.push(new URL(m[1] as string, `http://x${url}`).pathname);
      }
    }
    assert.ok(seen.has('/explorer/vendor/uPlot.esm.js') && seen.size >= 8, [...seen].join(' '));
    for (const url of named) {
      const r = await s.fetch(url, {}, null);
      assert.equal(r.status, 200, url);
      const type = r.headers.get('content-type') ?? '';
      assert.ok(/^(text\/css|text\/javascript|image\/svg\+xml)/.test(type), `${url}: ${type}`);
    }
  });

  test('the vendored chart library is the installed one, byte for byte', async () => {
    const served = Buffer.from(await (await s.fetch('/explorer/vendor/uPlot.esm.js', {}, null)).arrayBuffer());
    const installed = await readFile(new URL('../../node_modules/uplot/dist/uPlot.esm.js', import.meta.url));
    assert.ok(served.equals(installed));
  });

  test('an unchanged file revalidates with 304; HEAD works', async () => {
    const first = await s.fetch('/explorer/main.js', {}, null);
    const etag = first.headers.get('etag');
    assert.ok(etag);
    assert.equal(first.headers.get('cache-control'), 'no-cache');
    const again = await s.fetch('/explorer/main.js', { headers: { 'if-none-match': etag } }, null);
    assert.equal(again.status, 304);
    assert.equal(await again.text(), '');
    const head = await s.fetch('/', { method: 'HEAD' }, null);
    assert.equal(head.status, 200);
  });

  test('no other path reaches a file: unknown names, traversal and encodings are JSON 404s', async () => {
    for (const p of [
      '/explorer/nope.js',
      '/explorer/../package.json',
      '/explorer/..%2f..%2fpackage.json',
      '/explorer/%2e%2e/%2e%2e/package.json',
      '/explorer/vendor/uPlot.cjs.js',
      '/explorer/vendor/../../node_modules/uplot/package.json',
      '/explorer/',
      '/explorer/index.html',
      '/index.html',
      '/explorer/main.js/',
    ]) {
      const r = await s.fetch(p, {}, null);
      assert.equal(r.status, 404, p);
      const body = (await r.json()) as { error: { code: string } };
      assert.equal(body.error.code, 'NOT_FOUND', p);
    }
  });

  test('the explorer routes stay out of the OpenAPI document', async () => {
    const doc = (await (await s.fetch('/api/openapi.json', {}, null)).json()) as { paths: Record<string, unknown> };
    assert.ok(!Object.keys(doc.paths).some((p) => p === '/' || p.startsWith('/explorer')));
    assert.ok('/api/sources/{id}/schema' in doc.paths);
  });
});
