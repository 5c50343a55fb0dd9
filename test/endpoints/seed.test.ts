import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { seedSupabaseEndpoints } from '../../src/endpoints/seed.ts';
import { openEmbeddedMetadata } from '../../src/metadata/embedded/records.ts';
import { openMetadataStore } from '../../src/metadata/store.ts';

describe('seedSupabaseEndpoints', () => {
  it('creates logs.all and usage.api-counts once, with the seed configuration, and never overwrites them', async () => {
    const store = await openMetadataStore(await openEmbeddedMetadata({ path: ':memory:' }));
    try {
      const repo = store.endpoints;
      assert.deepEqual(await seedSupabaseEndpoints(repo), ['logs.all', 'usage.api-counts']);
      const logs = repo.byName('logs.all')!;
      const usage = repo.byName('usage.api-counts')!;
      assert.deepEqual([logs.sandboxable, logs.max_limit, logs.cache_duration_seconds, logs.redact_pii, logs.enable_auth], [true, 1000, 0, false, true]);
      assert.deepEqual(
        [usage.sandboxable, usage.max_limit, usage.cache_duration_seconds, usage.proactive_requerying_seconds, usage.redact_pii],
        [true, 1000, 900, 300, false],
      );
      assert.match(logs.query, /from edge_logs\s+limit 100/i);

      await repo.replace({ ...logs, max_limit: 10 });
      assert.deepEqual(await seedSupabaseEndpoints(repo), []);
      assert.equal(repo.list().length, 2);
      assert.equal(repo.byName('logs.all')?.max_limit, 10);

      await repo.delete(usage.id);
      assert.deepEqual(await seedSupabaseEndpoints(repo), ['usage.api-counts']);
    } finally {
      await store.close();
    }
  });
});
