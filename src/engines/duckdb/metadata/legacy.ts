/**
 * Moving a Quarry 0.1 data directory forward: 0.1 kept `_quarry_sources`, `_quarry_tokens` and
 * `_quarry_endpoints` inside the event database (`quarry.duckdb`). On the first start of a newer
 * version their rows are copied into the metadata file, then the old tables are dropped, then a
 * marker is written. Each step can be repeated: a start interrupted half-way copies again (rows
 * already there are kept) and finishes.
 */
import { existsSync } from 'node:fs';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { Endpoint } from '../../../endpoints/model.ts';
import { endpointDocument } from '../../../metadata/records.ts';
import { iso, optStr, str } from './values.ts';

const MARKER = 'legacy-import';
const LEGACY_TABLES = ['_quarry_sources', '_quarry_tokens', '_quarry_endpoints'] as const;

type Row = Record<string, unknown>;

function sqlString(s: string): string {
  return `'${s.replaceAll("'", "''")}'`;
}

/** 0.1's endpoint row (one column per field) as an endpoint. */
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
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  };
}

async function rows(conn: DuckDBConnection, sql: string): Promise<Row[]> {
  return (await conn.runAndReadAll(sql)).getRowObjectsJS() as Row[];
}

/** Returns the number of rows copied per table (for the start-up log and tests); {} when there was nothing to do. */
export async function importLegacyMetadata(conn: DuckDBConnection, legacyPath: string): Promise<Record<string, number>> {
  const done = await rows(conn, `SELECT 1 FROM _quarry_metadata_info WHERE key = '${MARKER}'`);
  if (done.length > 0) return {};
  const copied: Record<string, number> = {};
  if (existsSync(legacyPath)) {
    await conn.run(`ATTACH ${sqlString(legacyPath)} AS quarry_legacy`);
    try {
      const present = new Set(
        (
          await rows(
            conn,
            "SELECT table_name FROM duckdb_tables() WHERE database_name = 'quarry_legacy' AND schema_name = 'main'",
          )
        ).map((r) => str(r.table_name)),
      );
      await conn.run('BEGIN TRANSACTION');
      try {
        if (present.has('_quarry_sources')) {
          const r = await conn.runAndReadAll(`INSERT OR IGNORE INTO _quarry_sources
            SELECT id, name, "table", retention_days, created_at, updated_at FROM quarry_legacy._quarry_sources`);
          copied._quarry_sources = Number(r.getRows()[0]?.[0] ?? 0);
        }
        if (present.has('_quarry_tokens')) {
          const r = await conn.runAndReadAll(`INSERT OR IGNORE INTO _quarry_tokens
            SELECT id, token_hash, description, scopes, created_at, revoked_at FROM quarry_legacy._quarry_tokens`);
          copied._quarry_tokens = Number(r.getRows()[0]?.[0] ?? 0);
        }
        if (present.has('_quarry_endpoints')) {
          let n = 0;
          for (const row of await rows(conn, 'SELECT * FROM quarry_legacy._quarry_endpoints')) {
            const e = legacyEndpoint(row);
            await conn.run(
              'INSERT OR IGNORE INTO _quarry_endpoints VALUES ($id, $name, $definition, $created::TIMESTAMP, $updated::TIMESTAMP)',
              { id: e.id, name: e.name, definition: endpointDocument(e), created: e.created_at, updated: e.updated_at },
            );
            n += 1;
          }
          copied._quarry_endpoints = n;
        }
        await conn.run('COMMIT');
      } catch (e) {
        await conn.run('ROLLBACK');
        throw e;
      }
      // A DuckDB transaction writes to one database: the old tables go in a second one, once the
      // copy is committed.
      await conn.run('BEGIN TRANSACTION');
      for (const t of LEGACY_TABLES) if (present.has(t)) await conn.run(`DROP TABLE quarry_legacy.${t}`);
      await conn.run('COMMIT');
    } finally {
      await conn.run('DETACH quarry_legacy');
    }
  }
  await conn.run(`INSERT OR IGNORE INTO _quarry_metadata_info VALUES ('${MARKER}', $at)`, {
    at: new Date().toISOString(),
  });
  return copied;
}
