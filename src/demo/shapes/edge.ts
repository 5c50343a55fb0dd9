/**
 * `cloudflare.logs.prod`: Kong access lines as Vector ships them, enriched with the platform fields
 * Studio reads (`search`, `url`, `host`, `x_real_ip`, `sb.jwt`, response headers, `origin_time`).
 */
import type { Route } from '../pools.ts';
import type { Rng } from '../random.ts';
import type { DemoEvent, EventContext, Json } from './context.ts';
import { httpDate, nginxTime } from './context.ts';

function statusFor(rng: Rng, route: Route): number {
  const u = rng.next();
  if (u < 0.012) return rng.pick([500, 502, 503, 504, 500, 500]);
  if (u < 0.07) {
    if (route.area === 'auth') return rng.pick([400, 401, 403, 422, 429]);
    if (route.area === 'storage') return rng.pick([400, 404, 404, 403, 413]);
    return rng.pick([400, 401, 404, 406, 409, 404]);
  }
  if (route.method === 'POST') return rng.chance(0.7) ? 201 : 200;
  if (route.method === 'DELETE' || route.method === 'OPTIONS') return 204;
  if (route.area === 'realtime' && route.path.endsWith('websocket')) return 101;
  if (route.area === 'storage' && rng.chance(0.1)) return 304;
  if (route.area === 'rest' && rng.chance(0.05)) return 206;
  return 200;
}

function contentType(route: Route): string {
  if (route.area === 'storage' && route.path.endsWith('.png')) return 'image/png';
  if (route.area === 'storage' && route.path.endsWith('.pdf')) return 'application/pdf';
  return 'application/json; charset=utf-8';
}

function jwt(rng: Rng, role: string, subject: string | null): { [key: string]: Json } {
  const payload: { [key: string]: Json } = {
    algorithm: 'HS256',
    issuer: 'supabase-demo',
    role,
    signature_prefix: rng.hex(6),
  };
  if (subject !== null) payload.subject = subject;
  return { payload };
}

export function edgeEvent(ctx: EventContext): DemoEvent {
  const { rng, pools } = ctx;
  const route = pools.routes.pick(rng);
  const status = statusFor(rng, route);
  const ip = rng.pick(pools.clientIps);
  const ua = rng.pick(pools.userAgents);
  const referer = rng.pick(pools.referers);
  const host = `${ctx.project}.supabase.co`;
  const full = route.path + route.search;
  const bytes = status === 204 || status === 304 ? 0 : rng.range(60, 24_000);
  const latency = Math.max(1, Math.round(rng.skewed(route.area === 'functions' ? 180 : 24)));
  const signedIn = rng.chance(0.55);
  const user = rng.pick(pools.users);
  const sb: { [key: string]: Json } = {
    jwt: {
      apikey: jwt(rng, signedIn || rng.chance(0.5) ? 'anon' : 'service_role', null),
      ...(signedIn ? { authorization: jwt(rng, 'authenticated', user.id) } : {}),
    },
  };
  const responseHeaders: { [key: string]: Json } = {
    content_type: contentType(route),
    date: httpDate(ctx.ms),
    x_kong_proxy_latency: String(rng.range(0, 3)),
    x_kong_upstream_latency: String(latency),
    sb_gateway_version: '1',
  };
  if (route.area === 'storage') responseHeaders.cf_cache_status = rng.pick(['HIT', 'MISS', 'DYNAMIC']);
  if (route.area === 'rest' && route.method === 'GET') responseHeaders.content_range = `0-${rng.int(50)}/*`;
  const message = `${ip} - - [${nginxTime(ctx.iso)}] "${route.method} ${full} HTTP/1.1" ${status} ${bytes} "${referer}" "${ua}"`;
  return {
    timestamp: ctx.iso,
    project: ctx.project,
    appname: 'supabase-kong',
    event_message: message,
    metadata: {
      request: {
        method: route.method,
        path: route.path,
        search: route.search,
        url: `https://${host}${full}`,
        host,
        protocol: 'HTTP/1.1',
        headers: {
          cf_connecting_ip: ip,
          x_real_ip: ip,
          user_agent: ua,
          referer,
          accept: route.area === 'storage' ? '*/*' : 'application/json',
          x_client_info: ua.startsWith('supabase-') ? ua : 'supabase-js-web/2.46.1',
          x_forwarded_proto: 'https',
          host,
        },
        sb,
      },
      response: {
        status_code: status,
        headers: responseHeaders,
        origin_time: latency,
      },
    },
  };
}
