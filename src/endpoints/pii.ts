/**
 * PII redaction of query results: every IPv4 and IPv6 address inside a string value, at any depth
 * of a row, becomes `REDACTED`. Keys and non-string values are left alone.
 */

export const REDACTED = 'REDACTED';

const OCTET = '(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])';
const V4 = `${OCTET}(?:\\.${OCTET}){3}`;
const H = '[0-9a-fA-F]{1,4}';

// Every textual IPv6 form (RFC 4291 §2.2), longest alternatives first. Forms that end in an
// embedded IPv4 address come before the pure-hex forms so `::ffff:1.2.3.4` is taken whole.
const V6_FORMS = [
  `(?:${H}:){6}${V4}`,
  `(?:${H}:){1,5}:(?:${H}:){0,4}${V4}`,
  `::(?:${H}:){0,5}${V4}`,
  `(?:${H}:){7}${H}`,
  `(?:${H}:){1,6}:${H}(?::${H}){0,5}`,
  `(?:${H}:){1,7}:`,
  `::${H}(?::${H}){0,6}`,
];
const V6 = `(?:${V6_FORMS.join('|')})`;

// An address must stand apart: not glued to letters, digits, colons or dotted numbers, so that
// `12192.168.1.11`, version strings like `1.2.3.4.5`, `std::io` and times like `10:00:00` stay.
const V4_PATTERN = new RegExp(`(?<![0-9A-Za-z_.])${V4}(?![0-9A-Za-z_]|\\.[0-9])`, 'g');
const V6_PATTERN = new RegExp(`(?<![0-9A-Za-z_:.])${V6}(?![0-9A-Za-z_:]|\\.[0-9])`, 'g');

/** `text` with every IP address replaced by `REDACTED`. */
export function redactString(text: string): string {
  // Every address form contains a dot or a colon; most strings have neither worth scanning.
  if (!text.includes('.') && !text.includes(':')) return text;
  return text.replace(V6_PATTERN, REDACTED).replace(V4_PATTERN, REDACTED);
}

/** A copy of `value` with every string at any depth redacted. */
export function redactValue(value: unknown): unknown {
  if (typeof value === 'string') return redactString(value);
  if (Array.isArray(value)) return value.map(redactValue);
  if (value !== null && typeof value === 'object' && isPlainObject(value)) {
    // Keys are field names (user input): fromEntries makes even `__proto__` an own key.
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactValue(v)]));
  }
  return value;
}

function isPlainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

export function redactRows(rows: readonly Record<string, unknown>[]): Record<string, unknown>[] {
  return rows.map((row) => redactValue(row) as Record<string, unknown>);
}
