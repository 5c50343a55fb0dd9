/**
 * Event inserts, one lane per table: each table has at most one insert running, and the rows
 * handed to it meanwhile go together into its next insert; lanes of different tables run at once.
 *
 * Why: every ClickHouse insert writes a part (a directory of fsynced files) and pays a fixed cost
 * for it, and later merges pay again for every small part, so fewer, larger inserts cost less CPU
 * per event; and one insert keeps about one core busy, so inserts into different tables at once
 * use a second core. The ingest pipeline hands requests over as they arrive
 * (`capabilities.concurrentAppends`), and the lanes do the batching, per table.
 *
 * A request is still all or nothing: when an insert holding rows of several callers fails, each
 * caller's rows are inserted again on their own (an insert ClickHouse refused stored nothing), so
 * one caller's bad rows fail only that caller.
 */
import { isQuarryError } from '../../errors.ts';
import type { RowFormat } from './chdb-writer.ts';
import { isDiskFull } from '../../storage/disk-full.ts';
import { wholeThenEach } from '../../storage/whole-then-each.ts';

/** Rows ready to insert: their bytes in one format, and how many events they hold. */
export interface EncodedRows {
  format: RowFormat;
  data: Buffer;
  events: number;
}

/** Inserts `rows` into `table`; resolves once stored durably. */
export type InsertRows = (table: string, rows: EncodedRows) => Promise<void>;

/** Rows one insert takes at most from its lane's waiting callers (one caller's rows are never split). */
export const LANE_MAX_BYTES = 32 * 1024 * 1024;

interface Waiting {
  rows: EncodedRows;
  resolve: () => void;
  reject: (e: unknown) => void;
}

interface Lane {
  waiting: Waiting[];
  running: boolean;
}

/**
 * Whether a failed batch is worth inserting again caller by caller: not on a full disk (every
 * insert would fail), nor when the insert's answer was lost (`UNAVAILABLE`: it may have been
 * stored, and a retry under another deduplication token would store it twice).
 */
export function retryAlone(e: unknown): boolean {
  return !isDiskFull(e) && !(isQuarryError(e) && e.code === 'UNAVAILABLE');
}

export class InsertLanes {
  private readonly lanes = new Map<string, Lane>();

  constructor(private readonly insert: InsertRows) {}

  /** Queues rows for `table`; resolves once an insert holding them has stored them. */
  add(table: string, rows: EncodedRows): Promise<void> {
    let lane = this.lanes.get(table);
    if (lane === undefined) {
      lane = { waiting: [], running: false };
      this.lanes.set(table, lane);
    }
    const l = lane;
    const done = new Promise<void>((resolve, reject) => l.waiting.push({ rows, resolve, reject }));
    if (!l.running) void this.run(table, l);
    return done;
  }

  private async run(table: string, lane: Lane): Promise<void> {
    lane.running = true;
    try {
      while (lane.waiting.length > 0) {
        const take = takeUpTo(lane.waiting, LANE_MAX_BYTES);
        await this.insertTogether(table, take);
      }
    } finally {
      lane.running = false;
      if (this.lanes.get(table) === lane && lane.waiting.length === 0) this.lanes.delete(table);
    }
  }

  /** One insert for every caller in `take`; on failure each caller alone, so one bad caller fails alone. */
  private async insertTogether(table: string, take: readonly Waiting[]): Promise<void> {
    const first = take[0] as Waiting;
    let together = first.rows;
    if (take.length > 1) {
      let events = 0;
      for (const w of take) events += w.rows.events;
      together = { format: first.rows.format, data: Buffer.concat(take.map((w) => w.rows.data)), events };
    }
    await wholeThenEach(
      take,
      this.insert(table, together),
      (w) => this.insert(table, w.rows),
      (w) => w.resolve(),
      (w, e) => w.reject(e),
      retryAlone,
    );
  }
}

/** Takes waiting callers from the front, up to `maxBytes` of rows of one format (at least one). */
function takeUpTo(waiting: Waiting[], maxBytes: number): Waiting[] {
  let n = 0;
  let bytes = 0;
  const format = (waiting[0] as Waiting).rows.format;
  while (n < waiting.length) {
    const rows = (waiting[n] as Waiting).rows;
    const next = rows.data.length;
    if (n > 0 && (bytes + next > maxBytes || rows.format !== format)) break;
    bytes += next;
    n++;
  }
  return waiting.splice(0, n);
}
