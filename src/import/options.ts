/**
 * The command line of `npm run import-logflare` → typed options. Environment defaults follow the
 * service's own settings (README, "Configuration"): the Quarry token from
 * LOGFLARE_PRIVATE_ACCESS_TOKEN, else the token file a first start generated under DATA_DIR; the
 * Quarry URL from QUARRY_URL, else 127.0.0.1 on PORT; the Logflare database from Logflare's own
 * POSTGRES_BACKEND_URL / POSTGRES_BACKEND_SCHEMA when set.
 */
import { parseArgs } from 'node:util';
import { ImportError } from './errors.ts';

export interface ImportOptions {
  /** PostgreSQL URL of Logflare's database (`_supabase` in self-hosted Supabase). */
  from: string;
  /** Schema holding Logflare's `sources` table and its `log_events_<token>` tables. */
  schema: string;
  /** Quarry's base URL, without a trailing slash (a path prefix is kept). */
  to: string;
  /** Quarry access token of scope `private`; undefined until resolved by the caller. */
  token: string | undefined;
  /** Only events at or after this instant. */
  since: Date | undefined;
  /** Only these Logflare source names (undefined: all). */
  sources: string[] | undefined;
  /** Read and compare, send nothing. */
  dryRun: boolean;
  /** Create Quarry sources that do not exist yet, instead of stopping. */
  createSources: boolean;
  /** Events per batch: one lookup and (normally) one ingest request each. */
  batchSize: number;
  /** Batches being looked up or sent at once. */
  concurrency: number;
  /** An event whose JSON is larger than this is skipped (it would not fit an ingest request). */
  maxEventBytes: number;
  /** After an ingest request whose answer was lost, wait this long before looking again, ms. */
  settleMs: number;
  /** Keep retrying a busy or unreachable Quarry for this long before giving up, ms. */
  retryForMs: number;
  /** Progress line interval when stderr is not a terminal, ms (a terminal gets a live line). */
  progressIntervalMs: number;
  /** Print the final report as JSON on stdout instead of a table. */
  json: boolean;
  help: boolean;
}

export const USAGE = `Usage: npm run import-logflare -- --from postgres://USER:PASSWORD@HOST:5432/_supabase [options]

Copies the events of a Logflare PostgreSQL backend into a running Quarry through its ingest API,
keeping each event's id and timestamp. Safe to interrupt and run again: events Quarry already
has are not sent twice.

  --from URL              Logflare's database (self-hosted Supabase: database _supabase).
                          Default: POSTGRES_BACKEND_URL. A password may also come from PGPASSWORD.
  --schema NAME           schema of Logflare's tables (default: POSTGRES_BACKEND_SCHEMA or _analytics)
  --to URL                Quarry (default: QUARRY_URL, else http://127.0.0.1:$PORT, PORT default 4000)
  --token T               Quarry access token of scope private (default: LOGFLARE_PRIVATE_ACCESS_TOKEN,
                          else DATA_DIR/private-access-token)
  --since WHEN            only events at or after WHEN: 2026-11-01, 2026-11-01T12:00:00Z, or 7d, 12h, 30m
  --sources a,b           only these Logflare source names
  --dry-run               read and compare with Quarry, send nothing
  --create-sources        create the Quarry sources that are missing (default: stop and name them)
  --batch-size N          events per batch (default 2000, at most 5000)
  --concurrency N         batches in flight (default 3)
  --max-event-bytes N     skip events larger than this (default 8388608; Quarry takes 10 MiB a request)
  --settle SECONDS        wait after a lost ingest answer before looking again (default 5)
  --retry-for SECONDS     keep retrying a busy or unreachable Quarry this long (default 120)
  --progress-interval S   seconds between progress lines when stderr is not a terminal (default 10)
  --json                  print the final report as JSON on stdout
  -h, --help              this text

Exit status: 0 all done; 1 an error, or events Quarry refused; 2 bad arguments; 130/143 interrupted.`;

type Env = Record<string, string | undefined>;

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}

