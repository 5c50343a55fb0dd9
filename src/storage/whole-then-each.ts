/**
 * The settle rule of batched writes: items written together succeed or fail together, and when
 * the write of all of them fails, each is written again alone, so one bad request does not fail
 * its neighbours. The ingest pipeline's group commits and schema growth, and ClickHouse's insert
 * lanes, all settle this way.
 */
import { isDiskFull } from './disk-full.ts';

/**
 * Settles `items` by the outcome of `whole`, the attempt for all of them together. When it fails,
 * each item is tried alone with `one`; not when it was alone, nor when `worthRetrying` says the
 * error is each item's anyway (by default: a full disk, where every retry would fail too).
 */
export async function wholeThenEach<T>(
  items: readonly T[],
  whole: Promise<void>,
  one: (item: T) => Promise<void>,
  ok: (item: T) => void,
  fail: (item: T, e: unknown) => void,
  worthRetrying: (e: unknown) => boolean = (e) => !isDiskFull(e),
): Promise<void> {
  try {
    await whole;
    for (const item of items) ok(item);
    return;
  } catch (e) {
    if (items.length === 1 || !worthRetrying(e)) {
      for (const item of items) fail(item, e);
      return;
    }
  }
  for (const item of items) {
    try {
      await one(item);
      ok(item);
    } catch (e) {
      fail(item, e);
    }
  }
}
