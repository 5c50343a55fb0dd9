/**
 * The web explorer: `GET /` serves the page, `GET /explorer/<file>` its ES modules and styles
 * (src/web/), `GET /explorer/vendor/<file>` the two uPlot files from node_modules. No build step:
 * the browser loads the modules as they are. The page itself needs no token; everything it shows
 * comes from the API, which asks the token the user signs in with.
 *
 * Files are read once, at registration, from a fixed list of names: no request path ever reaches
 * the file system.
 */
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { sourceFile } from '../source-files.ts';

const WEB_DIR = sourceFile('web');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/** The page may load only its own files and talk only to this service. */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

function asset(file: string): Asset {
  const body = readFileSync(file);
  const type = TYPES[path.extname(file)];
  if (type === undefined) throw new Error(`explorer: no content type for ${file}`);
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
  return { body, type, etag };
}

/** The explorer's own files (flat folder) and the vendored ones, by URL path. */
function loadAssets(): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  for (const name of readdirSync(WEB_DIR)) {
    if (!/^[a-z0-9-]+\.(js|css|svg|html)$/.test(name)) continue;
    assets.set(name === 'index.html' ? '/' : `/explorer/${name}`, asset(path.join(WEB_DIR, name)));
  }
  const uplot = path.dirname(createRequire(import.meta.url).resolve('uplot/package.json'));
  assets.set('/explorer/vendor/uPlot.esm.js', asset(path.join(uplot, 'dist', 'uPlot.esm.js')));
  assets.set('/explorer/vendor/uPlot.min.css', asset(path.join(uplot, 'dist', 'uPlot.min.css')));
  return assets;
}

function send(req: FastifyRequest, reply: FastifyReply, a: Asset): FastifyReply {
  reply
    .header('Content-Type', a.type)
    .header('ETag', a.etag)
    // Revalidate every time: a new version of Quarry shows at once, an unchanged file costs a 304.
    .header('Cache-Control', 'no-cache')
    .header('X-Content-Type-Options', 'nosniff')
    .header('Referrer-Policy', 'no-referrer');
  if (a.type.startsWith('text/html')) {
    reply.header('Content-Security-Policy', CONTENT_SECURITY_POLICY).header('X-Frame-Options', 'DENY');
  }
  if (req.headers['if-none-match'] === a.etag) return reply.code(304).send();
  return reply.code(200).send(a.body);
}

export const explorerRoutes: FastifyPluginAsync = async (app) => {
  const assets = loadAssets();
  for (const [url, a] of assets) {
    app.get(url, { schema: { hide: true } }, async (req, reply) => send(req, reply, a));
  }
};
