/**
 * Turns a benchmark result into the printed table and the generated part of docs/PERFORMANCE.md.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { BenchCase, CaseId } from './cases.ts';
import type { IngestLimitResult } from './ingest-limit.ts';
import type { Summary } from './stats.ts';

export interface CaseResult {
  label: string;
  target?: { at1M: number; at10M: number };
  ours: Summary | null;
  baseline: Summary | null;
  limit: Summary | null;
  rows: { ours?: number; baseline?: number; limit?: number };
  error?: string;
  oursOverBaseline: number | null;
  oursOverLimit: number | null;
  /** Whether ours p50 meets the target at this scale (null: no target or not measured). */
  met: boolean | null;
}

export type BenchEngine = 'duckdb' | 'clickhouse';

export interface BenchResult {
  date: string;
  /** The engine the service ran on (absent in results from before the ClickHouse bench: DuckDB). */
  engine?: BenchEngine;
  command: string;
  machine: { cores: number; memoryGiB: number; cpu: string; os: string; loadAverage?: number[] };
  versions: Record<string, string>;
  params: Record<string, number | string | boolean | string[]>;
  ingest: {
    events: number;
    elapsedMs: number;
    eventsPerSecond: number;
    requests: number;
    requestLatency: Summary;
    retries: number;
    bytesOnDisk: number;
    bytesPerEvent: number;
    /** Time the service's background work took after ingest, waited before the queries (ms). */
    settleMs?: number;
    /** The service process's CPU (user + system) per event while the client sent, and until it was quiet after (µs). */
    cpuMicrosPerEvent?: number;
    cpuMicrosPerEventSettled?: number;
  } | null;
  /**
   * The same request bodies written by bench/ingest-limit.ts straight into the engine's storage:
   * `grouped` as many per commit as the client keeps in flight, `bulk` the whole load at once.
   */
  ingestLimit?: { grouped: IngestLimitResult | null; bulk: IngestLimitResult | null };
  baselineLoad: { events: number; eventsPerSecond: number; bytes: number; bytesPerEvent: number; indexMs: number } | null;
  queries: Partial<Record<CaseId, CaseResult>>;
  cacheHit: { concurrency: number; requests: number; requestsPerSecond: number; latency: Summary; hitShare: number } | null;
  peakRssBytes: number | null;
  summary: { geomeanOursOverBaseline: number | null; maxOursOverLimit: number | null };
  notes: string[];
  /** ClickHouse run beside DuckDB: the DuckDB engine's ingest in the same run (its target). */
  compareIngestEventsPerSecond?: number;
}

