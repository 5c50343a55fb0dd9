/**
 * An endpoint's computed result as the cache keeps it: the encoded rows (capped and redacted), the
 * column names and the warnings. Each response format is produced from the rows on the way out;
 * the JSON body, which Studio asks for on every call, is serialised on first use and kept with the
 * rows, so cache hits in JSON send a ready string.
 */
import type { ResultRow } from './backend.ts';

export class ResultBody {
  readonly rows: readonly ResultRow[];
  /** Result columns in order (the CSV header, even when there are no rows). */
  readonly columns: readonly string[];
  readonly warnings: string[];
  #json: string | undefined;

  constructor(rows: readonly ResultRow[], columns: readonly string[], warnings: string[]) {
    this.rows = rows;
    this.columns = columns;
    this.warnings = warnings;
  }

  get rowCount(): number {
    return this.rows.length;
  }

  /** `{"result": rows}`, serialised once. */
  get json(): string {
    this.#json ??= serialiseResult(this.rows);
    return this.#json;
  }

  /**
   * Approximate memory: the rows as objects (about twice their JSON text) plus the JSON text once
   * serialised. Measured on up to 64 evenly spread rows, so a large result costs no full pass.
   */
  approxBytes(): number {
    const warnings = this.warnings.reduce((n, w) => n + w.length, 0);
    if (this.#json !== undefined) return 3 * this.#json.length + warnings;
    const n = this.rows.length;
    if (n === 0) return 16 + warnings;
    const step = Math.max(1, Math.floor(n / 64));
    let sampled = 0;
    let bytes = 0;
    for (let i = 0; i < n; i += step) {
      bytes += jsonText(this.rows[i]).length + 1;
      sampled++;
    }
    return 3 * Math.ceil((bytes / sampled) * n) + warnings;
  }
}

/** `{"result": rows}` as JSON; 64-bit integers become numbers when exact, else strings. */
export function serialiseResult(rows: readonly ResultRow[]): string {
  return jsonText({ result: rows });
}

/**
 * JSON text of a value. Engines encode 64-bit integers as numbers already, so the plain (much
 * faster) stringify almost always succeeds; it throws on a bigint, and only then is the replacer
 * needed.
 */
export function jsonText(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch (e) {
    if (!(e instanceof TypeError)) throw e;
  }
  return JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v === 'bigint') {
      return v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(v) : v.toString();
    }
    return v;
  });
}
