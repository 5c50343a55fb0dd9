/**
 * The database tier: `postgres.logs` (parsed csvlog records with severities), `postgREST.logs.prod`
 * and `pgbouncer.logs.prod`. All three carry a top-level `project`.
 */
import { Weighted } from '../random.ts';
import type { DemoEvent, EventContext, Json } from './context.ts';
import { millisIso, postgresTime } from './context.ts';

interface PgLine {
  severity: string;
  message: string;
  state: string;
  command?: string;
  query?: string;
  detail?: string;
  hint?: string;
  backend: string;
  user: string;
  app: string;
}

const pgLines = new Weighted<PgLine>([
  [{ severity: 'LOG', message: 'checkpoint starting: time', state: '00000', backend: 'checkpointer', user: '', app: '' }, 3],
  [
    {
      severity: 'LOG',
      message: 'checkpoint complete: wrote 42 buffers (0.3%); 0 WAL file(s) added, 0 removed, 0 recycled; write=4.104 s, sync=0.004 s, total=4.121 s',
      state: '00000',
      backend: 'checkpointer',
      user: '',
      app: '',
    },
    3,
  ],
  [{ severity: 'LOG', message: 'connection received: host=172.18.0.6 port=51234', state: '00000', backend: 'not initialized', user: '', app: '' }, 6],
  [
    {
      severity: 'LOG',
      message: 'connection authorized: user=authenticator database=postgres application_name=PostgREST 12.2.3',
      state: '00000',
      command: 'authentication',
      backend: 'client backend',
      user: 'authenticator',
      app: 'PostgREST 12.2.3',
    },
    6,
  ],
  [
    {
      severity: 'LOG',
      message: 'disconnection: session time: 0:00:12.345 user=authenticator database=postgres host=172.18.0.6 port=51234',
      state: '00000',
      command: 'idle',
      backend: 'client backend',
      user: 'authenticator',
      app: 'PostgREST 12.2.3',
    },
    4,
  ],
  [
    {
      severity: 'LOG',
      message: "cron job 3 starting: SELECT net.http_post(url := 'https://example.com/hook')",
      state: '00000',
      backend: 'pg_cron',
      user: 'postgres',
      app: 'pg_cron',
    },
    2,
  ],
  [
    {
      severity: 'LOG',
      message: 'automatic vacuum of table "postgres.public.orders": index scans: 1',
      state: '00000',
      backend: 'autovacuum worker',
      user: '',
      app: '',
    },
    1.5,
  ],
  [
    {
      severity: 'LOG',
      message: "duration: 1532.112 ms  statement: select * from orders where created_at > now() - interval '30 days'",
      state: '00000',
      command: 'SELECT',
      query: "select * from orders where created_at > now() - interval '30 days'",
      backend: 'client backend',
      user: 'postgres',
      app: 'psql',
    },
    1,
  ],
  [
    {
      severity: 'WARNING',
      message: 'there is no transaction in progress',
      state: '25P01',
      command: 'COMMIT',
      backend: 'client backend',
      user: 'postgres',
      app: 'postgres-meta',
    },
    1,
  ],
  [
    {
      severity: 'WARNING',
      message: 'SET LOCAL can only be used in transaction blocks',
      state: '25P01',
      command: 'SET',
      backend: 'client backend',
      user: 'authenticator',
      app: 'PostgREST 12.2.3',
    },
    0.6,
  ],
  [
    {
      severity: 'NOTICE',
      message: 'relation "todos" already exists, skipping',
      state: '42P07',
      command: 'CREATE TABLE',
      backend: 'client backend',
      user: 'postgres',
      app: 'supabase-migrations',
    },
    0.5,
  ],
  [
    {
      severity: 'ERROR',
      message: 'duplicate key value violates unique constraint "profiles_pkey"',
      state: '23505',
      command: 'INSERT',
      query: 'insert into profiles (id, username) values ($1, $2)',
      detail: 'Key (id)=(42) already exists.',
      backend: 'client backend',
      user: 'authenticator',
      app: 'PostgREST 12.2.3',
    },
    0.8,
  ],
  [
    {
      severity: 'ERROR',
      message: 'permission denied for table invoices',
      state: '42501',
      command: 'SELECT',
      query: 'select * from invoices',
      backend: 'client backend',
      user: 'authenticator',
      app: 'PostgREST 12.2.3',
    },
    0.6,
  ],
  [
    {
      severity: 'ERROR',
      message: 'column "stauts" does not exist',
      state: '42703',
      command: 'SELECT',
      query: 'select stauts from orders',
      hint: 'Perhaps you meant to reference the column "orders.status".',
      backend: 'client backend',
      user: 'postgres',
      app: 'psql',
    },
    0.4,
  ],
  [
    {
      severity: 'ERROR',
      message: 'canceling statement due to statement timeout',
      state: '57014',
      command: 'SELECT',
      query: 'select count(*) from events',
      backend: 'client backend',
      user: 'authenticator',
      app: 'PostgREST 12.2.3',
    },
    0.3,
  ],
  [
    {
      severity: 'FATAL',
      message: 'password authentication failed for user "postgres"',
      state: '28P01',
      command: 'authentication',
      detail: 'Connection matched pg_hba.conf line 89: "host all all 0.0.0.0/0 scram-sha-256"',
      backend: 'client backend',
      user: 'postgres',
      app: '',
    },
    0.15,
  ],
  [
    {
      severity: 'FATAL',
      message: 'terminating connection due to administrator command',
      state: '57P01',
      command: 'idle',
      backend: 'client backend',
      user: 'supabase_admin',
      app: '',
    },
    0.05,
  ],
  [
    {
      severity: 'PANIC',
      message: 'could not write to file "pg_wal/xlogtemp.123": No space left on device',
      state: '53100',
      backend: 'walwriter',
      user: '',
      app: '',
    },
    0.005,
  ],
]);

