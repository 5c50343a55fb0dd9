/**
 * The embedded metadata store: sources, tokens and endpoints in their own DuckDB file
 * (`DATA_DIR/metadata.duckdb`), apart from the events. Metadata never shares the event database's
 * write-ahead log, and one node needs nothing else running. (Older builds kept these tables in the
 * event database; legacy.ts moves them out when the engine opens it.)
 */
import type { DuckDBValue } from '@duckdb/node-api';
import type { Endpoint } from '../../endpoints/model.ts';
import {
  type MetadataRecords,
  type MetadataSnapshot,
  type MetadataWrite,
  type StoredToken,
  type WriteOutcome,
  endpointDocument,
  endpointFromDocument,
} from '../records.ts';
import type { KeyRule } from '../../schemas/source.ts';
import type { Source } from '../sources.ts';
import { serialQueue } from '../../serial-queue.ts';
import { openDuckDb } from '../../embedded-db/database.ts';
import { iso, optStr, str } from './values.ts';

export interface EmbeddedMetadataOptions {
  /** The metadata file, or ':memory:' (tests). */
  path: string;
}

type Row = Record<string, unknown>;

export const METADATA_DDL = [
  `CREATE TABLE IF NOT EXISTS _quarry_sources (
    id VARCHAR PRIMARY KEY, name VARCHAR NOT NULL UNIQUE, "table" VARCHAR NOT NULL,
    retention_days INTEGER, created_at TIMESTAMP NOT NULL, updated_at TIMESTAMP NOT NULL)`,
  // Added later: NULL in the rows of sources created before it, which keep the legacy key rule.
  'ALTER TABLE _quarry_sources ADD COLUMN IF NOT EXISTS key_rule VARCHAR',
  `CREATE TABLE IF NOT EXISTS _quarry_tokens (
    id VARCHAR PRIMARY KEY, token_hash VARCHAR NOT NULL, description VARCHAR, scopes VARCHAR NOT NULL,
    created_at TIMESTAMP NOT NULL, revoked_at TIMESTAMP)`,
  `CREATE TABLE IF NOT EXISTS _quarry_endpoints (
    id VARCHAR PRIMARY KEY, name VARCHAR NOT NULL UNIQUE, definition VARCHAR NOT NULL,
    created_at TIMESTAMP NOT NULL, updated_at TIMESTAMP NOT NULL)`,
];

export function sourceFromRow(r: Row): Source {
  return {
    id: str(r.id),
    name: str(r.name),
    table: str(r.table),
    key_rule: keyRuleOf(r.key_rule),
    retention_days: r.retention_days === null ? null : Number(r.retention_days),
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  };
}

/** A stored key rule; a row written before the column existed (NULL, or no column) is `legacy`. */
export function keyRuleOf(v: unknown): KeyRule {
  return v === 'logflare' ? 'logflare' : 'legacy';
}

export function tokenFromRow(r: Row): StoredToken {
  return {
    hash: str(r.token_hash),
    token: {
      id: str(r.id),
      description: optStr(r.description),
      scopes: str(r.scopes).split(' ').filter(Boolean),
      created_at: iso(r.created_at),
    },
  };
}

function isConstraintError(e: unknown): boolean {
  return e instanceof Error && /constraint/i.test(e.message);
}

