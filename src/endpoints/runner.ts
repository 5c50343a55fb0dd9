/**
 * Running an endpoint (docs/API.md §4, §6): resolve it, bind its parameters, take the caller's own
 * query when the endpoint is sandboxable, run through the result cache, redact PII, and hand back
 * a ready-to-send JSON body.
 */
import type { ResultClaim, ResultMemory } from '../query/result-memory.ts';
import { isQuarryError, QuarryError } from '../errors.ts';
import type { Admission } from './admission.ts';
import type { QueryBackend, SavedQueryInfo } from './backend.ts';
import { type CachePolicy, type Computed, type ResultCache, requestCacheKey } from './cache.ts';
import { type Endpoint, looksLikeUuid, normaliseUuid } from './model.ts';
import { type RawParams, bindDeclared, callerQuery, redactionFor } from './params.ts';
import { redactRows } from './pii.ts';
import { ResultBody } from './result.ts';
import { bindTyped, paramKey } from './typed-params.ts';

/** A computed response, as cached: rows, columns and warnings; each format is applied on the way out. */
export type RunBody = ResultBody;

export interface RunOutcome {
  body: ResultBody;
  cache: 'HIT' | 'MISS';
  /** Whole seconds since the body was computed (the `Age` header). */
  ageSeconds: number;
  /**
   * Gives back the result memory (QUERY_RESULT_MEMORY) the body holds: call it once the response
   * is written, or abandoned. Idempotent; a no-op for cached results (the cache bounds those).
   */
  release(): void;
}

export interface RunRequest {
  params: RawParams;
  /** The `LF-ENDPOINT-REDACT-PII` header, if sent. */
  redactHeader?: string | string[] | undefined;
  /** Who asks (a token id, or the client address): admission is fair between callers. */
  caller?: string;
  /** When the request arrived, on performance.now()'s clock: the time limit counts from here. */
  receivedAt?: number;
}

export interface EndpointLookup {
  get(id: string): Endpoint | undefined;
  byName(name: string): Endpoint | undefined;
}

export interface EndpointRunnerOptions {
  endpoints: EndpointLookup;
  backend: QueryBackend;
  cache: ResultCache<RunBody>;
  /** Per-query time limit. */
  timeoutMs: number;
  /** Bounds concurrent queries (cache hits do not count). */
  admission: Admission;
  /** Largest response body, bytes (QUERY_MAX_RESPONSE_BYTES, default 64 MiB); larger: RESULT_TOO_LARGE. */
  maxResponseBytes?: number;
  /**
   * The process's result memory (QUERY_RESULT_MEMORY): each run holds its rows' bytes on it until
   * its response is written (`RunOutcome.release`), or, for a cached endpoint, until the cache has
   * it. Default: none (results are bounded one at a time only).
   */
  resultMemory?: ResultMemory;
}

function noRelease(): void {}

/** QUERY_MAX_RESPONSE_BYTES's default. */
export const DEFAULT_MAX_RESPONSE_BYTES = 64 * 2 ** 20;

export class EndpointRunner {
  readonly #endpoints: EndpointLookup;
  readonly #backend: QueryBackend;
  readonly #cache: ResultCache<RunBody>;
  readonly #timeoutMs: number;
  readonly #admission: Admission;
  readonly #maxBytes: number;
  readonly #memory: ResultMemory | undefined;
  /**
   * The time limit less a margin for stopping the query and sending the answer (5%, at most
   * 250 ms): the limit is when the caller has its answer, not when the interrupt is sent.
   */
  readonly #budgetMs: number;
  /** Parsed saved queries, per endpoint version (id + updated_at). */
  readonly #info = new Map<string, { version: string; info: Promise<SavedQueryInfo> }>();

  constructor(options: EndpointRunnerOptions) {
    this.#endpoints = options.endpoints;
    this.#backend = options.backend;
    this.#cache = options.cache;
    this.#timeoutMs = options.timeoutMs;
    this.#admission = options.admission;
    this.#maxBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    this.#memory = options.resultMemory;
    this.#budgetMs = options.timeoutMs - Math.min(250, options.timeoutMs * 0.05);
  }

  /** A path segment that parses as a UUID is an id; anything else is a name. */
  resolve(idOrName: string): Endpoint | undefined {
    if (looksLikeUuid(idOrName)) return this.#endpoints.get(normaliseUuid(idOrName));
    return this.#endpoints.byName(idOrName);
  }

