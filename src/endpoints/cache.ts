/**
 * The endpoint result cache (docs/API.md §6).
 *
 * - An entry lives `ttlMs` from its first computation (absolute: hits and refreshes do not extend it).
 * - Concurrent misses on one key share a single computation.
 * - While alive, an entry is recomputed in the background every `refreshMs`; readers keep getting
 *   the previous value meanwhile. A failed refresh drops the entry. Errors are never stored.
 * - Memory is bounded by entry count and by bytes; the least recently used entries go first.
 * - Invalidating an endpoint drops its entries and discards computations already under way.
 */
import { type Clock, type Timer, systemClock } from './clock.ts';

export interface CachePolicy {
  ttlMs: number;
  /** 0, or not less than ttlMs: no background refresh. */
  refreshMs: number;
}

export interface Computed<T> {
  value: T;
  /** Approximate memory held by `value`. */
  bytes: number;
}

export interface CacheLookup<T> {
  value: T;
  hit: boolean;
  /** Time since `value` was computed. */
  ageMs: number;
}

export interface ResultCacheOptions {
  clock?: Clock;
  /** Default 10 000. */
  maxEntries?: number;
  /** Default 256 MiB. */
  maxBytes?: number;
  /** Told about failed background refreshes (the entry is dropped either way). */
  onRefreshError?: (error: unknown, endpointId: string) => void;
  /**
   * Asked before each background refresh: with several nodes, at most one refreshes a given
   * result at a time (the others skip that round and keep their value until it expires).
   * A refusal or a failure to ask skips the round. Default: always refresh.
   */
  claimWarming?: (key: string, holdMs: number) => Promise<boolean>;
}

export interface CacheStats {
  entries: number;
  bytes: number;
  inFlight: number;
}

interface Entry<T> {
  endpointId: string;
  key: string;
  value: T;
  bytes: number;
  computedAt: number;
  expiresAt: number;
  nextRefreshAt: number | null;
  refreshMs: number;
  refreshing: boolean;
  timer: Timer | null;
  compute: () => Promise<Computed<T>>;
}

interface Flight<T> {
  promise: Promise<Computed<T>>;
}

export class ResultCache<T> {
  readonly #clock: Clock;
  readonly #maxEntries: number;
  readonly #maxBytes: number;
  readonly #onRefreshError: (error: unknown, endpointId: string) => void;
  readonly #claimWarming: ((key: string, holdMs: number) => Promise<boolean>) | undefined;
  /** Insertion order is recency order: the first entry is the least recently used. */
  readonly #entries = new Map<string, Entry<T>>();
  readonly #flights = new Map<string, Flight<T>>();
  /** Bumped by invalidation; a computation that started under an older generation is not stored. */
  readonly #generations = new Map<string, number>();
  #bytes = 0;

  constructor(options: ResultCacheOptions = {}) {
    this.#clock = options.clock ?? systemClock;
    this.#maxEntries = options.maxEntries ?? 10_000;
    this.#maxBytes = options.maxBytes ?? 256 * 1024 * 1024;
    this.#onRefreshError = options.onRefreshError ?? (() => undefined);
    this.#claimWarming = options.claimWarming;
  }

