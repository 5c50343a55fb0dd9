/**
 * Reads a Logflare PostgreSQL backend (lib/logflare/backends/adaptor/postgres_adaptor/ in
 * Logflare): its sources from `<schema>.sources` (`name`, `token`), and each source's events from
 * `<schema>.log_events_<token with - replaced by _>` (`id text primary key, body jsonb,
 * event_message text, timestamp timestamp`, a BRIN index on `timestamp`). `body` is the whole
 * event as Logflare received it, `timestamp` in it as integer microseconds; the `id` and
 * `timestamp` columns were taken from it.
 *
 * A source is read through a server-side cursor inside one read-only REPEATABLE READ transaction,
 * so the count and the rows are of one snapshot, memory stays bounded (one page at a time, its
 * row count adapted to a byte target), and nothing is sorted: the table has only a BRIN index on
 * `timestamp` and random ids, so keyset pages on (timestamp, id) would re-scan or sort the table
 * for every page. Rows come in physical order, which for Logflare's append-only tables is nearly
 * time order, so each page spans a short time range. The JSON of each event is built by
 * PostgreSQL (`body` with `id` and `timestamp` set from the columns) and passed on as text, so
 * numbers beyond 2^53 reach Quarry exactly as stored.
 */
import pg from 'pg';
import { ImportError, redactUrl } from './errors.ts';

export interface LogflareSource {
  name: string;
  /** The source's token (a UUID). */
  token: string;
  /** `log_events_<token_with_underscores>`. */
  table: string;
  /** False when the table is not there (a source that never received an event on this backend). */
  hasTable: boolean;
}

/** One event ready to send: its JSON object text, with `id` and `timestamp` from the row. */
export interface SourceEvent {
  id: string;
  /** ISO-8601 UTC with microseconds, `2026-11-21T10:00:00.123456Z` (sorts as text). */
  timestamp: string;
  json: string;
  /** UTF-8 bytes of `json`. */
  bytes: number;
}

export interface SkippedEvent {
  id: string;
  reason: string;
}

/** One fetch from the cursor. */
export interface EventPage {
  events: SourceEvent[];
  skipped: SkippedEvent[];
  /** Rows read (events + skipped). */
  rows: number;
  /** Bytes of the events' JSON. */
  bytes: number;
}

export interface PageOptions {
  since: Date | undefined;
  /** Most rows per page. */
  pageSize: number;
  /** Events whose JSON is longer are skipped (their text is not even fetched). */
  maxEventBytes: number;
  /** The row count per fetch adapts so that a page holds about this many bytes. */
  targetPageBytes?: number;
}

export interface SourceCursor {
  /** Rows the snapshot holds for the source (after --since). */
  total: number;
  pages(): AsyncGenerator<EventPage>;
  /** Ends the transaction. */
  close(): Promise<void>;
}

/** `"name"` with embedded quotes doubled. */
export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** Logflare's PgRepo.table_name/1. */
export function eventsTableName(token: string): string {
  return `log_events_${token.replaceAll('-', '_')}`;
}

const ISO_US = `'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'`;

interface Row {
  id: string | null;
  ts: string | null;
  kind: string | null;
  bytes: number | null;
  json: string | null;
}

export class LogflareReader {
  private constructor(
    private readonly client: pg.Client,
    readonly schema: string,
    private readonly where: string,
  ) {}

  /** Connects and checks that `schema` holds Logflare's `sources` table. */
  static async connect(url: string, schema: string): Promise<LogflareReader> {
    let client: pg.Client;
    try {
      client = new pg.Client({ connectionString: url, application_name: 'quarry-import-logflare', connectionTimeoutMillis: 15_000, keepAlive: true });
    } catch (e) {
      throw new ImportError('BAD_ARGUMENTS', `--from is not a usable PostgreSQL URL (${redactUrl(url)}): ${(e as Error).message}`, { cause: e });
    }
    client.on('error', () => {
      // A dropped connection also fails the query in flight, which reports it.
    });
    const where = describeTarget(url);
    try {
      await client.connect();
    } catch (e) {
      await client.end().catch(() => undefined);
      throw postgresError(e, where);
    }
    const reader = new LogflareReader(client, schema, where);
    try {
      await reader.checkLayout();
    } catch (e) {
      await reader.close();
      throw e;
    }
    return reader;
  }

