import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { newEndpoint } from '../../src/endpoints/model.ts';
import { openEndpointRepository } from '../../src/endpoints/repository.ts';
import { openDuckDb } from '../../src/engines/duckdb/database.ts';
import { isQuarryError } from '../../src/errors.ts';
import { serial } from '../../src/metadata/connection.ts';

const ID_A = '0b6b7c2e-1f3a-4e5b-9c8d-7a6f5e4d3c2b';
const ID_B = '1c7c8d3f-2a4b-4f6c-8d9e-8b7a6f5e4d3c';
const NOW = '2026-11-21T10:00:00.000Z';

describe('EndpointRepository (DuckDB)', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'quarry-endpoints-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('stores endpoints durably, keeps names unique and survives a reopen', async () => {
    const file = path.join(dir, 'db.duckdb');
    let db = await openDuckDb({ path: file });
    let repo = await openEndpointRepository(serial(await db.connect()));
    const a = newEndpoint(ID_A, { name: 'a.one', query: 'select 1', labels: 'team=x', max_limit: 5 }, NOW);
    await repo.insert(a);
    await repo.insert(newEndpoint(ID_B, { name: 'b.two', query: 'select 2' }, NOW));

    await assert.rejects(
      repo.insert(newEndpoint('2d8d9e4a-3b5c-4a7d-9e0f-9c8b7a6f5e4d', { name: 'a.one', query: 'x' }, NOW)),
      (e: unknown) => isQuarryError(e) && e.status === 422 && e.fields?.name?.[0] === 'is already taken',
    );
    await assert.rejects(
      repo.replace({ ...repo.get(ID_B)!, name: 'a.one' }),
      (e: unknown) => isQuarryError(e) && e.code === 'VALIDATION_FAILED',
    );
    const renamed = await repo.replace({ ...a, name: 'a.renamed', updated_at: '2026-11-21T11:00:00.000Z' });
    assert.equal(repo.byName('a.renamed')?.id, ID_A);
    assert.equal(repo.byName('a.one'), undefined);
    await repo.delete(ID_B);
    await assert.rejects(repo.delete(ID_B), (e: unknown) => isQuarryError(e) && e.code === 'NOT_FOUND');
    db.close();

    db = await openDuckDb({ path: file });
    repo = await openEndpointRepository(serial(await db.connect()));
    assert.deepEqual(repo.list(), [renamed]);
    assert.equal(repo.get(ID_A)?.max_limit, 5);
    assert.equal(repo.get(ID_A)?.created_at, NOW);
    assert.equal(repo.get(ID_A)?.updated_at, '2026-11-21T11:00:00.000Z');
    db.close();
  });

  it('lets only one of two concurrent creates with the same name through', async () => {
    const db = await openDuckDb({ path: ':memory:' });
    const repo = await openEndpointRepository(serial(await db.connect()));
    const results = await Promise.allSettled([
      repo.insert(newEndpoint(ID_A, { name: 'same', query: 'select 1' }, NOW)),
      repo.insert(newEndpoint(ID_B, { name: 'same', query: 'select 1' }, NOW)),
    ]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', 'rejected'],
    );
    assert.equal(repo.list().length, 1);
    db.close();
  });
});