export async function openEmbeddedMetadata(options: EmbeddedMetadataOptions): Promise<MetadataRecords> {
  const db = await openDuckDb({ path: options.path, threads: 1 });
  const conn = await db.connect();
  const enqueue = serialQueue();
  const all = (sql: string, values?: Record<string, DuckDBValue>) => enqueue(async () => (await conn.runAndReadAll(sql, values)).getRowObjectsJS() as Row[]);
  const run = (sql: string, values?: Record<string, DuckDBValue>) =>
    enqueue(async () => {
      await conn.run(sql, values);
    });

  try {
    for (const ddl of METADATA_DDL) await conn.run(ddl);
    // Only our own statements run here; nothing needs files, the network or settings any more.
    await conn.run('SET enable_external_access = false');
    await conn.run('SET lock_configuration = true');
  } catch (e) {
    db.close();
    throw e;
  }

  /** Runs a statement that may hit a uniqueness constraint; reports it instead of throwing. */
  async function guarded(sql: string, values: Record<string, DuckDBValue>): Promise<WriteOutcome> {
    try {
      await run(sql, values);
      return 'ok';
    } catch (e) {
      if (isConstraintError(e)) return 'name-taken';
      throw e;
    }
  }

  async function changed(sql: string, values: Record<string, DuckDBValue>): Promise<WriteOutcome> {
    const rows = await enqueue(async () => {
      const reader = await conn.runAndReadAll(sql, values);
      return reader.getRows();
    });
    // DuckDB answers a data-changing statement with one row: the number of rows it changed.
    return Number(rows[0]?.[0] ?? 0) > 0 ? 'ok' : 'missing';
  }

  function endpointValues(e: Endpoint): Record<string, DuckDBValue> {
    return { id: e.id, name: e.name, definition: endpointDocument(e), created: e.created_at, updated: e.updated_at };
  }

  const exclusive = serialQueue();

  return {
    kind: 'embedded',
    async load(): Promise<MetadataSnapshot> {
      const sources = await all('SELECT * FROM _quarry_sources ORDER BY created_at, name');
      const tokens = await all('SELECT * FROM _quarry_tokens WHERE revoked_at IS NULL ORDER BY created_at');
      const endpoints = await all('SELECT definition FROM _quarry_endpoints ORDER BY created_at, name');
      return {
        sources: sources.map(sourceFromRow),
        tokens: tokens.map(tokenFromRow),
        endpoints: endpoints.map((r) => endpointFromDocument(str(r.definition))),
      };
    },
    async write(w: MetadataWrite): Promise<WriteOutcome> {
      switch (w.kind) {
        case 'source.insert': {
          const s = w.source;
          const sql = `INSERT INTO _quarry_sources (id, name, "table", retention_days, created_at, updated_at, key_rule)
            VALUES ($id, $name, $table, $retention, $created::TIMESTAMP, $updated::TIMESTAMP, $keyRule)`;
          return guarded(sql, {
            id: s.id,
            name: s.name,
            table: s.table,
            keyRule: s.key_rule,
            retention: s.retention_days,
            created: s.created_at,
            updated: s.updated_at,
          });
        }
        case 'source.update': {
          const s = w.source;
          try {
            return await changed('UPDATE _quarry_sources SET name = $name, retention_days = $retention, updated_at = $updated::TIMESTAMP WHERE id = $id', {
              id: s.id,
              name: s.name,
              retention: s.retention_days,
              updated: s.updated_at,
            });
          } catch (e) {
            if (isConstraintError(e)) return 'name-taken';
            throw e;
          }
        }
        case 'source.delete':
          return changed('DELETE FROM _quarry_sources WHERE id = $id', { id: w.id });
        case 'token.insert': {
          const t = w.token;
          return guarded('INSERT INTO _quarry_tokens VALUES ($id, $hash, $description, $scopes, $created::TIMESTAMP, NULL)', {
            id: t.token.id,
            hash: t.hash,
            description: t.token.description,
            scopes: t.token.scopes.join(' '),
            created: t.token.created_at,
          });
        }
        case 'token.revoke':
          return changed('UPDATE _quarry_tokens SET revoked_at = now()::TIMESTAMP WHERE id = $id AND revoked_at IS NULL', {
            id: w.id,
          });
        case 'endpoint.insert':
          return guarded(
            'INSERT INTO _quarry_endpoints VALUES ($id, $name, $definition, $created::TIMESTAMP, $updated::TIMESTAMP)',
            endpointValues(w.endpoint),
          );
        case 'endpoint.update': {
          const { created: _unchanged, ...values } = endpointValues(w.endpoint);
          try {
            return await changed(
              'UPDATE _quarry_endpoints SET name = $name, definition = $definition, updated_at = $updated::TIMESTAMP WHERE id = $id',
              values,
            );
          } catch (e) {
            if (isConstraintError(e)) return 'name-taken';
            throw e;
          }
        }
        case 'endpoint.delete':
          return changed('DELETE FROM _quarry_endpoints WHERE id = $id', { id: w.id });
      }
    },
    exclusive: (work) => exclusive(work),
    watch() {
      // One process owns the file: nobody else writes.
    },
    claimWarming: async () => true,
    confirmedAt: () => Date.now(),
    async ping() {
      await all('SELECT 1');
    },
    async close() {
      await enqueue(async () => undefined);
      db.close();
    },
  };
}
