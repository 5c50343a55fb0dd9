/**
 * Environment → typed configuration, in one place (docs/API.md §1). Every setting the service reads
 * is described once, in `serviceSettings` below: how its text is read, its default, what it means
 * and where it is documented; each engine's settings are its definition's (src/engines/registry.ts).
 * README.md's Configuration tables are generated from both (`node --import tsx
 * test/docs/settings-table.ts --write`), and test/docs/settings-and-codes.test.ts fails when they
 * differ or when code reads a setting the registry does not describe.
 */
import path from 'node:path';
import type { ConfiguredEngine, EngineSetting } from './engines/engine.ts';
import { engineDefinition, engineDefinitions, engineNames } from './engines/registry.ts';
import { type Env, type Setting, byteSetting, customSetting, readSetting, textSetting, wholeSetting } from './settings.ts';
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

const MiB = 2 ** 20;
const GiB = 2 ** 30;

/** SUPABASE_RETENTION_DAYS: 0 leaves each source's own retention (as unset does). */
function retentionDays(raw: string, name: string): number | undefined {
  if (raw === '0') return undefined;
  const days = Number(raw);
  if (!/^\d+$/.test(raw) || days < 1 || days > 36500) {
    throw new Error(`${name} must be a whole number of days from 1 to 36500, or 0 to leave each source's retention as it is; got "${raw}"`);
  }
  return days;
}

function engineName(raw: string, name: string): string {
  if (engineDefinition(raw) === undefined) throw new Error(`${name} must be ${engineNames.join(' or ')}, got "${raw}"`);
  return raw;
}

/**
 * Every setting the service reads, in README's order. `contract` ones are also named by
 * docs/API.md §1. Defaults that depend on other settings are computed in loadConfig; `shown` says
 * them in words.
 */
