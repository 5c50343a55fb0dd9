/**
 * A ClickHouse HTTP front over chDB, for tests only: an HTTP server on loopback that speaks the
 * part of ClickHouse's HTTP interface `@clickhouse/client` uses, and runs every statement in a
 * real chDB session (ClickHouse 26.7's own parser, analyser, storage and errors).
 *
 * Why it exists: no ClickHouse server can run on this machine (Debian's `clickhouse-server` is
 * 18.16 from 2018: no `JSON` type, no `{name:Type}` query parameters), and chDB runs inside the
 * process. With this front the service runs with `CLICKHOUSE_URL=http://127.0.0.1:<port>` exactly
 * as against a server: its HTTP client, connection pool, keep-alive, error parsing and start-up
 * checks all take the server path, and a stopped front is a server that went away (closed port).
 *
 * What it speaks: `GET /ping`; `GET`/`POST /` with the query in the `query` URL parameter and/or
 * the body (joined by a newline, so `INSERT … FORMAT JSONEachRow` + rows works), `param_<name>`
 * query parameters (their text, as the server reads it), any other URL parameter as a setting for
 * that request only, `database`, `default_format`, `query_id`, basic auth or `X-ClickHouse-User` /
 * `X-ClickHouse-Key`, gzip request bodies and (with `enable_http_compression=1`) responses. It
 * answers with `X-ClickHouse-Query-Id`, `X-ClickHouse-Summary`, `X-ClickHouse-Format`,
 * `X-ClickHouse-Timezone`, and on error `X-ClickHouse-Exception-Code` with the server's
 * `Code: N. DB::Exception: … (TYPE)` body.
 *
 * Where it differs from a server, none of which Quarry relies on: the result is sent once the
 * statement has finished (as with `wait_end_of_query=1`), not streamed; a dropped client does not
 * cancel a running statement; several statements separated by `;` are accepted; there are no
 * sessions (`session_id`), roles, quotas or multipart parameters. Users are a fixed list; a user
 * marked `readonly` runs with ClickHouse's own `readonly = 1` setting, so every write or setting
 * change it tries is refused by ClickHouse itself (`READONLY`).
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { createRequire } from 'node:module';
import type { Socket } from 'node:net';
import { gunzipSync, gzipSync } from 'node:zlib';

interface ChdbResult {
  bytes(): Uint8Array;
  rowsRead?: number;
  bytesRead?: number;
  elapsed?: number;
}

interface ChdbSession {
  queryAsync(sql: string, options: { format: string }): Promise<ChdbResult>;
  close(): void;
}

export interface FrontUser {
  password: string;
  /** Runs with ClickHouse's `readonly = 1`: reads only, and no setting may be changed. */
  readonly?: boolean;
}

export interface ClickHouseFrontOptions {
  /** chDB data directory (one per process: nothing else in the process may open another). */
  path: string;
  /** Default: `default` with an empty password. */
  users?: Record<string, FrontUser>;
  /** chDB sessions per user (statements run one at a time on each); default 4. */
  sessions?: number;
}

export interface ClickHouseFront {
  /** http://127.0.0.1:<port> */
  readonly url: string;
  readonly port: number;
  /** Requests answered so far. */
  readonly requests: () => number;
  /**
   * The next `n` inserts are executed, then their connection is dropped instead of answered: an
   * answer lost on the way back (the client sees a reset socket, not a refusal).
   */
  loseInsertAnswers(n: number): void;
  /** Stops listening and drops every open connection: the port refuses connections. */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  start(): Promise<void>;
  /** Stops and closes the chDB sessions. */
  close(): Promise<void>;
}

/** URL parameters that are not settings. */
const RESERVED = new Set(['query', 'query_id', 'database', 'default_format', 'user', 'password', 'session_id', 'role', 'quota_key']);
/** Settings of the HTTP layer, with no meaning for the engine. */
const HTTP_ONLY = new Set([
  'wait_end_of_query',
  'send_progress_in_http_headers',
  'http_headers_progress_interval_ms',
  'enable_http_compression',
  'http_zlib_compression_level',
  'http_response_buffer_size',
  'cancel_http_readonly_queries_on_client_close',
]);

/** HTTP statuses the server gives some exception types (others: 500). */
const STATUS_BY_TYPE: Record<string, number> = {
  SYNTAX_ERROR: 400,
  UNKNOWN_QUERY_PARAMETER: 400,
  BAD_QUERY_PARAMETER: 400,
  CANNOT_PARSE_INPUT_ASSERTION_FAILED: 400,
  UNKNOWN_TABLE: 404,
  UNKNOWN_DATABASE: 404,
  AUTHENTICATION_FAILED: 403,
  ACCESS_DENIED: 403,
  READONLY: 403,
  UNKNOWN_SETTING: 400,
  TIMEOUT_EXCEEDED: 500,
};

