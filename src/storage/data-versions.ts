/**
 * A data version per table, bumped after every committed write to it (append, delete, retention
 * sweep, schema change, drop), for caches of anything computed from a table's contents.
 *
 * Why an engine needs it: DuckDB optimises a prepared statement with the statistics of the tables
 * it reads (a literal `IN (…)`, `= '…'` or `ts > TIMESTAMP '…'` outside a column's current min/max
 * is pruned to an empty scan) and keeps that plan after inserts. A statement prepared before a
 * write may therefore be reused only while none of its tables has been written since.
 *
 * Every bump takes a value above every value handed out before, so the largest version among a set
 * of tables changes exactly when one of them is written: one number identifies the state of all the
 * tables a statement reads.
 */
export class DataVersions {
  #latest = 0;
  readonly #byTable = new Map<string, number>();

  /** Marks `tables` as written. Call it after the write has committed, before acknowledging it. */
  bump(tables: Iterable<string>): void {
    const next = ++this.#latest;
    for (const table of tables) this.#byTable.set(table, next);
  }

  /**
   * The version of what `tables` hold: equal to an earlier answer only if none of them was
   * written in between. Read it before preparing, so a write that commits meanwhile is caught by
   * the next comparison rather than missed.
   */
  of(tables: readonly string[]): number {
    let version = 0;
    for (const table of tables) {
      const v = this.#byTable.get(table);
      if (v !== undefined && v > version) version = v;
    }
    return version;
  }
}
