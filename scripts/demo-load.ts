/**
 * `npm run demo`: loads realistic Supabase-shaped demo logs into a running Quarry through its
 * ingest API, then shows a ready-to-paste `curl` that reads them back through `logs.all`.
 *
 *   npm start                 # in one terminal
 *   npm run demo              # in another: 20,000 events for project `default`
 *
 * Options: --events N, --days N, --project NAME, --seed N, --token T, --url URL.
 * Environment, read as `npm start` reads it: PORT, HOST and DATA_DIR (where the generated token is),
 * LOGFLARE_PRIVATE_ACCESS_TOKEN; QUARRY_URL (or --url) overrides PORT and HOST for a remote service.
 */
import { existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { type Config, generatedTokenPath, loadConfig } from '../src/config.ts';
import { generateBatches } from '../src/demo/generator.ts';
import { IngestError, ingestBatches } from '../src/demo/ingest-client.ts';

interface TokenChoice {
  token: string;
  /** How to write the token in the printed curl without echoing the secret. */
  shell: string;
}

function findToken(flag: string | undefined, config: Config): TokenChoice | undefined {
  if (flag !== undefined && flag !== '') return { token: flag, shell: '<your token>' };
  const env = process.env.LOGFLARE_PRIVATE_ACCESS_TOKEN;
  if (env !== undefined && env !== '') return { token: env, shell: '$LOGFLARE_PRIVATE_ACCESS_TOKEN' };
  const file = generatedTokenPath(config);
  if (existsSync(file)) {
    const token = readFileSync(file, 'utf8').trim();
    if (token !== '') return { token, shell: `$(cat '${file}')` };
  }
  return undefined;
}

/** The service `npm start` runs with this environment: HOST and PORT, as it listens. */
function serviceUrl(config: Config): string {
  const listenAll = config.host === '0.0.0.0' || config.host === '::' || config.host === '';
  const host = listenAll ? '127.0.0.1' : config.host.includes(':') ? `[${config.host}]` : config.host;
  return `http://${host}:${config.port}`;
}

function positive(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} must be a positive number, got "${raw}"`);
  return n;
}

async function isUp(baseUrl: string): Promise<boolean> {
  try {
    const res = await fetch(`${baseUrl}/health`, { signal: AbortSignal.timeout(3_000) });
    return res.ok;
  } catch {
    return false;
  }
}

async function countRows(baseUrl: string, token: string, project: string): Promise<number | string> {
  try {
    const res = await fetch(`${baseUrl}/api/endpoints/query/logs.all?project=${encodeURIComponent(project)}`, {
      headers: { 'x-api-key': token },
      signal: AbortSignal.timeout(10_000),
    });
    if (!res.ok) return `HTTP ${res.status}`;
    const body = (await res.json()) as { result?: unknown[] };
    return Array.isArray(body.result) ? body.result.length : 'an unexpected answer';
  } catch (e) {
    return (e as Error).message;
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      events: { type: 'string' },
      days: { type: 'string' },
      project: { type: 'string' },
      seed: { type: 'string' },
      token: { type: 'string' },
      url: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help === true) {
    console.log('Usage: npm run demo -- [--events 20000] [--days 3] [--project default] [--seed N] [--token T] [--url URL]');
    return;
  }
  const count = Math.floor(positive('events', values.events, 20_000));
  const days = positive('days', values.days, 3);
  const seed = Math.floor(positive('seed', values.seed, Date.now() % 1_000_000));
  const project = values.project ?? 'default';
  let config: Config;
  try {
    config = loadConfig();
  } catch (e) {
    console.error(`The environment is not one \`npm start\` would accept: ${(e as Error).message}`);
    process.exit(1);
  }
  const explicit = values.url ?? (process.env.QUARRY_URL || undefined);
  const baseUrl = (explicit ?? serviceUrl(config)).replace(/\/+$/, '');

  if (!(await isUp(baseUrl))) {
    const how = explicit === undefined ? 'PORT and HOST as for `npm start`, or --url' : '--url or QUARRY_URL';
    console.error(`Quarry does not answer at ${baseUrl}/health. Start it first with \`npm start\` (the address comes from ${how}).`);
    process.exit(1);
  }
  const choice = findToken(values.token, config);
  if (choice === undefined) {
    console.error(
      'No access token found. Pass --token <token>, set LOGFLARE_PRIVATE_ACCESS_TOKEN, or run this from the\n' +
        'directory where `npm start` generated its token (it keeps it under DATA_DIR).',
    );
    process.exit(1);
  }

  console.log(`Loading ${count.toLocaleString('en')} demo events for project "${project}" over the last ${days} days into ${baseUrl} ...`);
  const tty = process.stdout.isTTY === true;
  let lastShown = 0;
  const batches = generateBatches({ count, seed, days, projects: [project], burstFraction: 0.3 }, 500);
  try {
    const result = await ingestBatches(batches, {
      baseUrl,
      token: choice.token,
      concurrency: 4,
      onProgress: (p) => {
        const now = performance.now();
        if (now - lastShown < 250 && p.events < count) return;
        lastShown = now;
        const pct = Math.round((p.events / count) * 100);
        const line = `  ${p.events.toLocaleString('en')} / ${count.toLocaleString('en')} events (${pct}%)`;
        if (tty) process.stdout.write(`\r${line}`);
        else if (pct % 25 === 0 || p.events === count) console.log(line);
      },
    });
    if (tty) process.stdout.write('\n');
    const rate = Math.round(result.events / (result.elapsedMs / 1000));
    console.log(
      `Done: ${result.events.toLocaleString('en')} events in ${result.requests} requests, ${(result.elapsedMs / 1000).toFixed(1)} s (${rate.toLocaleString('en')} events/s).`,
    );
  } catch (e) {
    if (tty) process.stdout.write('\n');
    if (e instanceof IngestError && (e.status === 401 || e.status === 403)) {
      console.error(`The service refused the token (${e.status}). Pass the private token with --token.`);
    } else {
      console.error(`Loading stopped: ${(e as Error).message}`);
    }
    process.exit(1);
  }

  const rows = await countRows(baseUrl, choice.token, project);
  if (typeof rows === 'number') console.log(`logs.all now returns ${rows} rows for project "${project}".`);
  else console.log(`(logs.all could not be read back yet: ${rows})`);
  const url = `${baseUrl}/api/endpoints/query/logs.all`;
  console.log(`
Explore them: open ${baseUrl}/ in a browser (logs.all, project "${project}").

See the newest edge logs:

  curl -s -H "X-API-KEY: ${choice.shell}" "${url}?project=${encodeURIComponent(project)}"

Or ask with Studio-style SQL (status codes per minute over the last hour):

  curl -s -H "X-API-KEY: ${choice.shell}" -G "${url}" \\
    --data-urlencode "project=${project}" \\
    --data-urlencode "iso_timestamp_start=$(date -u -d '1 hour ago' +%Y-%m-%dT%H:%M:%SZ)" \\
    --data-urlencode "sql=select timestamp_trunc(t.timestamp, minute) as minute, count(*) as requests, countif(r.status_code >= 500) as errors from edge_logs t cross join unnest(t.metadata) as m cross join unnest(m.response) as r group by minute order by minute"
`);
}

main().catch((e: unknown) => {
  console.error(`Demo load failed: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});
