/**
 * Every test file's tier, in one place (docs/TESTING.md). scripts/test.ts runs the tiers;
 * test/tiers.test.ts fails when a *.test.ts file is missing here, when an entry names no file, and
 * when a unit file reaches for something only the other tiers may use.
 *
 * - unit: pure modules, at most an in-memory DuckDB; no service, no file-backed engine, no chDB,
 *   no child process, no timing of the machine. All unit files run together in ONE process
 *   (scripts/test-in-one-process.ts), so a unit file must leave no global state behind.
 * - integration: boots the service in-process (test/support/server.ts) or opens an engine
 *   (DuckDB on a file, chDB: one data directory per process). One process per file, run side by side.
 * - system: spawns processes or kill -9s them, a real PostgreSQL (test/support/postgres.ts), the
 *   browser, the bench, deploy checks, or measures memory, fairness or time. One process per file;
 *   `alone` ones measure the machine and run with nothing else running.
 *
 * `fast` marks the integration files `npm run test:fast` adds to the unit tier (quick ones that
 * cover the HTTP surface end to end); the whole fast run stays under a minute on a 2-core machine.
 */

export type Tier = 'unit' | 'integration' | 'system';

export interface TierEntry {
  readonly tier: Tier;
  /** system only: measures the machine (memory, time, fairness), so it runs with nothing beside it. */
  readonly alone?: true;
  /** integration only: also part of `npm run test:fast`. */
  readonly fast?: true;
  /** Why it is in this tier (what it starts or measures). */
  readonly why: string;
}

const unit = (why: string): TierEntry => ({ tier: 'unit', why });
const integration = (why: string, opts: { fast?: true } = {}): TierEntry => ({ tier: 'integration', why, ...opts });
const system = (why: string, opts: { alone?: true } = {}): TierEntry => ({ tier: 'system', why, ...opts });

