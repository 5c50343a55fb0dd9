/**
 * Admission control for queries: at most `maxRunning` run at once, at most `maxWaiting` wait for a
 * turn (first come, first served), and past that a request is refused at once with OVERLOADED
 * (503 + Retry-After) instead of piling up in memory and timing out.
 */
import { QuarryError } from '../errors.ts';

export interface AdmissionOptions {
  maxRunning: number;
  maxWaiting: number;
  /** Sent as Retry-After when refusing. */
  retryAfterSeconds?: number;
}

export class Admission {
  readonly #options: AdmissionOptions;
  #running = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(options: AdmissionOptions) {
    if (options.maxRunning < 1) throw new RangeError('maxRunning must be at least 1');
    this.#options = options;
  }

  get running(): number {
    return this.#running;
  }

  get waiting(): number {
    return this.#waiting.length;
  }

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.#running >= this.#options.maxRunning) {
      if (this.#waiting.length >= this.#options.maxWaiting) {
        throw new QuarryError('OVERLOADED', 'Too many queries are running; retry in a moment.', {
          retryAfter: this.#options.retryAfterSeconds ?? 1,
        });
      }
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    } else {
      this.#running++;
    }
    try {
      return await work();
    } finally {
      const next = this.#waiting.shift();
      // The slot passes straight to the next waiter, so `running` never dips below the limit.
      if (next) next();
      else this.#running--;
    }
  }
}
