/**
 * The ClickHouse DDL (src/engines/clickhouse/ddl.ts) on one server and on a 2-shard × 2-replica
 * cluster. No cluster can run here: the statements are parsed by the real ClickHouse parser in
 * chDB (`formatQuery`), the cluster's macros are expanded for each of its four servers to check
 * replication paths, and the storage's statements through a cluster are recorded (the one stand-in
 * in this file: a client that records instead of sending). The single-server statements also run.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import type { ClickHouseClient } from '@clickhouse/client';
import { type ClickHouseConnection, connectClickHouse } from '../../../src/engines/clickhouse/client.ts';
import * as ddl from '../../../src/engines/clickhouse/ddl.ts';
import { ClickHouseStorage } from '../../../src/engines/clickhouse/storage.ts';
import type { ClickHouseCatalogRepository } from '../../../src/engines/clickhouse/storage-catalog.ts';
import { engines } from '../../support/engines.ts';

const cluster: ddl.DdlTarget = { database: 'quarry', cluster: 'quarry_cluster' };
const single: ddl.DdlTarget = { database: 'quarry' };

/** The 2 × 2 cluster's servers and their macros, as each server's config.xml would set them. */
const servers = [
  { shard: '01', replica: 'ch-1a' },
  { shard: '01', replica: 'ch-1b' },
  { shard: '02', replica: 'ch-2a' },
  { shard: '02', replica: 'ch-2b' },
];

function expand(text: string, macros: { shard: string; replica: string }): string {
  return text.replaceAll('{shard}', macros.shard).replaceAll('{replica}', macros.replica);
}