export function postgresEvent(ctx: EventContext): DemoEvent {
  const { rng } = ctx;
  const line = pgLines.pick(rng);
  const pid = rng.range(20, 9_999);
  const client = line.backend === 'client backend';
  const parsed: { [key: string]: Json } = {
    timestamp: postgresTime(ctx.iso),
    error_severity: line.severity,
    sql_state_code: line.state,
    process_id: pid,
    session_id: `${(ctx.ms / 1000).toString(16).slice(0, 8)}.${pid.toString(16)}`,
    session_line_num: rng.range(1, 40),
    session_start_time: postgresTime(ctx.iso),
    virtual_transaction_id: client ? `${rng.range(1, 30)}/${rng.range(1, 99_999)}` : '',
    transaction_id: 0,
    backend_type: line.backend,
    database_name: client ? 'postgres' : '',
    user_name: line.user,
    application_name: line.app,
  };
  if (client) {
    parsed.connection_from = `172.18.0.${rng.range(2, 12)}:${rng.range(30_000, 60_000)}`;
    parsed.query_id = rng.range(1, 2 ** 31);
  }
  if (line.command !== undefined) parsed.command_tag = line.command;
  if (line.query !== undefined) parsed.query = line.query;
  if (line.detail !== undefined) parsed.detail = line.detail;
  if (line.hint !== undefined) parsed.hint = line.hint;
  return {
    timestamp: ctx.iso,
    project: ctx.project,
    appname: 'supabase-db',
    event_message: `${postgresTime(ctx.iso)} [${pid}] ${line.severity}:  ${line.message}`,
    metadata: { host: `db-${ctx.project}`, parsed },
  };
}

const postgrestLines = [
  'Listening on port 3000',
  'Listening for notifications on the pgrst channel',
  'Connection successful',
  'Config reloaded',
  'Schema cache loaded',
  'Schema cache queried in 12.3 milliseconds',
  'Starting PostgREST 12.2.3...',
  'Attempting to connect to the database...',
  'Successfully connected to PostgreSQL 15.8 on aarch64-unknown-linux-gnu',
];

export function postgrestEvent(ctx: EventContext): DemoEvent {
  const { rng } = ctx;
  if (rng.chance(0.7)) {
    const route = ctx.pools.routes.pick(rng);
    const ip = rng.pick(ctx.pools.internalIps);
    return {
      timestamp: ctx.iso,
      project: ctx.project,
      appname: 'supabase-rest',
      event_message: `${ip} - authenticator [${ctx.iso.slice(0, 19)}] "${route.method} ${route.path.replace('/rest/v1', '')}${route.search} HTTP/1.1" 200 - "" "${rng.pick(ctx.pools.userAgents)}"`,
      metadata: { host: ctx.project },
    };
  }
  return {
    timestamp: ctx.iso,
    project: ctx.project,
    appname: 'supabase-rest',
    event_message: rng.pick(postgrestLines),
    metadata: { host: ctx.project },
  };
}

export function pgbouncerEvent(ctx: EventContext): DemoEvent {
  const { rng } = ctx;
  const conn = `C-0x${rng.hex(12)}`;
  const user = rng.pick(['postgres', 'authenticator', 'supabase_admin', 'pgbouncer']);
  const addr = rng.pick(ctx.pools.internalIps);
  const message = rng.pick([
    `LOG ${conn}: postgres/${user}@${addr}:${rng.range(30_000, 60_000)} login attempt: db=postgres user=${user} tls=no`,
    `LOG ${conn}: postgres/${user}@${addr}:${rng.range(30_000, 60_000)} closing because: client close request (age=${rng.range(0, 900)}s)`,
    `LOG stats: ${rng.range(0, 40)} xacts/s, ${rng.range(0, 120)} queries/s, in ${rng.range(0, 90_000)} B/s, out ${rng.range(0, 400_000)} B/s, xact ${rng.range(100, 9_000)} us, query ${rng.range(80, 4_000)} us, wait ${rng.range(0, 200)} us`,
  ]);
  return {
    timestamp: millisIso(ctx.iso),
    project: ctx.project,
    file: 'pgbouncer.log',
    event_message: message,
    metadata: { host: `db-${ctx.project}` },
  };
}
