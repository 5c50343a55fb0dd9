/**
 * Start-up and shutdown: config → metadata store → engine (storage + query) → services → HTTP.
 * The composition root: the only module that picks implementations (engine, metadata store). `main.ts` calls this with
 * the environment's config; tests and the benchmark call it with their own.
 */
import { existsSync } from 'node:fs';
import { rename } from 'node:fs/promises';
import type { FastifyInstance } from 'fastify';
import { createAuth } from './auth/auth.ts';
import { bootstrapTokens } from './auth/bootstrap.ts';
import { type Config, metadataPath } from './config.ts';
import { type ClaimedFolders, claimDataFolders } from './data-dir/claim.ts';
import { errnoCode, StartupError } from './data-dir/startup-error.ts';
import { QuarryError } from './errors.ts';
import { FREE_CLAIM_BYTES, ResultMemory } from './query/result-memory.ts';
import { openEmbeddedMetadata } from './metadata/embedded/records.ts';
import { type Clock, openEndpoints } from './endpoints/index.ts';
import { withCatalogRefresh } from './endpoints/catalog-refresh.ts';
import { fanOut } from './endpoints/observation.ts';
import { createSqlBackend } from './endpoints/sql-backend.ts';
import { buildApp } from './http/app.ts';
import { registerEndpointRoutes } from './http/endpoint-routes.ts';
import { ingestRoutes } from './http/ingest-routes.ts';
import { metricsRoutes } from './http/metrics-routes.ts';
import type { SourceAdmin } from './http/source-routes.ts';
import { IngestService } from './ingest/pipeline.ts';
import { QuarryMetrics } from './metrics/metrics.ts';
import { StorageUsageProbe } from './metrics/storage-usage.ts';
import { seedSupabaseEndpoints } from './endpoints/seed.ts';
import { type SourceRepository, supabaseSources } from './metadata/sources.ts';
import { type MetadataStore, openMetadataStore } from './metadata/store.ts';
import { RetentionTask } from './storage/retention.ts';

export interface RunningServer {
  app: FastifyInstance;
  /** e.g. http://127.0.0.1:4000 */
  url: string;
  /** Set when this start generated the private access token (shown once). */
  generatedPrivateToken?: string;
  /** The memory results being read and sent share (QUERY_RESULT_MEMORY); tests look at its use. */
  resultMemory: ResultMemory;
  /** Stop accepting, finish in-flight requests, flush, release the database. */
  close(): Promise<void>;
}

/** The nine Supabase sources, made when missing; with `retentionDays`, that retention on each. */
async function seedSources(sources: SourceRepository, admin: SourceAdmin, retentionDays: number | undefined): Promise<void> {
  for (const { name } of supabaseSources) {
    const source = sources.byName(name) ?? (await admin.create({ name }));
    if (retentionDays !== undefined && source.retention_days !== retentionDays) await admin.update(source.id, { retention_days: retentionDays });
  }
}

/** The shared store when DATABASE_URL is set, else the embedded one (its own file in DATA_DIR). */
async function openMetadata(config: Config, onError: (e: unknown) => void): Promise<MetadataStore> {
  if (config.databaseUrl === undefined) return openMetadataStore(await openEmbeddedMetadata({ path: metadataPath(config) }));
  // Loaded only here: the PostgreSQL client is a tenth of the start-up's module loading.
  const { openPostgresMetadata } = await import('./metadata/postgres/records.ts');
  const store = await openMetadataStore(await openPostgresMetadata({ url: config.databaseUrl, pollMs: config.metadataPollMs, onError }));
  // A node that ran on the embedded store brings its metadata along once; the file is kept, renamed.
  const embedded = metadataPath(config);
  if (existsSync(embedded)) {
    const old = await openEmbeddedMetadata({ path: embedded });
    const records = await old.load().finally(() => old.close());
    await store.adopt(records);
    await rename(embedded, `${embedded}.moved-to-postgres`);
  }
  return store;
}

export interface StartOptions {
  /** The result cache's and the endpoint stats' clock (tests move it by hand). */
  clock?: Clock;
  /** How long a storage measurement for the metrics is reused (default 5 s). */
  storageMetricsMaxAgeMs?: number;
  /** The data folders, already claimed by the caller (main.ts claims them before loading this module); released on close. */
  folders?: ClaimedFolders;
}

