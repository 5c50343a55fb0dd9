/**
 * Runs async work strictly one at a time, in call order; a failure does not stop later work.
 * Used where one DuckDB connection must not run two statements at once.
 */
export type SerialQueue = <T>(work: () => Promise<T>) => Promise<T>;

export function serialQueue(): SerialQueue {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(work: () => Promise<T>): Promise<T> => {
    const run = tail.then(work, work);
    tail = run.catch(() => undefined);
    return run;
  };
}
