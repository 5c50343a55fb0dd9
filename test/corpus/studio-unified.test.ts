/**
 * Studio's unified logs page (test/corpus/studio-pages/unified.ts) against logs.all, on every engine.
 */
import { pageCorpus } from './studio-pages/harness.ts';
import { unifiedCases } from './studio-pages/unified.ts';
import { unifiedFixture } from './studio-pages/unified-fixture.ts';

pageCorpus('Studio unified logs', unifiedFixture, unifiedCases);
