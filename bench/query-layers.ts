/**
 * `npm run bench:layers -- --data DIR`: where the milliseconds of one uncached query go, layer by
 * layer, on a copy of a DuckDB data folder (the bench's, kept with `npm run bench -- --keep`):
 *
 *   1. the query path without HTTP (createSqlBackend → the engine's run sequence), as a route calls it;
 *   2. the engine's run sequence alone (a statement prepared once by the SQL layer);
 *   3. the SQL it generates, run on a plain DuckDB connection with the same binds (streamed, and
 *      materialised);
 *   4. the hand-written limit of the bench (bench/limit.ts: literal values, no CTE), run as the
 *      bench runs it (`runAndReadAll`, planned each time) and as a prepared statement.
 *
 * Each figure is the mean of `--runs` (default 300) after 50 untimed, with the process CPU per run,
 * and the ratio to the limit as the bench times it. `--case ID` takes one of the bench's Studio
 * questions (bench/cases.ts) and its hand-written limit (default: `count_last_hour`, Studio's count
 * over three UNNESTs); `--sql` replaces the caller's query alone. The window ends at the newest edge
 * event and is as long as the question's.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { DuckDBInstance } from '@duckdb/node-api';
import { createSqlBackend } from '../src/endpoints/sql-backend.ts';
import { logsAllSql } from '../src/endpoints/supabase/index.ts';
import { generateDuckDb } from '../src/engines/duckdb/generator.ts';
import { engineDefinition } from '../src/engines/registry.ts';
import { prepareEndpointQuery, specialiseForValues } from '../src/sql/index.ts';
import { type CaseId, CASES, type QueryContext, studioSql, windowFor } from './cases.ts';
import { limitSql } from './limit.ts';

const { values } = parseArgs({ options: { data: { type: 'string' }, runs: { type: 'string' }, sql: { type: 'string' }, case: { type: 'string' } } });
if (values.data === undefined) throw new Error('usage: npm run bench:layers -- --data <DuckDB DATA_DIR> [--runs N] [--case ID] [--sql "select …"]');
const runs = Number(values.runs ?? 300);
const caseId = (values.case ?? 'count_last_hour') as CaseId;
if (!CASES.some((c) => c.id === caseId)) throw new Error(`--case must be one of ${CASES.map((c) => c.id).join(', ')}`);

const dir = mkdtempSync(path.join(tmpdir(), 'quarry-layers-'));
cpSync(values.data, dir, { recursive: true });
rmSync(path.join(dir, 'quarry.lock'), { force: true });

const lines: [string, number, number][] = [];
async function time(label: string, run: () => Promise<unknown>): Promise<void> {
  for (let i = 0; i < 50; i++) await run();
  const cpu = process.cpuUsage();
  const start = performance.now();
  for (let i = 0; i < runs; i++) await run();
  const wall = ((performance.now() - start) / runs) * 1000;
  const used = process.cpuUsage(cpu);
  lines.push([label, wall, (used.user + used.system) / runs]);
}

try {
  const definition = engineDefinition('duckdb');
  if (definition === undefined) throw new Error('no DuckDB engine');
  const engine = await definition.configure({}, { dataDir: dir, memoryBudgetBytes: 2 ** 32 }).open();
  await engine.lockDown();
  const catalog = engine.sources.catalog;
  const edge = catalog.sourceByName('cloudflare.logs.prod');
  if (edge === undefined) throw new Error('the folder has no cloudflare.logs.prod source');
  const saved = logsAllSql;
  const backend = createSqlBackend({ catalog, engine: engine.query });
  const info = await backend.inspect(saved);
  /** One row of a question asked of the sources directly (not through logs.all). */
  const ask = (sql: string) => engine.query.run(prepareEndpointQuery({ saved: sql, catalog, sandboxable: false }), {}, { timeoutMs: 60_000, maxRows: 1 });
  const newest = await ask('select max(timestamp) as t from `cloudflare.logs.prod`');
  // An edge event of the project from the middle of the data, as the bench's own lookup.
  const edgeCount = Number((await ask("select count(*) as n from `cloudflare.logs.prod` where project = 'default'")).rows[0]?.n ?? 0);
  const middle = await ask(`select id from \`cloudflare.logs.prod\` where project = 'default' order by timestamp limit 1 offset ${Math.floor(edgeCount / 2)}`);
  const end = String(newest.rows[0]?.t);
  const endMs = typeof newest.rows[0]?.t === 'number' ? Number(newest.rows[0]?.t) / 1000 : Date.parse(end);
  const iso = (ms: number) => new Date(ms).toISOString();
  const q: QueryContext = {
    project: 'default',
    nowIso: iso(endMs),
    hourAgoIso: iso(endMs - 3_600_000),
    dayAgoIso: iso(endMs - 86_400_000),
    lookupId: String(middle.rows[0]?.id ?? ''),
    search: 'search_products',
  };
  const sql = values.sql ?? studioSql(caseId, q);
  if (sql === undefined) throw new Error(`${caseId} is not asked as SQL; give --sql`);
  const window = windowFor(caseId, q);
  const params = { project: q.project, iso_timestamp_start: window.start ?? '', iso_timestamp_end: window.end ?? '' };
  const request = { saved, info, sandboxable: true, caller: { kind: 'sql' as const, text: sql }, params, maxRows: 1000, timeoutMs: 30_000 };
  const answer = await backend.execute(request);
  const prepared = specialiseForValues(prepareEndpointQuery({ saved, catalog, sandboxable: true, caller: { sql } }), params);
  const generated = generateDuckDb(prepared.ast, { catalog, maxRows: 1000, paramTypes: new Map(Object.keys(params).map((k) => [k, 'string' as const])) });
  await time('1. query path, no HTTP (backend.execute)', () => backend.execute(request));
  await time('2. run sequence (engine.query.run)', () => engine.query.run(prepared, params, { timeoutMs: 30_000, maxRows: 1000 }));
  await engine.close();

  const instance = await DuckDBInstance.create(path.join(dir, 'quarry.duckdb'));
  const conn = await instance.connect();
  const statement = await conn.prepare(generated.sql);
  statement.bind(Object.fromEntries(generated.params.map((n) => [n, params[n as keyof typeof params] ?? null])));
  const drain = async (result: Awaited<ReturnType<typeof statement.stream>>) => {
    for (let chunk = await result.fetchChunk(); chunk !== null && chunk.rowCount > 0; chunk = await result.fetchChunk());
  };
  await time('3. its SQL, streamed (prepared.stream)', async () => drain(await statement.stream()));
  await time('3. its SQL, materialised (prepared.run)', () => statement.run());
  const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`;
  const limit = limitSql(caseId, q, quoted(edge.table), quoted(catalog.sourceByName('postgres.logs')?.table ?? 'postgres.logs'));
  await time('4. limit, as the bench runs it (runAndReadAll)', async () => (await conn.runAndReadAll(limit)).getRowObjectsJson());
  const limitStatement = await conn.prepare(limit);
  await time('4. limit, prepared once (no parameters)', async () => drain(await limitStatement.stream()));
  conn.closeSync();
  instance.closeSync();

  const reference = lines.find(([label]) => label.startsWith('4. limit, as the bench'))?.[1] ?? 1;
  console.log(
    `${caseId}: ${answer.rows.length} rows, the first ${JSON.stringify(answer.rows[0])}; window ${params.iso_timestamp_start} .. ${params.iso_timestamp_end}; ${runs} runs each\n`,
  );
  console.log('| layer | µs per query | CPU µs per query | ratio to the limit |\n|---|---|---|---|');
  for (const [label, wall, cpu] of lines) console.log(`| ${label} | ${wall.toFixed(0)} | ${cpu.toFixed(0)} | ${(wall / reference).toFixed(2)} |`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
