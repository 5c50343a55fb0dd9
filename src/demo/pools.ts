/**
 * Value pools the demo shapes draw from: client addresses, user agents, API routes. Built once per
 * generator from its seed, so a run is deterministic and most strings are shared, not rebuilt.
 */
import type { Rng } from './random.ts';
import { Weighted } from './random.ts';

export interface Route {
  method: string;
  path: string;
  search: string;
  /** Service area the route belongs to, for status and latency choices. */
  area: 'rest' | 'auth' | 'storage' | 'realtime' | 'functions' | 'graphql' | 'pg';
}

export interface Pools {
  /** Client addresses, IPv4 and IPv6 mixed (about one in five is IPv6). */
  clientIps: string[];
  /** Addresses inside the docker network (kong → upstream). */
  internalIps: string[];
  userAgents: string[];
  referers: string[];
  routes: Weighted<Route>;
  tables: string[];
  functions: string[];
  users: { id: string; email: string }[];
}

const userAgents = [
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (X11; Linux x86_64; rv:132.0) Gecko/20100101 Firefox/132.0',
  'supabase-js/2.46.1',
  'supabase-py/2.10.0',
  'Dart/3.5 (dart:io)',
  'curl/8.5.0',
  'node-fetch/1.0 (+https://github.com/bitinn/node-fetch)',
  'okhttp/4.12.0',
  'PostgREST/12.2.3',
  'Deno/2.1.4',
];

const referers = [
  '-',
  'http://localhost:3000/',
  'http://localhost:8000/project/default/editor',
  'https://app.example.com/',
  'https://app.example.com/dashboard',
  'https://www.example.org/checkout',
];

const tables = ['todos', 'profiles', 'orders', 'order_items', 'products', 'messages', 'channels', 'invoices', 'events', 'countries'];

const functions = ['hello-world', 'send-email', 'stripe-webhook', 'resize-image', 'openai-chat'];

function ipv4(rng: Rng): string {
  const first = rng.pick([23, 31, 45, 62, 77, 81, 94, 103, 141, 176, 185, 203, 212]);
  return `${first}.${rng.int(256)}.${rng.int(256)}.${rng.range(1, 254)}`;
}

function ipv6(rng: Rng): string {
  const prefix = rng.pick(['2001:db8', '2a02:c7f', '2600:1700', '2405:201', '2a01:4f8']);
  const groups: string[] = [];
  for (let i = 0; i < 6; i++) groups.push(rng.int(0x10000).toString(16));
  return `${prefix}:${groups.join(':')}`;
}

function buildRoutes(): Weighted<Route> {
  const entries: [Route, number][] = [];
  const add = (method: string, path: string, search: string, area: Route['area'], weight: number) => entries.push([{ method, path, search, area }, weight]);
  for (const t of tables) {
    add('GET', `/rest/v1/${t}`, '?select=*', 'rest', 6);
    add('GET', `/rest/v1/${t}`, `?select=*&id=eq.${t.length * 7}`, 'rest', 3);
    add('GET', `/rest/v1/${t}`, '?select=id,created_at&order=created_at.desc&limit=20', 'rest', 3);
    add('POST', `/rest/v1/${t}`, '', 'rest', 2);
    add('PATCH', `/rest/v1/${t}`, '?id=eq.42', 'rest', 1);
    add('DELETE', `/rest/v1/${t}`, '?id=eq.17', 'rest', 0.3);
    add('HEAD', `/rest/v1/${t}`, '?select=*', 'rest', 0.5);
  }
  add('POST', '/rest/v1/rpc/get_dashboard_stats', '', 'rest', 2);
  add('POST', '/rest/v1/rpc/search_products', '', 'rest', 1.5);
  add('GET', '/rest/v1/', '', 'rest', 0.3);
  add('POST', '/auth/v1/token', '?grant_type=password', 'auth', 5);
  add('POST', '/auth/v1/token', '?grant_type=refresh_token', 'auth', 9);
  add('GET', '/auth/v1/user', '', 'auth', 8);
  add('POST', '/auth/v1/signup', '', 'auth', 1);
  add('POST', '/auth/v1/logout', '', 'auth', 1);
  add('POST', '/auth/v1/otp', '', 'auth', 0.6);
  add('POST', '/auth/v1/recover', '', 'auth', 0.3);
  add('GET', '/auth/v1/settings', '', 'auth', 1);
  add('GET', '/auth/v1/health', '', 'auth', 0.5);
  add('GET', '/storage/v1/object/public/avatars/user-17.png', '', 'storage', 4);
  add('GET', '/storage/v1/object/sign/documents/invoice-2024-11.pdf', '?token=eyJhbGciOi', 'storage', 2);
  add('POST', '/storage/v1/object/avatars/user-42.png', '', 'storage', 1);
  add('POST', '/storage/v1/object/list/avatars', '', 'storage', 1);
  add('GET', '/storage/v1/bucket', '', 'storage', 0.5);
  add('DELETE', '/storage/v1/object/avatars', '', 'storage', 0.2);
  add('GET', '/realtime/v1/websocket', '?apikey=eyJhbGciOi&vsn=1.0.0', 'realtime', 3);
  add('GET', '/realtime/v1/api/tenants/realtime-dev/health', '', 'realtime', 0.5);
  for (const f of functions) add('POST', `/functions/v1/${f}`, '', 'functions', 1);
  add('OPTIONS', '/functions/v1/hello-world', '', 'functions', 0.4);
  add('POST', '/graphql/v1', '', 'graphql', 0.8);
  add('GET', '/pg/tables', '?included_schemas=public', 'pg', 0.3);
  return new Weighted(entries);
}

export function buildPools(rng: Rng): Pools {
  const clientIps: string[] = [];
  for (let i = 0; i < 400; i++) clientIps.push(rng.chance(0.2) ? ipv6(rng) : ipv4(rng));
  const internalIps: string[] = [];
  for (let i = 0; i < 8; i++) internalIps.push(`172.18.0.${i + 2}`);
  const users: Pools['users'] = [];
  const names = ['alice', 'bob', 'carol', 'dave', 'erin', 'frank', 'grace', 'heidi', 'ivan', 'judy'];
  for (let i = 0; i < 200; i++) {
    users.push({ id: rng.uuid(), email: `${names[i % names.length]}.${i}@example.com` });
  }
  return {
    clientIps,
    internalIps,
    userAgents,
    referers,
    routes: buildRoutes(),
    tables,
    functions,
    users,
  };
}
