/**
 * Environment → typed configuration, in one place (docs/API.md §1).
 */
import path from 'node:path';
import type { ConfiguredEngine } from './engines/engine.ts';
import { engineDefinition, engineNames } from './engines/registry.ts';
import { byteSize as bytes, type Env, optional, wholeNumber as positiveInt } from './settings.ts';
import { defaultQueryBounds, type QueryBounds } from './sql/bounds.ts';
import { defaultSchemaLimits, type SchemaLimits } from './storage/limits.ts';

/** Node's HTTP server timeouts (README, "Configuration"). */
export interface HttpTimeouts {
  /** Time to receive a request's headers (slow headers get 408). */
  headersMs: number;
  /** Time to receive a whole request, body included (a slow body gets 408). */
  requestMs: number;
  /** An idle keep-alive connection is closed after this long. */
  keepAliveMs: number;
}

export interface Config {
  port: number;
  host: string;
  /** Everything the embedded default stores lives here. */
  dataDir: string;
  /** Bootstrap tokens (docs/API.md §1). */
  privateAccessToken?: string;
  publicAccessToken?: string;
  /** Older Supabase stacks: one key for ingest and query. */
  legacyApiKey?: string;
  /** Request body limit for ingest, bytes. */
  bodyLimitBytes: number;
  /** Per-query time limit. */
  queryTimeoutMs: number;
  /** Queries running at once, and waiting for a turn; past that a query gets 503 OVERLOADED. */
  maxConcurrentQueries: number;
  maxQueuedQueries: number;
  /** Queries one token may run at once; the rest wait (default: half the concurrency, at least 1). */
  maxQueriesPerToken: number;
  /**
   * Memory for the whole process, bytes (MEMORY_BUDGET, default 2 GiB): DuckDB's memory_limit is
   * half of it unless DUCKDB_MEMORY_LIMIT says otherwise; the rest is Node's heap, result encoding
   * and DuckDB's allocations outside its buffer manager.
   */
  memoryBudgetBytes: number;
  /** Largest query response body, bytes; a larger result is refused (RESULT_TOO_LARGE). */
  responseMaxBytes: number;
  /**
   * Results being read and sent at once, bytes of their approximate JSON (QUERY_RESULT_MEMORY;
   * default: a 32nd of the memory budget, at least the response cap): past it a result that is not
   * alone gets 503 OVERLOADED (src/engines/result-memory.ts).
   */
  resultMemoryBytes: number;
  /** Cost and value-size bounds of a query before it runs (QUERY_MAX_TABLE_REFERENCES, …; src/sql/bounds.ts). */
  queryBounds: QueryBounds;
  /** Bounds on schema growth per source. */
  schemaLimits: SchemaLimits;
  /** Seconds between retention sweeps. */
  retentionSweepSeconds: number;
  httpTimeouts: HttpTimeouts;
  /** 'info' by default; 'silent' in tests. */
  logLevel: string;
  /** QUARRY_ENGINE (default: the registry's first, embedded DuckDB), with its own settings read. */
  engine: ConfiguredEngine;
  /** Also accepted by GET /metrics, besides private-scope tokens (docs/API.md §1). */
  metricsToken?: string;
  /**
   * Days of events the nine seeded Supabase sources keep, set on them at every start
   * (SUPABASE_RETENTION_DAYS; unset or 0: each source's own setting stands).
   */
  supabaseRetentionDays?: number;
  /** PostgreSQL URL of the shared metadata store (several nodes); unset: the embedded store. */
  databaseUrl?: string;
  /** How often a node checks the shared store's version besides notifications, ms. */
  metadataPollMs: number;
  /** A node whose shared metadata is older than this refuses requests with a token (503), ms. */
  metadataMaxStalenessMs: number;
}

export type { Env };

