/**
 * Defence in depth for the DuckDB engine, behind the validator:
 *
 * 1. `lockDownDuckDb`: no file or network access from SQL, configuration frozen, memory capped.
 *    These are database-wide settings; ingest and metadata keep working because they need no
 *    external access and no configuration changes after start-up.
 * 2. `checkTranslatedSql`: DuckDB's own parse tree of the generated SQL (json_serialize_sql)
 *    must name only the tables the query may read and only functions the generator emits.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { QuarryError } from '../../errors.ts';
import { Lru } from '../../sql/lru.ts';
import { printerEmits } from './generator.ts';
import { duckDbFunctions } from './generator-functions.ts';

export interface LockdownOptions {
  /** e.g. '2GB'. */
  memoryLimit?: string;
}

export async function lockDownDuckDb(conn: DuckDBConnection, options: LockdownOptions = {}): Promise<void> {
  if (options.memoryLimit) {
    if (!/^\d+(\.\d+)?\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB|%)$/i.test(options.memoryLimit)) {
      throw new QuarryError('INTERNAL', 'Invalid memory limit setting');
    }
    await conn.run(`SET memory_limit = '${options.memoryLimit}'`);
  }
  await conn.run('SET enable_external_access = false');
  await conn.run('SET allow_community_extensions = false');
  await conn.run('SET autoinstall_known_extensions = false');
  await conn.run('SET autoload_known_extensions = false');
  await conn.run('SET lock_configuration = true');
}

/**
 * Functions (and operators) a generated statement may contain: what the function table's entries
 * declare they emit, plus what the printer itself writes. Anything else in the plan is refused.
 */
const emittedFunctions: ReadonlySet<string> = new Set([...printerEmits, ...Object.values(duckDbFunctions).flatMap((t) => ('emits' in t ? t.emits : []))]);

export interface TranslatedCheck {
  /** Physical tables the query may read. */
  tables: readonly string[];
  /** CTE names defined by the query. */
  ctes: readonly string[];
}

/**
 * Verdicts already given: a (SQL text, allowed tables, CTE names) triple that passed once passes
 * again, since the check depends on nothing else (DuckDB's parser is deterministic and the
 * function list is fixed). Refusals are not remembered: they throw, and are rare.
 */
const passed = new Lru<string, true>(1024);

/** The cache key of one check: everything the verdict depends on. */
function verdictKey(sql: string, allowed: TranslatedCheck): string {
  const tables = [...allowed.tables].map((t) => t.toLowerCase()).sort();
  const ctes = [...allowed.ctes].map((t) => t.toLowerCase()).sort();
  return JSON.stringify([tables, ctes, sql]);
}

/**
 * The second check: DuckDB's own parse tree of `sql` must be one SELECT naming only allowed
 * tables and emitted functions. Runs once per distinct (sql, allowed); later calls with the same
 * inputs return the remembered verdict.
 */
export async function checkTranslatedSql(conn: DuckDBConnection, sql: string, allowed: TranslatedCheck): Promise<void> {
  const key = verdictKey(sql, allowed);
  if (passed.get(key)) return;
  await checkTranslatedSqlUncached(conn, sql, allowed);
  passed.set(key, true);
}

/** Forgets every remembered verdict (tests). */
export function clearTranslatedSqlVerdicts(): void {
  passed.clear();
}

async function checkTranslatedSqlUncached(conn: DuckDBConnection, sql: string, allowed: TranslatedCheck): Promise<void> {
  // json_serialize_sql takes a constant only; the text is quoted as a standard SQL string.
  const reader = await conn.runAndReadAll(`SELECT json_serialize_sql('${sql.replace(/'/g, "''")}') AS tree`);
  const tree = reader.getRowObjectsJson()[0]?.tree;
  const parsed: unknown = typeof tree === 'string' ? JSON.parse(tree) : undefined;
  if (isObject(parsed) && parsed.error === true && parsed.error_type === 'parser' && typeof parsed.error_message === 'string') {
    // What DuckDB's parser refuses in a printed query comes from the caller's (a window frame that
    // ends before it starts); quoted fragments are the printed SQL's, not the caller's, and are left out.
    const reason = (parsed.error_message.split('\n')[0] ?? '').replace(/'(?:[^']|'')*'|"(?:[^"]|"")*"/g, '…');
    throw new QuarryError('INVALID_QUERY', `The query is not valid: ${reason}`);
  }
  if (!isObject(parsed) || parsed.error !== false) {
    throw new QuarryError('INTERNAL', 'The translated query failed the engine-side check');
  }
  const tables = new Set([...allowed.tables, ...allowed.ctes].map((t) => t.toLowerCase()));
  const problems: string[] = [];
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const n of node) visit(n);
      return;
    }
    if (!isObject(node)) return;
    const problem = nodeProblem(node, tables);
    if (problem) problems.push(problem);
    for (const v of Object.values(node)) if (typeof v === 'object' && v !== null) visit(v);
  };
  const statements = Array.isArray(parsed.statements) ? parsed.statements : [];
  if (statements.length !== 1) problems.push('several statements');
  visit(statements);
  if (problems.length > 0) throw new QuarryError('QUERY_NOT_ALLOWED', `Not allowed in queries: ${problems[0]}`);
}

/** Table references the generator produces: tables, derived tables, joins, no FROM. */
const tableRefTypes = new Set(['BASE_TABLE', 'SUBQUERY', 'JOIN', 'EMPTY']);
const queryNodeTypes = new Set(['SELECT_NODE', 'SET_OPERATION_NODE', 'CTE_NODE']);

function nodeProblem(node: Record<string, unknown>, tables: ReadonlySet<string>): string | undefined {
  const type = node.type;
  // Table references carry a `sample` member; query nodes carry `modifiers`.
  if ('sample' in node && !('modifiers' in node) && !tableRefTypes.has(String(type))) return `a ${String(type).toLowerCase()} table reference`;
  if ('modifiers' in node && 'type' in node && !queryNodeTypes.has(String(type))) return `a ${String(type).toLowerCase()}`;
  if (type === 'BASE_TABLE') {
    const name = String(node.table_name).toLowerCase();
    // The message never names the table: physical names are not for callers to learn.
    if (node.schema_name !== '' || node.catalog_name !== '' || !tables.has(name)) return 'a table outside the allowed CTEs';
  }
  if (node.class === 'COLUMN_REF') {
    // Generated column references are always qualified; a bare name may be a special value.
    const names = node.column_names;
    if (!Array.isArray(names) || names.length < 2) return 'an unqualified name';
  }
  if (node.class === 'STAR') {
    if (!node.relation_name || node.columns === true || present(node.exclude_list) || present(node.replace_list)) return 'a wildcard';
  }
  if (node.class === 'FUNCTION' || node.class === 'AGGREGATE' || node.class === 'WINDOW') {
    const name = String(node.function_name ?? '').toLowerCase();
    if (name && !emittedFunctions.has(name)) return `function ${name}`;
    // The parser itself qualifies some rewrites (`[x]` → main.list_value).
    const schema = node.schema ?? '';
    if ((schema !== '' && schema !== 'main') || (node.catalog !== undefined && node.catalog !== '')) return `function ${name}`;
  }
  return undefined;
}

function present(v: unknown): boolean {
  if (Array.isArray(v)) return v.length > 0;
  if (isObject(v)) return Object.keys(v).length > 0;
  return Boolean(v);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
