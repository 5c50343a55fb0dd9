/**
 * One process-wide budget for query results held in Node's memory (QUERY_RESULT_MEMORY, docs/API.md
 * §4 "Response size"). A result read from an engine, encoded, serialised and written to its socket
 * lives outside every engine memory limit; QUERY_MAX_RESPONSE_BYTES bounds one result, this pool
 * bounds their sum.
 *
 * Each run holds a claim on the pool. The engine runner grows it with the result's approximate JSON
 * bytes as it reads them (the same count as the response cap: result-size.ts); the caller gives it
 * back once the response is written. A claim that would take the pool past its size while another
 * claim holds bytes is refused with `503 OVERLOADED` (the engine stops the statement, as for
 * RESULT_TOO_LARGE); a claim alone may grow past the size, so one large result still works, up to
 * the response cap, and any claim may hold its first FREE_CLAIM_BYTES.
 */
import { QuarryError } from '../errors.ts';

/** Seconds a refused caller is told to wait (Retry-After). */
const RETRY_AFTER_SECONDS = 2;

/**
 * What every claim may hold whatever the others hold, so a small result (Studio's hundred rows)
 * is never refused because a large one fills the pool; bounded by the queries running at once.
 */
export const FREE_CLAIM_BYTES = 2 ** 20;

export class ResultMemory {
  /** Bytes the pool lends in all (beyond this only a claim alone may grow). */
  readonly size: number;
  /** What any claim may hold whatever the others hold (the server gives FREE_CLAIM_BYTES). */
  readonly freeBytes: number;
  #used = 0;
  #holders = 0;

  constructor(size: number, freeBytes = 0) {
    if (!(size > 0)) throw new RangeError(`a result memory pool needs a positive size, got ${size}`);
    this.size = size;
    this.freeBytes = freeBytes;
  }

  /** Bytes held by every claim now. */
  get used(): number {
    return this.#used;
  }

  /** Claims holding bytes now. */
  get holders(): number {
    return this.#holders;
  }

  /** A new, empty claim (it holds nothing, and counts as a holder only once it does). */
  claim(): ResultClaim {
    return new Claim(this.size, (from, to) => this.#move(from, to));
  }

  /** A claim's bytes change from `from` to `to`; refused (false) when it may not grow that far. */
  #move(from: number, to: number): boolean {
    const others = this.#used - from;
    if (to > from && to > this.freeBytes && others > 0 && others + to > this.size) return false;
    this.#used = others + to;
    if (from === 0 && to > 0) this.#holders++;
    else if (from > 0 && to === 0) this.#holders--;
    return true;
  }
}

/** One result's share of a ResultMemory pool (ResultMemory.claim()). */
export interface ResultClaim {
  /** Bytes this claim holds. */
  readonly bytes: number;
  /**
   * Holds `total` bytes in all (more or fewer than before). Throws OVERLOADED, holding what it held
   * before, when growing would take the pool past its size while another claim holds bytes.
   */
  hold(total: number): void;
  /** Gives back everything held; may be called any number of times, and the claim may hold again. */
  release(): void;
}

class Claim implements ResultClaim {
  readonly #size: number;
  readonly #move: (from: number, to: number) => boolean;
  #bytes = 0;

  constructor(size: number, move: (from: number, to: number) => boolean) {
    this.#size = size;
    this.#move = move;
  }

  get bytes(): number {
    return this.#bytes;
  }

  hold(total: number): void {
    if (total === this.#bytes) return;
    if (!this.#move(this.#bytes, total)) throw resultMemoryFull(this.#size);
    this.#bytes = total;
  }

  release(): void {
    if (this.#bytes === 0) return;
    this.#move(this.#bytes, 0);
    this.#bytes = 0;
  }
}

export function resultMemoryFull(size: number): QuarryError {
  const mib = (size / 2 ** 20).toFixed(size % 2 ** 20 === 0 ? 0 : 1);
  return new QuarryError(
    'OVERLOADED',
    `Other large results are being sent right now; retry shortly, or select fewer rows or columns, or shorter values (together they would pass the ${mib} MiB that QUERY_RESULT_MEMORY sets aside for results).`,
    { retryAfter: RETRY_AFTER_SECONDS },
  );
}
