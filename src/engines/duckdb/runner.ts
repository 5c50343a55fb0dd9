/**
 * Runs prepared queries on DuckDB: generate SQL, double-check it against DuckDB's own parse
 * tree, bind parameters as VARCHAR, enforce the row cap (by the generated LIMIT) and the time
 * limit (by interrupting the connection), and encode the rows.
 */
import { type DuckDBConnection, VARCHAR } from '@duckdb/node-api';
import { isQuarryError, QuarryError } from '../../errors.ts';
import type { PreparedQuery } from '../../sql/index.ts';
import { walkQuery } from '../../sql/walk.ts';
import type { JsonValue, QueryEngine, QueryResult, RunOptions } from '../query-engine.ts';
import { encodeValue } from './encode.ts';
import { generateDuckDb } from './generator.ts';
import { checkTranslatedSql } from './lockdown.ts';

export interface DuckDbQueryRunnerOptions {
  /** Opens a connection (on a locked-down database). Connections are pooled and reused. */
  connect(): Promise<DuckDBConnection>;
  /** Second check of translated SQL with json_serialize_sql (default true). */
  verifyTranslation?: boolean;
  /** Closes a connection the pool does not keep (default: closeSync). */
  disconnect?(conn: DuckDBConnection): void;
  /** Connections kept idle for reuse (default 4). */
  idleConnections?: number;
}

export class DuckDbQueryRunner implements QueryEngine {
  private readonly idle: DuckDBConnection[] = [];

  constructor(private readonly options: DuckDbQueryRunnerOptions) {}

  async run(query: PreparedQuery, params: Record<string, string | null | undefined>, options: RunOptions): Promise<QueryResult> {
    const generated = generateDuckDb(query.ast, { catalog: query.catalog, maxRows: options.maxRows });
    const conn = await this.acquire();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      conn.interrupt();
    }, options.timeoutMs);
    try {
      if (this.options.verifyTranslation !== false) {
        await checkTranslatedSql(conn, generated.sql, { tables: physicalTables(query), ctes: cteNames(query) });
      }
      // An interrupt that lands between statements is lost, so look at the clock before each.
      if (timedOut) throw new Error('timed out');
      const values: Record<string, string | null> = {};
      const types: Record<string, typeof VARCHAR> = {};
      for (const name of generated.params) {
        const v = params[name];
        values[name] = typeof v === 'string' ? v : null;
        types[name] = VARCHAR;
      }
      const prepared = await conn.prepare(generated.sql);
      if (generated.params.length > 0) prepared.bind(values, types);
      if (timedOut) throw new Error('timed out');
      const reader = await prepared.runAndReadAll();
      const names = reader.columnNames();
      const rows: Record<string, JsonValue>[] = reader.getRows().map((row) => {
        const out: Record<string, JsonValue> = {};
        row.forEach((value, i) => {
          out[names[i]!] = encodeValue(value, generated.columns[i]?.type);
        });
        return out;
      });
      return { rows, warnings: generated.warnings };
    } catch (e) {
      if (timedOut) throw new QuarryError('QUERY_TIMEOUT', `The query ran longer than ${options.timeoutMs} ms and was stopped`);
      throw mapDuckDbError(e);
    } finally {
      clearTimeout(timer);
      // A connection the timer interrupted is not reused: the interrupt may land after the query.
      if (timedOut) this.discard(conn);
      else this.release(conn);
    }
  }

  /**
   * Checks that a query can run, without running it: generation resolves every column against the
   * catalogue, and DuckDB's binder checks types while preparing.
   */
  async check(query: PreparedQuery): Promise<void> {
    const generated = generateDuckDb(query.ast, { catalog: query.catalog });
    const conn = await this.acquire();
    try {
      await conn.prepare(generated.sql);
    } catch (e) {
      throw mapDuckDbError(e);
    } finally {
      this.release(conn);
    }
  }

  /** Closes pooled connections. */
  close(): void {
    for (const c of this.idle.splice(0)) this.discard(c);
  }

  private async acquire(): Promise<DuckDBConnection> {
    return this.idle.pop() ?? (await this.options.connect());
  }

  private release(conn: DuckDBConnection): void {
    if (this.idle.length < (this.options.idleConnections ?? 4)) this.idle.push(conn);
    else this.discard(conn);
  }

  private discard(conn: DuckDBConnection): void {
    if (this.options.disconnect) this.options.disconnect(conn);
    else conn.closeSync();
  }
}

function physicalTables(query: PreparedQuery): string[] {
  const tables = new Set<string>();
  walkQuery(query.ast, {
    table(t, cte) {
      if (!cte) {
        const source = query.catalog.sourceByName(t.name);
        if (source) tables.add(source.table);
      }
    },
  });
  return [...tables];
}

function cteNames(query: PreparedQuery): string[] {
  const names: string[] = [];
  walkQuery(query.ast, {
    query(q) {
      for (const c of q.with) names.push(c.name);
    },
  });
  return names;
}

/** DuckDB errors → QuarryErrors whose messages carry no SQL text. */
export function mapDuckDbError(e: unknown): QuarryError {
  if (isQuarryError(e)) return e;
  const raw = e instanceof Error ? e.message : String(e);
  const first = raw.split('\n')[0] ?? '';
  const m = /^(Binder|Conversion|Invalid Input|Out of Range|Parser|Catalog|Permission|Interrupt|Out of Memory) Error:\s*(.*)$/.exec(first);
  const kind = m?.[1];
  const detail = (m?.[2] ?? '').replace(/"__[a-z]\d+"\./g, '').trim();
  if (kind === 'Interrupt') return new QuarryError('QUERY_TIMEOUT', 'The query was stopped before it finished', { cause: e });
  if (kind === 'Out of Memory') return new QuarryError('OVERLOADED', 'The query needed more memory than allowed', { cause: e, retryAfter: 5 });
  if (kind === 'Binder' || kind === 'Conversion' || kind === 'Invalid Input' || kind === 'Out of Range') {
    return new QuarryError('INVALID_QUERY', `The query is not valid: ${detail}`, { cause: e });
  }
  if (kind === 'Permission' || kind === 'Catalog') return new QuarryError('QUERY_NOT_ALLOWED', 'The query tried to use something that is not allowed', { cause: e });
  return new QuarryError('INTERNAL', 'The query failed', { cause: e });
}