/** The `(path, replica name)` a Replicated* engine in `statement` registers on a server. */
function replication(statement: string, macros: { shard: string; replica: string }): [string, string] {
  const m = /Replicated\w*MergeTree\('([^']+)', '([^']+)'/.exec(statement);
  assert.ok(m, `no replicated engine in ${statement}`);
  return [expand(m[1]!, macros), expand(m[2]!, macros)];
}

describe('ClickHouse DDL', { skip: !engines.includes('clickhouse') }, () => {
  let dir: string;
  let conn: ClickHouseConnection;
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'quarry-ddl-'));
    conn = await connectClickHouse({ chdbPath: dir, database: 'quarry' });
  });
  after(async () => {
    await conn.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** ClickHouse's own formatting of a statement: it parses, or this throws. */
  async function parsed(statement: string): Promise<string> {
    const r = await conn.client.query({ query: 'SELECT formatQuery({q:String}) AS f', query_params: { q: statement }, format: 'JSONEachRow' });
    return ((await r.json()) as { f: string }[])[0]!.f;
  }

  it('every statement parses, on one server and on the cluster', async () => {
    for (const t of [single, cluster]) {
      const statements = [
        ddl.createDatabase(t),
        ...ddl.createSourceTable(t, 'src_edge', 'cloudflare.logs.prod'),
        ...ddl.createSourceTable(t, 'src_fn', 'deno-relay-logs'),
        ...ddl.createSourceTable(t, 'src_other', 'my.own.source'),
        ...ddl.dropSourceTable(t, 'src_edge'),
        ddl.dropPartition(t, 'src_edge', '20261101'),
        ddl.deleteBefore(t, 'src_edge', 1_795_000_000_000_000n),
        ddl.countBefore(t, 'src_edge', 1_795_000_000_000_000n),
        ddl.partitionsBefore(t, 'src_edge', 1_795_000_000_000_000n),
        ddl.createCatalogTable(t),
      ];
      for (const s of statements) await parsed(s);
      const onCluster = statements.filter((s) => /ON CLUSTER `quarry_cluster`/.test(s));
      // DDL runs ON CLUSTER exactly when a cluster is configured (the SELECTs never do).
      assert.equal(onCluster.length, t.cluster === undefined ? 0 : statements.filter((s) => !s.startsWith('SELECT')).length);
    }
  });

  it('on the cluster: a replicated local table per source and a Distributed table over it, sharded by the event id', async () => {
    const [local, distributed] = ddl.createSourceTable(cluster, 'src_edge', 'cloudflare.logs.prod') as [string, string];
    assert.match(await parsed(local), /^CREATE TABLE IF NOT EXISTS quarry\.src_edge_local ON CLUSTER quarry_cluster/);
    assert.match(local, /ENGINE = ReplicatedMergeTree\('\/clickhouse\/tables\/\{shard\}\/quarry\/src_edge_local', '\{replica\}'\)/);
    assert.match(await parsed(distributed), /^CREATE TABLE IF NOT EXISTS quarry\.src_edge ON CLUSTER quarry_cluster\s*\(\s*`?id`? String/);
    assert.doesNotMatch(distributed, /INDEX/);
    assert.match(distributed, /ENGINE = Distributed\('quarry_cluster', 'quarry', 'src_edge_local', cityHash64\(id\)\)$/);
    // The local table has exactly the single server's layout: columns, partitioning, sorting key.
    const [one] = ddl.createSourceTable(single, 'src_edge', 'cloudflare.logs.prod') as [string];
    const layout = (s: string) => (/\(\s*`?id`? String.*?(?=SETTINGS)/s.exec(s.replace(/ENGINE = \w+(\([^)]*\))?/, '')) ?? [''])[0];
    assert.match(layout(await parsed(local)), /INDEX id_range[\s\S]*PARTITION BY[\s\S]*ORDER BY/);
    assert.equal(layout(await parsed(local)), layout(await parsed(one)));
    // Same deduplication window and durability settings as on one server.
    assert.match(local, /replicated_deduplication_window = 10000, fsync_after_insert = 1, fsync_part_directory = 1/);

    // Expanded on the four servers: the two replicas of a shard share a path under distinct names;
    // the shards' paths differ (each shard holds its own rows).
    const registered = servers.map((m) => replication(local, m));
    assert.equal(new Set(registered.map(([p]) => p)).size, 2);
    assert.equal(registered[0]![0], registered[1]![0]);
    assert.equal(registered[2]![0], registered[3]![0]);
    assert.notEqual(registered[0]![0], registered[2]![0]);
    assert.equal(new Set(registered.map(([, r]) => r)).size, 4);
    // Sources do not share paths.
    const [otherLocal] = ddl.createSourceTable(cluster, 'src_pg', 'postgres.logs') as [string];
    assert.notEqual(replication(otherLocal, servers[0]!)[0], registered[0]![0]);
  });

  it('the catalogue is one replicated table on every server of the cluster', async () => {
    const statement = ddl.createCatalogTable(cluster);
    assert.match(await parsed(statement), /ON CLUSTER quarry_cluster/);
    assert.match(statement, /ReplicatedMergeTree\('[^']+', '[^']+'\) ORDER BY \(source_id, version\)/);
    const registered = servers.map((m) => replication(statement, m));
    assert.equal(new Set(registered.map(([p]) => p)).size, 1, 'one path: every server holds every schema');
    assert.equal(new Set(registered.map(([, r]) => r)).size, 4, 'four distinct replica names');
  });

  it('drops the Distributed table before the data, and retention works on the local tables ON CLUSTER', () => {
    assert.deepEqual(ddl.dropSourceTable(cluster, 'src_edge'), [
      'DROP TABLE IF EXISTS `quarry`.`src_edge` ON CLUSTER `quarry_cluster` SYNC',
      'DROP TABLE IF EXISTS `quarry`.`src_edge_local` ON CLUSTER `quarry_cluster` SYNC',
    ]);
    assert.equal(
      ddl.dropPartition(cluster, 'src_edge', '20261101'),
      "ALTER TABLE `quarry`.`src_edge_local` ON CLUSTER `quarry_cluster` DROP PARTITION ID '20261101'",
    );
    assert.match(
      ddl.deleteBefore(cluster, 'src_edge', 5n),
      /^DELETE FROM `quarry`\.`src_edge_local` ON CLUSTER `quarry_cluster` WHERE timestamp < fromUnixTimestamp64Micro\(toInt64\(5\), 'UTC'\)$/,
    );
    assert.match(ddl.partitionsBefore(cluster, 'src_edge', 5n), /FROM clusterAllReplicas\('quarry_cluster', system\.parts\).*table = 'src_edge_local'/);
    assert.throws(() => ddl.dropPartition(cluster, 'src_edge', "1' OR 1"), /not a day partition/);
  });

  it('inserts on the cluster wait for every shard and a majority of its replicas', () => {
    const s = ddl.insertSettings(cluster);
    assert.equal(s.distributed_foreground_insert, 1);
    assert.equal(s.insert_quorum, 'auto');
    assert.equal(s.async_insert, 0);
    assert.equal(ddl.insertSettings(single).insert_quorum, undefined);
  });

  it('sorts a Supabase source by its project, then time, and the key prunes the printed project filter', async () => {
    assert.equal(ddl.sortingKey('cloudflare.logs.prod'), '(CAST(fields.`project` AS Nullable(String)), timestamp)');
    assert.equal(ddl.sortingKey('realtime.logs.prod'), '(CAST(fields.`metadata`.`project` AS Nullable(String)), timestamp)');
    assert.equal(ddl.sortingKey('my.own.source'), 'timestamp');
    assert.equal(ddl.sortingKey(undefined), 'timestamp');
    for (const s of [...ddl.createSourceTable(single, 'src_edge', 'cloudflare.logs.prod'), ...ddl.createSourceTable(single, 'src_rt', 'realtime.logs.prod')]) {
      await conn.client.command({ query: s });
    }
    const keys = await conn.client.query({
      query: "SELECT name, sorting_key FROM system.tables WHERE database = 'quarry' AND name IN ('src_edge', 'src_rt') ORDER BY name",
      format: 'JSONEachRow',
    });
    assert.deepEqual(await keys.json(), [
      { name: 'src_edge', sorting_key: "CAST(fields.project, 'Nullable(String)'), timestamp" },
      { name: 'src_rt', sorting_key: "CAST(fields.metadata.project, 'Nullable(String)'), timestamp" },
    ]);
    // Any value type goes in (the key reads text, or NULL for an object): none fails the insert.
    const rows = ['"p1"', '12', 'true', '{"x":1}', '[1,2]', 'null'].map(
      (v, i) => `{"id":"e${i}","timestamp":"1795000000.00000${i}","event_message":null,"fields":{"project":${v},"n":${i}}}`,
    );
    await conn.client.command({ query: `INSERT INTO quarry.src_edge FORMAT JSONEachRow ${rows.join(' ')}` });
    const n = await conn.client.query({ query: 'SELECT count() AS n FROM quarry.src_edge', format: 'JSONEachRow' });
    assert.deepEqual(await n.json(), [{ n: 6 }]);
    // The printer's project filter is the key's own expression: the primary key is used.
    const plan = await conn.client.query({
      query: "EXPLAIN indexes = 1 SELECT count() FROM quarry.src_edge AS t WHERE CAST(t.fields.project AS Nullable(String)) = 'p1'",
      format: 'JSONEachRow',
    });
    const text = ((await plan.json()) as (string | { explain: string })[]).map((r) => (typeof r === 'string' ? r : r.explain)).join('\n');
    assert.match(text, /PrimaryKey[\s\S]*Condition: .*CAST\(fields\.project, 'Nullable\(String\)'\) in \['p1', 'p1'\]/);
    // A lookup by id consults the id's min/max per granule (ids are time-ordered UUIDv7).
    const byId = await conn.client.query({ query: "EXPLAIN indexes = 1 SELECT id FROM quarry.src_edge WHERE id = 'e3'", format: 'JSONEachRow' });
    const idPlan = ((await byId.json()) as (string | { explain: string })[]).map((r) => (typeof r === 'string' ? r : r.explain)).join('\n');
    assert.match(idPlan, /Skip[\s\S]*Name: id_range/);
  });

  it('the storage sends its cluster statements to the right tables, and inserts into the Distributed table', async () => {
    const sent: { kind: string; query?: string; settings?: Record<string, unknown>; body?: string }[] = [];
    const recorder = {
      async command(p: { query: string }) {
        sent.push({ kind: 'command', query: p.query });
      },
      async query(p: { query: string }) {
        sent.push({ kind: 'query', query: p.query });
        const rows = p.query.includes('count()')
          ? [{ n: '7' }]
          : p.query.includes('partition_id')
            ? [{ partition_id: '20261101' }, { partition_id: 'all' }]
            : [];
        return { json: async () => rows };
      },
      async exec(p: { query: string; values: Readable; clickhouse_settings: Record<string, unknown> }) {
        let body = '';
        for await (const chunk of p.values) body += String(chunk);
        sent.push({ kind: 'insert', query: p.query, settings: p.clickhouse_settings, body });
        return { stream: Readable.from([]) };
      },
    } as unknown as ClickHouseClient;
    const storage = new ClickHouseStorage({ client: recorder, database: 'quarry', cluster: 'quarry_cluster', catalog: {} as ClickHouseCatalogRepository });
    await storage.createSourceTable('src_edge', { name: 'cloudflare.logs.prod' });
    assert.deepEqual(
      sent.map((s) => s.query),
      ddl.createSourceTable(cluster, 'src_edge', 'cloudflare.logs.prod'),
    );
    sent.length = 0;
    assert.equal(await storage.deleteOlderThan('src_edge', 1_795_000_000_000_000n), 7);
    assert.deepEqual(
      sent.map((s) => s.query),
      [
        ddl.countBefore(cluster, 'src_edge', 1_795_000_000_000_000n),
        ddl.partitionsBefore(cluster, 'src_edge', 1_795_000_000_000_000n),
        ddl.dropPartition(cluster, 'src_edge', '20261101'),
        ddl.deleteBefore(cluster, 'src_edge', 1_795_000_000_000_000n),
      ],
    );
    sent.length = 0;
    const schema = {
      columns: { id: { kind: 'scalar', type: 'string' }, timestamp: { kind: 'scalar', type: 'timestamp' }, event_message: { kind: 'scalar', type: 'string' } },
    } as never;
    await storage.append([{ table: 'src_edge', schema, events: [{ id: 'a', timestamp: 1n, event_message: null, fields: {} }] }]);
    assert.equal(sent.length, 1);
    assert.equal(sent[0]!.query, 'INSERT INTO `quarry`.`src_edge` FORMAT JSONEachRow');
    assert.deepEqual(JSON.parse(sent[0]!.body as string), { id: 'a', timestamp: '0.000001', event_message: null, fields: {} });
    assert.equal(sent[0]!.settings?.distributed_foreground_insert, 1);
    assert.equal(sent[0]!.settings?.insert_quorum, 'auto');
    assert.equal(typeof sent[0]!.settings?.insert_deduplication_token, 'string');
  });
});
