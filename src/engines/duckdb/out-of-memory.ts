/**
 * Whether an engine error means it ran out of its memory limit (DuckDB: "Out of Memory Error: could
 * not allocate block …"), for any operation: a caller's query, or an ingest write into a very wide
 * source. Such a request gets `503 OVERLOADED` naming the limit, never a 500.
 */
import { QuarryError } from '../../errors.ts';

const OUT_OF_MEMORY = /^Out of Memory Error:/;

export function isOutOfMemory(e: unknown): boolean {
  if (typeof e === 'object' && e !== null) {
    const cause = (e as { cause?: unknown }).cause;
    if (cause !== undefined && cause !== e && isOutOfMemory(cause)) return true;
  }
  return e instanceof Error && OUT_OF_MEMORY.test(e.message);
}

export function outOfMemoryError(cause: unknown): QuarryError {
  return new QuarryError(
    'OVERLOADED',
    "The request needed more memory than the engine's limit (DUCKDB_MEMORY_LIMIT, by default half of MEMORY_BUDGET); retry later, or raise the limit.",
    { cause, retryAfter: 5 },
  );
}
