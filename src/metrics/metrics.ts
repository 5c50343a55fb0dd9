/**
 * The Prometheus metrics (`GET /metrics`), on a registry of their own (not prom-client's global
 * one, so several services in one process, as in the tests, do not mix).
 *
 * Hot paths (every ingest request, every endpoint run) touch one cached child per label set: no
 * label hashing or object building per request. Label values are bounded: `source` is a source
 * name the registry knows (or `unknown` when the request named none that exists), `endpoint` an
 * endpoint name, `status` an HTTP status, `code` an error code; series of sources and endpoints
 * that no longer exist are dropped at the next scrape. Gauges that describe state (queue depth,
 * cache size, storage) are read when scraped.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { QueryObservation } from '../endpoints/observation.ts';
import type { StorageUsage } from './storage-usage.ts';

export interface IngestObservation {
  /** The source's name; undefined when the request named no existing source. */
  source: string | undefined;
  status: number;
  /** Events in the body (0 when it was refused before or while being parsed). */
  events: number;
  /** Body bytes as received (compressed when Content-Encoding says so). */
  bytes: number;
}

export interface MetricsProbes {
  admission(): { running: number; waiting: number };
  cache(): { entries: number; bytes: number };
  storage(): Promise<StorageUsage>;
  /** Names of the sources and endpoints that exist now (older series are dropped). */
  sourceNames(): Iterable<string>;
  endpointNames(): Iterable<string>;
}

interface Child {
  inc(value?: number): void;
}

interface HistogramChild {
  observe(value: number): void;
}

const UNKNOWN_SOURCE = 'unknown';

