/** DuckDB values read back from metadata rows, as the plain strings the records hold. */
export function str(v: unknown): string {
  return typeof v === 'string' ? v : String(v);
}

export function optStr(v: unknown): string | null {
  return v === null || v === undefined ? null : str(v);
}

export function iso(v: unknown): string {
  return v instanceof Date ? v.toISOString() : str(v);
}
