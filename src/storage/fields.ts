/**
 * Objects keyed by names users sent (event keys, record fields). Such a name may be `__proto__`,
 * `constructor` or `toString`, so these objects are written only with `setOwn` (an own data
 * property, never the prototype's `__proto__` setter) and read only with `own` (own keys only,
 * never a prototype member such as `constructor`).
 *
 * They stay plain objects rather than `Object.create(null)`: V8 keeps prototype-free objects in
 * dictionary mode, and building and serialising a 20-key event that way measured 2.5× slower,
 * on ingest's hot path.
 */

/** An empty object for user keys (write it with `setOwn`). */
export function emptyFields<T>(): Record<string, T> {
  return {};
}

/** A copy of `fields`, same key order; spreading defines every key as an own property. */
export function copyFields<T>(fields: Readonly<Record<string, T>>): Record<string, T> {
  return { ...fields };
}

/** `fields[key]` when `key` is the object's own key, else undefined (never a prototype member). */
export function own<T>(fields: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(fields, key) ? fields[key] : undefined;
}

/** `fields[key] = value`, where `__proto__` becomes an own key like any other. */
export function setOwn<T>(fields: Record<string, T>, key: string, value: T): void {
  if (key === '__proto__') Object.defineProperty(fields, key, { value, writable: true, enumerable: true, configurable: true });
  else fields[key] = value;
  const index = (fields as Indexed)[LOWER_INDEX];
  if (index !== undefined) {
    const lower = key.toLowerCase();
    if (!index.has(lower)) index.set(lower, key);
  }
}

/**
 * Past this many keys, an object's names are looked up case-insensitively through an index kept
 * on the object itself (a non-enumerable symbol property: spreading, `Object.keys`, `for … in`
 * and JSON never see it; `setOwn` keeps it current). Below it a scan is cheaper than a Map, and
 * most event objects are small.
 */
const INDEX_FROM = 32;
const LOWER_INDEX = Symbol('lowerIndex');
type Indexed = { [LOWER_INDEX]?: Map<string, string> };

/**
 * The first own key of `fields` equal to `key` ignoring case, or undefined. Linear for small
 * objects; for large ones an index makes every later lookup constant-time, so adding n new keys
 * one by one costs O(n) instead of O(n²). Objects of user keys are written only with `setOwn`.
 */
export function findOwnName(fields: Readonly<Record<string, unknown>>, key: string): string | undefined {
  if (Object.hasOwn(fields, key)) return key;
  const lower = key.toLowerCase();
  const known = (fields as Indexed)[LOWER_INDEX];
  if (known !== undefined) return known.get(lower);
  let found: string | undefined;
  let n = 0;
  for (const name in fields) {
    n++;
    if (found === undefined && name.toLowerCase() === lower) found = name;
  }
  if (n >= INDEX_FROM && Object.isExtensible(fields)) {
    const index = new Map<string, string>();
    for (const name in fields) {
      const l = name.toLowerCase();
      if (!index.has(l)) index.set(l, name);
    }
    Object.defineProperty(fields, LOWER_INDEX, { value: index, enumerable: false, writable: false, configurable: false });
  }
  return found;
}
