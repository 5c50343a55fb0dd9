/**
 * The import itself: for each Logflare source, page through its events and, batch by batch, ask
 * Quarry which of the batch's ids it already holds, then send only the others.
 *
 * Why nothing is ever sent twice, with no progress file to trust: Quarry's own contents are the
 * record. A batch is sent only after Quarry has said which of its ids the source holds within the
 * batch's time range, and an ingest request is all or nothing, so whatever happened to an earlier
 * run (killed after Quarry stored a batch but before it heard the answer, killed mid-request), a
 * new run finds exactly the events that were stored and skips them. Live events arriving in the
 * same sources meanwhile change nothing: only ids are compared. When an ingest answer is lost
 * (connection cut, a 5xx), the batch is not resent blind: the importer waits `settleMs` for Quarry
 * to finish a request it may still be storing, then looks again and sends only what is missing.
 * Concurrent batches never share an id (Logflare's `id` is the table's primary key).
 */
import type { ImportOptions } from './options.ts';
import { ImportError } from './errors.ts';
import type { EventPage, LogflareReader, LogflareSource, SourceEvent } from './logflare-reader.ts';
import type { ProgressSink, SourceCounts } from './progress.ts';
import { type Lookup, QUARRY_NAME, type QuarryClient, type QuarrySource } from './quarry-client.ts';

/** One source's outcome. */
export interface SourceReport extends SourceCounts {
  token: string;
  /** Rows read from Logflare. */
  read: number;
  /** Why the source was not (fully) imported, or what was done to it (created). */
  note?: string;
  /** Events skipped or refused, with why (the first few). */
  problems: { id: string; reason: string }[];
}

export interface ImportReport {
  ok: boolean;
  interrupted: boolean;
  dryRun: boolean;
  sources: SourceReport[];
  elapsedMs: number;
}

/** Set by a signal handler: stop taking new batches, finish those in flight. */
export interface StopFlag {
  stopping: boolean;
}

export interface ImporterDeps {
  reader: LogflareReader;
  quarry: QuarryClient;
  progress: ProgressSink;
  stop: StopFlag;
}

/** A Logflare source paired with the Quarry source its events go to (undefined: missing, dry run). */
export interface PlannedSource {
  logflare: LogflareSource;
  quarry: QuarrySource | undefined;
  note?: string;
}

const PROBLEMS_KEPT = 20;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Pairs the Logflare sources (limited to --sources) with Quarry's, creating missing ones with
 * --create-sources; otherwise a missing source stops the import before anything is sent.
 */
export async function planSources(
  logflare: LogflareSource[],
  options: Pick<ImportOptions, 'sources' | 'createSources' | 'dryRun'>,
  quarrySources: QuarrySource[],
  quarry: Pick<QuarryClient, 'createSource'>,
): Promise<PlannedSource[]> {
  let chosen = logflare;
  if (options.sources !== undefined) {
    const names = new Set(logflare.map((s) => s.name));
    const unknown = options.sources.filter((n) => !names.has(n));
    if (unknown.length > 0) {
      throw new ImportError(
        'UNKNOWN_SOURCE',
        `Logflare has no source named ${unknown.map((n) => `"${n}"`).join(', ')}. Its sources: ${[...names].map((n) => `"${n}"`).join(', ') || 'none'}.`,
      );
    }
    const wanted = new Set(options.sources);
    chosen = logflare.filter((s) => wanted.has(s.name));
  }
  const invalid = chosen.filter((s) => !QUARRY_NAME.test(s.name));
  if (invalid.length > 0) {
    throw new ImportError(
      'QUARRY_SOURCE_MISSING',
      `Logflare source name(s) ${invalid.map((s) => `"${s.name}"`).join(', ')} cannot be Quarry source names (letters, digits, ".", "-", "_", at most 128). ` +
        'Leave them out with --sources.',
    );
  }
  const byName = new Map(quarrySources.map((s) => [s.name, s]));
  const missing = [...new Set(chosen.filter((s) => !byName.has(s.name)).map((s) => s.name))];
  if (missing.length > 0 && !options.createSources && !options.dryRun) {
    throw new ImportError(
      'QUARRY_SOURCE_MISSING',
      `Quarry has no source named ${missing.map((n) => `"${n}"`).join(', ')}. Create ${missing.length === 1 ? 'it' : 'them'} first ` +
        '(POST /api/sources with {"name": …}, or the web explorer), or run again with --create-sources.',
    );
  }
  const created = new Set<string>();
  if (!options.dryRun) {
    for (const name of missing) {
      byName.set(name, await quarry.createSource(name));
      created.add(name);
    }
  }
  return chosen.map((s) => {
    const q = byName.get(s.name);
    const planned: PlannedSource = { logflare: s, quarry: q };
    if (q === undefined) planned.note = 'missing in Quarry (would be created with --create-sources)';
    else if (created.has(s.name)) planned.note = 'created in Quarry';
    return planned;
  });
}

