/**
 * A Logflare PostgreSQL backend's layout in a test database, as Logflare 1.31 leaves it in
 * self-hosted Supabase (lib/logflare/backends/adaptor/postgres_adaptor/ in Logflare): a `sources`
 * table (`name`, `token` uuid, …) and, per source that received events, a table
 * `log_events_<token with - replaced by _>` (`id text primary key, body jsonb, event_message text,
 * timestamp timestamp`, a BRIN index on `timestamp`) whose `body` is the whole event with
 * `timestamp` as integer microseconds.
 *
 * Events are Supabase-shaped (src/demo/generator.ts: Vector's transforms, nested `metadata`
 * records, storage's `context` list of records), with random v4 ids as Logflare gives them.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { type DemoEvent, generateEvents, type SourceName } from '../../src/demo/generator.ts';

/** A row of a `log_events_…` table: `body` is inserted as given (any JSON value). */
export interface LogflareRow {
  id: string;
  /** Unix microseconds. */
  timestampUs: bigint;
  eventMessage: string | null;
  body: unknown;
}

export interface LogflareSourceFixture {
  name: string;
  token: string;
  /** undefined: the source has no events table (never received an event on this backend). */
  rows: LogflareRow[] | undefined;
}

/** Creates `<schema>.sources` and the sources' event tables, and fills them. */
export async function createLogflareLayout(url: string, schema: string, sources: LogflareSourceFixture[]): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const s = quote(schema);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
    // The columns Logflare's migrations leave on `sources` that matter here, plus a few others.
    await client.query(`CREATE TABLE IF NOT EXISTS ${s}.sources (
      id bigserial PRIMARY KEY,
      name varchar(255),
      token uuid NOT NULL UNIQUE,
      user_id integer NOT NULL DEFAULT 1,
      public_token varchar(255),
      favorite boolean NOT NULL DEFAULT false,
      inserted_at timestamp(0) NOT NULL DEFAULT now(),
      updated_at timestamp(0) NOT NULL DEFAULT now()
    )`);
    for (const src of sources) {
      await client.query(`INSERT INTO ${s}.sources (name, token) VALUES ($1, $2)`, [src.name, src.token]);
      if (src.rows === undefined) continue;
      const table = `log_events_${src.token.replaceAll('-', '_')}`;
      await client.query(`CREATE TABLE IF NOT EXISTS ${s}.${quote(table)} (
        id TEXT PRIMARY KEY, body JSONB, event_message TEXT, timestamp TIMESTAMP)`);
      await client.query(`CREATE INDEX IF NOT EXISTS ${quote(`${table}_timestamp_brin_idx`)} ON ${s}.${quote(table)} USING brin (timestamp)`);
      await insertRows(client, `${s}.${quote(table)}`, src.rows);
    }
  } finally {
    await client.end();
  }
}

/** Appends rows to an existing source's table. */
export async function appendLogflareRows(url: string, schema: string, token: string, rows: LogflareRow[]): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await insertRows(client, `${quote(schema)}.${quote(`log_events_${token.replaceAll('-', '_')}`)}`, rows);
  } finally {
    await client.end();
  }
}

async function insertRows(client: pg.Client, table: string, rows: LogflareRow[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 2000) {
    const chunk = rows.slice(i, i + 2000).map((r) => ({ id: r.id, ts: r.timestampUs.toString(), msg: r.eventMessage, body: r.body }));
    // Microseconds added to the epoch as an interval: exact, where to_timestamp(double) may round.
    await client.query(
      `INSERT INTO ${table} (id, body, event_message, timestamp)
       SELECT r->>'id', r->'body', r->>'msg', 'epoch'::timestamp + (r->>'ts')::bigint * interval '1 microsecond'
         FROM jsonb_array_elements($1::jsonb) AS r`,
      [JSON.stringify(chunk)],
    );
  }
}

