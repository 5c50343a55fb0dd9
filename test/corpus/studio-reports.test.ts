/**
 * Supabase Studio's REPORTS templates (API, Storage, Auth, Edge Functions reports) sent to `logs.all`
 * on every engine, with BigQuery's answers computed from the fixture (studio-pages/reports.ts).
 */
import { pageCorpus } from './studio-pages/harness.ts';
import { reportCases } from './studio-pages/reports.ts';
import { reportsFixture } from './studio-pages/reports-fixture.ts';

pageCorpus('Studio reports', reportsFixture, reportCases);
