/**
 * Progress of an import for the person running it, on stderr: per source, done/total, rate and
 * time left. On a terminal one live line, redrawn at most five times a second; otherwise (a log,
 * a pipe, `docker compose exec -T`) one line per `intervalMs` and one when a source ends.
 */
import type { Writable } from 'node:stream';

/** The running counts of one source (the report's row, docs in report.ts). */
export interface SourceCounts {
  name: string;
  /** Rows in Logflare's table (after --since), counted when the source's import began. */
  total: number;
  /** Rows dealt with: found in Quarry, sent, skipped or failed. */
  done: number;
  present: number;
  sent: number;
  skipped: number;
  failed: number;
}

export interface ProgressSink {
  sourceStarted(name: string, total: number): void;
  update(counts: SourceCounts): void;
  /** `how`: `done`, or `interrupted`. */
  sourceFinished(counts: SourceCounts, how?: string): void;
  /** A line of its own (a warning, a retry), kept apart from the live line. */
  note(line: string): void;
}

export interface ProgressOptions {
  /** True: one live line. */
  tty: boolean;
  /** Non-terminal: at most one progress line this often, ms. */
  intervalMs: number;
  dryRun: boolean;
}

const fmt = (n: number) => Math.round(n).toLocaleString('en');

export function duration(ms: number): string {
  if (!Number.isFinite(ms)) return '?';
  const s = Math.max(0, Math.round(ms / 1000));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  return h > 0 ? `${h}h${String(m).padStart(2, '0')}m` : m > 0 ? `${m}m${String(sec).padStart(2, '0')}s` : `${sec}s`;
}

export class Progress implements ProgressSink {
  private started = 0;
  private lastDrawn = 0;
  private live = false;
  private lastNote = '';
  private lastNoteAt = 0;

  constructor(
    private readonly out: Writable,
    private readonly options: ProgressOptions,
  ) {}

  sourceStarted(name: string, total: number): void {
    this.started = performance.now();
    this.lastDrawn = this.started;
    this.write(`${name}: ${fmt(total)} event(s) in Logflare`, true);
  }

  update(c: SourceCounts): void {
    const now = performance.now();
    const every = this.options.tty ? 200 : this.options.intervalMs;
    if (now - this.lastDrawn < every) return;
    this.lastDrawn = now;
    this.write(this.line(c, now), !this.options.tty);
  }

  sourceFinished(c: SourceCounts, how = 'done'): void {
    this.write(`${this.line(c, performance.now())} (${how})`, true);
  }

  note(line: string): void {
    // The same note (a retry) at most once every 30 s.
    const now = performance.now();
    if (line === this.lastNote && now - this.lastNoteAt < 30_000) return;
    this.lastNote = line;
    this.lastNoteAt = now;
    this.write(line, true);
  }

  private line(c: SourceCounts, now: number): string {
    const elapsed = now - this.started;
    const rate = elapsed > 0 ? (c.done / elapsed) * 1000 : 0;
    const pct = c.total > 0 ? Math.min(100, Math.floor((c.done / c.total) * 100)) : 100;
    const left = rate > 0 ? ((c.total - c.done) / rate) * 1000 : Number.POSITIVE_INFINITY;
    const sent = this.options.dryRun ? 'to send' : 'sent';
    return (
      `${c.name}: ${fmt(c.done)}/${fmt(c.total)} (${pct}%), ${fmt(rate)} ev/s, ` +
      `${c.done >= c.total ? `took ${duration(elapsed)}` : `ETA ${duration(left)}`}; ` +
      `already there ${fmt(c.present)}, ${sent} ${fmt(c.sent)}, skipped ${fmt(c.skipped)}, failed ${fmt(c.failed)}`
    );
  }

  private write(text: string, keep: boolean): void {
    if (this.options.tty) {
      this.out.write(`\r\x1b[K${text}${keep ? '\n' : ''}`);
      this.live = !keep;
    } else {
      this.out.write(`${text}\n`);
    }
  }

  /** Ends a live line, so what follows starts on a line of its own. */
  close(): void {
    if (this.live) this.out.write('\n');
    this.live = false;
  }
}
