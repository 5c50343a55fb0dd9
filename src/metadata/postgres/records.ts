/**
 * The shared metadata store: sources, tokens and endpoints in PostgreSQL (`DATABASE_URL`), so that
 * several service nodes agree.
 *
 * - Migrations run at start-up under an advisory lock: nodes starting together apply each one once.
 * - Every write bumps one version row and sends `NOTIFY quarry_metadata` in the same transaction.
 *   Each node LISTENs and also reads the version every `pollMs`, so a missed notification only
 *   delays: another node's change is in this node's mirror within `pollMs` plus one reload.
 * - Start-up seeding runs under a second advisory lock (`exclusive`), so two empty-database starts
 *   create the nine sources and two endpoints once.
 * - The background refresh of a cached result is leased per key (`claimWarming`).
 */
import { createHash, randomUUID } from 'node:crypto';
import pg from 'pg';
import { type MetadataRecords, type MetadataSnapshot, type MetadataWrite, type WriteOutcome, endpointDocument, endpointFromDocument } from '../records.ts';
import type { Source } from '../sources.ts';

export interface PostgresMetadataOptions {
  url: string;
  /** Version check interval besides notifications (default 1000 ms). */
  pollMs?: number;
  /** Told about failures of the background watch (for the log); the watch retries by itself. */
  onError?: (error: unknown) => void;
}

/** Advisory lock keys: one for migrations, one for start-up seeding. */
const MIGRATION_LOCK = 0x51_7a_72_01;
const SEED_LOCK = 0x51_7a_72_02;
const CHANNEL = 'quarry_metadata';
const PING_TIMEOUT_MS = 2000;
const POOL_SIZE = 5;

/** Each entry is one migration, applied once, in order, in one transaction. Never edit one; add. */
const MIGRATIONS: readonly (readonly string[])[] = [
  [
    `CREATE TABLE quarry_sources (
      id text PRIMARY KEY, name text NOT NULL UNIQUE, "table" text NOT NULL, retention_days integer,
      created_at timestamptz NOT NULL, updated_at timestamptz NOT NULL)`,
    `CREATE TABLE quarry_tokens (
      id text PRIMARY KEY, token_hash text NOT NULL, description text, scopes text NOT NULL,
      created_at timestamptz NOT NULL, revoked_at timestamptz)`,
    'CREATE INDEX quarry_tokens_live ON quarry_tokens (token_hash) WHERE revoked_at IS NULL',
    `CREATE TABLE quarry_endpoints (
      id text PRIMARY KEY, name text NOT NULL UNIQUE, definition jsonb NOT NULL,
      created_at timestamptz NOT NULL, updated_at timestamptz NOT NULL)`,
    `CREATE TABLE quarry_metadata_version (
      singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton), version bigint NOT NULL)`,
    'INSERT INTO quarry_metadata_version VALUES (true, 0)',
    `CREATE TABLE quarry_warming_leases (
      key text PRIMARY KEY, holder text NOT NULL, expires_at timestamptz NOT NULL)`,
  ],
  // Each source's key rule (src/ingest/keys.ts): NULL for the sources created before, which keep
  // the legacy rule.
  ['ALTER TABLE quarry_sources ADD COLUMN key_rule text'],
];

type Row = Record<string, unknown>;

function iso(v: unknown): string {
  return v instanceof Date ? v.toISOString() : String(v);
}

function sourceFromRow(r: Row): Source {
  return {
    id: String(r.id),
    name: String(r.name),
    table: String(r.table),
    key_rule: r.key_rule === 'logflare' ? 'logflare' : 'legacy',
    retention_days: r.retention_days === null ? null : Number(r.retention_days),
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  };
}

function isUniqueViolation(e: unknown): boolean {
  return typeof e === 'object' && e !== null && (e as { code?: unknown }).code === '23505';
}

