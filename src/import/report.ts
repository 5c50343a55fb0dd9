/**
 * The end-of-run report of `npm run import-logflare`: a table per source for people, or JSON
 * (`--json`) for scripts. Columns:
 *
 * - `in Logflare`: rows of the source's table (after --since) in the snapshot read;
 * - `read`: rows read (less than that only when interrupted or stopped by an error);
 * - `already there`: found in Quarry with the same id in the batch's time range, not sent;
 * - `sent`: stored by this run (`to send` with --dry-run);
 * - `skipped`: not sent because the body is not a JSON object, the id is empty, or it is too large;
 * - `failed`: refused by Quarry (400), each reported with Quarry's message.
 */
import type { ImportReport } from './importer.ts';
import { duration } from './progress.ts';

export interface RunFacts {
  /** Peak resident memory of the process, bytes. */
  peakRssBytes: number;
  /** CPU time of the process (user + system), ms. */
  cpuMs: number;
}

export interface JsonReport {
  ok: boolean;
  interrupted: boolean;
  dry_run: boolean;
  elapsed_ms: number;
  events_per_second: number;
  peak_rss_bytes: number;
  cpu_ms: number;
  sources: {
    name: string;
    token: string;
    total: number;
    read: number;
    present: number;
    sent: number;
    skipped: number;
    failed: number;
    note?: string;
    problems: { id: string; reason: string }[];
  }[];
}

/** Events per second over the whole run (rows dealt with / elapsed). */
export function rate(report: ImportReport): number {
  const done = report.sources.reduce((a, s) => a + s.done, 0);
  return report.elapsedMs > 0 ? Math.round((done / report.elapsedMs) * 1000) : 0;
}

export function toJson(report: ImportReport, facts: RunFacts): JsonReport {
  return {
    ok: report.ok,
    interrupted: report.interrupted,
    dry_run: report.dryRun,
    elapsed_ms: Math.round(report.elapsedMs),
    events_per_second: rate(report),
    peak_rss_bytes: facts.peakRssBytes,
    cpu_ms: Math.round(facts.cpuMs),
    sources: report.sources.map((s) => ({
      name: s.name,
      token: s.token,
      total: s.total,
      read: s.read,
      present: s.present,
      sent: s.sent,
      skipped: s.skipped,
      failed: s.failed,
      ...(s.note === undefined ? {} : { note: s.note }),
      problems: s.problems,
    })),
  };
}

const n = (v: number) => v.toLocaleString('en');

/** The table and the lines after it, for a terminal. */
export function formatReport(report: ImportReport, facts: RunFacts): string {
  const header = ['source', 'in Logflare', 'read', 'already there', report.dryRun ? 'to send' : 'sent', 'skipped', 'failed'];
  const rows = report.sources.map((s) => [s.name, n(s.total), n(s.read), n(s.present), n(s.sent), n(s.skipped), n(s.failed)]);
  const sum = (k: 'total' | 'read' | 'present' | 'sent' | 'skipped' | 'failed') => n(report.sources.reduce((a, s) => a + s[k], 0));
  if (rows.length > 1) rows.push(['all', sum('total'), sum('read'), sum('present'), sum('sent'), sum('skipped'), sum('failed')]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  const out = [line(header), ...rows.map(line)];
  for (const s of report.sources) {
    if (s.note !== undefined) out.push(`${s.name}: ${s.note}`);
    for (const p of s.problems) out.push(`${s.name}: event ${p.id}: ${p.reason}`);
    const more = s.skipped + s.failed - s.problems.length;
    if (more > 0) out.push(`${s.name}: … and ${n(more)} more skipped or failed event(s)`);
  }
  out.push(
    `${report.dryRun ? 'Dry run (nothing sent): ' : ''}${duration(report.elapsedMs)}, ${n(rate(report))} events/s, peak memory ${Math.round(facts.peakRssBytes / 1048576)} MiB.`,
  );
  if (report.interrupted) out.push('Interrupted. Run the same command again to go on: events already in Quarry are not sent again.');
  else if (report.sources.some((s) => s.failed > 0)) {
    out.push('Some events were refused by Quarry (above). Fix the cause and run the same command again: only missing events are sent.');
  }
  return out.join('\n');
}