export const serviceSettings = {
  PORT: wholeSetting({ default: 4000, description: 'listen port', contract: true }),
  HOST: textSetting({ default: '127.0.0.1', description: 'listen address', contract: true }),
  DATA_DIR: textSetting({ default: './data', description: 'everything Quarry stores; delete it to reset', contract: true }),
  LOGFLARE_PRIVATE_ACCESS_TOKEN: textSetting({
    shown: 'generated',
    description:
      'token with scope `private` (everything). When unset, the first start generates one, prints it once and keeps it in `DATA_DIR/private-access-token`',
    contract: true,
  }),
  LOGFLARE_PUBLIC_ACCESS_TOKEN: textSetting({
    description: "token with scope `public` (ingest), what Supabase's Vector sends",
    contract: true,
  }),
  LOGFLARE_API_KEY: textSetting({ description: 'older Supabase stacks: one key for ingest and query', contract: true }),
  QUARRY_ENGINE: customSetting({
    kind: 'engine name',
    parse: engineName,
    default: engineNames[0] as string,
    description: `the engine that stores events and runs queries: ${engineNames.map((n) => `\`${n}\``).join(' or ')}; each reads its own settings (the table below)`,
  }),
  INGEST_BODY_LIMIT_BYTES: wholeSetting({ default: 10 * MiB, description: 'largest ingest request body (413 above)', contract: true }),
  QUERY_TIMEOUT_MS: wholeSetting({
    default: 30_000,
    description: "per-query time limit, counted from the request's arrival (504 when running past it; `503 OVERLOADED` when it could not start in time)",
    contract: true,
  }),
  QUERY_MAX_CONCURRENCY: wholeSetting({
    default: 4,
    atLeast: 1,
    description: 'queries running at once; past that and `QUERY_MAX_QUEUE` a query gets `503 OVERLOADED` with `Retry-After` (cache hits do not count)',
    contract: true,
  }),
  QUERY_MAX_QUEUE: wholeSetting({ default: 64, description: 'queries waiting for a turn, beyond those running', contract: true }),
  QUERY_MAX_PER_TOKEN: wholeSetting({
    atLeast: 1,
    shown: 'half the concurrency (`2`)',
    description: "queries one token may run at once, so one token's flood always leaves slots for others; waiting places are shared fairly between tokens",
    contract: true,
  }),
  QUERY_MAX_RESPONSE_BYTES: byteSetting({
    shown: '64 MiB, or a 32nd of a `MEMORY_BUDGET` under 2 GiB (at least 8 MiB)',
    description: 'largest query response; a larger result gets `400 RESULT_TOO_LARGE`',
    contract: true,
  }),
  QUERY_RESULT_MEMORY: byteSetting({
    shown: 'a 32nd of `MEMORY_BUDGET`, at least `QUERY_MAX_RESPONSE_BYTES` (`64MiB`)',
    description:
      'results being read and sent at once, counted as their JSON size; a result that would take the total past it while others are being sent gets `503 OVERLOADED` with `Retry-After` (one result alone may always reach `QUERY_MAX_RESPONSE_BYTES`)',
    contract: true,
  }),
  QUERY_MAX_TABLE_REFERENCES: wholeSetting({
    default: defaultQueryBounds.maxTableReferences,
    atLeast: 1,
    description:
      'table references a query may make once its CTEs are inlined at each use (items inside parenthesised joins included); beyond: `400 QUERY_TOO_COMPLEX` (docs/API.md §4, "Limits")',
    contract: true,
  }),
  QUERY_MAX_JOINS: wholeSetting({
    default: defaultQueryBounds.maxJoins,
    atLeast: 1,
    description: 'tables, derived tables and UNNESTs in one `FROM`; beyond: `400 QUERY_TOO_COMPLEX`',
    contract: true,
  }),
  QUERY_MAX_SET_OPERANDS: wholeSetting({
    default: defaultQueryBounds.maxSetOperands,
    atLeast: 2,
    description: 'set-operation operands once CTEs are inlined; beyond: `400 QUERY_TOO_COMPLEX`',
    contract: true,
  }),
  QUERY_MAX_NESTING: wholeSetting({
    default: defaultQueryBounds.maxNesting,
    atLeast: 1,
    description: 'depth of nested queries (a CTE read counts as a level); beyond: `400 QUERY_TOO_COMPLEX`',
    contract: true,
  }),
  QUERY_MAX_VALUE_BYTES: byteSetting({
    default: defaultQueryBounds.maxValueBytes,
    description:
      'largest string `REPEAT`, `LPAD`/`RPAD` or `FORMAT` may build where computed once, a 256th of it where computed for every row; beyond: `400 INVALID_QUERY`',
    contract: true,
  }),
  QUERY_MAX_VALUE_GROWTH: wholeSetting({
    default: defaultQueryBounds.maxValueGrowth,
    atLeast: 1,
    description:
      'how many times the values it reads any expression may make a value (`CONCAT`, `REPLACE`, … nested or repeated); beyond: `400 QUERY_TOO_COMPLEX`',
    contract: true,
  }),
  SUPABASE_RETENTION_DAYS: customSetting({
    kind: 'days',
    parse: retentionDays,
    shown: 'unset',
    description: "days of events the nine seeded Supabase sources keep, set on them at every start; unset or `0`: each source's own (`PATCH /api/sources/:id`)",
  }),
  MEMORY_BUDGET: byteSetting({
    default: 2 * GiB,
    description: "memory for the whole process; the engine's share is half of it unless its own setting says otherwise",
    contract: true,
  }),
  INGEST_MAX_FIELDS: wholeSetting({
    default: defaultSchemaLimits.maxFields,
    atLeast: 1,
    description: 'leaf fields per source (typed and overflowed); an event that would add more gets `400` naming the field',
    contract: true,
  }),
  INGEST_MAX_TYPED_FIELDS: wholeSetting({
    default: defaultSchemaLimits.maxTypedFields,
    atLeast: 0,
    description:
      'leaf fields per source kept as typed columns; later ones are kept in one overflow column and read by name as usual (docs/INGEST.md, "Limits")',
    contract: true,
  }),
  INGEST_MAX_DEPTH: wholeSetting({
    default: defaultSchemaLimits.maxDepth,
    atLeast: 1,
    description: 'nesting levels kept as records; deeper objects/arrays are stored as their JSON text',
    contract: true,
  }),
  INGEST_MAX_KEY_LENGTH: wholeSetting({
    default: defaultSchemaLimits.maxKeyLength,
    atLeast: 1,
    description: "longer key names are cut, with one more leading `_` (Logflare's rule), and made unique",
    contract: true,
  }),
  RETENTION_SWEEP_SECONDS: wholeSetting({
    default: 3600,
    atLeast: 1,
    description: 'seconds between retention sweeps (each logs what it deleted, per source)',
    contract: true,
  }),
  HTTP_HEADERS_TIMEOUT_MS: wholeSetting({
    default: 10_000,
    atLeast: 1,
    description: 'time to send the request headers (`408` after)',
    contract: true,
  }),
  HTTP_REQUEST_TIMEOUT_MS: wholeSetting({
    default: 30_000,
    atLeast: 1,
    description:
      "time to send the whole request, body included (`408` after; raise it for clients sending large bodies over slow links); the query's own run is bounded by `QUERY_TIMEOUT_MS` instead",
    contract: true,
  }),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: wholeSetting({
    default: 72_000,
    atLeast: 1,
    description: 'an idle keep-alive connection is closed after this',
    contract: true,
  }),
  LOG_LEVEL: textSetting({ default: 'info', description: '`debug`, `info`, `warn`, `error`, `silent`', contract: true }),
  METRICS_TOKEN: textSetting({
    description: 'a secret `GET /metrics` accepts besides private-scope tokens (give it to Prometheus, not a private token)',
    contract: true,
  }),
  DATABASE_URL: textSetting({
    shown: 'none (embedded store)',
    description: 'PostgreSQL for sources, endpoints and tokens, shared by several nodes; see [docs/SCALING.md](docs/SCALING.md)',
    contract: true,
  }),
  METADATA_POLL_MS: wholeSetting({
    default: 1000,
    atLeast: 50,
    description: 'with `DATABASE_URL`: how often a node checks for changes besides notifications',
    contract: true,
  }),
  METADATA_MAX_STALENESS_MS: wholeSetting({
    default: 10_000,
    description: 'with `DATABASE_URL`: how old its copy may get before a node refuses tokens (`503`)',
    contract: true,
  }),
} as const satisfies Record<string, Setting<unknown>>;

export type ServiceSettingName = keyof typeof serviceSettings;

/** A described setting with its name, and the engine that reads it (none: the service). */
export interface NamedSetting {
  readonly name: string;
  readonly engine?: string;
  readonly description: string;
}

/** Every setting: the service's, then each engine's (its definition's list). */
export function allSettings(): NamedSetting[] {
  const own = Object.entries(serviceSettings).map(([name, s]) => ({ name, description: s.description }));
  const engines = engineDefinitions.flatMap((d) => d.settings.map((s: EngineSetting) => ({ name: s.name, engine: d.name, description: s.description })));
  return [...own, ...engines];
}

export function loadConfig(env: Env = process.env): Config {
  type ValueOf<K extends ServiceSettingName> = (typeof serviceSettings)[K] extends Setting<infer T> ? T : never;
  const read = <K extends ServiceSettingName>(name: K, fallback?: ValueOf<K>): ValueOf<K> | undefined =>
    readSetting(env, name, serviceSettings[name] as Setting<ValueOf<K>>, fallback);
  /** A setting that always has a value (a default, or `fallback`). */
  const value = <K extends ServiceSettingName>(name: K, fallback?: ValueOf<K>): ValueOf<K> => read(name, fallback) as ValueOf<K>;

  const maxConcurrentQueries = value('QUERY_MAX_CONCURRENCY');
  const memoryBudgetBytes = value('MEMORY_BUDGET');
  const responseMaxBytes = value('QUERY_MAX_RESPONSE_BYTES', defaultResponseMaxBytes(memoryBudgetBytes));
  const dataDir = path.resolve(value('DATA_DIR'));
  const config: Config = {
    port: value('PORT'),
    host: value('HOST'),
    dataDir,
    bodyLimitBytes: value('INGEST_BODY_LIMIT_BYTES'),
    queryTimeoutMs: value('QUERY_TIMEOUT_MS'),
    maxConcurrentQueries,
    maxQueuedQueries: value('QUERY_MAX_QUEUE'),
    // Half the slots by default: one token's flood leaves the rest to others, and on a small
    // machine DuckDB already spreads each query over every core, so more at once adds little.
    maxQueriesPerToken: value('QUERY_MAX_PER_TOKEN', Math.max(1, Math.floor(maxConcurrentQueries / 2))),
    memoryBudgetBytes,
    responseMaxBytes,
    resultMemoryBytes: value('QUERY_RESULT_MEMORY', defaultResultMemory(memoryBudgetBytes, responseMaxBytes)),
    queryBounds: {
      maxTableReferences: value('QUERY_MAX_TABLE_REFERENCES'),
      maxJoins: value('QUERY_MAX_JOINS'),
      maxSetOperands: value('QUERY_MAX_SET_OPERANDS'),
      maxNesting: value('QUERY_MAX_NESTING'),
      maxValueBytes: value('QUERY_MAX_VALUE_BYTES'),
      maxValueGrowth: value('QUERY_MAX_VALUE_GROWTH'),
    },
    schemaLimits: {
      maxFields: value('INGEST_MAX_FIELDS'),
      maxTypedFields: value('INGEST_MAX_TYPED_FIELDS'),
      maxDepth: value('INGEST_MAX_DEPTH'),
      maxKeyLength: value('INGEST_MAX_KEY_LENGTH'),
    },
    retentionSweepSeconds: value('RETENTION_SWEEP_SECONDS'),
    httpTimeouts: {
      headersMs: value('HTTP_HEADERS_TIMEOUT_MS'),
      requestMs: value('HTTP_REQUEST_TIMEOUT_MS'),
      keepAliveMs: value('HTTP_KEEP_ALIVE_TIMEOUT_MS'),
    },
    logLevel: value('LOG_LEVEL'),
    engine: configureEngine(env, value('QUARRY_ENGINE'), dataDir, memoryBudgetBytes),
    metadataPollMs: value('METADATA_POLL_MS'),
    metadataMaxStalenessMs: value('METADATA_MAX_STALENESS_MS'),
  };
  const databaseUrl = read('DATABASE_URL');
  if (databaseUrl) config.databaseUrl = databaseUrl;
  const priv = read('LOGFLARE_PRIVATE_ACCESS_TOKEN');
  const pub = read('LOGFLARE_PUBLIC_ACCESS_TOKEN');
  const legacy = read('LOGFLARE_API_KEY');
  const metricsToken = read('METRICS_TOKEN');
  if (metricsToken) config.metricsToken = metricsToken;
  const retention = read('SUPABASE_RETENTION_DAYS');
  if (retention !== undefined) config.supabaseRetentionDays = retention;
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
function configureEngine(env: Env, name: string, dataDir: string, memoryBudgetBytes: number): ConfiguredEngine {
  return (engineDefinition(name) as NonNullable<ReturnType<typeof engineDefinition>>).configure(env, { dataDir, memoryBudgetBytes });
}

/** The embedded metadata store's own file (sources, tokens, endpoints), apart from the events. */
export function metadataPath(config: Pick<Config, 'dataDir'>): string {
  return path.join(config.dataDir, 'metadata.duckdb');
}
