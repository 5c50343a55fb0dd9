/**
 * Environment → typed configuration, in one place (docs/API.md §1).
 */
import path from 'node:path';

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
  /** DuckDB memory limit, e.g. '4GB'. */
  memoryLimit?: string;
  /** WAL size that triggers a DuckDB checkpoint, e.g. '64MiB' (the default; the crash test lowers it). */
  checkpointThreshold?: string;
  /** 'info' by default; 'silent' in tests. */
  logLevel: string;
  /** Also accepted by GET /metrics, besides private-scope tokens (docs/API.md §1). */
  metricsToken?: string;
  /** PostgreSQL URL of the shared metadata store (several nodes); unset: the embedded store. */
  databaseUrl?: string;
  /** How often a node checks the shared store's version besides notifications, ms. */
  metadataPollMs: number;
  /** A node whose shared metadata is older than this refuses requests with a token (503), ms. */
  metadataMaxStalenessMs: number;
}

export type Env = Record<string, string | undefined>;

function positiveInt(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) {
    throw new Error(`${name} must be a whole number, got "${raw}"`);
  }
  return n;
}

function optional(env: Env, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v === '' ? undefined : v;
}

export function loadConfig(env: Env = process.env): Config {
  const config: Config = {
    port: positiveInt(env, 'PORT', 4000),
    host: optional(env, 'HOST') ?? '127.0.0.1',
    dataDir: path.resolve(optional(env, 'DATA_DIR') ?? './data'),
    bodyLimitBytes: positiveInt(env, 'INGEST_BODY_LIMIT_BYTES', 10 * 1024 * 1024),
    queryTimeoutMs: positiveInt(env, 'QUERY_TIMEOUT_MS', 30_000),
    maxConcurrentQueries: Math.max(1, positiveInt(env, 'QUERY_MAX_CONCURRENCY', 4)),
    maxQueuedQueries: positiveInt(env, 'QUERY_MAX_QUEUE', 64),
    logLevel: optional(env, 'LOG_LEVEL') ?? 'info',
    metadataPollMs: Math.max(50, positiveInt(env, 'METADATA_POLL_MS', 1000)),
    metadataMaxStalenessMs: positiveInt(env, 'METADATA_MAX_STALENESS_MS', 10_000),
  };
  const databaseUrl = optional(env, 'DATABASE_URL');
  if (databaseUrl) config.databaseUrl = databaseUrl;
  const priv = optional(env, 'LOGFLARE_PRIVATE_ACCESS_TOKEN');
  const pub = optional(env, 'LOGFLARE_PUBLIC_ACCESS_TOKEN');
  const legacy = optional(env, 'LOGFLARE_API_KEY');
  const mem = optional(env, 'DUCKDB_MEMORY_LIMIT');
  const metricsToken = optional(env, 'METRICS_TOKEN');
  if (metricsToken) config.metricsToken = metricsToken;
  if (priv) config.privateAccessToken = priv;
  if (pub) config.publicAccessToken = pub;
  if (legacy) config.legacyApiKey = legacy;
  if (mem) config.memoryLimit = mem;
  const checkpoint = optional(env, 'DUCKDB_CHECKPOINT_THRESHOLD');
  if (checkpoint) {
    if (!/^\d+(\.\d+)?\s*(B|KB|KiB|MB|MiB|GB|GiB)$/i.test(checkpoint)) {
      throw new Error(`DUCKDB_CHECKPOINT_THRESHOLD must be a size such as 64MiB, got "${checkpoint}"`);
    }
    config.checkpointThreshold = checkpoint;
  }
  return config;
}

/** Where the generated private token is kept when none is configured. */
export function generatedTokenPath(config: Config): string {
  return path.join(config.dataDir, 'private-access-token');
}

export function databasePath(config: Config): string {
  return path.join(config.dataDir, 'quarry.duckdb');
}

/** The embedded metadata store's own file (sources, tokens, endpoints), apart from the events. */
export function metadataPath(config: Config): string {
  return path.join(config.dataDir, 'metadata.duckdb');
}
