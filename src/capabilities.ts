/**
 * What an engine can do, in one record per engine (src/engines/<engine>/definition.ts). The parts
 * that use an engine read it from the object they are handed: the ingest pipeline from the storage
 * port, the endpoints from the query port, the SQL generator from the engine's printer.
 */
export interface EngineCapabilities {
  /**
   * Fields beyond the typed budget are kept in a catch-all column (src/storage/overflow.ts) and read
   * back; without it every field is typed.
   */
  readonly keepsOverflow: boolean;
  /**
   * The engine batches appends itself (ClickHouse: per table): the ingest pipeline hands each
   * request over on its own as it arrives, up to this many not yet stored, instead of one group
   * committing while the next is taken.
   */
  readonly concurrentAppends?: number;
  /**
   * Typed parameter values are bound with their own types (BIGINT, DOUBLE, BOOLEAN, TIMESTAMP, DATE)
   * and `@name` typed by them; without it every value is bound as text.
   */
  readonly typedParams: boolean;
  /** The SQL generator's late materialisation of wide rows (DuckDB: by rowid, up to this many rows). */
  readonly lateMaterialisation?: { readonly maxRows: number };
  /** The SQL generator pushes a caller's ORDER BY … LIMIT n into the CTE it reads (ClickHouse). */
  readonly topNIntoCte?: boolean;
}
