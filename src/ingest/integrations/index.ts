/** Every integration route (`POST {prefix}/<path>`) and the mapping from its request to events. */
import { browserReportEvents } from './browser-reports.ts';
import { cloudEventEvents } from './cloud-event.ts';
import { cloudflareEvents } from './cloudflare.ts';
import { githubEvents } from './github.ts';
import { genericJsonEvents } from './json.ts';
import { netlifyEvents } from './netlify.ts';
import type { IntegrationRequest, RawEvent } from './shared.ts';
import { syslogEvents } from './syslog.ts';
import { typecastEvents } from './typecasts.ts';
import { vectorEvents } from './vector.ts';
import { vercelEvents } from './vercel.ts';

export type { IntegrationRequest };

export interface Integration {
  path: string;
  summary: string;
  events(req: IntegrationRequest): RawEvent[];
}

export const integrations: readonly Integration[] = [
  { path: '/json', summary: 'LogLayer and other JSON senders: each event kept under metadata', events: genericJsonEvents },
  { path: '/vector', summary: "Vector's HTTP sink (JSON array or NDJSON)", events: vectorEvents },
  { path: '/cloudflare', summary: 'Cloudflare Logpush (NDJSON)', events: cloudflareEvents },
  { path: '/cloud-event', summary: 'CloudEvents, binary or structured mode', events: cloudEventEvents },
  { path: '/vercel', summary: 'Vercel log drain', events: vercelEvents },
  { path: '/zeit', summary: 'Vercel log drain (its old name)', events: vercelEvents },
  { path: '/netlify', summary: 'Netlify log drain', events: netlifyEvents },
  { path: '/github', summary: 'GitHub webhook', events: githubEvents },
  { path: '/browser/reports', summary: 'Browser reports: CSP and the Reporting API', events: browserReportEvents },
  { path: '/logplex', summary: "Heroku's Logplex drain (octet-counted RFC 5424 syslog)", events: syslogEvents },
  { path: '/syslog', summary: 'Syslog drain (the old name of /logplex)', events: syslogEvents },
  { path: '/syslogs', summary: 'Syslog drain (RFC 5424, framed or one per line)', events: syslogEvents },
  { path: '/typecasts', summary: 'Events with string → float casts', events: typecastEvents },
];
