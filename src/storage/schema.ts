/**
 * The schema catalogue's vocabulary: the type of every field a source has ever carried.
 *
 * Events are JSON objects. An object nested in an event is a `record` (BigQuery's REPEATED RECORD
 * of one element: queries reach it with `UNNEST`, and results show it as a one-element array). A
 * JSON array is a `list`. Everything else is a scalar.
 */
export type ScalarType = 'string' | 'int' | 'float' | 'bool' | 'timestamp';

export type FieldType = { kind: 'scalar'; type: ScalarType } | { kind: 'record'; fields: Record<string, FieldType> } | { kind: 'list'; element: FieldType };

/** Top-level columns of a source table, in creation order. Always has id, timestamp, event_message. */
export interface TableSchema {
  columns: Record<string, FieldType>;
  /**
   * Fields kept in the table's catch-all column beyond the typed-field budget, as a tree of their
   * paths and types (src/storage/overflow.ts); absent while the source has none. Readers see both
   * through `allColumns`.
   */
  overflow?: Record<string, FieldType>;
  /**
   * Record paths (a top-level column, then fields of records inside it) at which every event the
   * table holds carried a record, so a query needs no presence test there (src/storage/carried.ts).
   * Absent when not known (a table from before this was kept): every record is then tested.
   */
  carried?: readonly RecordPath[];
  /** No event stored yet: the first append decides `carried`. */
  unwritten?: true;
}

/** A record's place in an event: its top-level column, then field names. */
export type RecordPath = readonly string[];

/** What the SQL layer needs to know about a source: its names and its current schema. */
export interface SourceTable {
  /** Source id (UUID). */
  id: string;
  /** Source name as users write it (`cloudflare.logs.prod`). */
  name: string;
  /** Physical table name in the engine. */
  table: string;
  schema: TableSchema;
  /**
   * Some rows may lack the presence markers of their records (src/storage/presence.ts): a
   * ClickHouse table written before markers existed. Queries then test a record's presence the slow way.
   */
  unmarkedRecords?: true;
}

/** Looks up sources by name for the SQL layer (saved queries name sources, callers name CTEs). */
export interface Catalog {
  sourceByName(name: string): SourceTable | undefined;
}

export const baseColumns: Record<string, FieldType> = {
  id: { kind: 'scalar', type: 'string' },
  timestamp: { kind: 'scalar', type: 'timestamp' },
  event_message: { kind: 'scalar', type: 'string' },
};

/** The columns other than the base ones. */
export function withoutBase(columns: Record<string, FieldType>): Record<string, FieldType> {
  return Object.fromEntries(Object.entries(columns).filter(([name]) => !Object.hasOwn(baseColumns, name)));
}
