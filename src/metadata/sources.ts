/**
 * Sources: named log streams, each stored in its own table. The nine Supabase sources are created
 * on first start (docs/API.md §3).
 */
import { randomUUID } from 'node:crypto';
import { QuarryError } from '../errors.ts';
import { physicalTableName } from '../storage/sources.ts';
import { type SerialConnection, iso, str } from './connection.ts';

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

export async function openSourceRepository(db: SerialConnection): Promise<SourceRepository> {
  await db.run(`CREATE TABLE IF NOT EXISTS _quarry_sources (
    id VARCHAR PRIMARY KEY, name VARCHAR NOT NULL UNIQUE, "table" VARCHAR NOT NULL,
    retention_days INTEGER, created_at TIMESTAMP NOT NULL, updated_at TIMESTAMP NOT NULL)`);
  const byId = new Map<string, Source>();
  for (const r of await db.all('SELECT * FROM _quarry_sources ORDER BY created_at, name')) {
    const s: Source = {
      id: str(r.id),
      name: str(r.name),
      table: str(r.table),
      retention_days: r.retention_days === null ? null : Number(r.retention_days),
      created_at: iso(r.created_at),
      updated_at: iso(r.updated_at),
    };
    byId.set(s.id, s);
  }
  const findByName = (name: string) => [...byId.values()].find((s) => s.name === name);

  function mustGet(id: string): Source {
    const s = byId.get(id);
    if (!s) throw new QuarryError('NOT_FOUND', `No source with id ${id}.`);
    return s;
  }

  function assertNameFree(name: string, exceptId?: string) {
    const other = findByName(name);
    if (other && other.id !== exceptId) {
      throw new QuarryError('VALIDATION_FAILED', `A source named "${name}" already exists.`, {
        fields: { name: ['is already taken'] },
      });
    }
  }

  return {
    list: () => [...byId.values()],
    get: (id) => byId.get(id),
    byName: findByName,
    async create(input) {
      validateSourceInput(input, false);
      assertNameFree(input.name);
      const id = randomUUID();
      const now = new Date().toISOString();
      const s: Source = {
        id,
        name: input.name,
        table: physicalTableName(id),
        retention_days: input.retention_days ?? null,
        created_at: now,
        updated_at: now,
      };
      await db.run(
        `INSERT INTO _quarry_sources VALUES ($id, $name, $table, $retention, $now::TIMESTAMP, $now::TIMESTAMP)`,
        { id, name: s.name, table: s.table, retention: s.retention_days, now },
      );
      byId.set(id, s);
      return s;
    },
    async update(id, patch) {
      const current = mustGet(id);
      validateSourceInput(patch, true);
      if (patch.name !== undefined) assertNameFree(patch.name, id);
      const next: Source = {
        ...current,
        name: patch.name ?? current.name,
        retention_days: patch.retention_days === undefined ? current.retention_days : patch.retention_days,
        updated_at: new Date().toISOString(),
      };
      await db.run(
        'UPDATE _quarry_sources SET name = $name, retention_days = $retention, updated_at = $now::TIMESTAMP WHERE id = $id',
        { id, name: next.name, retention: next.retention_days, now: next.updated_at },
      );
      byId.set(id, next);
      return next;
    },
    async delete(id) {
      const s = mustGet(id);
      await db.run('DELETE FROM _quarry_sources WHERE id = $id', { id });
      byId.delete(id);
      return s;
    },
  };
}
