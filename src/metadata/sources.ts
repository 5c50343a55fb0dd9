/**
 * Sources: named log streams, each stored in its own table. The nine Supabase sources are created
 * on first start (docs/API.md §3). The repository is implemented once, over any metadata store
 * (store.ts).
 */
import { QuarryError } from '../errors.ts';

export interface Source {
  id: string;
  name: string;
  /** Physical table in the engine. */
  table: string;
  /** Rows older than this many days are deleted in the background; null keeps everything. */
  retention_days: number | null;
  created_at: string;
  updated_at: string;
}

export interface SourceInput {
  name: string;
  retention_days?: number | null;
}

export interface SourceRepository {
  list(): Source[];
  get(id: string): Source | undefined;
  byName(name: string): Source | undefined;
  create(input: SourceInput): Promise<Source>;
  update(id: string, patch: Partial<SourceInput>): Promise<Source>;
  delete(id: string): Promise<Source>;
}

/** The nine sources a self-hosted Supabase stack ships to, with the logs.all CTE that reads each. */
export const supabaseSources = [
  { name: 'cloudflare.logs.prod', cte: 'edge_logs' },
  { name: 'postgres.logs', cte: 'postgres_logs' },
  { name: 'deno-relay-logs', cte: 'function_edge_logs' },
  { name: 'deno-subhosting-events', cte: 'function_logs' },
  { name: 'gotrue.logs.prod', cte: 'auth_logs' },
  { name: 'realtime.logs.prod', cte: 'realtime_logs' },
  { name: 'storage.logs.prod.2', cte: 'storage_logs' },
  { name: 'postgREST.logs.prod', cte: 'postgrest_logs' },
  { name: 'pgbouncer.logs.prod', cte: 'pgbouncer_logs' },
] as const;

export type SupabaseSourceName = (typeof supabaseSources)[number]['name'];

const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export function validateSourceInput(input: Partial<SourceInput>, partial: boolean): void {
  const fields: Record<string, string[]> = {};
  if (!partial || input.name !== undefined) {
    if (typeof input.name !== 'string' || !NAME_PATTERN.test(input.name)) {
      fields.name = [
        'must be 1 to 128 characters of letters, digits, dots, dashes or underscores, starting with a letter or digit',
      ];
    }
  }
  const r = input.retention_days;
  if (r !== undefined && r !== null && !(Number.isInteger(r) && r >= 1 && r <= 36500)) {
    fields.retention_days = ['must be a whole number of days from 1 to 36500, or null to keep everything'];
  }
  if (Object.keys(fields).length > 0) {
    throw new QuarryError('VALIDATION_FAILED', 'The source is not valid.', { fields });
  }
}
