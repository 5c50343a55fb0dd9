import type { Catalog } from '../storage/schema.ts';
import type { Query } from './ast.ts';

/** A merged, validated query, ready for any engine. */
export interface PreparedQuery {
  ast: Query;
  /**
   * Parameters to bind, in order of appearance: the saved query's, then any an AST caller added.
   * Bind each as a string (absent → NULL).
   */
  params: string[];
  /** The catalogue the query was validated against; engines read column types from it. */
  catalog: Catalog;
}