/**
 * QUERY_RESULT_MEMORY's default: a 32nd of MEMORY_BUDGET, and at least the response cap (64 MiB at
 * the default 2 GiB, 32 MiB at 1 GiB). A result held in Node costs several times its JSON size (row
 * strings, the JSON text, the socket's copy, garbage not yet collected: 0.25–0.65 GB for 64 MB), so
 * this keeps the results in flight to about a quarter of the budget; four maximal attacks at once
 * then stayed within MEMORY_BUDGET + 256 MiB on both engines at 2 GiB and 1 GiB, where a 16th let
 * ClickHouse pass it at 1 GiB (docs/API.md §4).
 */
export function defaultResultMemory(memoryBudgetBytes: number, responseMaxBytes: number): number {
  return Math.max(Math.floor(memoryBudgetBytes / 32), responseMaxBytes);
}

/**
 * QUERY_MAX_RESPONSE_BYTES's default: 64 MiB, and a 32nd of a smaller MEMORY_BUDGET (at least
 * 8 MiB). One 64 MB response costs 0.25–0.65 GB of memory while it is sent, which a 1 GiB budget
 * cannot hold beside the engine's half (docs/API.md §4).
 */
export function defaultResponseMaxBytes(memoryBudgetBytes: number): number {
  return Math.min(64 * 2 ** 20, Math.max(8 * 2 ** 20, Math.floor(memoryBudgetBytes / 32)));
}

