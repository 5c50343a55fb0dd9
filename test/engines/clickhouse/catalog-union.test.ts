/**
 * The schema catalogue in ClickHouse, written by two nodes that each hold a stale view: an entry
 * is the union of every save since the source's last removal, so neither node's field is lost and
 * a type two nodes disagree on is widened by the conflict rule. Real chDB, two catalogue
 * repositories (one per "node") on one database.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type ClickHouseConnection, connectClickHouse } from '../../../src/engines/clickhouse/client.ts';
import { ClickHouseCatalogRepository } from '../../../src/engines/clickhouse/storage-catalog.ts';
import { SchemaCatalog } from '../../../src/storage/catalog.ts';
import { baseColumns, type SourceTable } from '../../../src/storage/schema.ts';
import { engines } from '../../support/engines.ts';

const S = { kind: 'scalar', type: 'string' } as const;
const I = { kind: 'scalar', type: 'int' } as const;

function entry(fields: SourceTable['schema']['columns'], name = 'src.one'): SourceTable {
  return { id: 'id-1', name, table: 'src_id1', schema: { columns: { ...baseColumns, ...fields } } };
}

describe('the shared schema catalogue', { skip: !engines.includes('clickhouse') && 'chdb is not installed' }, () => {
  let dir = '';
  let conn: ClickHouseConnection;
  let nodeA: ClickHouseCatalogRepository;
  let nodeB: ClickHouseCatalogRepository;

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'quarry-catalog-'));
    conn = await connectClickHouse({ chdbPath: dir, database: 'quarry_catalog_test', readers: 1 });
    nodeA = await ClickHouseCatalogRepository.open(conn.client, 'quarry_catalog_test');
    nodeB = await ClickHouseCatalogRepository.open(conn.readers[0] ?? conn.client, 'quarry_catalog_test');
  });
  after(async () => {
    await conn?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('keeps both nodes fields when each saved a view without the other one', async () => {
    await nodeA.save(entry({}));
    // Both start from the base schema; each adds a field the other has not seen, at once.
    await Promise.all([nodeA.save(entry({ a: I, shared: I })), nodeB.save(entry({ b: S, shared: S }))]);
    const [loaded] = await nodeB.loadAll();
    assert.deepEqual(Object.keys(loaded?.schema.columns ?? {}).sort(), ['a', 'b', 'event_message', 'id', 'shared', 'timestamp']);
    // int on one node, string on the other: the string absorbs the int, whichever was saved last.
    assert.deepEqual(loaded?.schema.columns.shared, S);
    assert.deepEqual((await nodeA.schemaOf('src_id1'))?.columns.b, S);
  });

  it('a catalogue learns what the other node saved only when the version moved, and keeps its own', async () => {
    const catalog = await SchemaCatalog.load(nodeA);
    assert.equal(await catalog.refresh(), false, 'nothing new since it was loaded');
    await nodeB.save(entry({ c: I }, 'src.renamed'));
    assert.equal(await catalog.refresh(), true);
    const held = catalog.sourceByName('src.renamed');
    assert.deepEqual(Object.keys(held?.schema.columns ?? {}).sort(), ['a', 'b', 'c', 'event_message', 'id', 'shared', 'timestamp']);
    assert.equal(catalog.sourceByName('src.one'), undefined);
  });

  it('a removal starts the entry afresh', async () => {
    await nodeA.remove('id-1');
    assert.deepEqual(await nodeB.loadAll(), []);
    await nodeB.save(entry({ d: S }));
    const [again] = await nodeA.loadAll();
    assert.deepEqual(Object.keys(again?.schema.columns ?? {}).sort(), ['d', 'event_message', 'id', 'timestamp']);
  });
});