  /**
   * The cached value for (endpointId, key), or the result of `compute` (run once however many
   * callers are waiting), stored under `policy` when it succeeds.
   */
  async get(endpointId: string, key: string, policy: CachePolicy, compute: () => Promise<Computed<T>>): Promise<CacheLookup<T>> {
    const id = fullKey(endpointId, key);
    const now = this.#clock.now();
    const entry = this.#entries.get(id);
    if (entry) {
      if (now < entry.expiresAt) {
        this.#entries.delete(id);
        this.#entries.set(id, entry);
        return { value: entry.value, hit: true, ageMs: now - entry.computedAt };
      }
      this.#drop(id);
    }

    let flight = this.#flights.get(id);
    if (!flight) {
      const generation = this.#generation(endpointId);
      const promise = compute();
      flight = { promise };
      const current = flight;
      this.#flights.set(id, current);
      promise.then(
        (computed) => {
          if (this.#flights.get(id) === current) this.#flights.delete(id);
          if (this.#generation(endpointId) === generation && policy.ttlMs > 0) {
            this.#store(endpointId, key, computed, policy, compute);
          }
        },
        () => {
          if (this.#flights.get(id) === current) this.#flights.delete(id);
        },
      );
    }
    const computed = await flight.promise;
    return { value: computed.value, hit: false, ageMs: 0 };
  }

  /** Drops every entry of the endpoint; results of computations under way are not stored. */
  invalidateEndpoint(endpointId: string): void {
    this.#generations.set(endpointId, this.#generation(endpointId) + 1);
    for (const [id, entry] of this.#entries) if (entry.endpointId === endpointId) this.#drop(id);
    for (const id of this.#flights.keys()) if (id.startsWith(`${endpointId}\u0000`)) this.#flights.delete(id);
  }

  /** Drops everything and cancels every timer. */
  clear(): void {
    for (const id of [...this.#entries.keys()]) this.#drop(id);
    this.#flights.clear();
  }

  stats(): CacheStats {
    return { entries: this.#entries.size, bytes: this.#bytes, inFlight: this.#flights.size };
  }

  #generation(endpointId: string): number {
    return this.#generations.get(endpointId) ?? 0;
  }

  #store(endpointId: string, key: string, computed: Computed<T>, policy: CachePolicy, compute: () => Promise<Computed<T>>): void {
    if (computed.bytes > this.#maxBytes || this.#maxEntries < 1) return;
    const id = fullKey(endpointId, key);
    this.#drop(id);
    const now = this.#clock.now();
    const expiresAt = now + policy.ttlMs;
    const refreshes = policy.refreshMs > 0 && policy.refreshMs < policy.ttlMs;
    const entry: Entry<T> = {
      endpointId,
      key,
      value: computed.value,
      bytes: computed.bytes,
      computedAt: now,
      expiresAt,
      nextRefreshAt: refreshes ? now + policy.refreshMs : null,
      refreshMs: policy.refreshMs,
      refreshing: false,
      timer: null,
      compute,
    };
    this.#entries.set(id, entry);
    this.#bytes += entry.bytes;
    this.#schedule(id, entry);
    this.#evict();
  }

  #schedule(id: string, entry: Entry<T>): void {
    entry.timer?.cancel();
    const at = entry.nextRefreshAt !== null && entry.nextRefreshAt < entry.expiresAt ? entry.nextRefreshAt : entry.expiresAt;
    entry.timer = this.#clock.setTimer(at - this.#clock.now(), () => this.#onTimer(id, entry));
  }

  #onTimer(id: string, entry: Entry<T>): void {
    if (this.#entries.get(id) !== entry) return;
    const now = this.#clock.now();
    if (now >= entry.expiresAt) {
      this.#drop(id);
      return;
    }
    if (entry.nextRefreshAt !== null && now >= entry.nextRefreshAt) {
      entry.nextRefreshAt += entry.refreshMs;
      if (!entry.refreshing) this.#refresh(id, entry);
    }
    this.#schedule(id, entry);
  }

  #refresh(id: string, entry: Entry<T>): void {
    entry.refreshing = true;
    const claim = this.#claimWarming;
    if (claim === undefined) {
      this.#recompute(id, entry);
      return;
    }
    claim(id, entry.refreshMs).then(
      (granted) => {
        if (granted && this.#entries.get(id) === entry) this.#recompute(id, entry);
        else entry.refreshing = false;
      },
      () => {
        entry.refreshing = false;
      },
    );
  }

  #recompute(id: string, entry: Entry<T>): void {
    const generation = this.#generation(entry.endpointId);
    let work: Promise<Computed<T>>;
    try {
      work = entry.compute();
    } catch (e) {
      work = Promise.reject(e);
    }
    work.then(
      (computed) => {
        entry.refreshing = false;
        if (this.#entries.get(id) !== entry || this.#generation(entry.endpointId) !== generation) return;
        if (computed.bytes > this.#maxBytes) {
          this.#drop(id);
          return;
        }
        this.#bytes += computed.bytes - entry.bytes;
        entry.value = computed.value;
        entry.bytes = computed.bytes;
        entry.computedAt = this.#clock.now();
        this.#evict();
      },
      (error: unknown) => {
        entry.refreshing = false;
        if (this.#entries.get(id) === entry) this.#drop(id);
        this.#onRefreshError(error, entry.endpointId);
      },
    );
  }

  #evict(): void {
    for (const id of this.#entries.keys()) {
      if (this.#entries.size <= this.#maxEntries && this.#bytes <= this.#maxBytes) return;
      this.#drop(id);
    }
  }

  #drop(id: string): void {
    const entry = this.#entries.get(id);
    if (!entry) return;
    entry.timer?.cancel();
    this.#entries.delete(id);
    this.#bytes -= entry.bytes;
  }
}

function fullKey(endpointId: string, key: string): string {
  return `${endpointId}\u0000${key}`;
}

/** A stable key for one request: same inputs in any order give the same key. */
export function requestCacheKey(parts: { params: Readonly<Record<string, string | null>>; sql: string | null; lql: string | null; redact: boolean }): string {
  const params = Object.keys(parts.params)
    .sort()
    .map((k) => [k, parts.params[k] ?? null]);
  return JSON.stringify([params, parts.sql, parts.lql, parts.redact]);
}
