/**
 * The ClickHouse engine against a server over HTTP, the way production runs it: the service gets
 * `CLICKHOUSE_URL=http://127.0.0.1:<port>` of the test front (test/support/clickhouse-front.ts:
 * ClickHouse's HTTP interface over a real chDB, since no ClickHouse server can run here), so its
 * HTTP client, pool, error parsing and start-up checks take the server path.
 *
 * - start-up refuses a server that cannot be reached, and a user that may not write, saying why;
 * - while ClickHouse is away (the front stopped: a closed port) ingest answers 503 with Retry-After
 *   and acknowledges nothing, queries answer 503, and /health says why; once it is back the same
 *   process serves everything again, with every acknowledged event stored.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../../src/config.ts';
import { startServer } from '../../../src/server.ts';
import { createEndpoint, query, type Row } from '../../endpoints/http-support.ts';
import { type ClickHouseFront, startClickHouseFront } from '../../support/clickhouse-front.ts';
import { engines } from '../../support/engines.ts';
import { eventually, jsonPost } from '../../support/nodes.ts';
import { type TestServer, startTestServer, tempDataDir } from '../../support/server.ts';

const SOURCE = 'postgres.logs';

function events(prefix: string, n: number): Row[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `${prefix}-${String(i).padStart(3, '0')}`,
    event_message: prefix,
    project: 'outage',
    timestamp: new Date(Date.UTC(2026, 10, 22, 9, 0, i)).toISOString(),
  }));
}

describe('the ClickHouse engine over HTTP, and ClickHouse going away', { skip: !engines.includes('clickhouse') && 'chdb is not installed' }, () => {
  let chdbDir = '';
  let front: ClickHouseFront;
  let s: TestServer;

  before(async () => {
    chdbDir = await mkdtemp(path.join(tmpdir(), 'quarry-front-'));
    front = await startClickHouseFront({
      path: chdbDir,
      users: { default: { password: '' }, quarry: { password: 'secret' }, viewer: { password: 'v', readonly: true } },
    });
    s = await startTestServer({ QUARRY_ENGINE: 'clickhouse', CLICKHOUSE_URL: front.url, CLICKHOUSE_USER: 'quarry', CLICKHOUSE_PASSWORD: 'secret' });
  });
  after(async () => {
    await s?.close();
    await front?.close();
    if (chdbDir) await rm(chdbDir, { recursive: true, force: true });
  });

  const ingest = (rows: Row[]) => s.fetch(`/api/logs?source_name=${SOURCE}`, jsonPost(rows));

  it('runs over HTTP: ingest, a saved query and health', async () => {
    const before = front.requests();
    assert.equal((await ingest(events('first', 5))).status, 200);
    await createEndpoint(s, { name: 'outage.ids', query: `select id from \`${SOURCE}\` where project = 'outage' order by id` });
    const r = await query(s, 'outage.ids', {}, { headers: { 'cache-control': 'no-cache' } });
    assert.equal(r.status, 200, JSON.stringify(r.error));
    assert.equal(r.rows.length, 5);
    assert.deepEqual(await (await s.fetch('/health')).json(), { status: 'ok' });
    assert.ok(front.requests() > before, 'the service talked to ClickHouse over HTTP');
  });

  it('an insert whose answer was lost is sent again with its token and stored once', async () => {
    front.loseInsertAnswers(1);
    const r = await ingest(events('lost-answer', 3));
    assert.equal(r.status, 200, await r.text());
    const stored = await query(s, 'outage.ids', {}, { headers: { 'cache-control': 'no-cache' } });
    assert.deepEqual(
      stored.rows.map((row) => row.id).filter((id) => String(id).startsWith('lost-answer')),
      ['lost-answer-000', 'lost-answer-001', 'lost-answer-002'],
    );
  });

  it('start-up says when the server cannot be reached, and which right a user lacks', async () => {
    const dir = await tempDataDir();
    const start = (env: Record<string, string>) =>
      startServer(loadConfig({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: dir, LOG_LEVEL: 'silent', QUARRY_ENGINE: 'clickhouse', ...env }));
    try {
      // A port nothing listens on: the front's, while it is stopped.
      const closed = await startClickHouseFront({ path: chdbDir });
      const closedUrl = closed.url;
      await closed.stop();
      await assert.rejects(start({ CLICKHOUSE_URL: closedUrl }), /Cannot reach ClickHouse at http:\/\/127\.0\.0\.1:\d+: .*ECONNREFUSED.*Check CLICKHOUSE_URL/s);
      await closed.close();
      await assert.rejects(
        start({ CLICKHOUSE_URL: front.url, CLICKHOUSE_USER: 'quarry', CLICKHOUSE_PASSWORD: 'wrong' }),
        /ClickHouse did not accept CLICKHOUSE_USER \/ CLICKHOUSE_PASSWORD \(quarry: Authentication failed/,
      );
      // A read-only user: ClickHouse itself refuses the first write (its READONLY, not our check).
      await assert.rejects(
        start({ CLICKHOUSE_URL: front.url, CLICKHOUSE_USER: 'viewer', CLICKHOUSE_PASSWORD: 'v' }),
        /lacks a right Quarry needs: it is read-only .* needs CREATE DATABASE and every other write in database quarry \(ClickHouse said: .*readonly mode/s,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('while ClickHouse is away: 503 with Retry-After, nothing acknowledged, health says why; then all works again', async () => {
    const acknowledged = new Set<string>([...events('first', 5), ...events('lost-answer', 3)].map((e) => String(e.id)));
    // Ingest keeps arriving in the background through the whole outage, from several clients.
    let running = true;
    let batch = 0;
    const statuses = new Map<number, number>();
    const writer = async (client: number) => {
      while (running) {
        const rows = events(`w${client}-${batch++}`, 3);
        const r = await ingest(rows);
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
        if (r.status === 200) for (const row of rows) acknowledged.add(String(row.id));
        else {
          assert.equal(r.status, 503, await r.text());
          assert.ok(Number(r.headers.get('retry-after')) > 0, 'Retry-After');
        }
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    };
    const writers = [writer(1), writer(2), writer(3)];
    await new Promise((resolve) => setTimeout(resolve, 150));
    await front.stop();
    const stoppedAt = Date.now();
    try {
      const refused = await ingest(events('during', 4));
      assert.equal(refused.status, 503);
      assert.ok(Number(refused.headers.get('retry-after')) > 0);
      const body = (await refused.json()) as { error: { code: string; message: string } };
      assert.equal(body.error.code, 'UNAVAILABLE');
      assert.doesNotMatch(body.error.message, /127\.0\.0\.1|http:/);
      const q = await query(s, 'outage.ids', {}, { headers: { 'cache-control': 'no-cache' } });
      assert.equal(q.status, 503, JSON.stringify(q));
      assert.equal(q.error?.code, 'UNAVAILABLE');
      const health = await s.fetch('/health');
      assert.equal(health.status, 503);
      const reasons = ((await health.json()) as { reasons: string[] }).reasons.join(' ');
      assert.match(reasons, /event store \(ClickHouse\) is unreachable \(ECONNREFUSED\)/);
      assert.doesNotMatch(reasons, /127\.0\.0\.1|http:/);
      // Away for a while, with ingest still arriving.
      await new Promise((resolve) => setTimeout(resolve, 700));
    } finally {
      await front.start();
    }
    const back = await eventually('health after ClickHouse returns', async () => (await s.fetch('/health')).status === 200);
    await eventually('ingest accepted again', async () => (await ingest(events(`after-${Date.now()}`, 1))).status === 200);
    running = false;
    await Promise.all(writers);
    assert.ok((statuses.get(503) ?? 0) > 0, `some ingest met the outage: ${JSON.stringify([...statuses])}`);
    assert.ok((statuses.get(200) ?? 0) > 0);
    assert.equal(statuses.size, 2, `only 200 and 503: ${JSON.stringify([...statuses])}`);
    assert.equal((await ingest(events('last', 2))).status, 200);
    acknowledged.add('last-000');
    acknowledged.add('last-001');
    const stored = await query(s, 'outage.ids', {}, { headers: { 'cache-control': 'no-cache' } });
    assert.equal(stored.status, 200, JSON.stringify(stored.error));
    const ids = new Set(stored.rows.map((r) => String(r.id)));
    for (const id of acknowledged) assert.ok(ids.has(id), `acknowledged ${id} is stored`);
    assert.ok(![...ids].some((id) => id.startsWith('during-')), 'an event refused with 503 was not stored');
    console.log(
      `# outage: ${statuses.get(503)} ingest requests refused with 503, ${statuses.get(200)} acknowledged; health back ${back} ms after ClickHouse (${Date.now() - stoppedAt} ms since it stopped)`,
    );
  });
});
