/**
 * The bounds on the work one query may ask of an engine (docs/API.md, "Limits"): how large the
 * query is once its CTEs are inlined (cost.ts) and how large a value a function may build
 * (value-bounds.ts). Checked on the query as it will run (saved query + caller query), before any
 * engine sees it: DuckDB's planner and its string functions cannot be interrupted, so a query past
 * these bounds must never reach it.
 */

export interface QueryBounds {
  /** Table references once every CTE is inlined at each use (QUERY_MAX_TABLE_REFERENCES). */
  readonly maxTableReferences: number;
  /** Tables, derived tables and UNNESTs in one FROM clause (QUERY_MAX_JOINS). */
  readonly maxJoins: number;
  /** Operands of set operations once every CTE is inlined (QUERY_MAX_SET_OPERANDS). */
  readonly maxSetOperands: number;
  /** Queries nested in queries, a CTE read counting as one level into it (QUERY_MAX_NESTING). */
  readonly maxNesting: number;
  /**
   * The largest string REPEAT, LPAD/RPAD or FORMAT may build where it is computed once, bytes
   * (QUERY_MAX_VALUE_BYTES); a 256th of it where it is computed for every row (value-bounds.ts).
   */
  readonly maxValueBytes: number;
  /** How many times the values it reads any expression may make a value (QUERY_MAX_VALUE_GROWTH, value-growth.ts). */
  readonly maxValueGrowth: number;
}

/**
 * Defaults, with a margin over every legitimate query we know (Studio's pages reach 91 table
 * references and 78 set-operation operands in the unified logs count, 15 items in one FROM in its
 * service-flow queries, nesting 5: test/sql/cost-bounds.test.ts measures them), and below where
 * planning time starts to matter (the 91-reference count plans and runs in 1.7 s on chDB; 1024
 * references took DuckDB 5 s and the attacks of issue 20 minutes).
 */
export const defaultQueryBounds: QueryBounds = Object.freeze({
  maxTableReferences: 128,
  maxJoins: 32,
  maxSetOperands: 256,
  maxNesting: 32,
  maxValueBytes: 2 ** 20,
  maxValueGrowth: 64,
});
