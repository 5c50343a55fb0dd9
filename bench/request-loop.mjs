/**
 * A direct request loop, for before/after comparisons of the per-query path between two trees:
 * `node bench/request-loop.mjs <tree> <port>` starts that tree's service on a fresh DATA_DIR, ingests
 * 20,000 edge events, then times 400 identical requests of a count and of a preview through
 * `logs.all` with `sql` (after 50 warm-up requests) and prints each p50 and p10 in ms.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
const [tree, port] = [process.argv[2], process.argv[3]];
const dir = mkdtempSync('/tmp/qlat-');
const tok = 'qlat-token-0123456789abcdef';
const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
  cwd: tree,
  env: { ...process.env, PORT: port, DATA_DIR: dir, LOGFLARE_PRIVATE_ACCESS_TOKEN: tok, LOG_LEVEL: 'warn' },
  stdio: 'ignore',
});
const url = `http://127.0.0.1:${port}`;
for (let i = 0; i < 200; i++) {
  try {
    if ((await fetch(`${url}/health`)).ok) break;
  } catch {}
  await new Promise((r) => setTimeout(r, 100));
}
const now = Date.now();
const ev = Array.from({ length: 20000 }, (_, i) => ({
  project: 'p',
  timestamp: new Date(now - 3600_000 + i * 100).toISOString(),
  event_message: `m${i}`,
  metadata: { request: { method: 'GET', path: `/x${i % 50}` }, response: { status_code: 200 + (i % 3) * 100 } },
}));
for (let i = 0; i < ev.length; i += 2000)
  await fetch(`${url}/api/logs?source_name=cloudflare.logs.prod`, {
    method: 'POST',
    headers: { 'x-api-key': tok, 'content-type': 'application/json' },
    body: JSON.stringify(ev.slice(i, i + 2000)),
  });
const qs = {
  count: 'select count(*) as count from edge_logs t where t.timestamp > timestamp_sub(current_timestamp(), interval 1 hour)',
  preview: 'select id, timestamp, event_message from edge_logs order by timestamp desc limit 100',
};
for (const [name, sql] of Object.entries(qs)) {
  const u = `${url}/api/endpoints/query/logs.all?project=p&sql=${encodeURIComponent(sql)}`;
  for (let i = 0; i < 50; i++) await (await fetch(u, { headers: { 'x-api-key': tok } })).text();
  const t = [];
  for (let i = 0; i < 400; i++) {
    const s = performance.now();
    await (await fetch(u, { headers: { 'x-api-key': tok } })).text();
    t.push(performance.now() - s);
  }
  t.sort((a, b) => a - b);
  console.log(tree, name, 'p50', t[200].toFixed(2), 'p10', t[40].toFixed(2));
}
child.kill('SIGKILL');
