/**
 * Time as the result cache sees it. Production uses the system clock with unref()ed timers (a
 * pending cache expiry never keeps the process alive); tests use ManualClock and move time
 * forward themselves instead of sleeping.
 */

export interface Timer {
  cancel(): void;
}

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Runs `fn` once, `ms` from now. */
  setTimer(ms: number, fn: () => void): Timer;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(ms, fn) {
    const handle = setTimeout(fn, Math.max(0, ms));
    handle.unref();
    return { cancel: () => clearTimeout(handle) };
  },
};

interface Pending {
  at: number;
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

/** A clock that only moves when told to; timers fire, in order, as it passes them. */
export class ManualClock implements Clock {
  #now: number;
  #seq = 0;
  #pending: Pending[] = [];

  constructor(start = Date.UTC(2026, 0, 1)) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  setTimer(ms: number, fn: () => void): Timer {
    const p: Pending = { at: this.#now + Math.max(0, ms), seq: this.#seq++, fn, cancelled: false };
    this.#pending.push(p);
    return {
      cancel: () => {
        p.cancelled = true;
      },
    };
  }

  /** Timers not yet fired nor cancelled. */
  get pendingTimers(): number {
    return this.#pending.filter((p) => !p.cancelled).length;
  }

  /**
   * Moves time forward by `ms`, firing every timer that falls due on the way (including timers
   * those timers set), and lets the promise work they start settle after each one.
   */
  async advance(ms: number): Promise<void> {
    const target = this.#now + ms;
    for (;;) {
      this.#pending = this.#pending.filter((p) => !p.cancelled);
      this.#pending.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = this.#pending[0];
      if (!next || next.at > target) break;
      this.#pending.shift();
      this.#now = Math.max(this.#now, next.at);
      next.fn();
      await settle();
    }
    this.#now = target;
    await settle();
  }
}

/** Resolves after pending promise callbacks and I/O callbacks of this turn have run. */
export function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