/** Runs one generated INSERT into a source's table (`insert` gets the quoted table name); $1 start, $2 step, $3 count. */
async function fillWith(
  url: string,
  schema: string,
  token: string,
  count: number,
  startUs: bigint,
  stepUs: bigint,
  insert: (table: string) => string,
): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const table = `${quote(schema)}.${quote(`log_events_${token.replaceAll('-', '_')}`)}`;
    await client.query(insert(table), [startUs.toString(), stepUs.toString(), count]);
  } finally {
    await client.end();
  }
}

/**
 * Fills a source's table with `count` Postgres-log events built by PostgreSQL itself (fast for
 * tens of thousands): `postgres.logs`' shape (top-level `project`, `metadata.host`,
 * `metadata.parsed.*`), one every `stepUs` microseconds from `startUs`, random v4 ids.
 */
export async function fillPostgresLogs(url: string, schema: string, token: string, count: number, startUs: bigint, stepUs: bigint): Promise<void> {
  await fillWith(
    url,
    schema,
    token,
    count,
    startUs,
    stepUs,
    (table) =>
      `INSERT INTO ${table} (id, body, event_message, timestamp)
       SELECT s.id,
              jsonb_build_object(
                'id', s.id, 'timestamp', s.us, 'event_message', s.msg, 'project', 'default', 'appname', 'supabase-db',
                'metadata', jsonb_build_object(
                  'host', 'db-default',
                  'parsed', jsonb_build_object(
                    'timestamp', to_char(s.ts, 'YYYY-MM-DD HH24:MI:SS.MS "UTC"'),
                    'error_severity', s.severity, 'process_id', 1000 + s.g % 97, 'session_id', to_hex(s.g % 4096) || '.' || to_hex(s.g % 257),
                    'session_line_num', s.g % 50, 'backend_type', 'client backend', 'database_name', 'postgres',
                    'user_name', (ARRAY['postgres', 'authenticator', 'supabase_admin'])[1 + s.g % 3],
                    'application_name', (ARRAY['postgrest', 'psql', 'pg_cron'])[1 + s.g % 3]))),
              s.msg, s.ts
         FROM (
           SELECT g, gen_random_uuid()::text AS id, $1::bigint + g * $2::bigint AS us,
                  'epoch'::timestamp + ($1::bigint + g * $2::bigint) * interval '1 microsecond' AS ts,
                  (ARRAY['LOG', 'LOG', 'LOG', 'WARNING', 'ERROR'])[1 + g % 5] AS severity,
                  format('%s UTC [%s] LOG:  duration: %s ms  statement: select * from todos where id = %s',
                         to_char('epoch'::timestamp + ($1::bigint + g * $2::bigint) * interval '1 microsecond', 'YYYY-MM-DD HH24:MI:SS.MS'),
                         1000 + g % 97, (g % 997) / 10.0, g) AS msg
             FROM generate_series(0, $3::int - 1) AS g
         ) s`,
  );
}

/**
 * Fills a source's table with `count` Kong edge-log events (`cloudflare.logs.prod`'s shape as
 * Vector ships it: nginx access line, `metadata.request.headers`, `metadata.response`), about
 * 1 KB of JSON each, built by PostgreSQL, one every `stepUs` microseconds from `startUs`.
 */
