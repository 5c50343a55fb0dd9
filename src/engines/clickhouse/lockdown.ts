/**
 * Defence in depth for the ClickHouse engine, behind the validator and the generator.
 *
 * 1. Every caller query runs with per-query settings (`querySettings`): `readonly = 1` (no writes,
 *    no settings changes, and no table functions: `file`, `url`, `s3`, `remote`, `mysql`, … need
 *    the right to create temporary tables, which read-only mode takes away), a time limit, a memory
 *    limit and a result row cap. They are written into the statement's own SETTINGS clause, so they
 *    hold for that statement on a server and on embedded chDB alike (chDB has no users or settings
 *    profiles; on a server a read-only user restricted to Quarry's database adds a further layer:
 *    docs/SCALING.md).
 * 2. `checkTranslatedSql`: ClickHouse's own parse tree of the generated statement (`EXPLAIN AST`)
 *    must be one SELECT reading only the tables the query may read (Quarry's database, never
 *    `system.*` or another database), no table function, no dictionary, and only functions the
 *    generator emits.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { QuarryError } from '../../errors.ts';
import type { Query } from '../../sql/ast.ts';
import { isAggregate } from '../../sql/functions.ts';
import { Lru } from '../../sql/lru.ts';
import { walkQuery } from '../../sql/walk.ts';
import { MAX_STATEMENT_BYTES, mapClickHouseError } from './errors.ts';
import { emittedFunctions } from './printer.ts';

export interface QuerySettings {
  timeoutMs: number;
  maxRows: number;
  /** Bytes; 0 leaves the server's own limit. */
  maxMemoryBytes: number;
  /** `log_comment`: finds the query again to stop it (`quarry:<uuid>`). */
  marker?: string;
  /** `aggregate_functions_null_for_empty` (default true); see `needsNullForEmpty`. */
  nullForEmpty?: boolean;
}

/** Aggregates printed so that no rows give BigQuery's 0 without `aggregate_functions_null_for_empty`. */
const COUNTS: ReadonlySet<string> = new Set(['count', 'countif', 'approx_count_distinct']);

/**
 * Whether the query needs `aggregate_functions_null_for_empty` (BigQuery's NULL from SUM, MIN, AVG,
 * … over no rows): it holds an aggregate other than a count. The setting costs even where it
 * changes nothing: it kept `count()` off ClickHouse's faster count path (count, last hour, at 10M
 * events: 12.3 → 7.8 ms in-process), so queries of counts alone run without it.
 */
export function needsNullForEmpty(ast: Query): boolean {
  let needs = false;
  walkQuery(ast, {
    expr(e) {
      if (e.kind === 'func' && isAggregate(e.name) && !COUNTS.has(e.name)) needs = true;
    },
  });
  return needs;
}

/** Rows per block of a caller query's result. */
const RESULT_BLOCK_ROWS = 8192;

/**
 * Tests only (test/security/isolation.test.ts): `preferColumnNameToAlias = false` sends
 * `prefer_column_name_to_alias = 0`, to show a caller's aliases cannot reach the saved query's
 * filter columns without that setting. The service never changes it.
 */
export const settingsForTests: { preferColumnNameToAlias: boolean } = { preferColumnNameToAlias: true };

/** The SETTINGS clause appended to every generated caller query. */
export function querySettings(s: QuerySettings): string {
  const settings: [string, string | number][] = [
    ['max_execution_time', Math.max(0.001, s.timeoutMs / 1000)],
    // 'break' stops the statement cleanly at the limit (the runner reports QUERY_TIMEOUT when the
    // limit was reached); on chDB, 'throw' left the timed-out statement registered as running.
    ['timeout_overflow_mode', "'break'"],
    ['max_result_rows', Math.max(1, s.maxRows)],
    ['result_overflow_mode', "'break'"],
    // The result streams a block at a time (result-stream.ts): smaller blocks than the default
    // 65,409 rows let the runner stop at the byte cap within a few MB of rows.
    ['max_block_size', RESULT_BLOCK_ROWS],
    ['join_use_nulls', 1],
    ...(s.nullForEmpty === false ? [] : [['aggregate_functions_null_for_empty', 1] as [string, number]]),
    ['prefer_column_name_to_alias', settingsForTests.preferColumnNameToAlias ? 1 : 0],
    ['enable_positional_arguments', 1],
    ['output_format_json_quote_64bit_integers', 0],
    ['output_format_json_quote_denormals', 1],
    ['output_format_json_quote_decimals', 0],
    // BigQuery's TO_JSON_STRING leaves `/` as it is (ClickHouse's toJSONString escapes it by default).
    ['output_format_json_escape_forward_slashes', 0],
    ['allow_experimental_correlated_subqueries', 1],
  ];
  if (s.maxMemoryBytes > 0) settings.push(['max_memory_usage', Math.floor(s.maxMemoryBytes)]);
  if (s.marker !== undefined && /^quarry:[0-9a-f-]+$/.test(s.marker)) settings.push(['log_comment', `'${s.marker}'`]);
  // Last, so every setting above is applied before the query becomes read-only.
  settings.push(['readonly', 1]);
  return ` SETTINGS ${settings.map(([k, v]) => `${k} = ${v}`).join(', ')}`;
}

export interface TranslatedCheck {
  /** The database holding Quarry's tables. */
  database: string;
  /** Physical tables the query may read. */
  tables: readonly string[];
  /** CTE names defined by the query. */
  ctes: readonly string[];
  /**
   * Stand-in values for the statement's placeholders: EXPLAIN AST substitutes them, and only a
   * Nullable one may be left out. The tree's shape does not depend on them.
   */
  params?: Readonly<Record<string, string | null>>;
}

