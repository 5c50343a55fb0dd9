/**
 * Running an endpoint (docs/API.md §4, §6): resolve it, bind its parameters, take the caller's own
 * query when the endpoint is sandboxable, run through the result cache, redact PII, and hand back
 * a ready-to-send JSON body.
 */
import { QuarryError } from '../errors.ts';
import type { Admission } from './admission.ts';
import type { QueryBackend, ResultRow, SavedQueryInfo } from './backend.ts';
import { type CachePolicy, type Computed, type ResultCache, requestCacheKey } from './cache.ts';
import { type Endpoint, looksLikeUuid, normaliseUuid } from './model.ts';
import { type RawParams, bindDeclared, callerQuery, redactionFor } from './params.ts';
import { redactRows } from './pii.ts';

/** A computed response, as cached: the serialised `{"result": [...]}` body and its warnings. */
export interface RunBody {
  json: string;
  rowCount: number;
  warnings: string[];
}

export interface RunOutcome extends RunBody {
  cache: 'HIT' | 'MISS';
  /** Whole seconds since the body was computed (the `Age` header). */
  ageSeconds: number;
}

export interface RunRequest {
  params: RawParams;
  /** The `LF-ENDPOINT-REDACT-PII` header, if sent. */
  redactHeader?: string | string[] | undefined;
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
}

export class EndpointRunner {
  readonly #endpoints: EndpointLookup;
  readonly #backend: QueryBackend;
  readonly #cache: ResultCache<RunBody>;
  readonly #timeoutMs: number;
  readonly #admission: Admission;
  /** Parsed saved queries, per endpoint version (id + updated_at). */
  readonly #info = new Map<string, { version: string; info: Promise<SavedQueryInfo> }>();

  constructor(options: EndpointRunnerOptions) {
    this.#endpoints = options.endpoints;
    this.#backend = options.backend;
    this.#cache = options.cache;
    this.#timeoutMs = options.timeoutMs;
    this.#admission = options.admission;
  }

  /** A path segment that parses as a UUID is an id; anything else is a name. */
  resolve(idOrName: string): Endpoint | undefined {
    if (looksLikeUuid(idOrName)) return this.#endpoints.get(normaliseUuid(idOrName));
    return this.#endpoints.byName(idOrName);
  }

  async run(endpoint: Endpoint, request: RunRequest): Promise<RunOutcome> {
    const caller = callerQuery(request.params);
    if (caller && !endpoint.sandboxable) {
      throw new QuarryError(
        'QUERY_NOT_ALLOWED',
        `Endpoint "${endpoint.name}" is not sandboxable: the "${caller.kind}" parameter is not accepted.`,
      );
    }
    const info = await this.#savedInfo(endpoint);
    const params = bindDeclared(info.params, request.params);
    const redact = redactionFor(request.redactHeader, endpoint.redact_pii);

    const compute = async (): Promise<Computed<RunBody>> => {
      const result = await this.#admission.run(() =>
        this.#backend.execute({
          saved: endpoint.query,
          info,
          sandboxable: endpoint.sandboxable,
          caller,
          params,
          maxRows: endpoint.max_limit,
          timeoutMs: this.#timeoutMs,
        }),
      );
      const limited = result.rows.length > endpoint.max_limit ? result.rows.slice(0, endpoint.max_limit) : result.rows;
      const rows = redact ? redactRows(limited) : limited;
      const body: RunBody = { json: serialiseResult(rows), rowCount: rows.length, warnings: result.warnings };
      return { value: body, bytes: body.json.length + body.warnings.reduce((n, w) => n + w.length, 0) };
    };

    if (endpoint.cache_duration_seconds <= 0) {
      const { value } = await compute();
      return { ...value, cache: 'MISS', ageSeconds: 0 };
    }
    const policy: CachePolicy = {
      ttlMs: endpoint.cache_duration_seconds * 1000,
      refreshMs: endpoint.proactive_requerying_seconds * 1000,
    };
    const key = requestCacheKey({
      params,
      sql: caller?.kind === 'sql' ? caller.text : null,
      lql: caller?.kind === 'lql' ? caller.text : null,
      redact,
    });
    const found = await this.#cache.get(endpoint.id, key, policy, compute);
    return { ...found.value, cache: found.hit ? 'HIT' : 'MISS', ageSeconds: Math.floor(found.ageMs / 1000) };
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

/** `{"result": rows}` as JSON; 64-bit integers become numbers when exact, else strings. */
export function serialiseResult(rows: readonly ResultRow[]): string {
  // Engines encode 64-bit integers as numbers already, so the plain (much faster) stringify
  // almost always succeeds; it throws on a bigint, and only then is the replacer needed.
  try {
    return JSON.stringify({ result: rows });
  } catch (e) {
    if (!(e instanceof TypeError)) throw e;
  }
  return JSON.stringify({ result: rows }, (_key, value: unknown) => {
    if (typeof value === 'bigint') {
      return value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= BigInt(Number.MIN_SAFE_INTEGER)
        ? Number(value)
        : value.toString();
    }
    return value;
  });
}