export async function fillEdgeLogs(url: string, schema: string, token: string, count: number, startUs: bigint, stepUs: bigint): Promise<void> {
  await fillWith(
    url,
    schema,
    token,
    count,
    startUs,
    stepUs,
    (table) =>
      `INSERT INTO ${table} (id, body, event_message, timestamp)
       SELECT s.id,
              jsonb_build_object(
                'id', s.id, 'timestamp', s.us, 'event_message', s.msg, 'project', 'default', 'appname', 'supabase-kong',
                'metadata', jsonb_build_object(
                  'request', jsonb_build_object(
                    'method', s.method, 'path', s.path, 'search', '?select=*&limit=' || (s.g % 100),
                    'protocol', 'HTTP/1.1', 'host', 'default.supabase.co', 'url', 'https://default.supabase.co' || s.path,
                    'headers', jsonb_build_object(
                      'cf_connecting_ip', s.ip, 'x_real_ip', s.ip, 'user_agent', s.ua, 'referer', 'https://app.example.com/',
                      'accept', 'application/json', 'x_client_info', 'supabase-js-web/2.46.1', 'x_forwarded_proto', 'https',
                      'host', 'default.supabase.co')),
                  'response', jsonb_build_object(
                    'status_code', s.status, 'origin_time', s.g % 250,
                    'headers', jsonb_build_object(
                      'content_type', 'application/json; charset=utf-8', 'date', to_char(s.ts, 'Dy, DD Mon YYYY HH24:MI:SS "GMT"'),
                      'x_kong_proxy_latency', (s.g % 5)::text, 'x_kong_upstream_latency', (s.g % 250)::text)))),
              s.msg, s.ts
         FROM (
           SELECT g, id, us, ts, method, path, ip, ua, status,
                  format('%s - - [%s] "%s %s HTTP/1.1" %s %s "https://app.example.com/" "%s"',
                         ip, to_char(ts, 'DD/Mon/YYYY:HH24:MI:SS +0000'), method, path, status, 200 + g % 5000, ua) AS msg
             FROM (
               SELECT g, gen_random_uuid()::text AS id, $1::bigint + g * $2::bigint AS us,
                      'epoch'::timestamp + ($1::bigint + g * $2::bigint) * interval '1 microsecond' AS ts,
                      (ARRAY['GET', 'GET', 'GET', 'POST', 'PATCH', 'DELETE'])[1 + g % 6] AS method,
                      (ARRAY['/rest/v1/todos', '/rest/v1/profiles', '/auth/v1/token', '/storage/v1/object/avatars/a.png', '/realtime/v1/websocket'])[1 + g % 5] AS path,
                      format('%s.%s.%s.%s', 10 + g % 200, g % 256, (g / 256) % 256, 1 + g % 254) AS ip,
                      (ARRAY['Mozilla/5.0 (X11; Linux x86_64; rv:132.0) Gecko/20100101 Firefox/132.0', 'supabase-js/2.46.1', 'curl/8.5.0'])[1 + g % 3] AS ua,
                      (ARRAY[200, 200, 200, 201, 204, 304, 400, 401, 404, 500])[1 + g % 10] AS status
                 FROM generate_series(0, $3::int - 1) AS g
             ) a
         ) s`,
  );
}

function quote(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** Unix microseconds of an ISO-8601 UTC text with up to six fractional digits. */
export function isoToMicros(iso: string): bigint {
  const m = /^(.*?)(?:\.(\d{1,6}))?Z$/.exec(iso);
  if (!m) throw new Error(`not an ISO UTC time: ${iso}`);
  const whole = BigInt(Date.parse(`${m[1]}Z`));
  return whole * 1000n + BigInt((m[2] ?? '').padEnd(6, '0') || '0');
}

/**
 * `count` Supabase events of `source` as Logflare stores them: `body` holds the event with a v4
 * `id` and `timestamp` in integer microseconds; the columns repeat them.
 */
export function logflareRows(source: SourceName, count: number, options: { seed: number; days?: number; now?: number }): LogflareRow[] {
  const rows: LogflareRow[] = [];
  const gen = generateEvents({ count, seed: options.seed, days: options.days ?? 3, now: options.now ?? Date.now(), projects: ['default'], sources: [source] });
  for (const { event } of gen) rows.push(logflareRow(event));
  return rows;
}

/** One generated event as Logflare's Postgres backend stores it. */
export function logflareRow(event: DemoEvent): LogflareRow {
  const id = randomUUID();
  const timestampUs = isoToMicros(String(event.timestamp));
  // Logflare's body: the event with its id and the timestamp as integer microseconds.
  const body = { ...event, id, timestamp: Number(timestampUs) };
  const msg = typeof event.event_message === 'string' ? event.event_message : null;
  return { id, timestampUs, eventMessage: msg, body };
}