/** Verdicts already given (only passes), by everything the verdict depends on. */
const passed = new Lru<string, true>(1024);

export function clearTranslatedSqlVerdicts(): void {
  passed.clear();
}

export async function checkTranslatedSql(client: ClickHouseClient, sql: string, allowed: TranslatedCheck): Promise<void> {
  const key = JSON.stringify([allowed.database, [...allowed.tables].sort(), [...allowed.ctes].map((c) => c.toLowerCase()).sort(), sql]);
  if (passed.get(key)) return;
  const words = lexicalProblem(sql);
  if (words) throw new QuarryError('QUERY_NOT_ALLOWED', `Not allowed in queries: ${words}`);
  let tree: string;
  try {
    // As a subquery, so the output format applies to the listing itself.
    const result = await client.query({
      query: `SELECT explain FROM (EXPLAIN AST ${sql})`,
      query_params: { ...allowed.params },
      format: 'JSONEachRow',
      clickhouse_settings: { max_query_size: String(MAX_STATEMENT_BYTES) },
    });
    // A server gives {"explain": line} per row; chDB gives the line itself.
    tree = ((await result.json()) as (string | { explain: string })[]).map((r) => (typeof r === 'string' ? r : r.explain)).join('\n');
  } catch (e) {
    // A statement too large or too deep to parse is the caller's to shorten; anything else is ours.
    const mapped = mapClickHouseError(e, 0);
    if (mapped.code === 'QUERY_TOO_COMPLEX') throw mapped;
    throw new QuarryError('INTERNAL', 'The translated query failed the engine-side check', { cause: e });
  }
  const problem = treeProblem(tree, allowed);
  if (problem) throw new QuarryError('QUERY_NOT_ALLOWED', `Not allowed in queries: ${problem}`);
  passed.set(key, true);
}

/** The first thing in an `EXPLAIN AST` listing that generated SQL never contains, or undefined. */
export function treeProblem(tree: string, allowed: TranslatedCheck): string | undefined {
  const lines = tree.split('\n').filter((l) => l.trim() !== '');
  if (!lines[0]?.startsWith('SelectWithUnionQuery')) return 'a statement other than SELECT';
  const tables = new Set(allowed.tables.map((t) => `${allowed.database}.${t}`));
  const ctes = new Set(allowed.ctes.map((c) => c.toLowerCase()));
  let tableExpressionDepth = -1;
  for (const line of lines.slice(1)) {
    const depth = line.length - line.trimStart().length;
    const node = line.trim();
    // The output format the client appends.
    if (depth === 1 && node.startsWith('Identifier ')) continue;
    if (depth === 0) return 'several statements';
    if (tableExpressionDepth >= 0 && depth <= tableExpressionDepth) tableExpressionDepth = -1;
    if (node.startsWith('TableExpression')) {
      tableExpressionDepth = depth;
      continue;
    }
    const [kind, name = ''] = node.split(/\s+/);
    if (kind === 'TableIdentifier') {
      // system.one is the one-row table ClickHouse itself puts under a SELECT without FROM.
      if (!(tables.has(name) || ctes.has(name.toLowerCase()) || name === 'system.one')) return 'a table outside the allowed CTEs';
      continue;
    }
    if (kind === 'Function') {
      // A function directly under a table expression is a table function.
      if (tableExpressionDepth >= 0 && depth === tableExpressionDepth + 1) return `table function ${name}`;
      if (!emittedFunctions.has(name)) return `function ${name}`;
      continue;
    }
    if (kind === 'Set') return 'a SETTINGS clause';
    if (kind === 'SampleRatio' || kind === 'TableOverride') return `a ${kind} clause`;
    // The generator's only wildcard is `alias.*` around an UNNEST.
    if (kind === 'Asterisk' || kind === 'ColumnsRegexpMatcher' || kind === 'ColumnsListMatcher') return 'a wildcard';
    if (kind === 'Identifier' && /^system\./i.test(name)) return 'a system table';
  }
  return undefined;
}

/** Bare words the generator never prints (its names are all backquoted); EXPLAIN AST omits some. */
const forbiddenWords = new Set([
  'SAMPLE',
  'SETTINGS',
  'FORMAT',
  'INTO',
  'OUTFILE',
  'FINAL',
  'PREWHERE',
  'SYSTEM',
  'KILL',
  'INSERT',
  'DROP',
  'ALTER',
  'ATTACH',
  'DETACH',
  'OPTIMIZE',
  'TRUNCATE',
  'GRANT',
  'SET',
]);

/**
 * A lexical pass over the statement: outside string literals and backquoted names, no comment, no
 * statement separator and none of `forbiddenWords`.
 */
export function lexicalProblem(sql: string): string | undefined {
  let i = 0;
  let bare = '';
  while (i < sql.length) {
    const c = sql[i] as string;
    if (c === "'" || c === '`') {
      // Quoted: skip to the closing quote (backslash escapes the next character).
      i++;
      while (i < sql.length && sql[i] !== c) i += sql[i] === '\\' ? 2 : 1;
      if (i >= sql.length) return 'an unterminated quote';
      i++;
      bare += ' ';
      continue;
    }
    if (c === '"') return 'a double-quoted name';
    if (c === ';') return 'several statements';
    if ((c === '-' && sql[i + 1] === '-') || (c === '/' && sql[i + 1] === '*') || c === '#') return 'a comment';
    bare += c;
    i++;
  }
  for (const word of bare.toUpperCase().match(/[A-Z_]+/g) ?? []) if (forbiddenWords.has(word)) return `the keyword ${word}`;
  return undefined;
}
