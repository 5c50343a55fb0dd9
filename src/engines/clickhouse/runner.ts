/**
 * Runs prepared queries on ClickHouse: generate SQL, double-check it against ClickHouse's own parse
 * tree, bind parameters as `{name:Nullable(String)}` query parameters, enforce the row cap (by the
 * generated LIMIT, and `max_result_rows`) and the time limit (`max_execution_time`, plus a client
 * abort a little later), run read-only, and encode the rows as the DuckDB engine does.
 */
import { randomUUID } from 'node:crypto';
import type { ClickHouseClient } from '@clickhouse/client';
import { isQuarryError, QuarryError } from '../../errors.ts';
import type { Query } from '../../sql/ast.ts';
import type { PreparedQuery } from '../../sql/index.ts';
import { Lru } from '../../sql/lru.ts';
import { walkQuery } from '../../sql/walk.ts';
import type { Catalog, SourceTable } from '../../storage/schema.ts';
import type { JsonValue, QueryEngine, QueryResult, RunOptions } from '../query-engine.ts';
import { encodeRows } from './encode.ts';
import { type GeneratedQuery, generateClickHouse } from './generator.ts';
import { checkTranslatedSql, querySettings } from './lockdown.ts';

export interface ClickHouseQueryRunnerOptions {
  client: ClickHouseClient;
  /**
   * Stops queries that outlived their time limit (`KILL QUERY`). On chDB a query that reported its
   * timeout may still run on in the background, so another session stops it.
   */
  killer?: ClickHouseClient;
  database: string;
  /** Per-query memory limit in bytes (0: the server's). */
  maxMemoryBytes?: number;
  /** Second check of translated SQL with EXPLAIN AST (default true). */
  verifyTranslation?: boolean;
}

interface Translation {
  catalog: Catalog;
  deps: [string, SourceTable | undefined][];
  generated: GeneratedQuery;
  tables: string[];
  ctes: string[];
}

const translations = new WeakMap<Query, Lru<string, Translation>>();

function translate(query: PreparedQuery, database: string, maxRows: number | undefined): Translation {
  const { ast, catalog } = query;
  const key = `${database}\u0000${maxRows ?? ''}`;
  let perCap = translations.get(ast);
  const known = perCap?.get(key);
  if (known && known.catalog === catalog && known.deps.every(([name, entry]) => catalog.sourceByName(name) === entry)) return known;
  const generated = generateClickHouse(ast, maxRows === undefined ? { catalog, database } : { catalog, database, maxRows });
  const names = new Set<string>();
  const tables = new Set<string>();
  const ctes: string[] = [];
  walkQuery(ast, {
    query(q) {
      for (const c of q.with) ctes.push(c.name);
    },
    table(t, cte) {
      names.add(t.name);
      const source = cte ? undefined : catalog.sourceByName(t.name);
      if (source) tables.add(source.table);
    },
  });
  const translation: Translation = { catalog, deps: [...names].map((n) => [n, catalog.sourceByName(n)]), generated, tables: [...tables], ctes };
  if (!perCap) {
    perCap = new Lru(8);
    translations.set(ast, perCap);
  }
  perCap.set(key, translation);
  return translation;
}

/** Time a server gets past max_execution_time to report the timeout itself before the client gives up. */
const ABORT_GRACE_MS = 2000;

export class ClickHouseQueryRunner implements QueryEngine {
  constructor(private readonly options: ClickHouseQueryRunnerOptions) {}

