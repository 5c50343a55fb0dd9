/**
 * The metadata store's behaviour, run against each implementation of its records (embedded DuckDB
 * file, shared PostgreSQL): the same assertions, the same expected values.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { newEndpoint } from '../../src/endpoints/model.ts';
import { isQuarryError } from '../../src/errors.ts';
import type { MetadataRecords } from '../../src/metadata/records.ts';
import { openMetadataStore } from '../../src/metadata/store.ts';

const ID_A = '0b6b7c2e-1f3a-4e5b-9c8d-7a6f5e4d3c2b';
const ID_B = '1c7c8d3f-2a4b-4f6c-8d9e-8b7a6f5e4d3c';
const NOW = '2026-11-21T10:00:00.000Z';

/** `open` gives records over the same stored data each time it is called (a reopen). */
export function metadataStoreSuite(open: () => Promise<MetadataRecords>): void {
  it('stores endpoints durably, keeps names unique and survives a reopen', async () => {
    let store = await openMetadataStore(await open());
    const repo = store.endpoints;
    const a = newEndpoint(ID_A, { name: 'a.one', query: 'select 1', labels: 'team=x', max_limit: 5 }, NOW);
    await repo.insert(a);
    await repo.insert(newEndpoint(ID_B, { name: 'b.two', query: 'select 2' }, NOW));

    await assert.rejects(
      repo.insert(newEndpoint('2d8d9e4a-3b5c-4a7d-9e0f-9c8b7a6f5e4d', { name: 'a.one', query: 'x' }, NOW)),
      (e: unknown) => isQuarryError(e) && e.status === 422 && e.fields?.name?.[0] === 'is already taken',
    );
    await assert.rejects(repo.replace({ ...repo.get(ID_B)!, name: 'a.one' }), (e: unknown) => isQuarryError(e) && e.code === 'VALIDATION_FAILED');
    const renamed = await repo.replace({ ...a, name: 'a.renamed', updated_at: '2026-11-21T11:00:00.000Z' });
    assert.equal(repo.byName('a.renamed')?.id, ID_A);
    assert.equal(repo.byName('a.one'), undefined);
    await repo.delete(ID_B);
    await assert.rejects(repo.delete(ID_B), (e: unknown) => isQuarryError(e) && e.code === 'NOT_FOUND');
    await store.close();

    store = await openMetadataStore(await open());
    assert.deepEqual(store.endpoints.list(), [renamed]);
    assert.equal(store.endpoints.get(ID_A)?.max_limit, 5);
    assert.equal(store.endpoints.get(ID_A)?.created_at, NOW);
    assert.equal(store.endpoints.get(ID_A)?.updated_at, '2026-11-21T11:00:00.000Z');
    await store.endpoints.delete(ID_A);
    await store.close();
  });

  it("records Logflare's key rule on a new source, and keeps it through an update and a reopen", async () => {
    let store = await openMetadataStore(await open());
    const s = await store.sources.create({ name: 'keys.rule' });
    assert.equal(s.key_rule, 'logflare');
    await store.sources.update(s.id, { retention_days: 3 });
    await store.close();
    store = await openMetadataStore(await open());
    assert.equal(store.sources.get(s.id)?.key_rule, 'logflare');
    await store.sources.delete(s.id);
    await store.close();
  });

  it('lets only one of two concurrent creates with the same name through', async () => {
    const store = await openMetadataStore(await open());
    const results = await Promise.allSettled([
      store.endpoints.insert(newEndpoint(ID_A, { name: 'same', query: 'select 1' }, NOW)),
      store.endpoints.insert(newEndpoint(ID_B, { name: 'same', query: 'select 1' }, NOW)),
    ]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', 'rejected'],
    );
    assert.equal(store.endpoints.list().length, 1);
    await store.endpoints.delete(ID_A);
    await store.close();
  });

  it('keeps sources and tokens, finds a token by its value, forgets a revoked one after a reopen', async () => {
    let store = await openMetadataStore(await open());
    const src = await store.sources.create({ name: 'app.logs', retention_days: 3 });
    assert.match(src.table, /^src_[0-9a-f]{32}$/);
    await assert.rejects(store.sources.create({ name: 'app.logs' }), (e: unknown) => isQuarryError(e) && e.status === 422);
    await assert.rejects(store.sources.create({ name: '' }), (e: unknown) => isQuarryError(e) && e.status === 422);
    const renamed = await store.sources.update(src.id, { name: 'app.logs.2', retention_days: null });
    const { token, value } = await store.tokens.create({ description: 'd', scopes: ['query', 'ingest'] });
    const gone = await store.tokens.create({ description: null, scopes: ['private'], value: 'a-chosen-value' });
    assert.equal(store.tokens.findByValue(value)?.id, token.id);
    assert.equal(await store.tokens.revoke(gone.token.id), true);
    assert.equal(await store.tokens.revoke(gone.token.id), false);
    assert.equal(store.tokens.findByValue('a-chosen-value'), undefined);
    await store.close();

    store = await openMetadataStore(await open());
    assert.deepEqual(store.sources.byName('app.logs.2'), renamed);
    assert.deepEqual(store.tokens.findByValue(value), token);
    assert.equal(store.tokens.findByValue('a-chosen-value'), undefined);
    assert.deepEqual(
      store.tokens.list().map((t) => t.id),
      [token.id],
    );
    await store.sources.delete(src.id);
    await assert.rejects(store.sources.update(src.id, { retention_days: 1 }), (e: unknown) => isQuarryError(e) && e.code === 'NOT_FOUND');
    await store.tokens.revoke(token.id);
    assert.deepEqual(await store.health(), { ok: true });
    await store.close();
  });
}
