/**
 * Environment settings: how one is described (`Setting`: how its text is read, its default, what
 * it means, where it is documented) and read, each error naming the setting and what it got. The
 * service's settings are listed once, in src/config.ts; each engine's in its definition
 * (src/engines/<engine>/definition.ts), which reads them with the functions below.
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
  return raw === undefined ? fallback : parseWholeNumber(raw, name);
}

function parseWholeNumber(raw: string, name: string): number {
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

/** `2GiB`, `64MiB`, `1000`: a byte count as the largest binary unit that divides it. */
export function formatBytes(n: number): string {
  for (const unit of ['TiB', 'GiB', 'MiB', 'KiB'] as const) {
    const size = UNITS[unit.toLowerCase()] as number;
    if (n >= size && n % size === 0) return `${n / size}${unit}`;
  }
  return String(n);
}

/** A positive byte size, or `fallback` when unset. */
export function byteSize(env: Env, name: string, fallback: number): number {
  const raw = optional(env, name);
  return raw === undefined ? fallback : parseByteSize(raw, name);
}

function parseByteSize(raw: string, name: string): number {
  const n = parseBytes(raw);
  if (n === undefined || n <= 0) throw new Error(`${name} must be a size such as 2GiB or 536870912, got "${raw}"`);
  return n;
}

/**
 * Where a setting is documented: every one is a row of README.md's Configuration table; those the
 * HTTP contract names are also in docs/API.md §1's table (test/docs/settings-and-codes.test.ts
 * checks both ways).
 */
export type SettingDocs = 'README.md' | 'docs/API.md §1';

/** One environment setting, described once. */
export interface Setting<T> {
  /** How its text is read (`whole number`, `byte size`, `text`, …). */
  readonly kind: string;
  /** The value of its text (set and not empty); throws an Error naming the setting and the text. */
  readonly parse: (raw: string, name: string) => T;
  /** Its value when unset; undefined when the default depends on other settings (see `shown`). */
  readonly default?: T;
  /** Lower values are raised to this (a whole number's floor). */
  readonly atLeast?: number;
  /** The default as the docs show it: `4000`, half the concurrency (`2`), none. */
  readonly shown: string;
  /** What it sets, for README's table. */
  readonly description: string;
  readonly docs: readonly SettingDocs[];
}

type Described = Pick<Setting<unknown>, 'description'> & { readonly shown?: string; readonly contract?: boolean };

const docsOf = (d: Described): readonly SettingDocs[] => (d.contract ? ['README.md', 'docs/API.md §1'] : ['README.md']);

/** Text as given; `shown` defaults to the default in backquotes, or `none`. */
export function textSetting(d: Described & { readonly default?: string }): Setting<string> {
  return {
    kind: 'text',
    parse: (raw) => raw,
    ...(d.default !== undefined ? { default: d.default } : {}),
    shown: d.shown ?? (d.default !== undefined ? `\`${d.default}\`` : 'none'),
    description: d.description,
    docs: docsOf(d),
  };
}

/** A whole number ≥ 0 (`1e3` and ` 42 ` read as numbers do), raised to `atLeast` when below it. */
export function wholeSetting(d: Described & { readonly default?: number; readonly atLeast?: number }): Setting<number> {
  return {
    kind: 'whole number',
    parse: parseWholeNumber,
    ...(d.default !== undefined ? { default: d.default } : {}),
    ...(d.atLeast !== undefined ? { atLeast: d.atLeast } : {}),
    shown: d.shown ?? (d.default !== undefined ? `\`${d.default}\`` : 'none'),
    description: d.description,
    docs: docsOf(d),
  };
}

/** A positive byte size (`2GiB`, `536870912`). */
export function byteSetting(d: Described & { readonly default?: number }): Setting<number> {
  return {
    kind: 'byte size',
    parse: parseByteSize,
    ...(d.default !== undefined ? { default: d.default } : {}),
    shown: d.shown ?? (d.default !== undefined ? `\`${formatBytes(d.default)}\`` : 'none'),
    description: d.description,
    docs: docsOf(d),
  };
}

/** A setting read by its own rule (`parse` throws an Error naming the setting). */
export function customSetting<T>(d: Described & { readonly kind: string; readonly parse: (raw: string, name: string) => T; readonly default?: T }): Setting<T> {
  return {
    kind: d.kind,
    parse: d.parse,
    ...(d.default !== undefined ? { default: d.default } : {}),
    shown: d.shown ?? (d.default !== undefined ? `\`${String(d.default)}\`` : 'none'),
    description: d.description,
    docs: docsOf(d),
  };
}

/** The value of `setting` in `env`: parsed, raised to its floor; `fallback` (or its default) when unset. */
export function readSetting<T>(env: Env, name: string, setting: Setting<T>, fallback?: T): T | undefined {
  const raw = optional(env, name);
  const value = raw === undefined ? (fallback ?? setting.default) : setting.parse(raw, name);
  if (setting.atLeast !== undefined && typeof value === 'number') return Math.max(setting.atLeast, value) as T;
  return value;
}
