/**
 * The endpoints module, assembled: repository (seeded with the Supabase endpoints), management
 * service, runner and result cache. `server.ts` opens it once and hands `runner` and `service` to
 * the route plugins (registerEndpointRoutes in
 * src/http/endpoint-routes.ts).
 */
import type { ResultMemory } from '../query/result-memory.ts';
import type { EndpointRepository } from '../metadata/endpoints.ts';
import { Admission } from './admission.ts';
import type { QueryBackend } from './backend.ts';
import { ResultCache } from './cache.ts';
import { type Clock, systemClock } from './clock.ts';
import { type RunBody, EndpointRunner } from './runner.ts';
import { seedSupabaseEndpoints } from './seed.ts';
import { EndpointService } from './service.ts';
import { EndpointStats } from './stats.ts';

export interface OpenEndpointsOptions {
  /** Where endpoints are kept (the metadata store's endpoints). */
  repository: EndpointRepository;
  /**
   * Claims the background refresh of one cached result, so that with several nodes at most one
   * refreshes a given result at a time; default: always granted.
   */
  claimWarming?: (key: string, holdMs: number) => Promise<boolean>;
  backend: QueryBackend;
  /** Per-query time limit (config.queryTimeoutMs). */
  queryTimeoutMs: number;
  /** Tests pass a ManualClock; default: the system clock. */
  clock?: Clock;
  cacheMaxEntries?: number;
  cacheMaxBytes?: number;
  /** Create logs.all and usage.api-counts when missing (default true). */
  seed?: boolean;
  /** Queries running at once (default 4) and waiting for a turn (default 64); past that: 503. */
  maxConcurrentQueries?: number;
  maxQueuedQueries?: number;
  /** Queries one token may run at once (default: half of maxConcurrentQueries, at least 1). */
  maxQueriesPerToken?: number;
  /** Largest response body in bytes (default 64 MiB). */
  maxResponseBytes?: number;
  /** Memory for results being read and sent, shared by every run (QUERY_RESULT_MEMORY; default: none). */
  resultMemory?: ResultMemory;
  /** Told about failed background cache refreshes. */
  onRefreshError?: (error: unknown, endpointId: string) => void;
}

export interface EndpointsModule {
  repository: EndpointRepository;
  service: EndpointService;
  runner: EndpointRunner;
  cache: ResultCache<RunBody>;
  admission: Admission;
  /** This node's per-endpoint usage (a QueryObserver: `stats.record`). */
  stats: EndpointStats;
  /** Stops background refreshes and drops cached results. */
  close(): void;
}

export async function openEndpoints(options: OpenEndpointsOptions): Promise<EndpointsModule> {
  const repository = options.repository;
  if (options.seed ?? true) await seedSupabaseEndpoints(repository);
  const cache = new ResultCache<RunBody>({
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.cacheMaxEntries !== undefined ? { maxEntries: options.cacheMaxEntries } : {}),
    ...(options.cacheMaxBytes !== undefined ? { maxBytes: options.cacheMaxBytes } : {}),
    ...(options.onRefreshError ? { onRefreshError: options.onRefreshError } : {}),
    ...(options.claimWarming ? { claimWarming: options.claimWarming } : {}),
  });
  const admission = new Admission({
    maxRunning: options.maxConcurrentQueries ?? 4,
    maxWaiting: options.maxQueuedQueries ?? 64,
    ...(options.maxQueriesPerToken !== undefined ? { maxPerCaller: options.maxQueriesPerToken } : {}),
  });
  const runner = new EndpointRunner({
    endpoints: repository,
    backend: options.backend,
    cache,
    timeoutMs: options.queryTimeoutMs,
    ...(options.maxResponseBytes !== undefined ? { maxResponseBytes: options.maxResponseBytes } : {}),
    ...(options.resultMemory !== undefined ? { resultMemory: options.resultMemory } : {}),
    admission,
  });
  const stats = new EndpointStats(options.clock ?? systemClock);
  const service = new EndpointService({
    repository,
    backend: options.backend,
    invalidate: (id) => {
      runner.invalidate(id);
      if (!repository.get(id)) stats.forget(id);
    },
  });
  return { repository, service, runner, cache, admission, stats, close: () => cache.clear() };
}

export type { Endpoint, EndpointInput } from './model.ts';
export type { QueryBackend, SavedQueryInfo } from './backend.ts';
export { ManualClock, systemClock, type Clock } from './clock.ts';