  async run(endpoint: Endpoint, request: RunRequest): Promise<RunOutcome> {
    const caller = callerQuery(request.params);
    if (caller && !endpoint.sandboxable) {
      throw new QuarryError('QUERY_NOT_ALLOWED', `Endpoint "${endpoint.name}" is not sandboxable: the "${caller.kind}" parameter is not accepted.`);
    }
    const info = await this.#savedInfo(endpoint);
    const params = endpoint.params ? bindTyped(endpoint.params, info.params, request.params) : bindDeclared(info.params, request.params);
    const redact = redactionFor(request.redactHeader, endpoint.redact_pii);

    // The request's own computation counts from its arrival; a background refresh of the cached
    // entry (the cache calls `compute` again later) gets a full time limit from its own start.
    let first = true;
    // The claim holds the rows' bytes from the engine's first row until the caller releases it.
    const compute = async (claim: ResultClaim | undefined): Promise<Computed<RunBody>> => {
      const ticket = first
        ? { caller: request.caller ?? '', deadline: (request.receivedAt ?? performance.now()) + this.#budgetMs }
        : { caller: '(refresh)', deadline: performance.now() + this.#budgetMs };
      first = false;
      const result = await this.#admission
        .run(ticket, (remainingMs) =>
          this.#backend.execute({
            saved: endpoint.query,
            info,
            sandboxable: endpoint.sandboxable,
            caller,
            params,
            maxRows: endpoint.max_limit,
            timeoutMs: Math.max(1, Math.floor(remainingMs)),
            maxBytes: this.#maxBytes,
            ...(claim ? { memory: claim } : {}),
          }),
        )
        .catch((e: unknown) => {
          // The engine (or admission) knows only the time that was left; the caller's limit is the configured one.
          if (isQuarryError(e) && e.code === 'QUERY_TIMEOUT') {
            throw new QuarryError(
              'QUERY_TIMEOUT',
              `The query ran past its time limit of ${this.#timeoutMs} ms (counted from the request's arrival) and was stopped.`,
              { cause: e },
            );
          }
          throw e;
        });
      const limited = result.rows.length > endpoint.max_limit ? result.rows.slice(0, endpoint.max_limit) : result.rows;
      const rows = redact ? redactRows(limited) : limited;
      const body = new ResultBody(rows, result.columns ?? Object.keys(rows[0] ?? {}), result.warnings);
      return { value: body, bytes: body.approxBytes() };
    };

    if (endpoint.cache_duration_seconds <= 0) {
      // Held until the response is written: the rows, their JSON text and the socket's copy of it
      // are all in this process until then.
      const claim = this.#memory?.claim();
      try {
        const { value } = await compute(claim);
        return { body: value, cache: 'MISS', ageSeconds: 0, release: () => claim?.release() };
      } catch (e) {
        claim?.release();
        throw e;
      }
    }
    const policy: CachePolicy = {
      ttlMs: endpoint.cache_duration_seconds * 1000,
      refreshMs: endpoint.proactive_requerying_seconds * 1000,
    };
    const key = requestCacheKey({
      params: Object.fromEntries(Object.entries(params).map(([k, v]) => [k, paramKey(v)])),
      sql: caller?.kind === 'sql' ? caller.text : null,
      lql: caller?.kind === 'lql' ? caller.text : null,
      redact,
    });
    // A result the cache keeps counts against the cache's own bound (256 MiB), not twice:
    // its claim holds only while it is computed.
    const cached = async (): Promise<Computed<RunBody>> => {
      const claim = this.#memory?.claim();
      try {
        return await compute(claim);
      } finally {
        claim?.release();
      }
    };
    const found = await this.#cache.get(endpoint.id, key, policy, cached);
    return { body: found.value, cache: found.hit ? 'HIT' : 'MISS', ageSeconds: Math.floor(found.ageMs / 1000), release: noRelease };
  }

  /** The `@name` parameters the endpoint's saved query declares. */
  async declaredParams(endpoint: Endpoint): Promise<readonly string[]> {
    return (await this.#savedInfo(endpoint)).params;
  }

  /** Drops the cached results and parsed query of an endpoint (after any change to it). */
  invalidate(endpointId: string): void {
    this.#cache.invalidateEndpoint(endpointId);
    this.#info.delete(endpointId);
  }

  #savedInfo(endpoint: Endpoint): Promise<SavedQueryInfo> {
    const version = `${endpoint.updated_at}\u0000${endpoint.query}`;
    const known = this.#info.get(endpoint.id);
    if (known && known.version === version) return known.info;
    const info = this.#backend.inspect(endpoint.query);
    this.#info.set(endpoint.id, { version, info });
    // A failure (e.g. a source the query names was deleted) is not remembered: the next run retries.
    info.catch(() => {
      if (this.#info.get(endpoint.id)?.info === info) this.#info.delete(endpoint.id);
    });
    return info;
  }
}