  async run(query: PreparedQuery, params: Record<string, string | null | undefined>, options: RunOptions): Promise<QueryResult> {
    const { client, database } = this.options;
    const translation = translate(query, database, options.maxRows);
    const generated = translation.generated;
    const started = Date.now();
    if (this.options.verifyTranslation !== false) {
      await checkTranslatedSql(client, generated.sql, { database, tables: translation.tables, ctes: translation.ctes });
    }
    const values: Record<string, string | null> = {};
    for (const name of generated.params) {
      const v = params[name];
      values[name] = typeof v === 'string' ? v : null;
    }
    const remaining = Math.max(1, options.timeoutMs - (Date.now() - started));
    const marker = `quarry:${randomUUID()}`;
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), remaining + ABORT_GRACE_MS);
    try {
      const result = await client.query({
        query:
          generated.sql + querySettings({ timeoutMs: remaining, maxRows: options.maxRows, maxMemoryBytes: this.options.maxMemoryBytes ?? 0, marker }),
        query_params: values,
        format: 'JSONEachRow',
        abort_signal: abort.signal,
      });
      const raw = (await result.json()) as Record<string, JsonValue>[];
      const rows = encodeRows(
        raw.length > options.maxRows ? raw.slice(0, options.maxRows) : raw,
        generated.columns.map((c) => c.name),
        generated.columns.map((c) => c.type),
      );
      return { rows, warnings: generated.warnings };
    } catch (e) {
      const mapped = abort.signal.aborted
        ? new QuarryError('QUERY_TIMEOUT', `The query ran longer than ${options.timeoutMs} ms and was stopped`)
        : mapClickHouseError(e, options.timeoutMs);
      if (mapped.code === 'QUERY_TIMEOUT') this.kill(marker);
      throw mapped;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Stops every query this runner started that is still running (shutdown). */
  async stopAll(): Promise<void> {
    await this.killWhere("LIKE 'quarry:%'");
  }

  private kill(marker: string): void {
    void this.killWhere(`= '${marker}'`);
  }

  private async killWhere(condition: string): Promise<void> {
    const killer = this.options.killer;
    if (!killer) return;
    await killer.command({ query: `KILL QUERY WHERE Settings['log_comment'] ${condition} ASYNC` }).catch(() => undefined);
  }

  /** Checks that a query can run without running it: ClickHouse analyses it (types included) for EXPLAIN. */
  async check(query: PreparedQuery): Promise<void> {
    const { client, database } = this.options;
    const generated = generateClickHouse(query.ast, { catalog: query.catalog, database, strictSourceColumns: true });
    const params: Record<string, null> = {};
    for (const name of generated.params) params[name] = null;
    try {
      const result = await client.query({ query: `EXPLAIN PLAN ${generated.sql}`, query_params: params, format: 'JSONEachRow' });
      await result.json();
    } catch (e) {
      throw mapClickHouseError(e, 0);
    }
  }
}

const timeoutTypes = new Set(['TIMEOUT_EXCEEDED']);
const memoryTypes = new Set(['MEMORY_LIMIT_EXCEEDED']);
const refusedTypes = new Set(['ACCESS_DENIED', 'READONLY', 'UNKNOWN_TABLE', 'UNKNOWN_DATABASE', 'UNKNOWN_FUNCTION', 'FUNCTION_NOT_ALLOWED', 'SUPPORT_IS_DISABLED']);
const internalTypes = new Set(['SYNTAX_ERROR', 'NETWORK_ERROR', 'SOCKET_TIMEOUT', 'UNKNOWN_SETTING', 'LOGICAL_ERROR']);

/** ClickHouse errors → QuarryErrors whose messages carry no SQL text, table or database names. */
export function mapClickHouseError(e: unknown, timeoutMs: number): QuarryError {
  if (isQuarryError(e)) return e;
  const type = (e as { type?: string }).type ?? '';
  const raw = e instanceof Error ? e.message : String(e);
  if (timeoutTypes.has(type)) return new QuarryError('QUERY_TIMEOUT', `The query ran longer than ${timeoutMs} ms and was stopped`, { cause: e });
  if (memoryTypes.has(type)) return new QuarryError('OVERLOADED', 'The query needed more memory than allowed', { cause: e, retryAfter: 5 });
  if (refusedTypes.has(type)) return new QuarryError('QUERY_NOT_ALLOWED', 'The query tried to use something that is not allowed', { cause: e });
  if (type === 'FUNCTION_THROW_IF_VALUE_IS_NON_ZERO') {
    return new QuarryError('INVALID_QUERY', `The query is not valid: ${raw.split(':')[0]}`, { cause: e });
  }
  if (type === '' || internalTypes.has(type)) return new QuarryError('INTERNAL', 'The query failed', { cause: e });
  return new QuarryError('INVALID_QUERY', `The query is not valid: ${cleanMessage(raw)}`, { cause: e });
}

/** The first sentence of a ClickHouse message, without query text, internal aliases or table names. */
function cleanMessage(raw: string): string {
  let m = raw.split('\n')[0] ?? '';
  m = m.split(/: In scope |: While processing |\. Stack trace|: while executing |\. \(/)[0] ?? m;
  m = m
    .replace(/`?__[a-z]\d+`?\.?/g, '')
    .replace(/`?src_[0-9a-z]+`?/g, 'the source')
    .replace(/CAST\(.*?AS Nullable\((\w+)\)\)/g, 'a $1 value')
    .replace(/`[^`]*`\./g, '');
  return m.trim().slice(0, 300) || 'ClickHouse could not run it';
}
