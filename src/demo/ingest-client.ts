/**
 * A small concurrent client for Quarry's Logflare-compatible ingest API
 * (`POST /api/logs?source_name=<name>`, JSON array bodies, `X-API-KEY`), shared by the demo loader
 * and the benchmark. Keeps connections alive, honours `Retry-After` on 429/503, and reports
 * progress and per-request latencies.
 */
import http from 'node:http';
import type { EventBatch } from './generator.ts';

export interface IngestOptions {
  /** Base URL of the service, e.g. `http://127.0.0.1:4000`. */
  baseUrl: string;
  token: string;
  /** Requests in flight at once (default 4). */
  concurrency?: number;
  /** Called after every acknowledged request with the running totals. */
  onProgress?: (progress: IngestProgress) => void;
  /** Give up on a batch after this many 429/503 answers in a row (default 20). */
  maxRetries?: number;
}

export interface IngestProgress {
  events: number;
  requests: number;
  bytes: number;
  elapsedMs: number;
}

export interface IngestResult extends IngestProgress {
  /** Latency of every acknowledged request, milliseconds. */
  latenciesMs: number[];
  retries: number;
}

export class IngestError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.name = 'IngestError';
  }
}

interface Response {
  status: number;
  body: string;
  retryAfter: string | undefined;
}

function post(agent: http.Agent, url: URL, token: string, body: string): Promise<Response> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          'x-api-key': token,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const retry = res.headers['retry-after'];
          resolve({
            status: res.statusCode ?? 0,
            body: Buffer.concat(chunks).toString('utf8'),
            retryAfter: Array.isArray(retry) ? retry[0] : retry,
          });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** One request ready to send: a source and its JSON array body. */
export interface IngestRequest {
  source: string;
  body: string;
  events: number;
}

/** Serialises generated batches into requests as they are needed. */
export async function* requestsFromBatches(batches: Iterable<EventBatch>): AsyncGenerator<IngestRequest> {
  for (const batch of batches) {
    yield { source: batch.source, body: JSON.stringify(batch.events), events: batch.events.length };
  }
}

/** Sends every batch, `concurrency` requests at a time; rejects on the first request that fails. */
export function ingestBatches(batches: Iterable<EventBatch>, options: IngestOptions): Promise<IngestResult> {
  return ingestRequests(requestsFromBatches(batches), options);
}

/** Sends prepared requests, `concurrency` at a time; rejects on the first request that fails. */
export async function ingestRequests(requests: AsyncIterable<IngestRequest>, options: IngestOptions): Promise<IngestResult> {
  const concurrency = Math.max(1, options.concurrency ?? 4);
  const maxRetries = options.maxRetries ?? 20;
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const base = options.baseUrl.replace(/\/+$/, '');
  const iterator = requests[Symbol.asyncIterator]();
  const result: IngestResult = { events: 0, requests: 0, bytes: 0, elapsedMs: 0, latenciesMs: [], retries: 0 };
  const started = performance.now();
  let failed: Error | undefined;

  const next = async (): Promise<IngestRequest | undefined> => {
    if (failed !== undefined) return undefined;
    const step = await iterator.next();
    return step.done === true ? undefined : step.value;
  };

  const worker = async (): Promise<void> => {
    for (let request = await next(); request !== undefined; request = await next()) {
      const url = new URL(`${base}/api/logs?source_name=${encodeURIComponent(request.source)}`);
      for (let attempt = 0; ; attempt++) {
        const t0 = performance.now();
        const res = await post(agent, url, options.token, request.body);
        if (res.status === 200) {
          result.latenciesMs.push(performance.now() - t0);
          break;
        }
        if ((res.status === 429 || res.status === 503) && attempt < maxRetries) {
          result.retries++;
          const wait = Math.min(5_000, Math.max(50, Number(res.retryAfter ?? '0.2') * 1000 || 200));
          await new Promise((r) => setTimeout(r, wait));
          continue;
        }
        throw new IngestError(`ingest into ${request.source} answered ${res.status}: ${res.body.slice(0, 300)}`, res.status);
      }
      result.events += request.events;
      result.requests++;
      result.bytes += request.body.length;
      result.elapsedMs = performance.now() - started;
      options.onProgress?.(result);
    }
  };

  try {
    const workers = Array.from({ length: concurrency }, () =>
      worker().catch((e: unknown) => {
        failed ??= e instanceof Error ? e : new Error(String(e));
      }),
    );
    await Promise.all(workers);
  } finally {
    agent.destroy();
  }
  if (failed !== undefined) throw failed;
  result.elapsedMs = performance.now() - started;
  return result;
}
