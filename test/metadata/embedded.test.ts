import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe } from 'node:test';
import { openEmbeddedMetadata } from '../../src/metadata/embedded/records.ts';
import { metadataStoreSuite } from './store-suite.ts';

describe('metadata store: embedded (DuckDB file)', () => {
  let dir = '';
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'quarry-metadata-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  metadataStoreSuite(() => openEmbeddedMetadata({ path: path.join(dir, 'metadata.duckdb') }));
});