export async function startServer(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  // Nothing in the data folders is opened or changed before they are this process's alone.
  const folders = options.folders ?? (await claimDataFolders(config));
  // What a start that fails part-way has opened is closed again, last first, and the folders released.
  const opened: (() => unknown)[] = [() => folders.release()];
  try {
    return await start(config, options, folders, (close) => opened.push(close));
  } catch (e) {
    for (const close of opened.reverse()) {
      try {
        await close();
      } catch {}
    }
    if (isListenFailure(e)) {
      throw new StartupError(
        'LISTEN_FAILED',
        `Quarry could not listen on ${config.host}:${config.port}: ${(e as Error).message}. Is another program using that port? Set PORT (or HOST) to another, then start again.`,
        { cause: e },
      );
    }
    throw e;
  }
}

function isListenFailure(e: unknown): boolean {
  const code = errnoCode(e);
  return code === 'EADDRINUSE' || code === 'EADDRNOTAVAIL' || code === 'EACCES';
}

/** The start proper; `onOpen` registers how to close each thing it opened, for a start that fails later. */
async function start(config: Config, options: StartOptions, folders: ClaimedFolders, onOpen: (close: () => unknown) => void): Promise<RunningServer> {
  let logWarning: (e: unknown) => void = () => undefined;
  // The events' database opens first: a start refused there (a file from a newer version, say) has
  // not replayed or checkpointed anything else yet.
  const engine = await config.engine.open();
  onOpen(() => engine.close());
  const metadata = await openMetadata(config, (e) => logWarning(e));
  onOpen(async () => {
    await metadata.stopWatching();
    await metadata.close();
  });
  await engine.adoptLegacyMetadata?.((records) => metadata.adopt(records));
  const { sources, tokens } = metadata;
  const auth = createAuth(tokens, {
    assertFresh() {
      const age = metadata.stalenessMs();
      if (age > Math.max(config.metadataMaxStalenessMs, 2 * config.metadataPollMs)) {
        throw new QuarryError(
          'UNAVAILABLE',
          `This node has not reached the metadata store for ${Math.round(age / 1000)} s and cannot check access tokens; retry shortly.`,
          { retryAfter: 2 },
        );
      }
    },
  });
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
    schema: (id) => tables.catalog.sourceById(id)?.schema,
  };

  // Background tasks log through the HTTP app's logger once it exists.
  let log: (message: string) => void = () => undefined;
  const ingest = new IngestService({ sources: tables, storage: engine.storage, limits: config.schemaLimits });
  onOpen(() => ingest.close());
  const retention = new RetentionTask({
    storage: engine.storage,
    catalog: tables.catalog,
    policies: () => sources.list().map((s) => ({ sourceId: s.id, retentionDays: s.retention_days })),
    intervalMs: config.retentionSweepSeconds * 1000,
    log: (message) => log(message),
  });
  retention.start();
  onOpen(() => retention.stop());

  const backend = createSqlBackend({ catalog: tables.catalog, engine: engine.query, bounds: config.queryBounds });
  const resultMemory = new ResultMemory(config.resultMemoryBytes, FREE_CLAIM_BYTES);
  // With several nodes, what another node's ingest added to a shared catalogue is learnt before
  // each query is prepared.
  const endpoints = await openEndpoints({
    repository: metadata.endpoints,
    seed: false,
    claimWarming: (key, holdMs) => metadata.claimWarming(key, holdMs),
    backend: config.databaseUrl === undefined ? backend : withCatalogRefresh(backend, (since) => tables.catalog.refresh(since)),
    queryTimeoutMs: config.queryTimeoutMs,
    maxConcurrentQueries: config.maxConcurrentQueries,
    maxQueuedQueries: config.maxQueuedQueries,
    maxQueriesPerToken: config.maxQueriesPerToken,
    maxResponseBytes: config.responseMaxBytes,
    resultMemory,
    ...(options.clock ? { clock: options.clock } : {}),
  });
  onOpen(() => endpoints.close());

  // What another node changed: its sources get tables here, its endpoint changes drop this
  // node's cached results of them.
  metadata.onChange(async (changes) => {
    try {
      for (const source of changes.sourcesChanged) await tables.ensure(source);
      for (const source of changes.sourcesRemoved) await tables.drop(source.id);
    } catch (e) {
      logWarning(e);
    }
    for (const id of changes.endpointsChanged) {
      endpoints.runner.invalidate(id);
      if (!metadata.endpoints.get(id)) endpoints.stats.forget(id);
    }
  });
  // One node at a time: the start-up tokens and the seeded sources and endpoints are made once.
  const boot = await metadata.exclusive(async () => {
    const result = await bootstrapTokens(config, tokens);
    await seedSources(sources, sourceAdmin, config.supabaseRetentionDays);
    await seedSupabaseEndpoints(metadata.endpoints);
    return result;
  });
  for (const source of sources.list()) await tables.ensure(source);
  // With several nodes, schema growth made elsewhere also reaches this node's catalogue within
  // METADATA_POLL_MS (a query for a new field learns of it at once, see catalog-refresh.ts).
  let catalogFailing = false;
  const catalogPoll =
    config.databaseUrl === undefined
      ? undefined
      : setInterval(() => {
          tables.catalog.refresh().then(
            () => {
              catalogFailing = false;
            },
            (e: unknown) => {
              // Told once per outage, not once per check.
              if (!catalogFailing) logWarning(e);
              catalogFailing = true;
            },
          );
        }, config.metadataPollMs);
  catalogPoll?.unref();
  onOpen(() => clearInterval(catalogPoll));

  const storageUsage = new StorageUsageProbe({
    dataDir: config.dataDir,
    ...(options.storageMetricsMaxAgeMs !== undefined ? { maxAgeMs: options.storageMetricsMaxAgeMs } : {}),
    sources: () => tables.catalog.list().map((s) => ({ name: s.name, table: s.table })),
    ...(engine.storage.countRows ? { countRows: (t: readonly string[]) => engine.storage.countRows!(t) } : {}),
  });
  const metrics = new QuarryMetrics({
    admission: () => endpoints.admission,
    cache: () => endpoints.cache.stats(),
    storage: () => storageUsage.get(),
    sourceNames: () => sources.list().map((s) => s.name),
    endpointNames: () => endpoints.repository.list().map((e) => e.name),
  });

  // Storage and metadata need no files, network, extensions or settings from here on.
  await engine.lockDown();

  let ready = false;
  const app = await buildApp({
    auth,
    tokens,
    sources: sourceAdmin,
    isReady: () => ready,
    async problems() {
      const [health, engineProblem] = await Promise.all([metadata.health(), engine.problem?.()]);
      return [...(health.ok ? [] : [health.reason]), ...(engineProblem === undefined ? [] : [engineProblem])];
    },
    logLevel: config.logLevel,
    bodyLimitBytes: config.bodyLimitBytes,
    httpTimeouts: config.httpTimeouts,
    savedEndpoints: {
      endpoints: () => endpoints.repository.list(),
      declaredParams: (e) => endpoints.runner.declaredParams(e),
    },
    async register(a) {
      await a.register(ingestRoutes, {
        auth,
        sources,
        ingest,
        bodyLimitBytes: config.bodyLimitBytes,
        observe: metrics.observeIngest,
      });
      await registerEndpointRoutes(a, {
        auth,
        runner: endpoints.runner,
        service: endpoints.service,
        stats: endpoints.stats,
        observe: fanOut(endpoints.stats.record, metrics.observeQuery),
      });
      await a.register(metricsRoutes, {
        auth,
        metrics,
        ...(config.metricsToken ? { metricsToken: config.metricsToken } : {}),
      });
    },
  });
  onOpen(() => app.close());
  log = (message) => app.log.info(message);
  logWarning = (e) => app.log.warn({ err: e }, 'metadata store: %s', e instanceof Error ? e.message : String(e));
  await app.listen({ port: config.port, host: config.host });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  ready = true;

  let closing: Promise<void> | undefined;
  const server: RunningServer = {
    app,
    resultMemory,
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
        clearInterval(catalogPoll);
        // Other nodes' changes are not acted on any more (a reload's listener creates tables in the
        // engine, which is closed below).
        await metadata.stopWatching();
        endpoints.close();
        await retention.stop();
        await ingest.close();
        await engine.close();
        await metadata.close();
        folders.release();
      })();
      return closing;
    },
  };
  if (boot.generatedPrivateToken) server.generatedPrivateToken = boot.generatedPrivateToken;
  return server;
}
