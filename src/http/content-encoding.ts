/**
 * Compressed request bodies on every route (docs/API.md §7): `Content-Encoding` gzip (or x-gzip),
 * deflate (zlib-wrapped or raw, told apart by the first two bytes) and br. The body is decoded as a
 * stream in front of the route's body parser, and the route's body limit bounds the decoded bytes as
 * well as the received ones: a decompression bomb is cut off at the limit (413) without ever being
 * held in memory whole.
 */
import { Readable, type Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate, createInflateRaw } from 'node:zlib';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { QuarryError } from '../errors.ts';

export type BodyEncoding = 'gzip' | 'deflate' | 'br';

const encodingNames: ReadonlyMap<string, BodyEncoding> = new Map([
  ['gzip', 'gzip'],
  ['x-gzip', 'gzip'],
  ['deflate', 'deflate'],
  ['br', 'br'],
]);

declare module 'fastify' {
  interface FastifyRequest {
    /** Set when the body arrived compressed: its decoder, which counts the bytes received. */
    decodedBody?: DecodedBody;
  }
}

/**
 * The encoding a Content-Encoding header names, undefined for none (or `identity`). 415 for any
 * other, and for a list of several: no client sends one, and each stage would need its own bound.
 */
export function bodyEncoding(header: string | string[] | undefined): BodyEncoding | undefined {
  const value = (Array.isArray(header) ? header.join(', ') : (header ?? '')).trim().slice(0, 200);
  const codings = value
    .toLowerCase()
    .split(',')
    .map((c) => c.trim())
    .filter((c) => c !== '' && c !== 'identity');
  if (codings.length === 0) return undefined;
  const supported = 'send gzip, deflate, br or no Content-Encoding';
  if (codings.length > 1) {
    throw new QuarryError('UNSUPPORTED_MEDIA_TYPE', `Content-Encoding "${value}" lists several encodings: ${supported}.`);
  }
  const encoding = encodingNames.get(codings[0] as string);
  if (encoding === undefined) {
    throw new QuarryError('UNSUPPORTED_MEDIA_TYPE', `Content-Encoding "${codings[0]}" is not supported: ${supported}.`);
  }
  return encoding;
}

