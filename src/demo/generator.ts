/**
 * Deterministic generator of realistic Supabase-shaped log events for the nine sources, as Vector
 * ships them (top-level `timestamp`, `event_message`, `metadata`, `appname`, and `project` where
 * the source has it). Used by `npm run demo` (20k events, project `default`) and by the benchmark
 * (millions, several projects).
 *
 * Events come out in time order, as a log shipper sends them: spread over the last `days` with a
 * dense burst in the last hour (`burstFraction` of all events).
 */
import { type SupabaseSourceName, supabaseSources } from '../metadata/sources.ts';
import type { DemoEvent, EventBuilder, EventContext } from './shapes/context.ts';
import { edgeEvent } from './shapes/edge.ts';
import { pgbouncerEvent, postgresEvent, postgrestEvent } from './shapes/database.ts';
import { functionEventsEvent, functionRelayEvent } from './shapes/functions.ts';
import { authEvent, realtimeEvent, storageEvent } from './shapes/services.ts';
import { buildPools } from './pools.ts';
import { Rng, Weighted } from './random.ts';

export type { DemoEvent, Json } from './shapes/context.ts';

/** The nine Supabase sources, in the order Logflare creates them. */
export const SOURCE_NAMES: readonly SupabaseSourceName[] = supabaseSources.map((s) => s.name);

export type SourceName = SupabaseSourceName;

/** Share of events per source: edge logs are the majority, as on a real project. */
export const SOURCE_MIX: Readonly<Record<SourceName, number>> = {
  'cloudflare.logs.prod': 0.55,
  'postgres.logs': 0.12,
  'gotrue.logs.prod': 0.08,
  'postgREST.logs.prod': 0.06,
  'realtime.logs.prod': 0.06,
  'storage.logs.prod.2': 0.06,
  'deno-relay-logs': 0.04,
  'deno-subhosting-events': 0.02,
  'pgbouncer.logs.prod': 0.01,
};

const BUILDERS: Readonly<Record<SourceName, EventBuilder>> = {
  'cloudflare.logs.prod': edgeEvent,
  'postgres.logs': postgresEvent,
  'deno-relay-logs': functionRelayEvent,
  'deno-subhosting-events': functionEventsEvent,
  'gotrue.logs.prod': authEvent,
  'realtime.logs.prod': realtimeEvent,
  'storage.logs.prod.2': storageEvent,
  'postgREST.logs.prod': postgrestEvent,
  'pgbouncer.logs.prod': pgbouncerEvent,
};

export interface GenerateOptions {
  /** Number of events in total. */
  count: number;
  /** PRNG seed (default 1). Same seed and options → same events. */
  seed?: number;
  /** The newest possible event time (default: now). */
  now?: Date | number;
  /** How far back the oldest events go (default 3). */
  days?: number;
  /** Share of events in the last hour (default 0.2). */
  burstFraction?: number;
  /** Projects, most active first; activity falls off as 1/rank (default `['default']`). */
  projects?: readonly string[];
  /** Restrict to these sources (default: all nine, mixed as SOURCE_MIX). */
  sources?: readonly SourceName[];
  /** Give every event a deterministic `id` (the benchmark needs the same ids everywhere). */
  withIds?: boolean;
}

export interface GeneratedEvent {
  source: SourceName;
  event: DemoEvent;
}

export interface EventBatch {
  source: SourceName;
  events: DemoEvent[];
}

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

function pad3(n: number): string {
  return n < 10 ? `00${n}` : n < 100 ? `0${n}` : String(n);
}

export function* generateEvents(options: GenerateOptions): Generator<GeneratedEvent> {
  const count = Math.max(0, Math.floor(options.count));
  const seed = options.seed ?? 1;
  const rng = new Rng(seed);
  const idRng = new Rng(seed ^ 0x5bd1e995);
  const pools = buildPools(new Rng(seed ^ 0x27d4eb2f));
  const now = options.now === undefined ? Date.now() : Number(options.now);
  const span = Math.max(1, options.days ?? 3) * DAY_MS;
  const burst = Math.min(1, Math.max(0, options.burstFraction ?? 0.2));
  const projectNames = options.projects ?? ['default'];
  if (projectNames.length === 0) throw new Error('generateEvents: projects must not be empty');
  const projects = new Weighted(projectNames.map((p, i) => [p, 1 / (i + 1)] as const));
  const sourceNames = options.sources ?? SOURCE_NAMES;
  if (sourceNames.length === 0) throw new Error('generateEvents: sources must not be empty');
  const sources = new Weighted(sourceNames.map((s) => [s, SOURCE_MIX[s]] as const));
  const historyStart = now - span;
  const historyLength = span - HOUR_MS;
  const ctx: EventContext = { rng, pools, ms: 0, micros: 0, iso: '', project: '' };
  let isoSecond = Number.NaN;
  let isoPrefix = '';

  for (let i = 0; i < count; i++) {
    // Position i maps through the inverse of the time distribution, so events come out in order.
    const u = (i + rng.next()) / count;
    const t = u < 1 - burst ? historyStart + (u / (1 - burst)) * historyLength : now - HOUR_MS + ((u - (1 - burst)) / burst) * HOUR_MS;
    const ms = Math.min(now, Math.floor(t));
    const micros = rng.int(1000);
    ctx.ms = ms;
    ctx.micros = micros;
    const second = Math.floor(ms / 1000);
    if (second !== isoSecond) {
      isoSecond = second;
      isoPrefix = new Date(second * 1000).toISOString().slice(0, 19);
    }
    ctx.iso = `${isoPrefix}.${pad3(ms - second * 1000)}${pad3(micros)}Z`;
    ctx.project = projects.pick(rng);
    const source = sources.pick(rng);
    const event = BUILDERS[source](ctx);
    if (options.withIds === true) event.id = idRng.uuid7(ms);
    yield { source, event };
  }
}

/**
 * The same events grouped per source into batches of at most `batchSize`, the way a shipper
 * sends them. A source's batch is emitted when full; what remains comes out at the end.
 */
export function* generateBatches(options: GenerateOptions, batchSize: number): Generator<EventBatch> {
  const pending = new Map<SourceName, DemoEvent[]>();
  for (const { source, event } of generateEvents(options)) {
    let list = pending.get(source);
    if (list === undefined) {
      list = [];
      pending.set(source, list);
    }
    list.push(event);
    if (list.length >= batchSize) {
      pending.set(source, []);
      yield { source, events: list };
    }
  }
  for (const [source, events] of pending) if (events.length > 0) yield { source, events };
}
