/**
 * Timing helpers: run a measurement several times and summarise it as p50/p95/p99.
 */

export interface Summary {
  runs: number;
  p50: number;
  p95: number;
  p99: number;
  min: number;
  max: number;
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length) - 1;
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank))] as number;
}

export function summarise(samples: readonly number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  const round = (n: number) => Math.round(n * 100) / 100;
  return {
    runs: sorted.length,
    p50: round(percentile(sorted, 50)),
    p95: round(percentile(sorted, 95)),
    p99: round(percentile(sorted, 99)),
    min: round(sorted[0] ?? Number.NaN),
    max: round(sorted[sorted.length - 1] ?? Number.NaN),
  };
}

/** The least warm-up time per question and side (`--warmup-ms`; the smoke test only checks that the figures parse). */
export const warmUp = { ms: 1_000 };

/**
 * Times `fn` `runs` times after an untimed warm-up; milliseconds. The warm-up is at least
 * `warmup` calls and at least `warmupMs` of calls (at most 100): an engine's caches (marks, parts'
 * indexes, DuckDB's buffers) and the JIT of the request path settle over more than one call, and
 * an embedded chDB just opened answers erratically for its first second or so (measured: count
 * 7-73 ms over its first 25 calls, then 7-9 ms). Every side of a comparison gets the same warm-up.
 */
export async function timeRuns(fn: () => Promise<unknown>, runs: number, warmup = 3, warmupMs = warmUp.ms): Promise<Summary> {
  const warmStart = performance.now();
  for (let i = 0; i < 100 && (i < warmup || performance.now() - warmStart < warmupMs); i++) await fn();
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await fn();
    samples.push(performance.now() - t0);
  }
  return summarise(samples);
}

/** Geometric mean of positive numbers (NaN when there are none). */
export function geometricMean(values: readonly number[]): number {
  const usable = values.filter((v) => Number.isFinite(v) && v > 0);
  if (usable.length === 0) return Number.NaN;
  return Math.exp(usable.reduce((s, v) => s + Math.log(v), 0) / usable.length);
}
