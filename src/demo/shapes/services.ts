/**
 * The platform services: `gotrue.logs.prod` (GoTrue JSON lines, merged into metadata; top-level
 * `project`), `realtime.logs.prod` and `storage.logs.prod.2` (project moved into `metadata.project`;
 * storage's `context` is an array of one object).
 */
import type { DemoEvent, EventContext, Json } from './context.ts';
import { millisIso, secondsIso } from './context.ts';

const authRequests: ReadonlyArray<{ method: string; path: string; grant?: string; action?: string }> = [
  { method: 'POST', path: '/token', grant: 'refresh_token', action: 'token_refreshed' },
  { method: 'POST', path: '/token', grant: 'password', action: 'login' },
  { method: 'GET', path: '/user' },
  { method: 'GET', path: '/user' },
  { method: 'POST', path: '/signup', action: 'user_signedup' },
  { method: 'POST', path: '/logout', action: 'logout' },
  { method: 'POST', path: '/otp', action: 'user_recovery_requested' },
  { method: 'GET', path: '/health' },
  { method: 'GET', path: '/settings' },
];

const authErrors = [
  { status: 400, error: 'invalid_grant', msg: 'Invalid login credentials' },
  { status: 400, error: 'invalid_request', msg: 'Email not confirmed' },
  { status: 401, error: 'bad_jwt', msg: 'invalid JWT: unable to parse or verify signature, token has invalid claims: token is expired' },
  { status: 422, error: 'user_already_exists', msg: 'User already registered' },
  { status: 429, error: 'over_request_rate_limit', msg: 'Request rate limit reached' },
  { status: 500, error: 'unexpected_failure', msg: 'Unexpected failure, please check server logs for more information' },
];

export function authEvent(ctx: EventContext): DemoEvent {
  const { rng, pools } = ctx;
  const line: { [key: string]: Json } = {};
  if (rng.chance(0.08)) {
    line.component = 'api';
    line.level = 'info';
    line.msg = rng.pick([
      'Starting server on :9999',
      'GoTrue API started on: 0.0.0.0:9999',
      'cleanup: removed expired sessions',
      'mailer: sent confirmation email',
    ]);
  } else {
    const req = rng.pick(authRequests);
    const failed = rng.chance(0.06) ? rng.pick(authErrors) : undefined;
    const status = failed?.status ?? 200;
    line.component = 'api';
    line.duration = Math.round(rng.skewed(req.path === '/token' ? 40_000_000 : 3_000_000));
    line.level = failed === undefined ? 'info' : status >= 500 ? 'error' : 'warning';
    line.method = req.method;
    line.msg = failed === undefined ? 'request completed' : failed.msg;
    line.path = req.path;
    line.referer = rng.pick(pools.referers);
    line.remote_addr = rng.pick(pools.clientIps);
    line.request_id = rng.uuid();
    line.status = status;
    if (failed !== undefined) line.error = failed.error;
    if (req.grant !== undefined) line.grant_type = req.grant;
    if (req.action !== undefined && failed === undefined) {
      const user = rng.pick(pools.users);
      line.auth_event = {
        action: req.action,
        actor_id: user.id,
        actor_username: user.email,
        actor_via_sso: false,
        log_type: req.action === 'login' || req.action === 'logout' ? 'account' : 'token',
        traits: { provider: rng.pick(['email', 'email', 'google', 'github']), user_email: user.email, user_id: user.id },
      };
      if (req.action === 'login') line.login_method = 'password';
    }
  }
  line.time = secondsIso(ctx.iso);
  const metadata: { [key: string]: Json } = { timestamp: secondsIso(ctx.iso), host: `auth-${ctx.project}` };
  for (const key of Object.keys(line)) metadata[key] = line[key] as Json;
  return {
    timestamp: ctx.iso,
    project: ctx.project,
    appname: 'supabase-auth',
    event_message: JSON.stringify(line),
    metadata,
  };
}

const realtimeLines = [
  { level: 'info', msg: 'Billing metrics: [[:realtime, :connections, :count]]' },
  { level: 'info', msg: 'Joining channel realtime:public:messages' },
  { level: 'info', msg: 'Subscribed to PostgreSQL changes on public.messages' },
  { level: 'info', msg: 'Starting Realtime.Tenants.Connect for tenant realtime-dev' },
  { level: 'debug', msg: 'Presence sync: 12 users in room lobby' },
  { level: 'warning', msg: 'RlsPolicyErrorMessage: Unable to fetch RLS policies, retrying' },
  { level: 'error', msg: 'UnableToConnectToProject: Realtime was unable to connect to the project database' },
  { level: 'error', msg: 'ChannelRateLimitReached: Too many channels' },
];

export function realtimeEvent(ctx: EventContext): DemoEvent {
  const { rng } = ctx;
  const line = rng.pick(realtimeLines);
  const metadata: { [key: string]: Json } = {
    project: ctx.project,
    external_id: ctx.project,
    level: line.level,
  };
  if (line.msg.startsWith('Billing')) {
    const connected = rng.range(0, 400);
    metadata.measurements = { connected, connected_cluster: connected, limit: 500, sum: connected };
  }
  return {
    timestamp: ctx.iso,
    appname: 'realtime-dev.supabase-realtime',
    event_message: `${ctx.iso.slice(11, 23)} project=${ctx.project} external_id=${ctx.project} [${line.level}] ${line.msg}`,
    metadata,
  };
}

export function storageEvent(ctx: EventContext): DemoEvent {
  const { rng, pools } = ctx;
  const reqId = `req-${rng.hex(4)}`;
  const message = rng.chance(0.15)
    ? rng.pick([
        'Server listening at http://0.0.0.0:5000',
        'content-type is text/plain;charset=UTF-8',
        'Object not found',
        'The resource already exists',
        'Invalid JWT',
      ])
    : `${rng.pick(['GET', 'GET', 'POST', 'DELETE'])} | ${rng.pick([200, 200, 200, 201, 400, 404, 500])} | ${rng.pick(pools.clientIps)} | ${reqId} | /object/${rng.pick(['avatars', 'documents', 'public-assets'])}/${rng.hex(8)} | ${rng.pick(pools.userAgents)}`;
  const level = message.includes('not found') || message.includes('Invalid') ? 'error' : 'info';
  return {
    timestamp: ctx.iso,
    appname: 'supabase-storage',
    event_message: message,
    metadata: {
      project: ctx.project,
      tenantId: ctx.project,
      level,
      reqId,
      timestamp: millisIso(ctx.iso),
      context: [{ host: `storage-${ctx.project.slice(0, 8)}`, pid: rng.range(1, 64) }],
    },
  };
}
