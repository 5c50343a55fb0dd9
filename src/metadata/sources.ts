/**
 * Sources: named log streams, each stored in its own table. The nine Supabase sources are created
 * on first start (docs/API.md §3). The repository is implemented once, over any metadata store
 * (store.ts).
 */
import { type Source, SourceCreate, type SourceInput, SourcePatch } from '../schemas/source.ts';
import { schemaCheck, validationFailed } from '../schemas/validate.ts';

export type { Source, SourceInput };

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

const createCheck = schemaCheck(SourceCreate);
const patchCheck = schemaCheck(SourcePatch);

/** Checks a create (`partial` false) or patch against the source vocabulary (src/schemas/source.ts). */
export function validateSourceInput(input: Partial<SourceInput>, partial: boolean): void {
  const fields = (partial ? patchCheck : createCheck).errors(input);
  if (Object.keys(fields).length > 0) throw validationFailed('source', fields);
}