/** Paths relative to the repository root, sorted. */
export const testFiles: Readonly<Record<string, TierEntry>> = {
  'test/architecture/layers.test.ts': unit('reads the source files'),
  'test/auth/scopes.test.ts': unit('pure'),
  'test/bench/smoke.test.ts': system('runs bench/run.ts as child processes'),
  'test/browser/cross-origin.test.ts': system('Chromium'),
  'test/browser/explorer-assets.test.ts': integration('service in-process', { fast: true }),
  'test/browser/explorer.test.ts': system('Chromium'),
  'test/browser/explorer-first-hour.test.ts': system('Chromium, and spawns npm run demo'),
  'test/browser/sql-text.test.ts': integration('service in-process'),
  'test/browser/values.test.ts': unit('a browser module under Node, pure'),
  'test/contract/bootstrap.test.ts': system('spawns and SIGKILLs the service'),
  'test/contract/ingest.test.ts': integration('service in-process on every engine (chDB)'),
  'test/contract/management-cache.test.ts': integration('service in-process on every engine (chDB)'),
  'test/contract/query.test.ts': integration('service in-process on every engine (chDB)'),
  'test/contract/supabase.test.ts': integration('service in-process on every engine (chDB)'),
  'test/contract/tokens.test.ts': integration('service in-process on every engine (chDB)'),
  'test/corpus/corpus.test.ts': integration('every engine (chDB)'),
  'test/corpus/studio-pages.test.ts': integration('service in-process per engine (chDB)'),
  'test/corpus/studio-provenance.test.ts': unit('the corpus files, pure'),
  'test/corpus/studio-reports.test.ts': integration('service in-process per engine (chDB)'),
  'test/corpus/studio-unified.test.ts': integration('service in-process per engine (chDB)'),
  'test/crash/idle-checkpoint.test.ts': system('spawns and kill -9s the service'),
  'test/crash/kill9.test.ts': system('kill -9 of the real service'),
  'test/crash/operator-mistakes.test.ts': system('spawns, SIGSTOPs and kill -9s the service'),
  'test/crash/recovery.test.ts': system('spawns and SIGKILLs DuckDB writers'),
  'test/data-dir/lock.test.ts': system('spawns lock holders and kill -9s them'),
  'test/demo/generator.test.ts': unit('pure'),
  'test/deploy/import-logflare-units.test.ts': unit('pure parts of the importer'),
  'test/deploy/import-logflare.test.ts': system('PostgreSQL, the CLI as a child process, SIGKILL'),
  'test/deploy/supabase-override.test.ts': system('deploy: the compose override, a child process'),
  'test/docs/settings-and-codes.test.ts': unit('reads the docs and the source files'),
  'test/endpoints/admission.test.ts': unit('pure'),
  'test/endpoints/cache-warming.test.ts': system('PostgreSQL'),
  'test/endpoints/cache.test.ts': unit('pure (manual clock)'),
  'test/endpoints/model.test.ts': unit('pure'),
  'test/endpoints/params.test.ts': unit('pure'),
  'test/endpoints/pii.test.ts': unit('pure'),
  'test/endpoints/runner.test.ts': unit('in-memory DuckDB'),
  'test/endpoints/seed.test.ts': unit('in-memory DuckDB'),
  'test/endpoints/stats.test.ts': unit('pure'),
  'test/endpoints/typed-binding.test.ts': unit('in-memory DuckDB'),
  'test/endpoints/typed-params.test.ts': unit('pure'),
  'test/engines/clickhouse/catalog-union.test.ts': integration('chDB'),
  'test/engines/clickhouse/chdb-writer.test.ts': unit('scratch folders only, no chDB'),
  'test/engines/clickhouse/ddl.test.ts': integration('chDB'),
  'test/engines/clickhouse/durability.test.ts': system('spawns and kill -9s the service on chDB'),
  'test/engines/clickhouse/http-front.test.ts': integration('chDB behind the test HTTP front'),
  'test/engines/clickhouse/insert-lanes.test.ts': integration('chDB'),
  'test/engines/clickhouse/layout-upgrade.test.ts': integration('service in-process on chDB'),
  'test/engines/clickhouse/migrate.test.ts': integration('service in-process on both engines'),
  'test/engines/clickhouse/pushdown.test.ts': integration('chDB'),
  'test/engines/clickhouse/result-cap.test.ts': system(
    'service in-process; its own peak RSS, and /health within 1.5 s (about 30 ms measured beside a loaded pool)',
  ),
  'test/engines/clickhouse/rows-binary.test.ts': integration('chDB'),
  'test/engines/clickhouse/rows-text.test.ts': integration('chDB'),
  'test/engines/clickhouse/security.test.ts': integration('chDB'),
  'test/engines/clickhouse/server-outage.test.ts': integration('service in-process, chDB behind the test front'),
  'test/engines/clickhouse/startup.test.ts': integration('starts the service in-process', { fast: true }),
  'test/engines/duckdb/evaluation-order.test.ts': unit('in-memory DuckDB'),
  'test/engines/duckdb/lockdown.test.ts': unit('in-memory DuckDB'),
  'test/engines/duckdb/query-generator.test.ts': unit('in-memory DuckDB'),
  'test/engines/duckdb/query-runner.test.ts': unit('in-memory DuckDB'),
  'test/engines/duckdb/row-groups.test.ts': integration('DuckDB on a file'),
  'test/engines/duckdb/settings.test.ts': unit('the engine definition, pure'),
  'test/engines/null-for-empty.test.ts': integration('every engine (chDB)'),
  'test/engines/parity.test.ts': integration('service in-process per engine (chDB)'),
  'test/engines/result-memory.test.ts': integration('service in-process per engine (chDB)'),
  'test/engines/runner-sequence.test.ts': unit('a scripted driver, pure'),
  'test/engines/stale-answers.test.ts': integration('service in-process per engine (chDB)'),
  'test/engines/translation-cache.test.ts': unit('pure'),
  'test/engines/typed-params.test.ts': integration('every engine (chDB)'),
  'test/http/abusive-ingest.test.ts': integration('service in-process'),
  'test/http/api-query.test.ts': integration('service in-process per engine (chDB)'),
  'test/http/auth.test.ts': integration('service in-process', { fast: true }),
  'test/http/awkward-values.test.ts': integration('service in-process per engine (chDB)'),
  'test/http/content-encoding.test.ts': integration('service in-process'),
  'test/http/cors.test.ts': integration('service in-process', { fast: true }),
  'test/http/endpoint-stats.test.ts': integration('service in-process', { fast: true }),
  'test/http/endpoints-logs-all.test.ts': integration('service in-process'),
  'test/http/endpoints-management.test.ts': integration('service in-process'),
  'test/http/endpoints-query.test.ts': integration('service in-process'),
  'test/http/endpoints-usage.test.ts': integration('service in-process'),
  'test/http/fairness.test.ts': system('spawns the service, measures fairness', { alone: true }),
  'test/http/formats.test.ts': integration('service in-process'),
  'test/http/ingest.test.ts': system('spawns and kill -9s the service'),
  'test/http/integration-routes.test.ts': integration('service in-process per engine (chDB)'),
  'test/http/log-clients.test.ts': integration('service in-process on every engine (chDB)'),
  'test/http/lql-types.test.ts': integration('service in-process'),
  'test/http/lql.test.ts': integration('service in-process'),
  'test/http/memory.test.ts': system('spawns the service, asserts its peak RSS (a process of its own: what runs beside it does not change it)'),
  'test/http/metrics.test.ts': integration('service in-process'),
  'test/http/otel-sdk.test.ts': integration('service in-process per engine (chDB); the OpenTelemetry JS SDK exporters as clients'),
  'test/http/otlp-fuzz.test.ts': integration('service in-process per engine (chDB); fuzzed OTLP bodies over HTTP'),
  'test/http/otlp.test.ts': integration('service in-process per engine (chDB)'),
  'test/http/overflow.test.ts': integration('service in-process'),
  'test/http/overload.test.ts': integration('service in-process'),
  'test/http/retention-crash.test.ts': system('spawns and kill -9s the service'),
  'test/http/source-schema.test.ts': integration('service in-process', { fast: true }),
  'test/http/sources.test.ts': integration('service in-process'),
  'test/http/studio-shapes.test.ts': integration('service in-process'),
  'test/http/timeouts.test.ts': system("waits on the server's connection timers, bounds of seconds"),
  'test/http/typed-params.test.ts': integration('service in-process per engine (chDB)'),
  'test/http/wide-growth.test.ts': system('asserts ingest latency', { alone: true }),
  'test/ingest/body.test.ts': unit('pure'),
  'test/ingest/disk-full.test.ts': system('mounts a tmpfs, spawns the service'),
  'test/ingest/event-id.test.ts': unit('pure'),
  'test/ingest/growth-lanes.test.ts': integration('DuckDB on a file'),
  'test/ingest/integrations.test.ts': unit('pure'),
  'test/ingest/keys-logflare.test.ts': unit('pure'),
  'test/ingest/keys-source-rule.test.ts': integration('service in-process on every engine (chDB)'),
  'test/ingest/normalise.test.ts': unit('pure'),
  'test/ingest/otlp-events.test.ts': unit('pure'),
  'test/ingest/otlp-fuzz.test.ts': unit('pure: fuzzed OTLP bodies through the decoders'),
  'test/ingest/otlp-json.test.ts': unit('pure'),
  'test/ingest/otlp-protobuf.test.ts': unit('pure'),
  'test/ingest/otlp-response.test.ts': unit('pure'),
  'test/ingest/pipeline.test.ts': integration('DuckDB on a file'),
  'test/ingest/raw.test.ts': integration('DuckDB on a file'),
  'test/ingest/schema-isolation.test.ts': system('a bystander p50 under 100 ms, or within 10× of its own p50 alone on a busy machine'),
  'test/ingest/time.test.ts': unit('pure'),
  'test/lql/compile.test.ts': unit('pure'),
  'test/lql/parse.test.ts': unit('pure'),
  'test/metadata/embedded.test.ts': integration('DuckDB on a file'),
  'test/metadata/legacy-layout.test.ts': system('PostgreSQL'),
  'test/metadata/postgres.test.ts': system('PostgreSQL'),
  'test/metadata/two-nodes-clickhouse.test.ts': system('PostgreSQL, two services'),
  'test/metadata/two-nodes.test.ts': system('PostgreSQL, two services'),
  'test/security/attack-figures.test.ts': system(
    'spawns the service, asserts its peak RSS (a process of its own: what runs beside it does not change it); the times it prints are only as good as a run with nothing beside it',
  ),
  'test/security/cost-bounds-http.test.ts': integration('service in-process per engine (chDB); RSS printed, not asserted'),
  'test/security/error-disclosure.test.ts': integration('service in-process per engine (chDB)'),
  'test/security/http-escapes.test.ts': integration('service in-process per engine (chDB)'),
  'test/security/http-limits.test.ts': system('service in-process; asserts query time limits hold', { alone: true }),
  'test/security/isolation.test.ts': integration('service in-process per engine (chDB)'),
  'test/security/no-oracle.test.ts': integration('service in-process'),
  'test/sql/bind-time.test.ts': integration('every engine (chDB)'),
  'test/sql/cost-bounds.test.ts': integration('every engine (chDB)'),
  'test/sql/coverage.test.ts': integration('every engine (chDB)'),
  'test/sql/front-end.test.ts': unit('pure'),
  'test/sql/generator.test.ts': unit('pure'),
  'test/sql/parser-beside-chdb.test.ts': system('a child process beside chDB, SIGKILL'),
  'test/sql/parser-lazy.test.ts': system('a child process that has parsed nothing yet'),
  'test/sql/resolve.test.ts': unit('pure (reads the source files)'),
  'test/sql/security.test.ts': unit('in-memory DuckDB'),
  'test/sql/time-format.test.ts': integration('every engine (chDB)'),
  'test/sql/top-n-cte.test.ts': integration('every engine (chDB)'),
  'test/sql/transform.test.ts': unit('pure'),
  'test/sql/usage.test.ts': unit('in-memory DuckDB'),
  'test/sql/value-growth.test.ts': unit('pure'),
  'test/sql/window-frame.test.ts': integration('every engine (chDB)'),
  'test/storage/carried.test.ts': unit('pure: the bookkeeping and both printers over a catalogue in memory'),
  'test/storage/carried-ingest.test.ts': integration('the ingest pipeline into every engine (DuckDB on a file, chDB), reopened'),
  'test/storage/data-versions.test.ts': unit('pure'),
  'test/storage/infer.test.ts': unit('pure'),
  'test/storage/overflow.test.ts': unit('pure'),
  'test/storage/presence.test.ts': integration('DuckDB on a file, every engine (chDB)'),
  'test/tiers.test.ts': unit('reads the test files'),
};

/** The files of a tier, sorted. */
export function filesOf(tier: Tier): string[] {
  return Object.keys(testFiles)
    .filter((f) => testFiles[f]?.tier === tier)
    .sort();
}
