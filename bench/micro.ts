/**
 * `npm run bench:micro`: in-process figures that used to be timed tests (a timed test fails on a
 * busy machine and proves nothing on a quiet one). Each figure is printed beside its target; the
 * exit code is always 0.
 *
 * - the demo generator's events per second (target ≥ 200,000: the benchmark's generation must
 *   not be what limits its ingest phase);
 * - parse + validate + translate of the saved `logs.all` query, uncached (target < 5 ms), and a
 *   caller's query over the cached saved query (target < 1 ms).
 */
import { generateEvents } from '../src/demo/generator.ts';
import { generateDuckDb } from '../src/engines/duckdb/generator.ts';
import { logsAllSql } from '../src/endpoints/supabase/index.ts';
import { prepareEndpointQuery } from '../src/sql/index.ts';
import { parseSql } from '../src/sql/parse.ts';
import { validateQuery } from '../src/sql/validate.ts';
import type { Catalog, SourceTable } from '../src/storage/schema.ts';
import { supabaseSources } from '../test/sql/fixtures.ts';

function msPerRun(runs: number, f: () => void): number {
  for (let i = 0; i < Math.min(20, runs); i++) f();
  const start = process.hrtime.bigint();
  for (let i = 0; i < runs; i++) f();
  return Number(process.hrtime.bigint() - start) / 1e6 / runs;
}

function line(figure: string, value: string, target: string): void {
  console.log(`${figure.padEnd(52)} ${value.padStart(14)}   target ${target}`);
}

const n = 100_000;
const start = performance.now();
let k = 0;
for (const _ of generateEvents({ count: n, seed: 1, projects: ['default', 'b', 'c'], days: 8 })) k++;
const perSecond = k / ((performance.now() - start) / 1000);
line('demo generator (events/s)', Math.round(perSecond).toLocaleString('en'), '≥ 200,000');

const byName = new Map<string, SourceTable>(supabaseSources.map((s) => [s.name, s]));
const catalog: Catalog = { sourceByName: (name) => byName.get(name) };
const uncached = msPerRun(200, () => {
  const q = parseSql(logsAllSql);
  validateQuery(q, { catalog });
  generateDuckDb(q, { catalog, maxRows: 1000 });
});
line('logs.all parse + validate + translate (ms)', uncached.toFixed(3), '< 5');
const caller = 'select id, timestamp from edge_logs order by timestamp desc limit 100';
const cached = msPerRun(200, () => {
  const p = prepareEndpointQuery({ saved: logsAllSql, caller: { sql: caller }, catalog, sandboxable: true });
  generateDuckDb(p.ast, { catalog, maxRows: 1000 });
});
line('caller sql over the cached saved query (ms)', cached.toFixed(3), '< 1');
