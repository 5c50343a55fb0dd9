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
  /** 'info' by default; 'silent' in tests. */
  logLevel: string;
  /** QUARRY_ENGINE: the embedded DuckDB store (default) or ClickHouse. */
  engine: 'duckdb' | 'clickhouse';
  /** Set when engine is 'clickhouse'. */
  clickhouse?: ClickHouseConfig;
  /** Also accepted by GET /metrics, besides private-scope tokens (docs/API.md §1). */
  metricsToken?: string;
}

export interface ClickHouseConfig {
  /** CLICKHOUSE_URL: `http(s)://host:port`, or `chdb:` / `chdb:///dir` for embedded chDB. */
  url: string;
  user?: string;
  password?: string;
  /** CLICKHOUSE_DATABASE (default `quarry`): every Quarry table lives in it. */
  database: string;
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
    engine: 'duckdb',
  };
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
  const engine = optional(env, 'QUARRY_ENGINE') ?? 'duckdb';
  if (engine !== 'duckdb' && engine !== 'clickhouse') {
    throw new Error(`QUARRY_ENGINE must be duckdb or clickhouse, got "${engine}"`);
  }
  config.engine = engine;
  if (engine === 'clickhouse') config.clickhouse = clickHouseConfig(env);
  return config;
}

/** Where the generated private token is kept when none is configured. */
export function generatedTokenPath(config: Config): string {
  return path.join(config.dataDir, 'private-access-token');
}

export function databasePath(config: Config): string {
  return path.join(config.dataDir, 'quarry.duckdb');
}

function clickHouseConfig(env: Env): ClickHouseConfig {
  const url = optional(env, 'CLICKHOUSE_URL');
  if (url === undefined) {
    throw new Error('QUARRY_ENGINE=clickhouse needs CLICKHOUSE_URL (http://host:8123, or chdb: for an embedded chDB under DATA_DIR)');
  }
  if (!/^(https?:\/\/|chdb:)/.test(url)) throw new Error(`CLICKHOUSE_URL must start with http://, https:// or chdb:, got "${url}"`);
  const database = optional(env, 'CLICKHOUSE_DATABASE') ?? 'quarry';
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(database)) {
    throw new Error(`CLICKHOUSE_DATABASE must be letters, digits and _ (at most 64), got "${database}"`);
  }
  const config: ClickHouseConfig = { url, database };
  const user = optional(env, 'CLICKHOUSE_USER');
  const password = optional(env, 'CLICKHOUSE_PASSWORD');
  if (user) config.user = user;
  if (password) config.password = password;
  return config;
}

/** The chDB data directory `CLICKHOUSE_URL=chdb:` (under DATA_DIR) or `chdb:///dir` names; undefined for a server URL. */
export function chdbPath(config: Config): string | undefined {
  const url = config.clickhouse?.url;
  if (url === undefined || !url.startsWith('chdb:')) return undefined;
  const rest = url.slice('chdb:'.length);
  if (rest === '' || rest === '//') return path.join(config.dataDir, 'clickhouse');
  return path.resolve(rest.replace(/^\/\//, ''));
}

/** The embedded metadata store's own file (sources, tokens, endpoints), apart from the events. */
export function metadataPath(config: Config): string {
  return path.join(config.dataDir, 'metadata.duckdb');
}
