/**
 * Each source keeps the key rule it was created under (src/ingest/keys.ts, docs/INGEST.md "Key
 * names"): sources stored before Logflare's rule was adopted (no `key_rule` in their record) keep
 * the legacy names, so their columns keep receiving values; sources created since, the seeded
 * Supabase ones on a new data folder included, get Logflare's names.
 */
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { DuckDBInstance } from '@duckdb/node-api';
import { openEmbeddedMetadata } from '../../src/metadata/embedded/records.ts';
import { engineEnv, engines } from '../support/engines.ts';
import { startTestServer, tempDataDir } from '../support/server.ts';

const dirs: string[] = [];
after(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});
async function dir(): Promise<string> {
  const d = await tempDataDir();
  dirs.push(d);
  return d;
}

async function sql(file: string, statements: readonly string[]): Promise<Record<string, unknown>[]> {
  const db = await DuckDBInstance.create(file);
  const conn = await db.connect();
  try {
    let rows: Record<string, unknown>[] = [];
    for (const s of statements) rows = (await conn.runAndReadAll(s)).getRowObjectsJson() as Record<string, unknown>[];
    return rows;
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}

describe('the key rule of each source', () => {
  it('reads a source stored before the rule existed as legacy, and stores new ones with theirs', async () => {
    const file = path.join(await dir(), 'metadata.duckdb');
    // The sources table as every build before this one created it, with one source in it.
    await sql(file, [
      `CREATE TABLE _quarry_sources (
        id VARCHAR PRIMARY KEY, name VARCHAR NOT NULL UNIQUE, "table" VARCHAR NOT NULL,
        retention_days INTEGER, created_at TIMESTAMP NOT NULL, updated_at TIMESTAMP NOT NULL)`,
      `INSERT INTO _quarry_sources VALUES ('11111111-1111-4111-8111-111111111111', 'old.source', 'src_old', NULL, now(), now())`,
    ]);
    let m = await openEmbeddedMetadata({ path: file });
    assert.deepEqual(
      (await m.load()).sources.map((s) => [s.name, s.key_rule]),
      [['old.source', 'legacy']],
    );
    const now = new Date().toISOString();
    const created = {
      id: '22222222-2222-4222-8222-222222222222',
      name: 'new.source',
      table: 'src_new',
      key_rule: 'logflare' as const,
      retention_days: null,
      created_at: now,
      updated_at: now,
    };
    assert.equal(await m.write({ kind: 'source.insert', source: created }), 'ok');
    await m.close();
    m = await openEmbeddedMetadata({ path: file });
    assert.deepEqual(
      (await m.load()).sources.map((s) => [s.name, s.key_rule]),
      [
        ['old.source', 'legacy'],
        ['new.source', 'logflare'],
      ],
    );
    await m.close();
  });

  for (const engine of engines) {
    it(`${engine}: names the fields of an old source as before and of a new one as Logflare does, over HTTP`, async () => {
      const dataDir = await dir();
      let s = await startTestServer(engineEnv(engine), dataDir);
      for (const name of ['old.source', 'new.source']) {
        const r = await s.fetch('/api/sources', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name }) });
        assert.equal(r.status, 201);
      }
      await s.stop();
      const metadata = path.join(dataDir, 'metadata.duckdb');
      // What a data folder from before this change holds: sources with no rule recorded.
      await sql(metadata, ["UPDATE _quarry_sources SET key_rule = NULL WHERE name = 'old.source'"]);
      assert.deepEqual(
        await sql(metadata, ["SELECT name, key_rule FROM _quarry_sources WHERE name IN ('cloudflare.logs.prod', 'postgres.logs') ORDER BY name"]),
        [
          { name: 'cloudflare.logs.prod', key_rule: 'logflare' },
          { name: 'postgres.logs', key_rule: 'logflare' },
        ],
      );

      s = await startTestServer(engineEnv(engine), dataDir);
      const event = { event_message: 'hi', metadata: { 'cf-ray': 'r', 'x.y': 1, '2xx': true, cf_ray: 'clean', é: 'e', '_TABLE_-foo': 't' } };
      for (const name of ['old.source', 'new.source']) {
        const r = await s.fetch(`/api/logs?source_name=${name}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(event),
        });
        assert.equal(r.status, 200, await r.text());
      }
      const fields = async (name: string) => {
        const sources = (await (await s.fetch('/api/sources')).json()) as { id: string; name: string }[];
        const id = sources.find((x) => x.name === name)?.id;
        const r = await s.fetch(`/api/sources/${id}/schema`);
        assert.equal(r.status, 200);
        return JSON.stringify(await r.json());
      };
      const oldSchema = await fields('old.source');
      const newSchema = await fields('new.source');
      // Legacy: `cf-ray` and `cf_ray` meet, so the later one is numbered.
      for (const name of ['"cf_ray"', '"cf_ray_2"', '"x_y"', '"_2xx"', '"_"', '"_TABLE__foo"']) assert.ok(oldSchema.includes(name), `${name} in ${oldSchema}`);
      for (const name of ['"_cf_ray"', '"cf_ray"', '"_x_y"', '"_2xx"', '"__"', '"___TABLE__foo"'])
        assert.ok(newSchema.includes(name), `${name} in ${newSchema}`);
      assert.ok(!newSchema.includes('"cf_ray_2"') && !newSchema.includes('"x_y"'), newSchema);
      await s.stop();
    });
  }
});
