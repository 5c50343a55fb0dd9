/**
 * Per-endpoint usage on this node (`GET /api/endpoints/:id/stats`): calls, errors by code, p50/p95
 * duration, cache hit ratio, rows returned and the last error, over the last hour and the last day.
 *
 * Memory is bounded per endpoint whatever the traffic: the hour is 60 one-minute buckets, the day 24
 * one-hour buckets, and each bucket keeps durations as counts in fixed log-scale slots (a slot is
 * 2^(1/4) ≈ 19% wider than the one before), not as samples. Percentiles are therefore accurate to
 * that slot width (reported as the slot's upper bound, capped at the slowest call seen). The day
 * window is whole hours: the current hour and the 23 before it.
 */
import type { Clock } from './clock.ts';
import type { QueryObservation } from './observation.ts';

/** Upper bound of slot i: 0.1 ms × 2^(i/4); the last slot takes everything slower. */
const SLOTS = 96;
const SLOT_BASE_MS = 0.1;
const SLOTS_PER_DOUBLING = 4;

function slotOf(ms: number): number {
  if (!(ms > SLOT_BASE_MS)) return 0;
  const i = Math.ceil(Math.log2(ms / SLOT_BASE_MS) * SLOTS_PER_DOUBLING);
  return i >= SLOTS ? SLOTS - 1 : i;
}

function slotUpperMs(i: number): number {
  return SLOT_BASE_MS * 2 ** (i / SLOTS_PER_DOUBLING);
}

interface Bucket {
  /** Start of the period this bucket counts (ms since the epoch); -1 when unused. */
  start: number;
  calls: number;
  errors: number;
  byCode: Map<string, number>;
  hits: number;
  misses: number;
  rows: number;
  maxMs: number;
  durations: Uint32Array;
}

function emptyBucket(): Bucket {
  return { start: -1, calls: 0, errors: 0, byCode: new Map(), hits: 0, misses: 0, rows: 0, maxMs: 0, durations: new Uint32Array(SLOTS) };
}

function reset(b: Bucket, start: number): void {
  b.start = start;
  b.calls = 0;
  b.errors = 0;
  b.byCode.clear();
  b.hits = 0;
  b.misses = 0;
  b.rows = 0;
  b.maxMs = 0;
  b.durations.fill(0);
}

/** A ring of `size` buckets of `spanMs` each; buckets are allocated on first use. */
class Ring {
  readonly #slots: (Bucket | undefined)[];

  constructor(
    readonly size: number,
    readonly spanMs: number,
  ) {
    this.#slots = new Array(size);
  }

  record(now: number, o: QueryObservation, slot: number): void {
    const start = now - (now % this.spanMs);
    const i = Math.floor(start / this.spanMs) % this.size;
    let b = this.#slots[i];
    if (!b) {
      b = emptyBucket();
      this.#slots[i] = b;
    }
    if (b.start !== start) reset(b, start);
    b.calls++;
    if (o.error) {
      b.errors++;
      b.byCode.set(o.error.code, (b.byCode.get(o.error.code) ?? 0) + 1);
    } else {
      if (o.cache === 'HIT') b.hits++;
      else b.misses++;
      b.rows += o.rows;
    }
    if (o.durationMs > b.maxMs) b.maxMs = o.durationMs;
    b.durations[slot]!++;
  }

  /** The buckets of the current period and the `size - 1` before it. */
  live(now: number): Bucket[] {
    const oldest = now - (now % this.spanMs) - (this.size - 1) * this.spanMs;
    return this.#slots.filter((b): b is Bucket => b !== undefined && b.start >= oldest && b.start <= now);
  }
}

export interface WindowStats {
  calls: number;
  errors: number;
  errors_by_code: Record<string, number>;
  /** null when there were no calls. */
  duration_ms: { p50: number | null; p95: number | null; max: number | null };
  cache: { hits: number; misses: number; hit_ratio: number | null };
  rows_returned: number;
}

export interface LastError {
  code: string;
  status: number;
  message: string;
  at: string;
}

export interface EndpointStatsView {
  endpoint_id: string;
  /** Stats are kept in memory by each service node: these are this node's calls. */
  scope: 'node';
  /** When this node started counting (its start, or the endpoint's first call since). */
  since: string;
  last_hour: WindowStats;
  last_day: WindowStats;
  last_error: LastError | null;
}

interface PerEndpoint {
  since: number;
  hour: Ring;
  day: Ring;
  lastError: LastError | null;
}

function summarise(buckets: readonly Bucket[]): WindowStats {
  let calls = 0;
  let errors = 0;
  let hits = 0;
  let misses = 0;
  let rows = 0;
  let maxMs = 0;
  const byCode: Record<string, number> = {};
  const durations = new Float64Array(SLOTS);
  for (const b of buckets) {
    calls += b.calls;
    errors += b.errors;
    hits += b.hits;
    misses += b.misses;
    rows += b.rows;
    if (b.maxMs > maxMs) maxMs = b.maxMs;
    for (const [code, n] of b.byCode) byCode[code] = (byCode[code] ?? 0) + n;
    for (let i = 0; i < SLOTS; i++) durations[i]! += b.durations[i]!;
  }
  const percentile = (p: number): number | null => {
    if (calls === 0) return null;
    const rank = Math.max(1, Math.ceil(p * calls));
    let seen = 0;
    for (let i = 0; i < SLOTS; i++) {
      seen += durations[i]!;
      if (seen >= rank) return round(Math.min(slotUpperMs(i), maxMs));
    }
    return round(maxMs);
  };
  const served = hits + misses;
  return {
    calls,
    errors,
    errors_by_code: byCode,
    duration_ms: { p50: percentile(0.5), p95: percentile(0.95), max: calls === 0 ? null : round(maxMs) },
    cache: { hits, misses, hit_ratio: served === 0 ? null : round(hits / served, 4) },
    rows_returned: rows,
  };
}

function round(x: number, digits = 3): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

export class EndpointStats {
  readonly #clock: Clock;
  readonly #started: number;
  readonly #byId = new Map<string, PerEndpoint>();

  constructor(clock: Clock) {
    this.#clock = clock;
    this.#started = clock.now();
  }

  /** Counts one run (a QueryObserver). */
  readonly record = (o: QueryObservation): void => {
    const now = this.#clock.now();
    let e = this.#byId.get(o.endpointId);
    if (!e) {
      e = { since: now, hour: new Ring(60, 60_000), day: new Ring(24, 3_600_000), lastError: null };
      this.#byId.set(o.endpointId, e);
    }
    const slot = slotOf(o.durationMs);
    e.hour.record(now, o, slot);
    e.day.record(now, o, slot);
    if (o.error) {
      e.lastError = { code: o.error.code, status: o.error.status, message: o.error.message, at: new Date(now).toISOString() };
    }
  };

  /** The endpoint's stats; zeros for an endpoint never called on this node. */
  view(endpointId: string): EndpointStatsView {
    const now = this.#clock.now();
    const e = this.#byId.get(endpointId);
    return {
      endpoint_id: endpointId,
      scope: 'node',
      since: new Date(e?.since ?? this.#started).toISOString(),
      last_hour: summarise(e ? e.hour.live(now) : []),
      last_day: summarise(e ? e.day.live(now) : []),
      last_error: e?.lastError ?? null,
    };
  }

  /** Forgets an endpoint (deleted, or changed: the counts described the old query). */
  forget(endpointId: string): void {
    this.#byId.delete(endpointId);
  }
}