/** A reason fit for /health: what failed, never where (no host, port or credentials). */
function reasonOf(e: unknown): string {
  const code = typeof e === 'object' && e !== null ? (e as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? `the metadata store (PostgreSQL) is unreachable (${code})` : 'the metadata store (PostgreSQL) is unreachable';
}

/**
 * One write as one statement. `mustMatch`: an update, delete or revoke that matches no row means
 * another node removed the record (`missing`); an insert of a taken name or id fails with a
 * unique violation (`name-taken`).
 */
function statementOf(w: MetadataWrite): { sql: string; values: unknown[]; mustMatch: boolean } {
  const insert = (sql: string, values: unknown[]) => ({ sql, values, mustMatch: false });
  const change = (sql: string, values: unknown[]) => ({ sql, values, mustMatch: true });
  switch (w.kind) {
    case 'source.insert': {
      const s = w.source;
      return insert('INSERT INTO quarry_sources (id, name, "table", retention_days, created_at, updated_at, key_rule) VALUES ($1, $2, $3, $4, $5, $6, $7)', [
        s.id,
        s.name,
        s.table,
        s.retention_days,
        s.created_at,
        s.updated_at,
        s.key_rule,
      ]);
    }
    case 'source.update': {
      const s = w.source;
      return change('UPDATE quarry_sources SET name = $2, retention_days = $3, updated_at = $4 WHERE id = $1', [s.id, s.name, s.retention_days, s.updated_at]);
    }
    case 'source.delete':
      return change('DELETE FROM quarry_sources WHERE id = $1', [w.id]);
    case 'token.insert': {
      const { token: t, hash } = w.token;
      return insert('INSERT INTO quarry_tokens VALUES ($1, $2, $3, $4, $5, NULL)', [t.id, hash, t.description, t.scopes.join(' '), t.created_at]);
    }
    case 'token.revoke':
      return change('UPDATE quarry_tokens SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL', [w.id]);
    case 'endpoint.insert': {
      const e = w.endpoint;
      return insert('INSERT INTO quarry_endpoints VALUES ($1, $2, $3::jsonb, $4, $5)', [e.id, e.name, endpointDocument(e), e.created_at, e.updated_at]);
    }
    case 'endpoint.update': {
      const e = w.endpoint;
      return change('UPDATE quarry_endpoints SET name = $2, definition = $3::jsonb, updated_at = $4 WHERE id = $1', [
        e.id,
        e.name,
        endpointDocument(e),
        e.updated_at,
      ]);
    }
    case 'endpoint.delete':
      return change('DELETE FROM quarry_endpoints WHERE id = $1', [w.id]);
  }
}

async function migrate(pool: pg.Pool): Promise<void> {
  const c = await pool.connect();
  try {
    await c.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      await c.query(`CREATE TABLE IF NOT EXISTS quarry_schema_migrations (
        version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
      const done = await c.query<{ v: number | null }>('SELECT max(version) AS v FROM quarry_schema_migrations');
      const applied = done.rows[0]?.v ?? 0;
      for (let i = applied; i < MIGRATIONS.length; i += 1) {
        await c.query('BEGIN');
        try {
          for (const statement of MIGRATIONS[i] ?? []) await c.query(statement);
          await c.query('INSERT INTO quarry_schema_migrations (version) VALUES ($1)', [i + 1]);
          await c.query('COMMIT');
        } catch (e) {
          await c.query('ROLLBACK');
          throw e;
        }
      }
    } finally {
      await c.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    }
  } finally {
    c.release();
  }
}

export async function openPostgresMetadata(options: PostgresMetadataOptions): Promise<MetadataRecords> {
  const pollMs = options.pollMs ?? 1000;
  const onError = options.onError ?? (() => undefined);
  const node = randomUUID();
  const pool = new pg.Pool({
    connectionString: options.url,
    max: POOL_SIZE,
    connectionTimeoutMillis: 5000,
    idleTimeoutMillis: 30_000,
  });
  // An idle connection that breaks must not take the process down; the next query reconnects.
  pool.on('error', onError);
  try {
    await migrate(pool);
  } catch (e) {
    await pool.end();
    throw e;
  }

  /** The newest version this node's mirror holds (or its own last write made). */
  let seen = -1;
  let changed: () => void = () => undefined;
  let listener: pg.Client | undefined;
  let closed = false;

  function heard(version: number): void {
    if (version > seen) changed();
  }

  async function listen(): Promise<void> {
    if (listener !== undefined || closed) return;
    const client = new pg.Client({ connectionString: options.url, connectionTimeoutMillis: 5000 });
    listener = client;
    client.on('notification', (n) => {
      if (n.channel === CHANNEL) heard(Number(n.payload));
    });
    client.on('error', (e) => {
      onError(e);
      if (listener === client) listener = undefined;
      client.end().catch(() => undefined);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
    } catch (e) {
      if (listener === client) listener = undefined;
      client.end().catch(() => undefined);
      throw e;
    }
    // Anything written while no one listened is caught by a check right away.
    changed();
  }

  let confirmed = Date.now();
  let polls = 0;
  async function poll(): Promise<void> {
    polls += 1;
    const started = Date.now();
    await listen();
    const r = await pool.query<{ version: string }>('SELECT version FROM quarry_metadata_version');
    const version = Number(r.rows[0]?.version ?? 0);
    if (version > seen) changed();
    else confirmed = started;
    if (polls % 600 === 0) await pool.query("DELETE FROM quarry_warming_leases WHERE expires_at < now() - interval '1 hour'");
  }
  let polling = false;
  let failing = false;
  const timer = setInterval(() => {
    if (polling || closed) return;
    polling = true;
    poll()
      .then(
        () => {
          failing = false;
        },
        (e: unknown) => {
          // Told once per outage, not once per check.
          if (!failing) onError(e);
          failing = true;
        },
      )
      .finally(() => {
        polling = false;
      });
  }, pollMs);
  timer.unref();

  /**
   * A pooled connection with a transaction begun. Connections PostgreSQL dropped while they sat
   * idle in the pool (it restarted) fail their first statement: each is discarded and the next
   * tried, so the first change after an outage does not fail for a connection nothing used.
   */
  async function begin(statement: string): Promise<pg.PoolClient> {
    for (let attempt = 1; ; attempt++) {
      const c = await pool.connect();
      try {
        await c.query(statement);
        return c;
      } catch (e) {
        c.release(e instanceof Error ? e : new Error(String(e)));
        if (attempt > POOL_SIZE) throw e;
      }
    }
  }

  async function transaction(work: (c: pg.PoolClient) => Promise<WriteOutcome>): Promise<WriteOutcome> {
    const c = await begin('BEGIN');
    let broken: Error | undefined;
    try {
      let outcome: WriteOutcome;
      try {
        outcome = await work(c);
      } catch (e) {
        await c.query('ROLLBACK');
        if (isUniqueViolation(e)) return 'name-taken';
        throw e;
      }
      if (outcome !== 'ok') {
        await c.query('ROLLBACK');
        return outcome;
      }
      const v = await c.query<{ version: string }>('UPDATE quarry_metadata_version SET version = version + 1 RETURNING version');
      const version = Number(v.rows[0]?.version);
      await c.query('SELECT pg_notify($1, $2)', [CHANNEL, String(version)]);
      await c.query('COMMIT');
      // A gap means another node wrote since this node last loaded: its change is not here yet.
      if (version === seen + 1) seen = version;
      else changed();
      return 'ok';
    } catch (e) {
      // A connection that failed mid-transaction is not given back to the pool.
      broken = e instanceof Error ? e : new Error(String(e));
      throw e;
    } finally {
      c.release(broken);
    }
  }

  return {
    kind: 'postgres',
    async load(): Promise<MetadataSnapshot> {
      const started = Date.now();
      const c = await begin('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      let read: [pg.QueryResult, pg.QueryResult, pg.QueryResult, pg.QueryResult<{ definition: string }>];
      try {
        const v = await c.query<{ version: string }>('SELECT version FROM quarry_metadata_version');
        const sources = await c.query('SELECT * FROM quarry_sources ORDER BY created_at, name');
        const tokens = await c.query('SELECT * FROM quarry_tokens WHERE revoked_at IS NULL ORDER BY created_at');
        const endpoints = await c.query<{ definition: string }>('SELECT definition::text AS definition FROM quarry_endpoints ORDER BY created_at, name');
        await c.query('COMMIT');
        read = [v, sources, tokens, endpoints];
      } catch (e) {
        await c.query('ROLLBACK').catch(() => undefined);
        // Not given back to the pool: the connection may be what failed.
        c.release(e instanceof Error ? e : new Error(String(e)));
        throw e;
      }
      c.release();
      const [v, sources, tokens, endpoints] = read;
      seen = Number(v.rows[0]?.version ?? 0);
      confirmed = started;
      return {
        sources: sources.rows.map(sourceFromRow),
        tokens: tokens.rows.map((r: Row) => ({
          hash: String(r.token_hash),
          token: {
            id: String(r.id),
            description: r.description === null ? null : String(r.description),
            scopes: String(r.scopes).split(' ').filter(Boolean),
            created_at: iso(r.created_at),
          },
        })),
        endpoints: endpoints.rows.map((r) => endpointFromDocument(r.definition)),
      };
    },
    write(w: MetadataWrite): Promise<WriteOutcome> {
      const { sql, values, mustMatch } = statementOf(w);
      return transaction(async (c) => {
        const matched = (await c.query(sql, values)).rowCount ?? 0;
        return mustMatch && matched === 0 ? 'missing' : 'ok';
      });
    },
    async exclusive(work) {
      const c = await pool.connect();
      try {
        await c.query('SELECT pg_advisory_lock($1)', [SEED_LOCK]);
        try {
          return await work();
        } finally {
          await c.query('SELECT pg_advisory_unlock($1)', [SEED_LOCK]);
        }
      } finally {
        c.release();
      }
    },
    watch(callback) {
      changed = callback;
      listen().catch(onError);
    },
    async claimWarming(key, holdMs) {
      const hashed = createHash('sha256').update(key).digest('hex');
      const r = await pool.query(
        `INSERT INTO quarry_warming_leases AS l (key, holder, expires_at)
         VALUES ($1, $2, now() + $3 * interval '1 millisecond')
         ON CONFLICT (key) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
         WHERE l.expires_at <= now() OR l.holder = EXCLUDED.holder
         RETURNING holder`,
        [hashed, node, Math.max(1, Math.round(holdMs))],
      );
      return (r.rowCount ?? 0) > 0;
    },
    confirmedAt: () => confirmed,
    async ping() {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`the metadata store (PostgreSQL) did not answer within ${PING_TIMEOUT_MS / 1000} s`)), PING_TIMEOUT_MS);
      });
      try {
        await Promise.race([
          pool.query('SELECT 1').catch((e: unknown) => {
            throw new Error(reasonOf(e));
          }),
          timeout,
        ]);
      } finally {
        clearTimeout(timer);
      }
    },
    async close() {
      closed = true;
      clearInterval(timer);
      await listener?.end().catch(() => undefined);
      await pool.end();
    },
  };
}
