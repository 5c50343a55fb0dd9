/**
 * The importer's view of a running Quarry, through its public HTTP API only (docs/API.md), so it
 * works on every engine, across nodes and into a container:
 *
 * - `GET /api/sources` (and `POST` with --create-sources): the sources to import into;
 * - a lookup endpoint per source, saved through `POST /api/endpoints` and run with
 *   `POST /api/endpoints/query/<name>`: which of a batch's ids that source already holds within the
 *   batch's time range. The ids travel as one bound string parameter (split by a separator none of
 *   them contains), never as SQL text;
 * - `POST /api/logs?source_name=<name>`: the events, as a JSON array.
 *
 * Busy answers (503, 429, 507, 408) and unreachable moments are retried with backoff for
 * `retryForMs`. An ingest request whose answer was lost is reported as `unknown`: the caller must
 * look again before sending those events again.
 */
import type { SourceEvent } from './logflare-reader.ts';
import { ImportError } from './errors.ts';

export interface QuarrySource {
  id: string;
  name: string;
}

/** A saved endpoint that answers which ids of a list one source holds in a time range. */
export interface Lookup {
  endpointId: string;
  name: string;
  source: QuarrySource;
}

export type IngestResult =
  /** 200: every event of the request is stored. */
  | { kind: 'stored' }
  /** Refused for this request's content (400, 413): nothing of it is stored. */
  | { kind: 'refused'; status: number; message: string }
  /** The answer never arrived: Quarry may or may not have stored the request. */
  | { kind: 'unknown'; reason: string };

export interface QuarryClientOptions {
  baseUrl: string;
  token: string;
  /** Keep retrying busy or unreachable answers this long, ms. */
  retryForMs: number;
  /** Told when a request is retried (for the progress display). */
  onRetry?: (what: string) => void;
}

interface Answer {
  status: number;
  text: string;
  retryAfterMs: number | undefined;
}

/** Quarry's source and endpoint names: letters, digits, `.`, `-`, `_`, at most 128 (docs/API.md §3). */
export const QUARRY_NAME = /^[A-Za-z0-9._-]{1,128}$/;

const LOOKUP_PREFIX = 'import-logflare.';

/** The lookup endpoint's query for a source: every value in it is a bound parameter. */
export function lookupQuery(sourceName: string): string {
  if (!QUARRY_NAME.test(sourceName)) throw new ImportError('QUARRY_ERROR', `"${sourceName}" is not a Quarry source name`);
  // coalesce: the query is type-checked when saved with every parameter NULL, and ClickHouse cannot
  // split a NULL string into an array. `in (select …)` rather than `in unnest(…)`: both engines
  // build a hash set of the ids once instead of searching the list for every row (measured with
  // 2,000 ids: ClickHouse 130 → 36 ms; with 5,000, DuckDB 247 → 129 ms).
  return (
    `select id from \`${sourceName}\`\n` +
    'where timestamp >= @from and timestamp <= @to\n' +
    "  and id in (select x from unnest(split(coalesce(@ids, ''), coalesce(@sep, ','))) as x)\n" +
    'group by id'
  );
}

const LOOKUP_PARAMS = [
  { name: 'from', type: 'timestamp', required: true, description: 'earliest timestamp of the batch' },
  { name: 'to', type: 'timestamp', required: true, description: 'latest timestamp of the batch' },
  { name: 'ids', type: 'string', required: true, description: 'the ids, joined by @sep' },
  { name: 'sep', type: 'string', required: true, description: 'a separator no id contains' },
];

/** A separator that no id contains: a newline, else ever longer runs of U+001F. */
export function separatorFor(ids: readonly string[]): string {
  if (!ids.some((id) => id.includes('\n'))) return '\n';
  let sep = '\u001f';
  while (ids.some((id) => id.includes(sep))) sep += '\u001f';
  return sep;
}

const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

function networkCode(e: unknown): string {
  let cur: unknown = e;
  for (let i = 0; i < 4 && cur !== undefined && cur !== null; i++) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    cur = (cur as { cause?: unknown }).cause;
  }
  return (e as Error)?.message ?? String(e);
}