/** Imports every planned source in turn. */
export async function runImport(plan: PlannedSource[], options: ImportOptions, deps: ImporterDeps): Promise<ImportReport> {
  const started = performance.now();
  const sources: SourceReport[] = [];
  for (const p of plan) {
    if (deps.stop.stopping) break;
    sources.push(await importSource(p, options, deps));
  }
  const failed = sources.some((s) => s.failed > 0);
  return {
    ok: !failed && !deps.stop.stopping,
    interrupted: deps.stop.stopping,
    dryRun: options.dryRun,
    sources,
    elapsedMs: performance.now() - started,
  };
}

/** One source: page through its events with up to `concurrency` batches in flight. */
export async function importSource(p: PlannedSource, options: ImportOptions, deps: ImporterDeps): Promise<SourceReport> {
  const { reader, quarry, progress, stop } = deps;
  const report: SourceReport = {
    name: p.logflare.name,
    token: p.logflare.token,
    total: 0,
    read: 0,
    done: 0,
    present: 0,
    sent: 0,
    skipped: 0,
    failed: 0,
    problems: [],
  };
  if (p.note !== undefined) report.note = p.note;
  if (!p.logflare.hasTable) {
    report.note = [report.note, `no table ${p.logflare.table}: no events on this backend`].filter(Boolean).join('; ');
    progress.sourceStarted(report.name, 0);
    progress.sourceFinished(report);
    return report;
  }
  const problem = (id: string, reason: string) => {
    if (report.problems.length < PROBLEMS_KEPT) report.problems.push({ id, reason });
  };

  const cursor = await reader.open(p.logflare, { since: options.since, pageSize: options.batchSize, maxEventBytes: options.maxEventBytes });
  report.total = cursor.total;
  progress.sourceStarted(report.name, report.total);
  let lookup: Lookup | undefined;
  const inFlight = new Set<Promise<void>>();
  let fatal: unknown;
  try {
    if (p.quarry !== undefined) lookup = await quarry.ensureLookup(p.quarry);
    const batch = new Batcher(p.logflare.name, lookup, options, quarry, report, problem);
    for await (const page of cursor.pages()) {
      report.read += page.rows;
      for (const s of page.skipped) {
        report.skipped++;
        problem(s.id, s.reason);
      }
      report.done += page.skipped.length;
      const job = batch
        .run(page)
        .catch((e: unknown) => {
          fatal ??= e;
        })
        .finally(() => {
          inFlight.delete(job);
          report.done += page.events.length;
          progress.update(report);
        });
      inFlight.add(job);
      while (inFlight.size >= options.concurrency) await Promise.race(inFlight);
      if (fatal !== undefined || stop.stopping) break;
    }
    await Promise.all(inFlight);
  } finally {
    await Promise.all(inFlight);
    await cursor.close();
    if (lookup !== undefined) await quarry.dropLookup(lookup);
  }
  if (fatal !== undefined) throw fatal;
  progress.sourceFinished(report, stop.stopping ? 'interrupted' : 'done');
  return report;
}

