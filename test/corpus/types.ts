/** Shape of a corpus case: a BigQuery query, its parameters, and the rows DuckDB must return. */
import type { JsonValue } from '../../src/query/port.ts';
import type { ErrorCode } from '../../src/errors.ts';

export type Row = Record<string, JsonValue>;

export interface CorpusCase {
  name: string;
  /** Caller SQL run against `logs.all` (sandboxed); omit to run the saved query itself. */
  sql?: string;
  /** Defaults to { project: 'default' }. */
  params?: Record<string, string | null>;
  expect: Row[] | { error: ErrorCode; message?: RegExp };
  /** Compare as multisets (the query states no order). */
  unordered?: boolean;
  /** Exact X-Query-Warnings paths expected (checked when given). */
  warnings?: string[];
  /** Row cap passed to the engine (default 1000). */
  maxRows?: number;
}

/** Rows from a column list and value tuples: rows(['id', 'n'], ['e1', 1]). */
export function rows(columns: string[], ...values: JsonValue[][]): Row[] {
  return values.map((v) => Object.fromEntries(columns.map((c, i) => [c, v[i] ?? null])));
}

/** Unix microseconds of a time on 2026-11-21 (UTC), as results encode TIMESTAMP. */
export function us(hms: string): number {
  return Date.parse(`2026-11-21T${hms}Z`) * 1000;
}