function errorMessage(text: string): { message: string; code: string | undefined } {
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown; code?: unknown } | string; message?: unknown };
    if (typeof body.error === 'object' && body.error !== null) {
      return { message: String(body.error.message ?? text), code: typeof body.error.code === 'string' ? body.error.code : undefined };
    }
    if (typeof body.error === 'string') return { message: body.error, code: undefined };
    if (typeof body.message === 'string') return { message: body.message, code: undefined };
  } catch {
    // not JSON
  }
  return { message: text.slice(0, 300), code: undefined };
}

const BUSY = new Set([408, 429, 502, 503, 504, 507]);

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export class QuarryClient {
  private readonly base: string;

  constructor(private readonly options: QuarryClientOptions) {
    this.base = options.baseUrl.replace(/\/+$/, '');
  }

  get baseUrl(): string {
    return this.base;
  }

  /** Checks that Quarry answers and takes the token as `private`; returns its sources. */
  async connect(): Promise<QuarrySource[]> {
    const deadline = Date.now() + this.options.retryForMs;
    for (let attempt = 0; ; attempt++) {
      let health: Answer;
      try {
        health = await this.send('GET', '/health', undefined, false);
      } catch (e) {
        throw new ImportError(
          'QUARRY_UNREACHABLE',
          `Quarry does not answer at ${this.base} (${networkCode(e)}). Start it (npm start), or pass its address with --to ` +
            '(inside the Quarry container: http://127.0.0.1:4000).',
          { cause: e },
        );
      }
      if (health.status === 200) break;
      if (health.status === 503 && Date.now() < deadline) {
        this.options.onRetry?.('Quarry is starting or unavailable (503 on /health); waiting');
        await sleep(Math.min(5000, 250 * 2 ** attempt));
        continue;
      }
      throw new ImportError('QUARRY_UNAVAILABLE', `Quarry at ${this.base} is not healthy: GET /health answered ${health.status} ${health.text.slice(0, 300)}`);
    }
    return this.listSources();
  }

  async listSources(): Promise<QuarrySource[]> {
    const a = await this.call('GET', '/api/sources');
    this.expectManagement(a, 'list the sources');
    return (JSON.parse(a.text) as QuarrySource[]).map((s) => ({ id: s.id, name: s.name }));
  }

  async createSource(name: string): Promise<QuarrySource> {
    const a = await this.call('POST', '/api/sources', JSON.stringify({ name }));
    if (a.status === 409) {
      const existing = (await this.listSources()).find((s) => s.name === name);
      if (existing) return existing;
    }
    this.expectManagement(a, `create source "${name}"`, 201);
    const s = JSON.parse(a.text) as QuarrySource;
    return { id: s.id, name: s.name };
  }

  /** Saves (or updates) the lookup endpoint for `source`. */
  async ensureLookup(source: QuarrySource, raced = false): Promise<Lookup> {
    const name = `${LOOKUP_PREFIX}${source.id}`;
    const definition = {
      name,
      description:
        `Made by npm run import-logflare to find the events of source "${source.name}" it already sent; ` +
        'deleted when the import of that source ends, safe to delete.',
      query: lookupQuery(source.name),
      params: LOOKUP_PARAMS,
      sandboxable: false,
      enable_auth: true,
      max_limit: 10_000,
      cache_duration_seconds: 0,
      proactive_requerying_seconds: 0,
    };
    const list = await this.call('GET', '/api/endpoints');
    this.expectManagement(list, 'list the endpoints');
    const existing = (JSON.parse(list.text) as { id: string; name: string }[]).find((e) => e.name === name);
    const a = existing
      ? await this.call('PUT', `/api/endpoints/${existing.id}`, JSON.stringify(definition))
      : await this.call('POST', '/api/endpoints', JSON.stringify(definition));
    // Saved meanwhile by a concurrent import: update that one instead.
    if (a.status === 409 && !raced) return this.ensureLookup(source, true);
    this.expectManagement(a, `save the lookup endpoint ${name}`, existing ? 200 : 201);
    return { endpointId: (JSON.parse(a.text) as { id: string }).id, name, source };
  }

  async dropLookup(lookup: Lookup): Promise<void> {
    await this.call('DELETE', `/api/endpoints/${lookup.endpointId}`).catch(() => undefined);
  }

  /** Which of `ids` (none empty) `lookup`'s source holds with a timestamp in [from, to]. */
  async presentIds(lookup: Lookup, ids: readonly string[], from: string, to: string): Promise<Set<string>> {
    const body = JSON.stringify({ from, to, ids: ids.join(separatorFor(ids)), sep: separatorFor(ids) });
    const deadline = Date.now() + this.options.retryForMs;
    for (let attempt = 0; ; attempt++) {
      const a = await this.call('POST', `/api/endpoints/query/${encodeURIComponent(lookup.name)}`, body);
      if (a.status === 200) {
        const rows = (JSON.parse(a.text) as { result: { id: string }[] }).result;
        return new Set(rows.map((r) => r.id));
      }
      // Another node may not know the endpoint yet (docs/SCALING.md), or a concurrent import of the
      // same source ended and deleted it: save it again and retry.
      if (a.status === 404 && Date.now() < deadline) {
        const again = await this.ensureLookup(lookup.source);
        lookup.endpointId = again.endpointId;
        await sleep(Math.min(2000, 100 * 2 ** attempt));
        continue;
      }
      this.expectAuth(a);
      const { message, code } = errorMessage(a.text);
      throw new ImportError('QUARRY_ERROR', `Looking up ids in source "${lookup.source.name}" failed: ${a.status} ${code ?? ''} ${message}`.trim());
    }
  }

  /** Sends `events` to `sourceName` as one request. */
  async ingest(sourceName: string, events: readonly SourceEvent[]): Promise<IngestResult> {
    let body = '[';
    for (let i = 0; i < events.length; i++) body += (i === 0 ? '' : ',') + events[i]!.json;
    body += ']';
    const path = `/api/logs?source_name=${encodeURIComponent(sourceName)}`;
    const deadline = Date.now() + this.options.retryForMs;
    for (let attempt = 0; ; attempt++) {
      let a: Answer;
      try {
        a = await this.send('POST', path, body, true);
      } catch (e) {
        const code = networkCode(e);
        // Refused before anything was sent: safe to send again.
        if (NOT_SENT.has(code)) {
          if (Date.now() >= deadline) throw this.unreachable(e);
          this.options.onRetry?.(`Quarry unreachable (${code}); retrying`);
          await sleep(Math.min(5000, 250 * 2 ** attempt));
          continue;
        }
        return { kind: 'unknown', reason: code };
      }
      if (a.status === 200) return { kind: 'stored' };
      if (BUSY.has(a.status) && a.status !== 502 && a.status !== 504) {
        // 503/429/507/408: refused whole, nothing stored (docs/API.md §3).
        if (Date.now() >= deadline) {
          throw new ImportError(
            'QUARRY_UNAVAILABLE',
            `Quarry kept refusing ingest into "${sourceName}" for ${Math.round(this.options.retryForMs / 1000)} s: ${a.status} ${errorMessage(a.text).message}`,
          );
        }
        this.options.onRetry?.(`Quarry busy (${a.status}); retrying`);
        await sleep(Math.min(10_000, Math.max(a.retryAfterMs ?? 0, 250 * 2 ** attempt)));
        continue;
      }
      if (a.status === 400 || a.status === 413) return { kind: 'refused', status: a.status, message: errorMessage(a.text).message };
      this.expectAuth(a);
      if (a.status === 404) {
        throw new ImportError('QUARRY_SOURCE_MISSING', `Quarry has no source "${sourceName}" (it answered 404 to ingest): was it deleted during the import?`);
      }
      // A 500 or a gateway's 502/504: the request may or may not have been stored.
      if (a.status >= 500) return { kind: 'unknown', reason: `HTTP ${a.status}` };
      const { message, code } = errorMessage(a.text);
      throw new ImportError(
        'QUARRY_ERROR',
        `Quarry answered ingest into "${sourceName}" with ${a.status} ${code ?? ''} ${message}`.replace(/\s+/g, ' ').trim(),
      );
    }
  }

  /**
   * An idempotent request, retried while Quarry is busy or unreachable (for `retryForMs`); a 500
   * is retried twice, then returned to the caller, which reports it.
   */
  private async call(method: string, path: string, body?: string): Promise<Answer> {
    const deadline = Date.now() + this.options.retryForMs;
    let internal = 0;
    for (let attempt = 0; ; attempt++) {
      let a: Answer;
      try {
        a = await this.send(method, path, body, false);
      } catch (e) {
        if (Date.now() >= deadline) throw this.unreachable(e);
        this.options.onRetry?.(`Quarry unreachable (${networkCode(e)}); retrying`);
        await sleep(Math.min(5000, 250 * 2 ** attempt));
        continue;
      }
      if (a.status === 500 && internal++ < 2) {
        await sleep(500 * internal);
        continue;
      }
      if (!BUSY.has(a.status)) return a;
      if (Date.now() >= deadline) {
        throw new ImportError(
          'QUARRY_UNAVAILABLE',
          `Quarry kept answering ${a.status} to ${method} ${path.split('?')[0]} for ${Math.round(this.options.retryForMs / 1000)} s: ${errorMessage(a.text).message}`,
        );
      }
      this.options.onRetry?.(`Quarry busy (${a.status}); retrying`);
      await sleep(Math.min(10_000, Math.max(a.retryAfterMs ?? 0, 250 * 2 ** attempt)));
    }
  }

  private unreachable(e: unknown): ImportError {
    return new ImportError(
      'QUARRY_UNREACHABLE',
      `Quarry at ${this.base} stopped answering (${networkCode(e)}) for ${Math.round(this.options.retryForMs / 1000)} s. Start it again and re-run the same command: nothing is sent twice.`,
      { cause: e },
    );
  }

  private expectAuth(a: Answer): void {
    if (a.status === 401) {
      throw new ImportError(
        'QUARRY_UNAUTHORIZED',
        `Quarry refused the access token (401: ${errorMessage(a.text).message}). Pass Quarry's private token with --token, or set ` +
          'LOGFLARE_PRIVATE_ACCESS_TOKEN to the value Quarry was started with.',
      );
    }
    if (a.status === 403) {
      throw new ImportError(
        'QUARRY_FORBIDDEN',
        `Quarry's token has too narrow a scope (403: ${errorMessage(a.text).message}). The importer needs a token of scope "private" ` +
          '(LOGFLARE_PRIVATE_ACCESS_TOKEN), not the public one Vector uses.',
      );
    }
  }

  private expectManagement(a: Answer, what: string, ok = 200): void {
    if (a.status === ok) return;
    this.expectAuth(a);
    const { message, code } = errorMessage(a.text);
    throw new ImportError('QUARRY_ERROR', `Quarry could not ${what}: ${a.status} ${code ?? ''} ${message}`.replace(/\s+/g, ' ').trim());
  }

  private async send(method: string, path: string, body: string | undefined, ingest: boolean): Promise<Answer> {
    const headers: Record<string, string> = { 'x-api-key': this.options.token, accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${this.base}${path}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body }),
      // Ingest is never abandoned by the client: Quarry answers 408 itself when a request is too
      // slow, and an abandoned request could still be stored after the importer looked again.
      ...(ingest ? {} : { signal: AbortSignal.timeout(Math.max(60_000, this.options.retryForMs)) }),
    });
    const text = await res.text();
    const ra = res.headers.get('retry-after');
    const retryAfterMs = ra !== null && Number.isFinite(Number(ra)) ? Number(ra) * 1000 : undefined;
    return { status: res.status, text, retryAfterMs };
  }
}