  private async checkLayout(): Promise<void> {
    const db = await this.query<{ db: string }>('SELECT current_database() AS db');
    const database = db[0]?.db ?? '?';
    const ns = await this.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [this.schema]);
    if (ns.length === 0) {
      const elsewhere = await this.schemasWithSources();
      throw new ImportError(
        'SCHEMA_NOT_FOUND',
        `PostgreSQL database "${database}" has no schema "${this.schema}". ` +
          (elsewhere.length > 0
            ? `Schemas here with a "sources" table: ${elsewhere.join(', ')}; pass the right one with --schema.`
            : 'Self-hosted Supabase keeps Logflare\'s tables in schema "_analytics" of database "_supabase": check the database in --from, or pass --schema.'),
      );
    }
    const t = await this.query(`SELECT 1 FROM pg_tables WHERE schemaname = $1 AND tablename = 'sources'`, [this.schema]);
    if (t.length === 0) {
      throw new ImportError(
        'NOT_LOGFLARE',
        `Schema "${this.schema}" of database "${database}" has no "sources" table: this is not Logflare's schema. ` +
          'Self-hosted Supabase keeps it in schema "_analytics" of database "_supabase" (POSTGRES_BACKEND_SCHEMA in its docker-compose.yml).',
      );
    }
  }

  private async schemasWithSources(): Promise<string[]> {
    const rows = await this.query<{ s: string }>(`SELECT schemaname AS s FROM pg_tables WHERE tablename = 'sources' ORDER BY 1`);
    return rows.map((r) => r.s);
  }

  /** Every Logflare source, by name, and whether its events table exists. */
  async listSources(): Promise<LogflareSource[]> {
    const sources = await this.query<{ name: string | null; token: string | null }>(
      `SELECT name, token::text AS token FROM ${quoteIdent(this.schema)}.sources WHERE token IS NOT NULL ORDER BY name, token`,
    );
    const tables = await this.query<{ t: string }>(`SELECT tablename AS t FROM pg_tables WHERE schemaname = $1 AND tablename LIKE 'log\\_events\\_%'`, [
      this.schema,
    ]);
    const present = new Set(tables.map((r) => r.t));
    return sources.map((s) => {
      const token = s.token ?? '';
      const table = eventsTableName(token);
      return { name: s.name ?? '', token, table, hasTable: present.has(table) };
    });
  }

  /** Opens a snapshot of one source's events; close it before opening the next. */
  async open(source: LogflareSource, options: PageOptions): Promise<SourceCursor> {
    const table = `${quoteIdent(this.schema)}.${quoteIdent(source.table)}`;
    const since = options.since?.toISOString();
    const filter = since === undefined ? '' : `WHERE e."timestamp" >= ($1::timestamptz AT TIME ZONE 'UTC')`;
    const params = since === undefined ? [] : [since];
    await this.run('BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    let open = true;
    const end = async () => {
      if (!open) return;
      open = false;
      await this.client.query('ROLLBACK').catch(() => undefined);
    };
    try {
      // Start every scan at the table's first page (not where another scan happens to be), so a
      // re-run meets the events a killed run already sent first.
      await this.run('SET LOCAL synchronize_seqscans = off');
      const counted = await this.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${table} e ${filter}`, params);
      const total = Number(counted[0]?.n ?? 0);
      const maxBytes = options.maxEventBytes;
      await this.run(
        `DECLARE quarry_import NO SCROLL CURSOR FOR
         SELECT e.id, to_char(e."timestamp", ${ISO_US}) AS ts, jsonb_typeof(e.body) AS kind,
                octet_length(j.text) AS bytes, CASE WHEN octet_length(j.text) <= ${Number(maxBytes)} THEN j.text END AS json
           FROM ${table} e
           CROSS JOIN LATERAL (
             SELECT CASE WHEN jsonb_typeof(e.body) = 'object' AND e."timestamp" IS NOT NULL
                    THEN (e.body || jsonb_build_object('id', e.id, 'timestamp', to_char(e."timestamp", ${ISO_US})))::text END AS text
             OFFSET 0
           ) j
           ${filter}`,
        params,
      );
      const target = options.targetPageBytes ?? 8 * 1024 * 1024;
      const self = this;
      return {
        total,
        async *pages() {
          let fetch = Math.min(100, options.pageSize);
          for (;;) {
            const rows = await self.query<Row>(`FETCH FORWARD ${fetch} FROM quarry_import`);
            if (rows.length === 0) return;
            const page = toPage(rows);
            yield page;
            if (rows.length < fetch) return;
            const perRow = page.bytes / Math.max(1, page.events.length);
            fetch = Math.max(1, Math.min(options.pageSize, fetch * 2, Math.floor(target / Math.max(1, perRow))));
          }
        },
        close: end,
      };
    } catch (e) {
      await end();
      throw e;
    }
  }

  async close(): Promise<void> {
    await this.client.end().catch(() => undefined);
  }

  private async run(sql: string, params: unknown[] = []): Promise<void> {
    await this.query(sql, params);
  }

  private async query<T extends object = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<T[]> {
    try {
      const r = await this.client.query(sql, params);
      return r.rows as T[];
    } catch (e) {
      throw postgresError(e, this.where);
    }
  }
}

function toPage(rows: Row[]): EventPage {
  const page: EventPage = { events: [], skipped: [], rows: rows.length, bytes: 0 };
  for (const r of rows) {
    const id = r.id ?? '';
    if (id === '') page.skipped.push({ id: '(empty)', reason: 'the event has an empty id' });
    else if (r.kind !== 'object') page.skipped.push({ id, reason: `its body is ${r.kind === null ? 'NULL' : `a JSON ${r.kind}`}, not an object` });
    else if (r.ts === null) page.skipped.push({ id, reason: 'it has no timestamp' });
    else if (r.json === null) page.skipped.push({ id, reason: `its JSON is ${r.bytes ?? '?'} bytes, over --max-event-bytes` });
    else {
      const bytes = r.bytes ?? Buffer.byteLength(r.json);
      page.events.push({ id, timestamp: r.ts, json: r.json, bytes });
      page.bytes += bytes;
    }
  }
  return page;
}

/** `host:port/database as user`, without the password. */
function describeTarget(url: string): string {
  try {
    const u = new URL(url);
    const db = decodeURIComponent(u.pathname.replace(/^\//, '')) || '(default database)';
    const user = decodeURIComponent(u.username) || process.env.PGUSER || '(default user)';
    return `${u.hostname || 'localhost'}:${u.port || '5432'}/${db} as ${user}`;
  } catch {
    return redactUrl(url);
  }
}

/** A pg or network error → an ImportError saying what to do. */
export function postgresError(e: unknown, where: string): ImportError {
  if (e instanceof ImportError) return e;
  const err = e as { code?: unknown; message?: unknown };
  const code = typeof err.code === 'string' ? err.code : '';
  const message = typeof err.message === 'string' ? err.message : String(e);
  const network = ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNRESET'];
  if (network.includes(code) || /timeout expired|Connection terminated/i.test(message)) {
    return new ImportError(
      'POSTGRES_UNREACHABLE',
      `Cannot reach PostgreSQL at ${where} (${code || message}). Check the host and port in --from; in a Supabase ` +
        'docker compose stack the database is the "db" service on port 5432, reachable from the other containers.',
      { cause: e },
    );
  }
  if (code === '28P01' || /password authentication failed/i.test(message)) {
    return new ImportError('POSTGRES_AUTH', `PostgreSQL refused the password for ${where}. Check the user and password in --from (or PGPASSWORD).`, {
      cause: e,
    });
  }
  if (/client password must be a string|password must be a string/i.test(message)) {
    return new ImportError('POSTGRES_AUTH', `PostgreSQL asks for a password for ${where}: put it in --from (postgres://user:PASSWORD@…) or in PGPASSWORD.`, {
      cause: e,
    });
  }
  if (code === '28000') {
    return new ImportError('POSTGRES_AUTH', `PostgreSQL refused the connection for ${where}: ${message}.`, { cause: e });
  }
  if (code === '3D000') {
    const hint = /"_supabase"/.test(message)
      ? 'Is this the Supabase stack\'s own database server (its "db" service)? Logflare\'s events are in its database "_supabase".'
      : 'Self-hosted Supabase keeps Logflare\'s events in database "_supabase".';
    return new ImportError('POSTGRES_NO_DATABASE', `PostgreSQL has no database for ${where}: ${message}. ${hint}`, { cause: e });
  }
  if (code === '42501') {
    return new ImportError('POSTGRES_ERROR', `PostgreSQL user lacks a right to read Logflare's tables (${where}): ${message}.`, { cause: e });
  }
  return new ImportError('POSTGRES_ERROR', `PostgreSQL error (${where}): ${message}${code ? ` [${code}]` : ''}`, { cause: e });
}
