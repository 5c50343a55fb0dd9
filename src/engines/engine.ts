/**
 * The interface every engine implements (DuckDB embedded, ClickHouse scale-out). An engine both
 * stores events (StorageEngine) and runs validated queries (QueryEngine); adding an engine is
 * adding a folder under src/engines/ that implements both halves.
 */
import type { QueryEngine } from './query-engine.ts';
import type { StorageEngine } from './storage-engine.ts';

export interface Engine extends StorageEngine, QueryEngine {
  readonly name: 'duckdb' | 'clickhouse';
  close(): Promise<void>;
}

export type { QueryEngine, StorageEngine };
