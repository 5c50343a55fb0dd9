/**
 * `npm run bench:presence`: what `CROSS JOIN UNNEST(record)` costs DuckDB now that it drops events
 * without the record (docs/SQL.md): the same count over 100,000 of 1,000,000 on-disk rows shaped
 * like edge logs' `metadata` (request and response records, through a CTE as logs.all reads them),
 * without a presence test, with the storage's presence markers (one narrow BOOLEAN per record, as
 * the printer writes it) and with `record IS NOT NULL` (every field read). Each figure is printed
 * as a ratio to the query without a test, measured in the same run; best of 15 after warm-up.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { PRESENCE_KEY } from '../src/storage/presence.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'quarry-presence-'));
const P = `"${PRESENCE_KEY}"`;
try {
  const instance = await DuckDBInstance.create(path.join(dir, 'bench.db'));
  const c = await instance.connect();
  const headers = `headers STRUCT(user_agent VARCHAR, cf_connecting_ip VARCHAR, referer VARCHAR, ${P} BOOLEAN)`;
  await c.run(`create table t (id VARCHAR, timestamp TIMESTAMP, project VARCHAR, metadata STRUCT(
    request STRUCT(method VARCHAR, path VARCHAR, protocol VARCHAR, ${headers}, ${P} BOOLEAN),
    response STRUCT(status_code BIGINT, ${P} BOOLEAN), ${P} BOOLEAN))`);
  await c.run(`insert into t select 'e' || i, TIMESTAMP '2026-11-01' + to_seconds(i), 'default',
    {'request': {'method': 'GET', 'path': '/rest/v1/t' || (i % 100), 'protocol': 'HTTP/1.1',
      'headers': {'user_agent': 'curl/' || (i % 7), 'cf_connecting_ip': '10.0.0.' || (i % 255), 'referer': '-', '${PRESENCE_KEY}': true}, '${PRESENCE_KEY}': true},
     'response': {'status_code': 200 + (i % 5) * 100, '${PRESENCE_KEY}': true}, '${PRESENCE_KEY}': true}
    from range(1000000) r(i) order by i`);
  await c.run('checkpoint');
  const cte = `with edge_logs as (select t.timestamp, t.id, t.metadata from t as t where t.project = 'default' and t.timestamp > TIMESTAMP '2026-11-01' + to_seconds(900000))`;
  const best = async (sql: string) => {
    let ms = Number.POSITIVE_INFINITY;
    for (let k = 0; k < 18; k++) {
      const start = performance.now();
      await c.runAndReadAll(sql);
      if (k >= 3) ms = Math.min(ms, performance.now() - start);
    }
    return ms;
  };
  const count = (where: string) => `${cte} select count(*) from edge_logs${where ? ` where ${where}` : ''}`;
  const marker = (r: string) => `edge_logs.metadata.${r}.${P} IS NOT NULL`;
  const whole = (r: string) => `edge_logs.metadata.${r} IS NOT NULL`;
  const base = await best(count(''));
  const status = await best(count('edge_logs.metadata.response.status_code >= 400'));
  const rows: [string, number, number][] = [
    ['Studio count, no test', base, base],
    ['Studio count, request + response markers', await best(count(`${marker('request')} and ${marker('response')}`)), base],
    ['Studio count, request + response IS NOT NULL', await best(count(`${whole('request')} and ${whole('response')}`)), base],
    ['status_code >= 400, no test', status, status],
    ['status_code >= 400 + request marker', await best(count(`edge_logs.metadata.response.status_code >= 400 and ${marker('request')}`)), status],
    ['status_code >= 400 + request IS NOT NULL', await best(count(`edge_logs.metadata.response.status_code >= 400 and ${whole('request')}`)), status],
  ];
  console.log('| query (100,000 of 1,000,000 rows) | ms | ratio to no test |\n|---|---|---|');
  for (const [name, ms, against] of rows) console.log(`| ${name} | ${ms.toFixed(2)} | ${(ms / against).toFixed(2)} |`);
  c.closeSync();
  instance.closeSync();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
