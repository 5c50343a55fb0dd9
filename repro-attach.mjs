import { DuckDBInstance } from '@duckdb/node-api';
const [path] = process.argv.slice(2);
const inst = await DuckDBInstance.create(':memory:');
const c = await inst.connect();
try {
  await c.run(`ATTACH '${path}' AS q`);
  await c.run('USE q');
  const r = await c.runAndReadAll('SELECT count(*), typeof(metadata) FROM t GROUP BY ALL');
  console.log(JSON.stringify(r.getRows(), (k,v)=>typeof v==='bigint'?String(v):v));
  await c.run('CHECKPOINT');
} catch (e) { console.log('ERR', e.message.split('\n')[0]); }
