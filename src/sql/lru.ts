/**
 * A small least-recently-used map with a fixed number of entries: the per-process memo caches of
 * the query path (parsed caller queries, generated SQL, engine-side verdicts) use it so that a
 * stream of distinct queries cannot grow memory without bound.
 */
export class Lru<K, V> {
  readonly #max: number;
  readonly #onEvict: ((key: K, value: V) => void) | undefined;
  /** Insertion order is recency order: the first key is the least recently used. */
  readonly #map = new Map<K, V>();

  /** `onEvict` is told about entries pushed out by newer ones (not about delete or clear). */
  constructor(maxEntries: number, onEvict?: (key: K, value: V) => void) {
    if (!(maxEntries >= 1)) throw new RangeError('maxEntries must be at least 1');
    this.#max = Math.floor(maxEntries);
    this.#onEvict = onEvict;
  }

  get size(): number {
    return this.#map.size;
  }

  get(key: K): V | undefined {
    const value = this.#map.get(key);
    if (value === undefined) return undefined;
    this.#map.delete(key);
    this.#map.set(key, value);
    return value;
  }

  set(key: K, value: V): void {
    this.#map.delete(key);
    this.#map.set(key, value);
    while (this.#map.size > this.#max) {
      const oldest = this.#map.keys().next().value as K;
      const evicted = this.#map.get(oldest) as V;
      this.#map.delete(oldest);
      this.#onEvict?.(oldest, evicted);
    }
  }

  delete(key: K): void {
    this.#map.delete(key);
  }

  clear(): void {
    this.#map.clear();
  }
}
