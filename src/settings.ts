/**
 * Reading one environment setting: the shared rules behind src/config.ts and each engine's own
 * settings (src/engines/<engine>/definition.ts), each error naming the setting and what it got.
 */
export type Env = Readonly<Record<string, string | undefined>>;

/** The setting's value; unset and empty are the same. */
export function optional(env: Env, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v === '' ? undefined : v;
}

/** A whole number ≥ 0, or `fallback` when unset. */
export function wholeNumber(env: Env, name: string, fallback: number): number {
  const raw = optional(env, name);
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a whole number, got "${raw}"`);
  return n;
}

const UNITS: Readonly<Record<string, number>> = {
  b: 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
  kib: 2 ** 10,
  mib: 2 ** 20,
  gib: 2 ** 30,
  tib: 2 ** 40,
};

/** A byte size: a whole number of bytes, or with a unit (`512MiB`, `2GiB`, `1.5GB`). */
export function parseBytes(text: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)?$/i.exec(text.trim());
  if (!m) return undefined;
  return Math.floor(Number(m[1]) * (UNITS[(m[2] ?? 'b').toLowerCase()] as number));
}

/** A positive byte size, or `fallback` when unset. */
export function byteSize(env: Env, name: string, fallback: number): number {
  const raw = optional(env, name);
  if (raw === undefined) return fallback;
  const n = parseBytes(raw);
  if (n === undefined || n <= 0) throw new Error(`${name} must be a size such as 2GiB or 536870912, got "${raw}"`);
  return n;
}
