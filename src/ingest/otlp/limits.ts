/** The bounds on an OTLP request besides its size (docs/INGEST.md, "OpenTelemetry (OTLP/HTTP)"). */
import { QuarryError } from '../../errors.ts';

export interface OtlpLimits {
  /**
   * AnyValue levels (an attribute's value is level 1, each array or kvlist one more). A record
   * holding a deeper value is refused; values deeper than INGEST_MAX_DEPTH but within this bound
   * are stored as their JSON text, as for any ingest (docs/INGEST.md, "Limits").
   */
  maxValueDepth: number;
  /** Log records per request; a request holding more is refused whole (413). */
  maxLogRecords: number;
}

export const defaultOtlpLimits: OtlpLimits = Object.freeze({ maxValueDepth: 128, maxLogRecords: 100_000 });

/** The problem of a record holding a value nested past the bound. */
export function tooDeep(limits: OtlpLimits): string {
  return `a value in it nests deeper than ${limits.maxValueDepth} levels`;
}

export function tooManyRecords(limits: OtlpLimits): QuarryError {
  return new QuarryError(
    'PAYLOAD_TOO_LARGE',
    `The request holds more than ${limits.maxLogRecords} log records, the limit per request: send smaller batches. Nothing was stored.`,
  );
}
