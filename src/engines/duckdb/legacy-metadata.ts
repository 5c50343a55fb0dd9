/**
 * Moving an older data directory forward: builds before the metadata store had its own file kept
 * `_quarry_sources`, `_quarry_tokens` and `_quarry_endpoints` inside the event database
 * (`quarry.duckdb`). When the engine opens such a database, their rows are handed to the metadata
 * store (embedded or shared, ids kept), and only once it has stored them are the old tables dropped.
 * A start interrupted in between hands them over again; records already stored are skipped.
 */
import type { Endpoint } from '../../endpoints/model.ts';
import type { MetadataSnapshot } from '../../metadata/records.ts';
import type { DuckDb } from '../../embedded-db/database.ts';
import { sourceFromRow, tokenFromRow } from '../../metadata/embedded/records.ts';
import { iso, optStr, str } from '../../metadata/embedded/values.ts';

const LEGACY_TABLES = ['_quarry_sources', '_quarry_tokens', '_quarry_endpoints'] as const;

type Row = Record<string, unknown>;

/** The older layout's endpoint row (one column per field) as an endpoint. */
function legacyEndpoint(r: Row): Endpoint {
  return {
    id: str(r.id),
    name: str(r.name),
    description: optStr(r.description),
    query: str(r.query),
    language: 'bq_sql',
    sandboxable: r.sandboxable === true,
    max_limit: Number(r.max_limit),
    cache_duration_seconds: Number(r.cache_duration_seconds),
    proactive_requerying_seconds: Number(r.proactive_requerying_seconds),
    enable_auth: r.enable_auth === true,
    redact_pii: r.redact_pii === true,
    labels: optStr(r.labels),
    params: null,
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  };
}

/** Hands the old tables' rows to `adopt`, then drops the tables; false when there were none. */
export async function moveLegacyMetadata(db: DuckDb, adopt: (records: MetadataSnapshot) => Promise<void>): Promise<boolean> {
  const conn = await db.connect();
  try {
    const rows = async (sql: string) => (await conn.runAndReadAll(sql)).getRowObjectsJS() as Row[];
    const present = new Set(
      (
        await rows(
          "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = 'main' AND table_name LIKE '\\_quarry\\_%' ESCAPE '\\'",
        )
      ).map((r) => str(r.table_name)),
    );
    const found = LEGACY_TABLES.filter((t) => present.has(t));
    if (found.length === 0) return false;
    const read = async (table: (typeof LEGACY_TABLES)[number], sql: string) => (present.has(table) ? rows(sql) : []);
    await adopt({
      sources: (await read('_quarry_sources', 'SELECT * FROM _quarry_sources ORDER BY created_at, name')).map(sourceFromRow),
      tokens: (await read('_quarry_tokens', 'SELECT * FROM _quarry_tokens WHERE revoked_at IS NULL ORDER BY created_at')).map(tokenFromRow),
      endpoints: (await read('_quarry_endpoints', 'SELECT * FROM _quarry_endpoints ORDER BY created_at, name')).map(legacyEndpoint),
    });
    await conn.run('BEGIN TRANSACTION');
    for (const t of found) await conn.run(`DROP TABLE ${t}`);
    await conn.run('COMMIT');
    return true;
  } finally {
    db.disconnect(conn);
  }
}