const fmt = (n: number | null | undefined, digits = 1) =>
  n === null || n === undefined || !Number.isFinite(n) ? '–' : n.toLocaleString('en', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const ratio = (n: number | null) => (n === null || !Number.isFinite(n) ? '–' : n < 0.01 ? n.toFixed(4) : n.toFixed(2));
const mark = (met: boolean | null) => (met === null ? '' : met ? 'yes' : '**no**');

export function scaleTarget(target: { at1M: number; at10M: number } | undefined, events: number): number | undefined {
  if (target === undefined) return undefined;
  return events >= 5_000_000 ? target.at10M : target.at1M;
}

export function markdownTable(result: BenchResult, cases: readonly BenchCase[]): string {
  const events = Number(result.params.events);
  const lines: string[] = [];
  lines.push('| figure | target (p50) | ours p50 | p95 | p99 | baseline p50 | limit p50 | ours/baseline | ours/limit | met |');
  lines.push('|---|---|---|---|---|---|---|---|---|---|');
  if (result.ingest !== null) {
    const i = result.ingest;
    const grouped = result.ingestLimit?.grouped;
    const bulk = result.ingestLimit?.bulk;
    // DuckDB: issue 6's absolute target; ClickHouse: at least the DuckDB engine's, when measured beside it.
    const duck = result.compareIngestEventsPerSecond;
    const [target, met] =
      result.engine === 'clickhouse'
        ? [duck === undefined ? '≥ DuckDB engine' : `≥ ${fmt(duck, 0)} (DuckDB, same run)`, duck === undefined ? null : i.eventsPerSecond >= duck]
        : ['≥ 50,000', i.eventsPerSecond >= 50_000];
    lines.push(
      `| ingest over HTTP, durable (events/s) | ${target} | ${fmt(i.eventsPerSecond, 0)} | – | – | ${fmt(result.baselineLoad?.eventsPerSecond, 0)} (COPY) | ${fmt(grouped?.eventsPerSecond, 0)} | – | – | ${mark(met)} |`,
    );
    if (grouped || bulk) {
      const cpu = (r: IngestLimitResult | null | undefined) => (r ? `${fmt((r.cpuMs * 1000) / r.events, 0)} µs CPU/event` : '–');
      lines.push(
        `| ingest limit: the engine alone, ${grouped?.group ?? '–'} requests per commit; the whole load at once (events/s) | – | – | – | – | – | ${fmt(grouped?.eventsPerSecond, 0)} (${cpu(grouped)}); ${fmt(bulk?.eventsPerSecond, 0)} (${cpu(bulk)}) | – | – | |`,
      );
      const share = grouped ? i.eventsPerSecond / grouped.eventsPerSecond : null;
      lines.push(
        `| ingest, service ÷ limit (events/s; same requests per commit) | ≥ 0.5 | ${share === null ? '–' : share.toFixed(2)} | – | – | – | – | – | – | ${mark(share === null ? null : share >= 0.5)} |`,
      );
    }
    lines.push(
      `| ingest request latency (ms) | – | ${fmt(i.requestLatency.p50)} | ${fmt(i.requestLatency.p95)} | ${fmt(i.requestLatency.p99)} | – | – | – | – | |`,
    );
    lines.push(
      `| bytes on disk per event | – | ${fmt(i.bytesPerEvent, 0)} | – | – | ${fmt(result.baselineLoad?.bytesPerEvent, 0)} | – | ${ratio(result.baselineLoad ? i.bytesPerEvent / result.baselineLoad.bytesPerEvent : null)} | – | |`,
    );
  }
  for (const c of cases) {
    const r = result.queries[c.id];
    if (r === undefined) continue;
    const t = scaleTarget(c.target, events);
    const ours = r.ours === null ? (r.error === undefined ? '–' : 'failed¹') : fmt(r.ours.p50);
    lines.push(
      `| ${c.label} (ms) | ${t === undefined ? '–' : `≤ ${t.toLocaleString('en')}`} | ${ours} | ${fmt(r.ours?.p95)} | ${fmt(r.ours?.p99)} | ${fmt(r.baseline?.p50)} | ${fmt(r.limit?.p50)} | ${ratio(r.oursOverBaseline)} | ${ratio(r.oursOverLimit)} | ${mark(r.met)} |`,
    );
  }
  if (result.cacheHit !== null) {
    const h = result.cacheHit;
    const met = h.requestsPerSecond >= 5_000 && h.latency.p99 <= 10;
    lines.push(
      `| \`usage.api-counts\` cache hit, c=${h.concurrency} (req/s; latency ms) | ≥ 5,000 req/s, p99 ≤ 10 | ${fmt(h.requestsPerSecond, 0)} req/s; ${fmt(h.latency.p50)} | ${fmt(h.latency.p95)} | ${fmt(h.latency.p99)} | – | – | – | – | ${mark(met)} |`,
    );
  }
  if (result.peakRssBytes !== null) {
    const gib = result.peakRssBytes / 2 ** 30;
    const limit = events >= 5_000_000 ? 1.5 : 1;
    lines.push(`| service peak RSS (GiB) | ≤ ${limit} | ${fmt(gib, 2)} | – | – | – | – | – | – | ${mark(gib <= limit)} |`);
  }
  const s = result.summary;
  lines.push(
    `| **ours / baseline, geometric mean** | ≤ 0.05 | | | | | | ${ratio(s.geomeanOursOverBaseline)} | | ${mark(s.geomeanOursOverBaseline === null ? null : s.geomeanOursOverBaseline <= 0.05)} |`,
  );
  lines.push(
    `| **ours / limit, worst query** | ≤ 1.5 | | | | | | | ${ratio(s.maxOursOverLimit)} | ${mark(s.maxOursOverLimit === null ? null : s.maxOursOverLimit <= 1.5)} |`,
  );
  const failed = Object.values(result.queries).filter((r) => r?.error !== undefined);
  if (failed.length > 0) {
    lines.push('', '¹ failed in Quarry:');
    for (const c of cases) {
      const r = result.queries[c.id];
      if (r?.error !== undefined) lines.push(`- ${c.label}: ${r.error.replace(/\n/g, ' ').slice(0, 300)}`);
    }
  }
  return lines.join('\n');
}

export function runSection(result: BenchResult, cases: readonly BenchCase[]): string {
  const m = result.machine;
  const v = Object.entries(result.versions)
    .map(([k, val]) => `${k} ${val}`)
    .join(', ');
  const engine = result.engine === 'clickhouse' ? 'ClickHouse engine (embedded chDB), ' : '';
  const load = m.loadAverage === undefined ? '' : `, load average ${m.loadAverage.join(' / ')} at the start`;
  const parts = [
    `### ${engine}${Number(result.params.events).toLocaleString('en')} events — ${result.date}`,
    '',
    `Command: \`${result.command}\`  `,
    `Machine: ${m.cores} cores (${m.cpu}), ${m.memoryGiB} GiB memory, ${m.os}${load}  `,
    `Versions: ${v}  `,
    `Data: ${Number(result.params.events).toLocaleString('en')} events, all nine sources, projects ${(result.params.projects as string[]).join(', ')}, ${result.params.days} days with ${Number(result.params.burstFraction) * 100}% in the last hour; ingest with ${result.params.concurrency} concurrent requests of ${result.params.batch} events; ${result.params.runs} timed runs per query (baseline ${result.params.baselineRuns}).`,
    '',
    markdownTable(result, cases),
  ];
  if (result.notes.length > 0) parts.push('', 'Notes:', ...result.notes.map((n) => `- ${n}`));
  return parts.join('\n');
}

const BEGIN = (key: string) => `<!-- bench:${key}:begin -->`;
const END = (key: string) => `<!-- bench:${key}:end -->`;

/** Replaces (or appends) this engine's and event count's generated section; hand-written text is kept. */
export function updatePerformanceDoc(file: string, result: BenchResult, cases: readonly BenchCase[]): void {
  const count = Number(result.params.events);
  // DuckDB keeps the key of the sections written before the ClickHouse bench existed.
  const events = result.engine === 'clickhouse' ? `clickhouse:${count}` : String(count);
  const section = `${BEGIN(events)}\n${runSection(result, cases)}\n${END(events)}`;
  let doc = existsSync(file)
    ? readFileSync(file, 'utf8')
    : '# Performance\n\nFigures written by `npm run bench`; the text outside the generated sections is hand-written.\n\n<!-- bench:results -->\n';
  const start = doc.indexOf(BEGIN(events));
  const end = doc.indexOf(END(events));
  if (start >= 0 && end > start) doc = doc.slice(0, start) + section + doc.slice(end + END(events).length);
  else if (doc.includes('<!-- bench:results -->')) doc = doc.replace('<!-- bench:results -->', `<!-- bench:results -->\n\n${section}\n`);
  else doc = `${doc.trimEnd()}\n\n${section}\n`;
  writeFileSync(file, doc);
}
