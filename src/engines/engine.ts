/**
 * What an engine provides (DuckDB embedded today; ClickHouse, the scale-out engine, next): the
 * storage half (tables per source, growing schemas, durable appends), the query half (run a
 * prepared AST with bound parameters, a row cap and a time limit), the source tables with their
 * schema catalogue, and the lock-down that stops caller SQL from reaching anything else. Adding an
 * engine is adding a folder under src/engines/ whose `open…Engine` returns this.
 */
import type { MetadataSnapshot } from '../metadata/records.ts';
import type { SourceTables } from '../storage/sources.ts';
import type { QueryEngine } from './query-engine.ts';
import type { StorageEngine } from './storage-engine.ts';

export interface Engine {
  readonly name: 'duckdb' | 'clickhouse';
  readonly storage: StorageEngine;
  readonly query: QueryEngine;
  /** Source → table, with the schema catalogue the SQL layer reads. */
  readonly sources: SourceTables;
  /**
   * From now on SQL cannot reach files, the network, extensions or settings (defence in depth
   * behind the validator). Called once start-up has done what needs them.
   */
  lockDown(): Promise<void>;
  /**
   * Why this node cannot use its engine right now (for `GET /health`), or undefined when it can.
   * An embedded engine has nothing to lose and need not say.
   */
  problem?(): Promise<string | undefined>;
  /**
   * Hands metadata an older build kept in the engine's own database to `adopt`, and drops it once
   * adopted; false when there was none. Called once at start-up, after the metadata store opened.
   */
  adoptLegacyMetadata?(adopt: (records: MetadataSnapshot) => Promise<void>): Promise<boolean>;
  /** Closes connections and flushes; the engine is unusable afterwards. */
  close(): Promise<void>;
}

export type { QueryEngine, StorageEngine };