function intOption(name: string, raw: string | undefined, fallback: number, min: number, max: number): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new ImportError('BAD_ARGUMENTS', `--${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
  }
  return n;
}

function secondsOption(name: string, raw: string | undefined, fallbackSeconds: number): number {
  if (raw === undefined) return fallbackSeconds * 1000;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0 || n > 86_400) {
    throw new ImportError('BAD_ARGUMENTS', `--${name} must be a number of seconds from 0 to 86400, got "${raw}"`);
  }
  return Math.round(n * 1000);
}

const RELATIVE = /^(\d+(?:\.\d+)?)\s*(s|m|h|d|w)$/i;
const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)(Z|z|[+-]\d{2}:?\d{2})?$/;

/**
 * `--since`: a relative age (`7d`, `12h`, `30m`, `90s`, `2w`: that long before `now`), a date
 * (`2026-11-01`: midnight UTC) or a date and time (`2026-11-01T12:00:00Z`; without an offset: UTC).
 */
export function parseSince(text: string, now: Date): Date {
  const t = text.trim();
  const rel = RELATIVE.exec(t);
  if (rel) return new Date(now.getTime() - Number(rel[1]) * UNIT_MS[rel[2]!.toLowerCase()]!);
  let iso: string | undefined;
  if (DATE_ONLY.test(t)) iso = `${t}T00:00:00Z`;
  else {
    const m = DATE_TIME.exec(t);
    if (m) iso = `${m[1]}T${m[2]}${m[3] ?? 'Z'}`;
  }
  const d = iso === undefined ? Number.NaN : Date.parse(iso);
  if (Number.isNaN(d)) {
    throw new ImportError(
      'BAD_ARGUMENTS',
      `--since must be a date (2026-11-01), a date and time (2026-11-01T12:00:00Z) or an age (7d, 12h, 30m), got "${text}"`,
    );
  }
  return new Date(d);
}

/** The options for `argv` (without node and the script); throws ImportError('BAD_ARGUMENTS'). */
export function parseImportArgs(argv: string[], env: Env, now: Date = new Date()): ImportOptions {
  let values: ReturnType<typeof parse>['values'];
  try {
    values = parse(argv).values;
  } catch (e) {
    throw new ImportError('BAD_ARGUMENTS', `${(e as Error).message}\n\n${USAGE}`);
  }
  const help = values.help === true;
  const from = nonEmpty(values.from) ?? nonEmpty(env.POSTGRES_BACKEND_URL);
  if (from === undefined && !help) {
    throw new ImportError('BAD_ARGUMENTS', `--from is required: the PostgreSQL URL of Logflare's database.\n\n${USAGE}`);
  }
  const port = nonEmpty(env.PORT) ?? '4000';
  const to = (nonEmpty(values.to) ?? nonEmpty(env.QUARRY_URL) ?? `http://127.0.0.1:${port}`).replace(/\/+$/, '');
  if (!help) {
    try {
      const u = new URL(to);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('not http');
    } catch {
      throw new ImportError('BAD_ARGUMENTS', `--to must be Quarry's http(s) URL, e.g. http://127.0.0.1:4000, got "${to}"`);
    }
  }
  const sources =
    values.sources === undefined
      ? undefined
      : values.sources
          .split(',')
          .map((s) => s.trim())
          .filter((s) => s !== '');
  if (sources !== undefined && sources.length === 0) throw new ImportError('BAD_ARGUMENTS', '--sources needs at least one source name');
  return {
    from: from ?? '',
    schema: nonEmpty(values.schema) ?? nonEmpty(env.POSTGRES_BACKEND_SCHEMA) ?? '_analytics',
    to,
    token: nonEmpty(values.token),
    since: values.since === undefined ? undefined : parseSince(values.since, now),
    sources,
    dryRun: values['dry-run'] === true,
    createSources: values['create-sources'] === true,
    batchSize: intOption('batch-size', values['batch-size'], 2000, 1, 5000),
    concurrency: intOption('concurrency', values.concurrency, 3, 1, 16),
    maxEventBytes: intOption('max-event-bytes', values['max-event-bytes'], 8 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    settleMs: secondsOption('settle', values.settle, 5),
    retryForMs: secondsOption('retry-for', values['retry-for'], 120),
    progressIntervalMs: Math.max(100, secondsOption('progress-interval', values['progress-interval'], 10)),
    json: values.json === true,
    help,
  };
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    strict: true,
    allowPositionals: false,
    options: {
      from: { type: 'string' },
      schema: { type: 'string' },
      to: { type: 'string' },
      token: { type: 'string' },
      since: { type: 'string' },
      sources: { type: 'string' },
      'dry-run': { type: 'boolean' },
      'create-sources': { type: 'boolean' },
      'batch-size': { type: 'string' },
      concurrency: { type: 'string' },
      'max-event-bytes': { type: 'string' },
      settle: { type: 'string' },
      'retry-for': { type: 'string' },
      'progress-interval': { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}
