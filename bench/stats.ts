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

/**
 * Times `fn` `runs` times after `warmup` untimed calls; milliseconds. Three warm-up calls by
 * default: an engine's caches (ClickHouse's marks and compiled expressions, DuckDB's buffers) and
 * the JIT of the request path settle over more than one call.
 */
export async function timeRuns(fn: () => Promise<unknown>, runs: number, warmup = 3): Promise<Summary> {
  for (let i = 0; i < warmup; i++) await fn();
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
