/**
 * A DuckDB connection used one statement at a time. Metadata writes are rare and small; running
 * them strictly in order keeps read-modify-write sequences simple without transactions across awaits.
 */
import type { DuckDBConnection, DuckDBValue } from '@duckdb/node-api';
import { serialQueue } from '../serial-queue.ts';

export type Row = Record<string, unknown>;

export interface SerialConnection {
  all(sql: string, values?: Record<string, DuckDBValue>): Promise<Row[]>;
  run(sql: string, values?: Record<string, DuckDBValue>): Promise<void>;
}

export function serial(conn: DuckDBConnection): SerialConnection {
  const enqueue = serialQueue();
  return {
    all(sql, values) {
      return enqueue(async () => {
        const reader = await conn.runAndReadAll(sql, values);
        return reader.getRowObjectsJS() as Row[];
      });
    },
    run(sql, values) {
      return enqueue(async () => {
        await conn.run(sql, values);
      });
    },
  };
}

export function str(v: unknown): string {
  return typeof v === 'string' ? v : String(v);
}

export function optStr(v: unknown): string | null {
  return v === null || v === undefined ? null : str(v);
}

export function iso(v: unknown): string {
  if (v instanceof Date) return v.toISOString();
  return str(v);
}
