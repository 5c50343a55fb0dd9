/**
 * A quick estimate of a result's JSON size, for refusing results too large to
 * send before they are serialised (CONTRACT §4: never a 500). Counts string characters, a fixed
 * cost per number, key and punctuation; stops as soon as the running total passes `limit`.
 */
import { QuarryError } from '../errors.ts';
import type { RunOptions } from './port.ts';

/** Approximate JSON bytes of `value`, counting at most until `limit` is passed. */
export function jsonSizeBeyond(value: unknown, limit: number, sofar = 0): number {
  let n = sofar;
  const stack: unknown[] = [value];
  while (stack.length > 0 && n <= limit) {
    const v = stack.pop();
    if (typeof v === 'string') n += v.length + 2;
    else if (v === null || typeof v !== 'object') n += 8;
    else if (Array.isArray(v)) {
      n += 2 + v.length;
      for (const item of v) stack.push(item);
    } else {
      for (const key in v) {
        n += key.length + 4;
        stack.push((v as Record<string, unknown>)[key]);
      }
      n += 2;
    }
  }
  return n;
}

export function resultTooLarge(limit: number): QuarryError {
  const mib = (limit / 2 ** 20).toFixed(limit % 2 ** 20 === 0 ? 0 : 1);
  return new QuarryError(
    'RESULT_TOO_LARGE',
    `The result is larger than the response limit of ${mib} MiB (QUERY_MAX_RESPONSE_BYTES): select fewer rows or columns, or shorter values.`,
  );
}

/**
 * A result's size as its rows are read, for both runners: past `maxBytes` RESULT_TOO_LARGE, and
 * every count held on the run's result-memory claim (OVERLOADED when other results hold the rest
 * of the pool). The runner stops reading, and cancels the statement, on either.
 */
export class ResultMeter {
  readonly #maxBytes: number;
  readonly #memory: RunOptions['memory'];
  #bytes = 0;

  constructor(options: Pick<RunOptions, 'maxBytes' | 'memory'>) {
    this.#maxBytes = options.maxBytes ?? Number.POSITIVE_INFINITY;
    this.#memory = options.memory;
  }

  /** Whether there is anything to count (a cap or a claim); without, rows need not be measured. */
  get counting(): boolean {
    return Number.isFinite(this.#maxBytes) || this.#memory !== undefined;
  }

  /** Counts `rows` from index `from` on; throws past the cap or the pool. */
  count(rows: readonly unknown[], from: number): void {
    for (let r = from; r < rows.length && this.#bytes <= this.#maxBytes; r++) this.#bytes = jsonSizeBeyond(rows[r], this.#maxBytes, this.#bytes);
    if (this.#bytes > this.#maxBytes) throw resultTooLarge(this.#maxBytes);
    this.#memory?.hold(this.#bytes);
  }
}