const SETTING_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

function literal(text: string): string {
  return `'${text.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
}

class FrontError extends Error {
  constructor(
    readonly code: number,
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

/** chDB's error → the server's exception text, code and type. */
function exceptionOf(e: unknown): { code: number; type: string; text: string } {
  if (e instanceof FrontError) return { code: e.code, type: e.type, text: `Code: ${e.code}. DB::Exception: ${e.message}. (${e.type})` };
  const message = e instanceof Error ? e.message : String(e);
  const m = /^Code: (\d+)\. DB::Exception: .*\(([A-Z0-9_]+)\)/s.exec(message);
  if (m) return { code: Number(m[1]), type: m[2] as string, text: message };
  return { code: 1001, type: 'STD_EXCEPTION', text: `Code: 1001. DB::Exception: ${message}. (STD_EXCEPTION)` };
}

/** A few sessions per user, each running one statement at a time; requests wait their turn. */
class SessionPool {
  private readonly idle: ChdbSession[] = [];
  private readonly all: ChdbSession[] = [];
  private readonly waiting: ((s: ChdbSession) => void)[] = [];

  constructor(
    private readonly open: () => Promise<ChdbSession>,
    private readonly size: number,
  ) {}

  async take(): Promise<ChdbSession> {
    const free = this.idle.pop();
    if (free) return free;
    if (this.all.length < this.size) {
      const placeholder = {} as ChdbSession;
      this.all.push(placeholder);
      try {
        const s = await this.open();
        this.all[this.all.indexOf(placeholder)] = s;
        return s;
      } catch (e) {
        this.all.splice(this.all.indexOf(placeholder), 1);
        throw e;
      }
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  give(s: ChdbSession): void {
    const next = this.waiting.shift();
    if (next) next(s);
    else this.idle.push(s);
  }

  close(): void {
    for (const s of this.all) if (typeof s.close === 'function') s.close();
  }
}

export async function startClickHouseFront(options: ClickHouseFrontOptions): Promise<ClickHouseFront> {
  const require = createRequire(import.meta.url);
  const { Session } = require('chdb') as { Session: new (path: string) => ChdbSession };
  const users = options.users ?? { default: { password: '' } };
  const pools = new Map<string, SessionPool>();
  let answered = 0;
  let inFlight = 0;
  let answersToLose = 0;

  function poolOf(name: string, user: FrontUser): SessionPool {
    let pool = pools.get(name);
    if (!pool) {
      pool = new SessionPool(async () => {
        const s = new Session(options.path);
        // The user's profile: ClickHouse refuses writes and setting changes from here on.
        if (user.readonly) await s.queryAsync('SET readonly = 1', { format: 'TabSeparated' });
        return s;
      }, options.sessions ?? 4);
      pools.set(name, pool);
    }
    return pool;
  }

  function authenticate(req: http.IncomingMessage, url: URL): [string, FrontUser] {
    let name = url.searchParams.get('user') ?? undefined;
    let password = url.searchParams.get('password') ?? undefined;
    const basic = /^Basic (.+)$/i.exec(req.headers.authorization ?? '');
    if (basic) {
      const decoded = Buffer.from(basic[1] as string, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      name = decoded.slice(0, colon < 0 ? undefined : colon);
      password = colon < 0 ? '' : decoded.slice(colon + 1);
    }
    name ??= (req.headers['x-clickhouse-user'] as string | undefined) ?? 'default';
    password ??= (req.headers['x-clickhouse-key'] as string | undefined) ?? '';
    const user = users[name];
    if (user === undefined || user.password !== password) {
      throw new FrontError(516, 'AUTHENTICATION_FAILED', `${name}: Authentication failed: password is incorrect, or there is no user with such name`);
    }
    return [name, user];
  }

  async function body(req: http.IncomingMessage): Promise<string> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks);
    const encoding = req.headers['content-encoding'];
    if (encoding === 'gzip') return gunzipSync(raw).toString('utf8');
    if (encoding !== undefined && encoding !== 'identity') {
      throw new FrontError(1001, 'STD_EXCEPTION', `the test front does not decode Content-Encoding ${encoding}`);
    }
    return raw.toString('utf8');
  }

  async function execute(req: http.IncomingMessage, url: URL): Promise<{ output: Buffer; format: string; result: ChdbResult }> {
    const [name, user] = authenticate(req, url);
    if ((req.headers['content-type'] ?? '').startsWith('multipart/')) {
      throw new FrontError(1001, 'STD_EXCEPTION', 'the test front takes query parameters in the URL only, not as multipart');
    }
    const text = await body(req);
    const sql = [url.searchParams.get('query') ?? '', text].filter((t) => t !== '').join('\n');
    if (sql.trim() === '') throw new FrontError(62, 'SYNTAX_ERROR', 'Empty query');
    const format = url.searchParams.get('default_format') ?? 'TabSeparated';
    const statements: string[] = [];
    const changed: string[] = [];
    for (const [key, value] of url.searchParams) {
      if (key.startsWith('param_')) {
        statements.push(`SET ${key} = ${literal(value)}`);
      } else if (!RESERVED.has(key) && !HTTP_ONLY.has(key)) {
        if (!SETTING_NAME.test(key)) throw new FrontError(115, 'UNKNOWN_SETTING', `Unknown setting '${key}'`);
        statements.push(`SET ${key} = ${literal(value)}`);
        changed.push(key);
      }
    }
    const database = url.searchParams.get('database');
    if (database !== null && database !== '') statements.push(`USE \`${database.replaceAll('`', '\\`')}\``);
    const pool = poolOf(name, user);
    const session = await pool.take();
    try {
      const result = await session.queryAsync([...statements, sql].join(';\n'), { format });
      return { output: Buffer.from(result.bytes()), format, result };
    } finally {
      // Settings and the database are this request's only, as on a server.
      const reset = [...changed.map((k) => `SET ${k} = DEFAULT`), ...(database ? ['USE default'] : [])];
      if (reset.length > 0 && !user.readonly) await session.queryAsync(reset.join(';\n'), { format: 'TabSeparated' }).catch(() => undefined);
      pool.give(session);
    }
  }

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://front');
    if (url.pathname === '/ping' || (url.pathname === '/' && req.method === 'GET' && !url.searchParams.has('query'))) {
      res.writeHead(200, { 'content-type': 'text/plain; charset=UTF-8' }).end('Ok.\n');
      return;
    }
    if (url.pathname !== '/') {
      res.writeHead(404).end();
      return;
    }
    const queryId = url.searchParams.get('query_id') ?? randomUUID();
    const headers: Record<string, string> = {
      'x-clickhouse-query-id': queryId,
      'x-clickhouse-timezone': 'UTC',
      'x-clickhouse-server-display-name': 'quarry-test-front',
    };
    inFlight++;
    try {
      const { output, format, result } = await execute(req, url);
      if (answersToLose > 0 && /^\s*INSERT\b/i.test(url.searchParams.get('query') ?? '')) {
        answersToLose--;
        req.socket.destroy();
        return;
      }
      const rows = String(result.rowsRead ?? 0);
      const bytes = String(result.bytesRead ?? 0);
      headers['x-clickhouse-format'] = format;
      headers['x-clickhouse-summary'] = JSON.stringify({
        read_rows: rows,
        read_bytes: bytes,
        written_rows: '0',
        written_bytes: '0',
        total_rows_to_read: rows,
        result_rows: rows,
        result_bytes: String(output.length),
        elapsed_ns: String(Math.round((result.elapsed ?? 0) * 1e9)),
      });
      headers['content-type'] = format.startsWith('JSON') ? 'application/json; charset=UTF-8' : 'text/plain; charset=UTF-8';
      let payload = output;
      if (url.searchParams.get('enable_http_compression') === '1' && /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''))) {
        payload = gzipSync(output);
        headers['content-encoding'] = 'gzip';
      }
      res.writeHead(200, headers).end(payload);
    } catch (e) {
      const ex = exceptionOf(e);
      headers['x-clickhouse-exception-code'] = String(ex.code);
      headers['content-type'] = 'text/plain; charset=UTF-8';
      res.writeHead(STATUS_BY_TYPE[ex.type] ?? 500, headers).end(`${ex.text} (version 26.7.1.1 (chdb, test front))\n`);
    } finally {
      inFlight--;
      answered++;
    }
  }

  const sockets = new Set<Socket>();
  let server: http.Server | undefined;
  let port = 0;

  async function listen(): Promise<void> {
    const s = http.createServer((req, res) => {
      handle(req, res).catch((e: unknown) => {
        if (!res.headersSent) res.writeHead(500).end(String(e));
      });
    });
    s.on('connection', (socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => resolve());
    });
    const address = s.address();
    port = typeof address === 'object' && address !== null ? address.port : port;
    server = s;
  }

  async function stop(): Promise<void> {
    const s = server;
    if (!s) return;
    server = undefined;
    const closed = new Promise<void>((resolve) => s.close(() => resolve()));
    for (const socket of sockets) socket.destroy();
    await closed;
  }

  await listen();
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests: () => answered,
    loseInsertAnswers(n) {
      answersToLose = n;
    },
    stop,
    start: listen,
    async close() {
      await stop();
      while (inFlight > 0) await new Promise((r) => setTimeout(r, 10));
      for (const pool of pools.values()) pool.close();
      pools.clear();
    },
  };
}
