/**
 * Start-up and shutdown: config → engine (storage + query) → metadata → services → HTTP. `main.ts` calls this with
 * the environment's config; tests and the benchmark call it with their own.
 */
import { mkdir } from 'node:fs/promises';
import type { FastifyInstance } from 'fastify';
import { createAuth } from './auth/auth.ts';
import { bootstrapTokens } from './auth/bootstrap.ts';
import type { DuckDBConnection } from '@duckdb/node-api';
import { type Config, chdbPath, databasePath, metadataDatabasePath } from './config.ts';
import { openClickHouseEngine } from './engines/clickhouse/index.ts';
import { openDuckDb } from './engines/duckdb/database.ts';
import { openDuckDbEngine } from './engines/duckdb/index.ts';
import type { Engine } from './engines/engine.ts';
import { type Clock, openEndpoints } from './endpoints/index.ts';
import { createSqlBackend } from './endpoints/sql-backend.ts';
import { buildApp } from './http/app.ts';
import { registerEndpointRoutes } from './http/endpoint-routes.ts';
import { ingestRoutes } from './http/ingest-routes.ts';
import type { SourceAdmin } from './http/source-routes.ts';
import { IngestService } from './ingest/pipeline.ts';
import { serial } from './metadata/connection.ts';
import { type SourceRepository, openSourceRepository, supabaseSources } from './metadata/sources.ts';
import { openTokenRepository } from './metadata/tokens.ts';
import { RetentionTask } from './storage/retention.ts';

export interface RunningServer {
  app: FastifyInstance;
  /** e.g. http://127.0.0.1:4000 */
  url: string;
  /** Set when this start generated the private access token (shown once). */
  generatedPrivateToken?: string;
  /** Stop accepting, finish in-flight requests, flush, release the database. */
  close(): Promise<void>;
}

async function seedSources(sources: SourceRepository, admin: SourceAdmin): Promise<void> {
  for (const { name } of supabaseSources) {
    if (!sources.byName(name)) await admin.create({ name });
  }
}

export interface StartOptions {
  /** The result cache's clock (tests move it by hand). */
  clock?: Clock;
}

/** The configured engine, and a connection for the metadata repositories. */
async function openEngine(config: Config): Promise<{ engine: Engine; metadata: DuckDBConnection; close(): Promise<void> }> {
  if (config.engine === 'clickhouse' && config.clickhouse) {
    const ch = config.clickhouse;
    const embedded = chdbPath(config);
    const memory = config.memoryLimit ? bytes(config.memoryLimit) : 0;
    const engine = await openClickHouseEngine({
      database: ch.database,
      ...(embedded ? { chdbPath: embedded } : { url: ch.url }),
      ...(ch.user ? { user: ch.user } : {}),
      ...(ch.password ? { password: ch.password } : {}),
      ...(memory > 0 ? { maxMemoryBytes: memory } : {}),
    });
    // Sources, tokens and endpoints stay in an embedded DuckDB file beside the engine.
    const db = await openDuckDb({ path: metadataDatabasePath(config) });
    return {
      engine,
      metadata: await db.connect(),
      async close() {
        await engine.close();
        db.close();
      },
    };
  }
  const engine = await openDuckDbEngine({
    path: databasePath(config),
    ...(config.memoryLimit ? { memoryLimit: config.memoryLimit } : {}),
  });
  return { engine, metadata: await engine.metadataConnection(), close: () => engine.close() };
}

/** '4GB' / '512MiB' → bytes. */
function bytes(text: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)$/i.exec(text.trim());
  if (!m) return 0;
  const unit = m[2]!.toLowerCase();
  const factor: Record<string, number> = { b: 1, kb: 1e3, mb: 1e6, gb: 1e9, tb: 1e12, kib: 2 ** 10, mib: 2 ** 20, gib: 2 ** 30, tib: 2 ** 40 };
  return Number(m[1]) * (factor[unit] ?? 0);
}

export async function startServer(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  await mkdir(config.dataDir, { recursive: true });
  const opened = await openEngine(config);
  const engine = opened.engine;
  const meta = serial(opened.metadata);
  const sources = await openSourceRepository(meta);
  const tokens = await openTokenRepository(meta);
  const boot = await bootstrapTokens(config, tokens);
  const auth = createAuth(tokens);
  const tables = engine.sources;

  const sourceAdmin: SourceAdmin = {
    list: () => sources.list(),
    get: (id) => sources.get(id),
    async create(input) {
      const source = await sources.create(input);
      await tables.ensure(source);
      return source;
    },
    async update(id, patch) {
      const source = await sources.update(id, patch);
      await tables.ensure(source);
      return source;
    },
    async delete(id) {
      await sources.delete(id);
      await tables.drop(id);
    },
  };
  await seedSources(sources, sourceAdmin);
  for (const source of sources.list()) await tables.ensure(source);

  const ingest = new IngestService({ sources: tables, storage: engine.storage });
  const retention = new RetentionTask({
    storage: engine.storage,
    catalog: tables.catalog,
    policies: () => sources.list().map((s) => ({ sourceId: s.id, retentionDays: s.retention_days })),
  });
  retention.start();

  const endpoints = await openEndpoints({
    db: meta,
    backend: createSqlBackend({ catalog: tables.catalog, engine: engine.query }),
    queryTimeoutMs: config.queryTimeoutMs,
    maxConcurrentQueries: config.maxConcurrentQueries,
    maxQueuedQueries: config.maxQueuedQueries,
    ...(options.clock ? { clock: options.clock } : {}),
  });

  // Storage and metadata need no files, network, extensions or settings from here on.
  await engine.lockDown();

  let ready = false;
  const app = await buildApp({
    auth,
    tokens,
    sources: sourceAdmin,
    isReady: () => ready,
    logLevel: config.logLevel,
    bodyLimitBytes: config.bodyLimitBytes,
    async register(a) {
      await a.register(ingestRoutes, { auth, sources, ingest, bodyLimitBytes: config.bodyLimitBytes });
      await registerEndpointRoutes(a, { auth, runner: endpoints.runner, service: endpoints.service });
    },
  });
  await app.listen({ port: config.port, host: config.host });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  ready = true;

  let closing: Promise<void> | undefined;
  const server: RunningServer = {
    app,
    url: `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`,
    close() {
      closing ??= (async () => {
        ready = false;
        // app.close() waits for in-flight requests; connections that go idle afterwards are
        // closed as soon as they do, and none may hold shutdown longer than a few seconds.
        const sweep = setInterval(() => app.server.closeIdleConnections(), 50);
        const deadline = setTimeout(() => app.server.closeAllConnections(), 5000);
        try {
          await app.close();
        } finally {
          clearInterval(sweep);
          clearTimeout(deadline);
        }
        endpoints.close();
        await retention.stop();
        await ingest.close();
        await opened.close();
      })();
      return closing;
    },
  };
  if (boot.generatedPrivateToken) server.generatedPrivateToken = boot.generatedPrivateToken;
  return server;
}
