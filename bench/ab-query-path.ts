/**
 * Paired A/B of the per-request query path: two checkouts of Quarry (old and new) are loaded in one
 * process over the same DuckDB data (the SQL test fixtures, edge events multiplied to 16,000), and
 * each bench question is asked through the real query path (createSqlBackend → DuckDbQueryRunner),
 * old and new strictly alternating, so machine load affects both alike. Prints the medians and
 * whether both returned the same rows.
 *
 *   node --import tsx bench/ab-query-path.ts <old checkout> <new checkout> [runs per side, default 300]
 */
import path from 'node:path';
import { supabaseData, supabaseSources } from '../test/sql/fixtures.ts';
import { openTestDb } from '../test/sql/support.ts';
import { CASES, LQL_QUERY, studioSql } from './cases.ts';

const [oldArg, newArg, runsArg] = process.argv.slice(2);
if (!oldArg || !newArg) throw new Error('usage: node --import tsx bench/ab-query-path.ts <old checkout> <new checkout> [runs]');
const [oldRoot, newRoot] = [path.resolve(oldArg), path.resolve(newArg)];
const runs = Number(runsArg ?? 300);
const t = await openTestDb(supabaseSources, supabaseData);
// More edge rows so scans are not trivial: 2,000 copies of each fixture edge event.
await t.conn.run(`INSERT INTO src_edge SELECT id || '-' || i, timestamp, event_message, project, identifier, metadata FROM src_edge, range(2000) r(i)`);
async function backend(root: string) {
  const { createSqlBackend } = await import(`${root}/src/endpoints/sql-backend.ts`);
  const { DuckDbQueryRunner } = await import(`${root}/src/engines/duckdb/runner.ts`);
  const { logsAllSql, usageApiCountsSql } = await import(`${root}/src/endpoints/supabase/index.ts`);
  const engine = new DuckDbQueryRunner({ connect: () => t.db.connect() });
  return { b: createSqlBackend({ catalog: t.catalog, engine }), logsAllSql, usageApiCountsSql };
}
const A = await backend(oldRoot);
const B = await backend(newRoot);
const ctx = {
  project: 'default',
  nowIso: '2026-11-21T11:00:00Z',
  hourAgoIso: '2026-11-21T10:00:00Z',
  dayAgoIso: '2026-11-20T11:00:00Z',
  lookupId: 'e3',
  search: 'rest',
};
type Req = { saved: 'logs' | 'usage'; caller: { kind: 'sql' | 'lql'; text: string } | null; params: Record<string, string | null> };
const reqs: [string, Req][] = [];
for (const c of CASES) {
  const sql = studioSql(c.id, ctx);
  if (sql)
    reqs.push([
      c.id,
      { saved: 'logs', caller: { kind: 'sql', text: sql }, params: { project: 'default', iso_timestamp_start: ctx.hourAgoIso, iso_timestamp_end: ctx.nowIso } },
    ]);
}
reqs.push(['logs_all_default', { saved: 'logs', caller: null, params: { project: 'default' } }]);
reqs.push([
  'lql_errors_per_minute',
  {
    saved: 'logs',
    caller: { kind: 'lql', text: LQL_QUERY },
    params: { project: 'default', iso_timestamp_start: ctx.hourAgoIso, iso_timestamp_end: ctx.nowIso },
  },
]);
reqs.push(['usage_minutely', { saved: 'usage', caller: null, params: { project: 'default', interval: 'minutely' } }]);
async function exec(x: typeof A, r: Req) {
  const saved = r.saved === 'logs' ? x.logsAllSql : x.usageApiCountsSql;
  const info = await x.b.inspect(saved);
  return x.b.execute({ saved, info, sandboxable: r.saved === 'logs', caller: r.caller, params: r.params, maxRows: 1000, timeoutMs: 30_000 });
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log('case'.padEnd(26), 'old p50 ms', 'new p50 ms', 'new/old');
for (const [name, r] of reqs) {
  const a: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < 5; i++) {
    await exec(A, r);
    await exec(B, r);
  }
  const ra = JSON.stringify((await exec(A, r)).rows);
  const rb = JSON.stringify((await exec(B, r)).rows);
  for (let i = 0; i < runs; i++) {
    const [first, second, fa, fb] = i % 2 === 0 ? [A, B, a, b] : [B, A, b, a];
    let s = performance.now();
    await exec(first, r);
    fa.push(performance.now() - s);
    s = performance.now();
    await exec(second, r);
    fb.push(performance.now() - s);
  }
  console.log(
    name.padEnd(26),
    median(a).toFixed(3).padStart(10),
    median(b).toFixed(3).padStart(10),
    (median(b) / median(a)).toFixed(3).padStart(7),
    ra === rb ? 'same rows' : 'ROWS DIFFER',
  );
}
process.exit(0);
