/**
 * A small, fast, seeded pseudo-random generator (mulberry32) and the helpers the demo shapes use.
 * Deterministic: the same seed gives the same sequence on every machine and Node version.
 */
import { formatUuidV7 } from '../ingest/event-id.ts';

const HEX_BYTE: string[] = [];
for (let i = 0; i < 256; i++) HEX_BYTE.push(i.toString(16).padStart(2, '0'));

function hex8(v: number): string {
  return (HEX_BYTE[v >>> 24] as string) + (HEX_BYTE[(v >>> 16) & 255] as string) + (HEX_BYTE[(v >>> 8) & 255] as string) + (HEX_BYTE[v & 255] as string);
}

export class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** Uniform float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** Uniform integer in [lo, hi]. */
  range(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /** Uniform unsigned 32-bit integer. */
  uint32(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }

  /** `n` lowercase hex digits. */
  hex(n: number): string {
    let s = '';
    while (s.length < n) s += hex8(this.uint32());
    return s.length === n ? s : s.slice(0, n);
  }

  /** A version-7 UUID for time `ms` (what Quarry gives an event that arrives without an id). */
  uuid7(ms: number): string {
    const bytes = new Uint8Array(10);
    for (let i = 0; i < 10; i++) bytes[i] = this.uint32() & 0xff;
    return formatUuidV7(ms, bytes);
  }

  /** A version-4-shaped UUID. */
  uuid(): string {
    const a = hex8(this.uint32());
    const b = hex8(this.uint32());
    const c = hex8(this.uint32());
    const d = hex8(this.uint32());
    const variant = '89ab'[c.charCodeAt(0) & 3];
    return `${a}-${b.slice(0, 4)}-4${b.slice(5, 8)}-${variant}${c.slice(1, 4)}-${c.slice(4, 8)}${d}`;
  }

  /** Roughly log-normal positive number with the given median (for latencies and durations). */
  skewed(median: number): number {
    const u = this.next() + this.next() + this.next() - 1.5; // ≈ normal, sd 0.5
    return median * Math.exp(u * 1.2);
  }
}

/** A weighted choice table, built once, picked from many times. */
export class Weighted<T> {
  private readonly items: T[];
  private readonly cumulative: number[];

  constructor(entries: ReadonlyArray<readonly [T, number]>) {
    this.items = entries.map((e) => e[0]);
    let sum = 0;
    this.cumulative = entries.map((e) => {
      sum += e[1];
      return sum;
    });
    this.cumulative = this.cumulative.map((c) => c / sum);
  }

  pick(rng: Rng): T {
    const u = rng.next();
    const c = this.cumulative;
    for (let i = 0; i < c.length; i++) if (u < (c[i] as number)) return this.items[i] as T;
    return this.items[this.items.length - 1] as T;
  }
}
