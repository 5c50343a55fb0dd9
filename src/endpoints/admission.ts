/**
 * Admission control for queries, fair between callers (tokens) and bounded in time:
 *
 * - at most `maxRunning` queries run at once, and one caller runs at most `maxPerCaller` of them
 *   (default half of them, at least 1), so a flood from one token leaves slots for the others;
 * - at most `maxWaiting` wait. A free slot goes to the callers in turn (round robin), each
 *   caller's own queries first come, first served. When the queue is full, a caller holding fewer
 *   waiting places than the largest holder takes that holder's newest place (which is answered
 *   OVERLOADED at once); otherwise the newcomer is refused;
 * - every query has a deadline counted from the request's arrival: a query that cannot start
 *   before it is answered OVERLOADED (503 + Retry-After) right then, instead of waiting past it,
 *   and a query that starts late gets only the time left.
 */
import { QuarryError } from '../errors.ts';

export interface AdmissionOptions {
  maxRunning: number;
  maxWaiting: number;
  /** Queries one caller may run at once (default half of `maxRunning`, at least 1). */
  maxPerCaller?: number;
  /** Sent as Retry-After when refusing. */
  retryAfterSeconds?: number;
  /** Milliseconds on a monotonic clock (default performance.now). */
  now?: () => number;
}

export interface Ticket {
  /** Who asks (a token id); fairness is between callers. */
  caller: string;
  /** When the query must have finished, on the `now` clock; the work gets the time left. */
  deadline: number;
}

interface Waiter {
  caller: string;
  start: () => void;
  refuse: (e: QuarryError) => void;
  timer: NodeJS.Timeout;
}

export class Admission {
  readonly #maxRunning: number;
  readonly #maxWaiting: number;
  readonly #maxPerCaller: number;
  readonly #retryAfter: number;
  readonly #now: () => number;
  #running = 0;
  #waitingCount = 0;
  readonly #runningBy = new Map<string, number>();
  /** Waiting queries per caller, callers in turn order (the next one to serve first). */
  readonly #waiting = new Map<string, Waiter[]>();

  constructor(options: AdmissionOptions) {
    if (options.maxRunning < 1) throw new RangeError('maxRunning must be at least 1');
    this.#maxRunning = options.maxRunning;
    this.#maxWaiting = options.maxWaiting;
    this.#maxPerCaller = Math.max(1, Math.min(options.maxPerCaller ?? Math.floor(options.maxRunning / 2), options.maxRunning));
    this.#retryAfter = options.retryAfterSeconds ?? 1;
    this.#now = options.now ?? (() => performance.now());
  }

  get running(): number {
    return this.#running;
  }

  get waiting(): number {
    return this.#waitingCount;
  }

  /** Runs `work` (given the milliseconds left before the deadline) when admitted. */
  async run<T>(ticket: Ticket, work: (remainingMs: number) => Promise<T>): Promise<T> {
    const waited = !this.#canStart(ticket.caller);
    if (waited) await this.#wait(ticket);
    else this.#take(ticket.caller);
    try {
      const remaining = ticket.deadline - this.#now();
      // Past the deadline without waiting for a slot: the time went before admission (reading and
      // checking the request), so it is the query's own time-out, not a busy service.
      if (remaining <= 0) throw waited ? this.#lateError() : new QuarryError('QUERY_TIMEOUT', 'The query reached its time limit before it could start');
      return await work(remaining);
    } finally {
      this.#release(ticket.caller);
    }
  }

  #canStart(caller: string): boolean {
    return this.#running < this.#maxRunning && (this.#runningBy.get(caller) ?? 0) < this.#maxPerCaller;
  }

  #take(caller: string): void {
    this.#running++;
    this.#runningBy.set(caller, (this.#runningBy.get(caller) ?? 0) + 1);
  }

  #release(caller: string): void {
    this.#running--;
    const n = (this.#runningBy.get(caller) ?? 1) - 1;
    if (n === 0) this.#runningBy.delete(caller);
    else this.#runningBy.set(caller, n);
    this.#dispatch();
  }

  /** Starts waiting queries while slots are free, callers in turn. */
  #dispatch(): void {
    while (this.#running < this.#maxRunning) {
      let started = false;
      for (const [caller, queue] of this.#waiting) {
        if (!this.#canStart(caller)) continue;
        const next = queue.shift() as Waiter;
        this.#waitingCount--;
        // This caller goes to the back of the turn order.
        this.#waiting.delete(caller);
        if (queue.length > 0) this.#waiting.set(caller, queue);
        clearTimeout(next.timer);
        this.#take(caller);
        next.start();
        started = true;
        break;
      }
      if (!started) return;
    }
  }

  #wait(ticket: Ticket): Promise<void> {
    const { caller, deadline } = ticket;
    if (this.#waitingCount >= this.#maxWaiting && !this.#evictFor(caller)) {
      return Promise.reject(new QuarryError('OVERLOADED', 'Too many queries are running or waiting; retry in a moment.', { retryAfter: this.#retryAfter }));
    }
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        caller,
        start: resolve,
        refuse: reject,
        // Still waiting at the deadline: answered now, not after it.
        timer: setTimeout(() => this.#expire(waiter), Math.max(0, deadline - this.#now())),
      };
      const queue = this.#waiting.get(caller);
      if (queue) queue.push(waiter);
      else this.#waiting.set(caller, [waiter]);
      this.#waitingCount++;
    });
  }

  /**
   * Frees a waiting place for `caller` from the caller holding the most, when that is more than
   * `caller` holds. Returns false when `caller` already holds its share.
   */
  #evictFor(caller: string): boolean {
    const own = this.#waiting.get(caller)?.length ?? 0;
    let largest: Waiter[] | undefined;
    for (const queue of this.#waiting.values()) if (largest === undefined || queue.length > largest.length) largest = queue;
    if (largest === undefined || largest.length <= own + 1) return false;
    const victim = largest.pop() as Waiter;
    this.#forget(victim);
    victim.refuse(
      new QuarryError('OVERLOADED', 'This token holds more than its share of query slots while others wait; retry in a moment.', {
        retryAfter: this.#retryAfter,
      }),
    );
    return true;
  }

  #expire(waiter: Waiter): void {
    const queue = this.#waiting.get(waiter.caller);
    const i = queue?.indexOf(waiter) ?? -1;
    if (queue === undefined || i < 0) return;
    queue.splice(i, 1);
    this.#forget(waiter);
    waiter.refuse(this.#lateError());
  }

  /** Drops a waiter already taken out of its queue. */
  #forget(waiter: Waiter): void {
    clearTimeout(waiter.timer);
    this.#waitingCount--;
    const queue = this.#waiting.get(waiter.caller);
    if (queue !== undefined && queue.length === 0) this.#waiting.delete(waiter.caller);
  }

  #lateError(): QuarryError {
    return new QuarryError('OVERLOADED', 'The query could not start within its time limit: too many queries are running; retry in a moment.', {
      retryAfter: this.#retryAfter,
    });
  }
}
