/**
 * A log record's severity number and text fill each other (docs/INGEST.md, "OpenTelemetry
 * (OTLP/HTTP)"): a record with a number but no text gets its range's short name (1–4 TRACE, 5–8
 * DEBUG, 9–12 INFO, 13–16 WARN, 17–20 ERROR, 21–24 FATAL), and one with text but no number gets the
 * number of that text, read without regard to case: the 24 short names of OpenTelemetry's data
 * model (`INFO2` → 10) and the usual spellings of other loggers (`warning` → 13, `notice` → 10,
 * `critical` → 18, …). Whatever a record sets itself is kept as it is.
 */

const RANGE_NAMES = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'FATAL'] as const;

/** Upper-case text → severity number. */
const NUMBER_OF_TEXT: ReadonlyMap<string, number> = new Map([
  ...RANGE_NAMES.flatMap((name, i) => [
    [name, i * 4 + 1] as const,
    [`${name}2`, i * 4 + 2] as const,
    [`${name}3`, i * 4 + 3] as const,
    [`${name}4`, i * 4 + 4] as const,
  ]),
  ['WARNING', 13],
  ['INFORMATION', 9],
  ['INFORMATIONAL', 9],
  ['NOTICE', 10],
  ['ERR', 17],
  ['CRITICAL', 18],
  ['CRIT', 18],
  ['ALERT', 21],
  ['PANIC', 21],
  ['EMERGENCY', 22],
  ['EMERG', 22],
]);

export interface Severity {
  number: number;
  text: string;
}

/** The short name of a severity number's range; undefined outside 1–24. */
export function severityText(number: number): string | undefined {
  return Number.isInteger(number) && number >= 1 && number <= 24 ? RANGE_NAMES[Math.floor((number - 1) / 4)] : undefined;
}

/** The severity number a text names; undefined for text no logger uses. */
export function severityNumber(text: string): number | undefined {
  return NUMBER_OF_TEXT.get(text.trim().toUpperCase());
}

/** The record's severity with the missing half filled in from the other. */
export function fillSeverity(number: number, text: string): Severity {
  if (number === 0 && text !== '') return { number: severityNumber(text) ?? 0, text };
  if (text === '' && number !== 0) return { number, text: severityText(number) ?? '' };
  return { number, text };
}