export function loadConfig(env: Env = process.env): Config {
  const maxConcurrentQueries = Math.max(1, positiveInt(env, 'QUERY_MAX_CONCURRENCY', 4));
  const memoryBudgetBytes = bytes(env, 'MEMORY_BUDGET', 2 * 2 ** 30);
  const responseMaxBytes = bytes(env, 'QUERY_MAX_RESPONSE_BYTES', defaultResponseMaxBytes(memoryBudgetBytes));
  const config: Config = {
    port: positiveInt(env, 'PORT', 4000),
    host: optional(env, 'HOST') ?? '127.0.0.1',
    dataDir: path.resolve(optional(env, 'DATA_DIR') ?? './data'),
    bodyLimitBytes: positiveInt(env, 'INGEST_BODY_LIMIT_BYTES', 10 * 1024 * 1024),
    queryTimeoutMs: positiveInt(env, 'QUERY_TIMEOUT_MS', 30_000),
    maxConcurrentQueries,
    maxQueuedQueries: positiveInt(env, 'QUERY_MAX_QUEUE', 64),
    // Half the slots by default: one token's flood leaves the rest to others, and on a small
    // machine DuckDB already spreads each query over every core, so more at once adds little.
    maxQueriesPerToken: Math.max(1, positiveInt(env, 'QUERY_MAX_PER_TOKEN', Math.max(1, Math.floor(maxConcurrentQueries / 2)))),
    memoryBudgetBytes,
    responseMaxBytes,
    resultMemoryBytes: bytes(env, 'QUERY_RESULT_MEMORY', defaultResultMemory(memoryBudgetBytes, responseMaxBytes)),
    queryBounds: {
      maxTableReferences: Math.max(1, positiveInt(env, 'QUERY_MAX_TABLE_REFERENCES', defaultQueryBounds.maxTableReferences)),
      maxJoins: Math.max(1, positiveInt(env, 'QUERY_MAX_JOINS', defaultQueryBounds.maxJoins)),
      maxSetOperands: Math.max(2, positiveInt(env, 'QUERY_MAX_SET_OPERANDS', defaultQueryBounds.maxSetOperands)),
      maxNesting: Math.max(1, positiveInt(env, 'QUERY_MAX_NESTING', defaultQueryBounds.maxNesting)),
      maxValueBytes: bytes(env, 'QUERY_MAX_VALUE_BYTES', defaultQueryBounds.maxValueBytes),
      maxValueGrowth: Math.max(1, positiveInt(env, 'QUERY_MAX_VALUE_GROWTH', defaultQueryBounds.maxValueGrowth)),
    },
    schemaLimits: {
      maxFields: Math.max(1, positiveInt(env, 'INGEST_MAX_FIELDS', defaultSchemaLimits.maxFields)),
      maxTypedFields: Math.max(0, positiveInt(env, 'INGEST_MAX_TYPED_FIELDS', defaultSchemaLimits.maxTypedFields)),
      maxDepth: Math.max(1, positiveInt(env, 'INGEST_MAX_DEPTH', defaultSchemaLimits.maxDepth)),
      maxKeyLength: Math.max(1, positiveInt(env, 'INGEST_MAX_KEY_LENGTH', defaultSchemaLimits.maxKeyLength)),
    },
    retentionSweepSeconds: Math.max(1, positiveInt(env, 'RETENTION_SWEEP_SECONDS', 3600)),
    httpTimeouts: {
      headersMs: Math.max(1, positiveInt(env, 'HTTP_HEADERS_TIMEOUT_MS', 10_000)),
      requestMs: Math.max(1, positiveInt(env, 'HTTP_REQUEST_TIMEOUT_MS', 30_000)),
      keepAliveMs: Math.max(1, positiveInt(env, 'HTTP_KEEP_ALIVE_TIMEOUT_MS', 72_000)),
    },
    logLevel: optional(env, 'LOG_LEVEL') ?? 'info',
    engine: configureEngine(env, path.resolve(optional(env, 'DATA_DIR') ?? './data'), memoryBudgetBytes),
    metadataPollMs: Math.max(50, positiveInt(env, 'METADATA_POLL_MS', 1000)),
    metadataMaxStalenessMs: positiveInt(env, 'METADATA_MAX_STALENESS_MS', 10_000),
  };
  const databaseUrl = optional(env, 'DATABASE_URL');
  if (databaseUrl) config.databaseUrl = databaseUrl;
  const priv = optional(env, 'LOGFLARE_PRIVATE_ACCESS_TOKEN');
  const pub = optional(env, 'LOGFLARE_PUBLIC_ACCESS_TOKEN');
  const legacy = optional(env, 'LOGFLARE_API_KEY');
  const metricsToken = optional(env, 'METRICS_TOKEN');
  if (metricsToken) config.metricsToken = metricsToken;
  const retention = optional(env, 'SUPABASE_RETENTION_DAYS');
  if (retention !== undefined && retention !== '0') {
    const days = Number(retention);
    if (!/^\d+$/.test(retention) || days < 1 || days > 36500) {
      throw new Error(`SUPABASE_RETENTION_DAYS must be a whole number of days from 1 to 36500, or 0 to leave each source's retention as it is; got "${retention}"`);
    }
    config.supabaseRetentionDays = days;
  }
  // One value for two scopes would let the narrower one win the lookup (Studio's queries 403).
  if (priv && (priv === pub || priv === legacy)) {
    const other = priv === pub ? 'LOGFLARE_PUBLIC_ACCESS_TOKEN' : 'LOGFLARE_API_KEY';
    throw new Error(`LOGFLARE_PRIVATE_ACCESS_TOKEN and ${other} must differ: the private token may do everything, the other only ingest`);
  }
  if (priv) config.privateAccessToken = priv;
  if (pub) config.publicAccessToken = pub;
  if (legacy) config.legacyApiKey = legacy;
  return config;
}

/** Where the generated private token is kept when none is configured. */
export function generatedTokenPath(config: Config): string {
  return path.join(config.dataDir, 'private-access-token');
}

/** QUARRY_ENGINE's engine, its settings read (src/engines/registry.ts). */
function configureEngine(env: Env, dataDir: string, memoryBudgetBytes: number): ConfiguredEngine {
  const name = optional(env, 'QUARRY_ENGINE') ?? (engineNames[0] as string);
  const definition = engineDefinition(name);
  if (definition === undefined) throw new Error(`QUARRY_ENGINE must be ${engineNames.join(' or ')}, got "${name}"`);
  return definition.configure(env, { dataDir, memoryBudgetBytes });
}

/** The embedded metadata store's own file (sources, tokens, endpoints), apart from the events. */
export function metadataPath(config: Pick<Config, 'dataDir'>): string {
  return path.join(config.dataDir, 'metadata.duckdb');
}
