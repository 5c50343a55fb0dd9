/**
 * The storage half of an engine: one physical table per source, grown by schema changes that the
 * caller has already worked out (src/storage/infer.ts), and durable appends.
 */
import type { EngineCapabilities } from '../capabilities.ts';
import type { StoredEvent } from './event.ts';
import type { SchemaChange } from './infer.ts';
import type { TableSchema } from './schema.ts';

/** Events for one source table, with the schema they were conformed to. */
export interface TableBatch {
  table: string;
  schema: TableSchema;
  events: readonly StoredEvent[];
}

export interface StorageEngine {
  /** What the engine declares (its one record, src/capabilities.ts); the ingest pipeline reads the storage part. */
  readonly capabilities: Pick<EngineCapabilities, 'keepsOverflow' | 'concurrentAppends'>;
  /**
   * Creates the table with the base columns (id, timestamp, event_message); no-op if it exists.
   * `source` names the source it is for (an engine may lay out a known source's table for its
   * queries, e.g. sort by its project).
   */
  createSourceTable(table: string, source?: { name: string }): Promise<void>;
  /** Drops the table and everything in it; no-op if it does not exist. */
  dropSourceTable(table: string): Promise<void>;
  /**
   * Applies changes computed from `before` to reach `after`, atomically. Columns and fields that
   * already exist are left alone.
   */
  applySchemaChanges(table: string, before: TableSchema, after: TableSchema, changes: readonly SchemaChange[]): Promise<void>;
  /**
   * The table's schema as stored, or undefined when there is no such table. The catalogue is
   * reconciled with it at start-up (a crash between DDL and the catalogue write loses nothing).
   */
  describeTable(table: string): Promise<TableSchema | undefined>;
  /**
   * Appends every batch in one transaction. Resolves once committed durably; on rejection nothing
   * was stored.
   */
  append(batches: readonly TableBatch[]): Promise<void>;
  /** Deletes events whose timestamp is before `cutoff` (unix µs); returns how many. */
  deleteOlderThan(table: string, cutoff: bigint): Promise<number>;
  /**
   * Every event stored in `table` (of schema `schema`, its catalogue entry), in batches of at most
   * `batchSize`, in the order they were stored: what `npm run migrate-events` copies to another
   * engine. Optional: an engine without it cannot be migrated from.
   */
  exportEvents?(table: string, schema: TableSchema, batchSize: number): AsyncIterable<StoredEvent[]>;
  /** Rows stored in each of `tables` that exists (the metrics' rows per source); optional. */
  countRows?(tables: readonly string[]): Promise<Map<string, number>>;
}
