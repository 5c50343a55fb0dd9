/** Studio's page queries (Users, Edge Functions, API keys, DDL, home charts) against logs.all. */
import { pageCorpus } from './studio-pages/harness.ts';
import { pagesFixture } from './studio-pages/pages-fixture.ts';
import { pageCases } from './studio-pages/pages.ts';

pageCorpus('Studio pages', pagesFixture, pageCases);
