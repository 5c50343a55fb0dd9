/**
 * What one endpoint run looked like, told to whoever watches runs (per-endpoint stats, Prometheus
 * metrics). The HTTP layer reports it once the response has gone out.
 */
import type { ErrorCode } from '../errors.ts';

export interface QueryObservation {
  endpointId: string;
  endpointName: string;
  /** From the request's arrival until the response was sent. */
  durationMs: number;
  /** Where a successful result came from; undefined when the run failed. */
  cache: 'HIT' | 'MISS' | undefined;
  /** Rows in the response (0 on error). */
  rows: number;
  error?: { code: ErrorCode; status: number; message: string };
}

export type QueryObserver = (observation: QueryObservation) => void;

/** One observer that tells each of `observers` in turn. */
export function fanOut(...observers: readonly QueryObserver[]): QueryObserver {
  return (o) => {
    for (const observe of observers) observe(o);
  };
}
