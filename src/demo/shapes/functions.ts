/**
 * Edge functions: `deno-relay-logs` (request lines and runtime console output; the project is in
 * `metadata.project_ref`) and `deno-subhosting-events` (boot/log/shutdown events, same filter field).
 */
import type { DemoEvent, EventContext, Json } from './context.ts';
import { millisIso } from './context.ts';

const consoleLines = [
  'serving the request with /home/deno/functions/main',
  'Listening on http://localhost:9999/',
  'sending email to user',
  'stripe event received: checkout.session.completed',
  'resized image to 256x256',
  "TypeError: Cannot read properties of undefined (reading 'id')",
];

function deploymentId(project: string, fn: string): string {
  return `${project}_${fn.replace(/-/g, '_')}_3`;
}

export function functionRelayEvent(ctx: EventContext): DemoEvent {
  const { rng, pools } = ctx;
  const fn = rng.pick(pools.functions);
  if (rng.chance(0.3)) {
    return {
      timestamp: ctx.iso,
      appname: 'supabase-edge-functions',
      event_message: rng.pick(consoleLines),
      metadata: { project_ref: ctx.project },
    };
  }
  const method = rng.chance(0.1) ? 'OPTIONS' : 'POST';
  const u = rng.next();
  const status = method === 'OPTIONS' ? 200 : u < 0.03 ? rng.pick([500, 502, 546]) : u < 0.08 ? rng.pick([400, 401, 404]) : 200;
  const host = `${ctx.project}.supabase.co`;
  const url = `https://${host}/functions/v1/${fn}`;
  return {
    timestamp: ctx.iso,
    appname: 'supabase-edge-functions',
    event_message: `${method} | ${status} | ${url}`,
    metadata: {
      project_ref: ctx.project,
      function_id: `fn-${fn}`,
      deployment_id: deploymentId(ctx.project, fn),
      version: '3',
      execution_time_ms: Math.round(rng.skewed(120)),
      request: {
        method,
        pathname: `/functions/v1/${fn}`,
        url,
        host,
        protocol: 'https:',
        headers: { accept: '*/*', host, user_agent: rng.pick(pools.userAgents), x_forwarded_for: rng.pick(pools.clientIps) },
      },
      response: {
        status_code: status,
        headers: { content_type: 'application/json', server: 'deno/gcp-europe-west3', vary: 'Accept-Encoding' },
      },
    },
  };
}

export function functionEventsEvent(ctx: EventContext): DemoEvent {
  const { rng, pools } = ctx;
  const fn = rng.pick(pools.functions);
  const u = rng.next();
  const eventType = u < 0.1 ? 'Boot' : u < 0.15 ? 'Shutdown' : 'Log';
  const level = eventType !== 'Log' ? 'info' : rng.pick(['log', 'log', 'info', 'warning', 'error']);
  const message =
    eventType === 'Boot' ? `booted (time: ${rng.range(12, 90)}ms)` : eventType === 'Shutdown' ? 'shutdown (reason: EarlyDrop)' : rng.pick(consoleLines);
  const metadata: { [key: string]: Json } = {
    project_ref: ctx.project,
    function_id: `fn-${fn}`,
    deployment_id: deploymentId(ctx.project, fn),
    execution_id: rng.uuid(),
    event_type: eventType,
    level,
    region: rng.pick(['eu-central-1', 'us-east-1', 'ap-southeast-1']),
    timestamp: millisIso(ctx.iso),
    version: '3',
  };
  return { timestamp: ctx.iso, event_message: message, metadata };
}