/** Whether a request carries a body Fastify will parse (GET and HEAD bodies are never read). */
function hasBody(req: FastifyRequest): boolean {
  if (req.method === 'GET' || req.method === 'HEAD') return false;
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** A zlib stream header: CM 8 (deflate), a window of at most 32 KiB, and the FCHECK sum. */
function isZlibHeader(b0: number, b1: number): boolean {
  return (b0 & 0x0f) === 8 && b0 >> 4 <= 7 && ((b0 << 8) | b1) % 31 === 0;
}

function decoderFor(encoding: BodyEncoding, head: Buffer): Transform {
  if (encoding === 'gzip') return createGunzip();
  if (encoding === 'br') return createBrotliDecompress();
  // RFC 9110's deflate is zlib-wrapped, but some clients send raw deflate; a raw stream whose first
  // two bytes happen to pass the header check fails to decode and gets the 400 as any corrupt body.
  return head.length >= 2 && isZlibHeader(head[0] as number, head[1] as number) ? createInflate() : createInflateRaw();
}

function corrupt(encoding: BodyEncoding, cause: Error): QuarryError {
  return new QuarryError('BAD_REQUEST', `The request body is not valid ${encoding} data although Content-Encoding says ${encoding} (${cause.message}).`, {
    cause,
  });
}

/**
 * The decoded body, read from the request as it arrives. `receivedEncodedLength` is Fastify's name
 * for the bytes received (it checks them against Content-Length and the body limit).
 */
export class DecodedBody extends Readable {
  receivedEncodedLength = 0;
  readonly #source: Readable;
  readonly #encoding: BodyEncoding;
  readonly #limit: number;
  #decodedLength = 0;
  #decoder: Transform | undefined;
  /** deflate only: bytes received before the decoder could be chosen. */
  #head: Buffer = Buffer.alloc(0);
  #started = false;
  #failed = false;

  constructor(source: Readable, encoding: BodyEncoding, limit: number) {
    super();
    this.#source = source;
    this.#encoding = encoding;
    this.#limit = limit;
    // Fastify stops listening once it has refused a body; a decoder error after that must not
    // become an uncaught 'error' event.
    this.on('error', () => {});
  }

  override _read(): void {
    if (!this.#started) {
      this.#started = true;
      this.#source.on('data', this.#onSourceData).on('end', this.#onSourceEnd).on('error', this.#onSourceError);
    }
    this.#decoder?.resume();
  }

  readonly #onSourceData = (chunk: Buffer): void => {
    if (this.#failed) return;
    this.receivedEncodedLength += chunk.length;
    if (this.receivedEncodedLength > this.#limit) {
      this.#fail(new QuarryError('PAYLOAD_TOO_LARGE', `The request body is larger than the limit of ${this.#limit} bytes.`));
      return;
    }
    let decoder = this.#decoder;
    let input = chunk;
    if (decoder === undefined) {
      this.#head = Buffer.concat([this.#head, chunk]);
      // deflate: which decoder depends on the first two bytes.
      if (this.#encoding === 'deflate' && this.#head.length < 2) return;
      decoder = this.#startDecoder();
      input = this.#takeHead();
    }
    if (!decoder.write(input)) this.#source.pause();
  };

  /** The decoder for the bytes held so far (in #head). */
  #startDecoder(): Transform {
    const decoder = decoderFor(this.#encoding, this.#head);
    decoder.on('data', this.#onDecoded).on('end', () => this.push(null));
    decoder.on('error', (e: Error) => this.#fail(corrupt(this.#encoding, e)));
    decoder.on('drain', () => this.#source.resume());
    this.#decoder = decoder;
    return decoder;
  }

  #takeHead(): Buffer {
    const head = this.#head;
    this.#head = Buffer.alloc(0);
    return head;
  }

  readonly #onDecoded = (chunk: Buffer): void => {
    if (this.#failed) return;
    this.#decodedLength += chunk.length;
    if (this.#decodedLength > this.#limit) {
      this.#fail(
        new QuarryError(
          'PAYLOAD_TOO_LARGE',
          `The decompressed request body is larger than the limit of ${this.#limit} bytes (Content-Encoding: ${this.#encoding}).`,
        ),
      );
      return;
    }
    if (!this.push(chunk)) this.#decoder?.pause();
  };

  readonly #onSourceEnd = (): void => {
    if (this.#failed) return;
    let decoder = this.#decoder;
    if (decoder === undefined) {
      // An empty body stays empty; a lone byte of deflate still goes to a decoder, which refuses it.
      if (this.#head.length === 0) {
        this.push(null);
        return;
      }
      decoder = this.#startDecoder();
      decoder.write(this.#takeHead());
    }
    decoder.end();
  };

  readonly #onSourceError = (e: Error): void => this.#fail(e);

  /** Stops decoding; the rest of the request is read and dropped so the connection stays usable. */
  #fail(error: Error): void {
    if (this.#failed) return;
    this.#failed = true;
    this.#source.removeListener('data', this.#onSourceData);
    this.#source.resume();
    this.#decoder?.destroy();
    this.destroy(error);
  }
}

/**
 * Decodes compressed bodies on every route of `app`, bounded by each route's body limit. Runs after
 * the onRequest hooks, so a request refused by its token is never decoded.
 */
export function decodeRequestBodies(app: FastifyInstance, defaultLimit: number): void {
  app.addHook('preParsing', async (req, _reply, payload) => {
    if (!hasBody(req)) return payload;
    const encoding = bodyEncoding(req.headers['content-encoding']);
    if (encoding === undefined) return payload;
    const decoded = new DecodedBody(payload, encoding, req.routeOptions.bodyLimit ?? defaultLimit);
    req.decodedBody = decoded;
    return decoded;
  });
}