/** Looks up and sends the batches of one source. */
class Batcher {
  private readonly requestBytes: number;

  constructor(
    private readonly sourceName: string,
    private readonly lookup: Lookup | undefined,
    private readonly options: ImportOptions,
    private readonly quarry: QuarryClient,
    private readonly report: SourceReport,
    private readonly problem: (id: string, reason: string) => void,
  ) {
    // One event of the largest size still fits a request with its brackets.
    this.requestBytes = Math.max(options.maxEventBytes + 2, 1024 * 1024);
  }

  async run(page: EventPage): Promise<void> {
    let pending = page.events;
    /** Ids sent in a request whose answer was lost: found later, they count as sent. */
    const unsure = new Set<string>();
    const giveUpAt = Date.now() + this.options.retryForMs;
    while (pending.length > 0) {
      let from = pending[0]!.timestamp;
      let to = from;
      for (const e of pending) {
        if (e.timestamp < from) from = e.timestamp;
        if (e.timestamp > to) to = e.timestamp;
      }
      const present =
        this.lookup === undefined
          ? new Set<string>()
          : await this.quarry.presentIds(
              this.lookup,
              pending.map((e) => e.id),
              from,
              to,
            );
      const absent: SourceEvent[] = [];
      for (const e of pending) {
        if (!present.has(e.id)) absent.push(e);
        else if (unsure.has(e.id)) this.report.sent++;
        else this.report.present++;
      }
      if (absent.length === 0) return;
      if (this.options.dryRun) {
        this.report.sent += absent.length;
        return;
      }
      const lost: SourceEvent[] = [];
      let lostWhy = '';
      for (const chunk of this.chunks(absent)) lostWhy = (await this.send(chunk, lost)) || lostWhy;
      if (lost.length === 0) return;
      if (Date.now() >= giveUpAt) {
        throw new ImportError(
          'QUARRY_UNAVAILABLE',
          `Quarry kept failing to answer ingest into "${this.sourceName}" (${lostWhy}) for ${Math.round(this.options.retryForMs / 1000)} s. ` +
            'Check its log, then run the same command again: nothing is sent twice.',
        );
      }
      for (const e of lost) unsure.add(e.id);
      pending = lost;
      // Quarry may still be storing the request whose answer was lost: let it finish first.
      await sleep(this.options.settleMs);
    }
  }

  /** Consecutive runs of events whose JSON array stays under the request size. */
  private *chunks(events: SourceEvent[]): Generator<SourceEvent[]> {
    let chunk: SourceEvent[] = [];
    let bytes = 2;
    for (const e of events) {
      if (chunk.length > 0 && bytes + e.bytes + 1 > this.requestBytes) {
        yield chunk;
        chunk = [];
        bytes = 2;
      }
      chunk.push(e);
      bytes += e.bytes + 1;
    }
    if (chunk.length > 0) yield chunk;
  }

  /**
   * One request. A refused request stored nothing (docs/API.md §3), so its halves are sent apart
   * until the events Quarry refuses are alone: those are reported, the rest stored.
   */
  /** Returns why an answer was lost, or '' when none was. */
  private async send(events: SourceEvent[], lost: SourceEvent[]): Promise<string> {
    const r = await this.quarry.ingest(this.sourceName, events);
    if (r.kind === 'stored') {
      this.report.sent += events.length;
      return '';
    }
    if (r.kind === 'unknown') {
      lost.push(...events);
      return r.reason;
    }
    if (events.length > 1) {
      const half = Math.ceil(events.length / 2);
      const a = await this.send(events.slice(0, half), lost);
      const b = await this.send(events.slice(half), lost);
      return b || a;
    }
    const only = events[0]!;
    if (r.status === 413) {
      this.report.skipped++;
      this.problem(only.id, `Quarry refused it as too large (413): ${r.message}`);
    } else {
      this.report.failed++;
      this.problem(only.id, `Quarry refused it (${r.status}): ${r.message}`);
    }
    return '';
  }
}
