/**
 * The two saved Supabase endpoints created on first start (docs/API.md §1): their SQL
 * lives next to this file, written as BigQuery SQL like any user's saved query.
 */
import { readFileSync } from 'node:fs';
import { sourceFile } from '../../source-files.ts';

export interface SeedEndpoint {
  name: string;
  query: string;
  sandboxable: boolean;
  maxLimit: number;
  cacheDurationSeconds: number;
  proactiveRequeryingSeconds: number;
  redactPii: boolean;
}

function load(file: string): string {
  return readFileSync(sourceFile('endpoints', 'supabase', file), 'utf8');
}

export const logsAllSql = load('logs.all.sql');
export const usageApiCountsSql = load('usage.api-counts.sql');

export const supabaseEndpoints: readonly SeedEndpoint[] = [
  {
    name: 'logs.all',
    query: logsAllSql,
    sandboxable: true,
    maxLimit: 1000,
    cacheDurationSeconds: 0,
    proactiveRequeryingSeconds: 1800,
    redactPii: false,
  },
  {
    name: 'usage.api-counts',
    query: usageApiCountsSql,
    sandboxable: true,
    maxLimit: 1000,
    cacheDurationSeconds: 900,
    proactiveRequeryingSeconds: 300,
    redactPii: false,
  },
];