/** Seconds: 1 ms … 60 s, the range an endpoint run spans (time limit default 30 s). */
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export class QuarryMetrics {
  readonly registry = new Registry();
  readonly #probes: MetricsProbes;

  readonly #ingestRequests: Counter<'source' | 'status'>;
  readonly #ingestEvents: Counter<'source' | 'status'>;
  readonly #ingestBytes: Counter<'source' | 'status'>;
  readonly #queryDuration: Histogram<'endpoint' | 'cache'>;
  readonly #queryErrors: Counter<'endpoint' | 'code'>;
  readonly #rejections: Counter<'endpoint'>;

  /** Children by label values joined with NUL, per metric; and which label sets each name owns. */
  readonly #ingestChildren = new Map<string, { requests: Child; events: Child; bytes: Child; source: string; status: string }>();
  readonly #durationChildren = new Map<string, { child: HistogramChild; endpoint: string; cache: string }>();
  readonly #errorChildren = new Map<string, { child: Child; endpoint: string; code: string }>();
  readonly #rejectionChildren = new Map<string, Child>();

  constructor(probes: MetricsProbes) {
    this.#probes = probes;
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });

    this.#ingestRequests = new Counter({
      name: 'quarry_ingest_requests_total',
      help: 'Ingest requests, by source name and HTTP status.',
      labelNames: ['source', 'status'],
      registers,
    });
    this.#ingestEvents = new Counter({
      name: 'quarry_ingest_events_total',
      help: 'Events in ingest requests, by source name and HTTP status (200: stored).',
      labelNames: ['source', 'status'],
      registers,
    });
    this.#ingestBytes = new Counter({
      name: 'quarry_ingest_bytes_total',
      help: 'Ingest request body bytes as received (compressed when Content-Encoding says so), by source name and HTTP status.',
      labelNames: ['source', 'status'],
      registers,
    });
    this.#queryDuration = new Histogram({
      name: 'quarry_query_duration_seconds',
      help: 'Endpoint runs from arrival to response, by endpoint name and cache outcome (hit, miss, error).',
      labelNames: ['endpoint', 'cache'],
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.#queryErrors = new Counter({
      name: 'quarry_query_errors_total',
      help: 'Endpoint runs that failed, by endpoint name and error code.',
      labelNames: ['endpoint', 'code'],
      registers,
    });
    this.#rejections = new Counter({
      name: 'quarry_admission_rejections_total',
      help: 'Endpoint runs refused with OVERLOADED (queue full, no slot before the time limit, or out of memory), by endpoint name.',
      labelNames: ['endpoint'],
      registers,
    });
    new Gauge({
      name: 'quarry_admission_queue_depth',
      help: 'Queries waiting for a slot.',
      registers,
      collect() {
        this.set(probes.admission().waiting);
      },
    });
    new Gauge({
      name: 'quarry_admission_running',
      help: 'Queries running now.',
      registers,
      collect() {
        this.set(probes.admission().running);
      },
    });
    new Gauge({
      name: 'quarry_cache_entries',
      help: 'Endpoint results held by the result cache.',
      registers,
      collect() {
        this.set(probes.cache().entries);
      },
    });
    new Gauge({
      name: 'quarry_cache_bytes',
      help: 'Approximate memory held by the result cache.',
      registers,
      collect() {
        this.set(probes.cache().bytes);
      },
    });
    new Gauge({
      name: 'quarry_storage_bytes',
      help: 'Bytes of the files under DATA_DIR (measured at most every few seconds).',
      registers,
      async collect() {
        this.set((await probes.storage()).bytesOnDisk);
      },
    });
    const sourceRows = new Gauge({
      name: 'quarry_source_rows',
      help: 'Events stored per source (measured at most every few seconds).',
      labelNames: ['source'],
      registers,
      async collect() {
        const usage = await probes.storage();
        sourceRows.reset();
        for (const [source, rows] of usage.rowsBySource) sourceRows.set({ source }, rows);
      },
    });
  }

  readonly observeIngest = (o: IngestObservation): void => {
    const source = o.source ?? UNKNOWN_SOURCE;
    const status = String(o.status);
    const key = `${source}\u0000${status}`;
    let c = this.#ingestChildren.get(key);
    if (!c) {
      c = {
        requests: this.#ingestRequests.labels(source, status),
        events: this.#ingestEvents.labels(source, status),
        bytes: this.#ingestBytes.labels(source, status),
        source,
        status,
      };
      this.#ingestChildren.set(key, c);
    }
    c.requests.inc();
    if (o.events > 0) c.events.inc(o.events);
    if (o.bytes > 0) c.bytes.inc(o.bytes);
  };

  readonly observeQuery = (o: QueryObservation): void => {
    const endpoint = o.endpointName;
    const cache = o.error ? 'error' : o.cache === 'HIT' ? 'hit' : 'miss';
    const key = `${endpoint}\u0000${cache}`;
    let d = this.#durationChildren.get(key);
    if (!d) {
      d = { child: this.#queryDuration.labels(endpoint, cache), endpoint, cache };
      this.#durationChildren.set(key, d);
    }
    d.child.observe(o.durationMs / 1000);
    if (!o.error) return;
    const code = o.error.code;
    const errorKey = `${endpoint}\u0000${code}`;
    let e = this.#errorChildren.get(errorKey);
    if (!e) {
      e = { child: this.#queryErrors.labels(endpoint, code), endpoint, code };
      this.#errorChildren.set(errorKey, e);
    }
    e.child.inc();
    if (code === 'OVERLOADED') {
      let r = this.#rejectionChildren.get(endpoint);
      if (!r) {
        r = this.#rejections.labels(endpoint);
        this.#rejectionChildren.set(endpoint, r);
      }
      r.inc();
    }
  };

  /** The Prometheus text exposition. */
  async metrics(): Promise<string> {
    this.#dropGone();
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** Drops the series of sources and endpoints that no longer exist (deleted or renamed). */
  #dropGone(): void {
    const sources = new Set(this.#probes.sourceNames());
    sources.add(UNKNOWN_SOURCE);
    for (const [key, c] of this.#ingestChildren) {
      if (sources.has(c.source)) continue;
      this.#ingestRequests.remove(c.source, c.status);
      this.#ingestEvents.remove(c.source, c.status);
      this.#ingestBytes.remove(c.source, c.status);
      this.#ingestChildren.delete(key);
    }
    const endpoints = new Set(this.#probes.endpointNames());
    for (const [key, d] of this.#durationChildren) {
      if (endpoints.has(d.endpoint)) continue;
      this.#queryDuration.remove(d.endpoint, d.cache);
      this.#durationChildren.delete(key);
    }
    for (const [key, e] of this.#errorChildren) {
      if (endpoints.has(e.endpoint)) continue;
      this.#queryErrors.remove(e.endpoint, e.code);
      this.#errorChildren.delete(key);
    }
    for (const endpoint of this.#rejectionChildren.keys()) {
      if (endpoints.has(endpoint)) continue;
      this.#rejections.remove(endpoint);
      this.#rejectionChildren.delete(endpoint);
    }
  }
}
