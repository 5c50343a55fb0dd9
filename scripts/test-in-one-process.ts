/**
 * Runs the test files named on the command line in this one process (the unit tier, from
 * scripts/test.ts): each file is imported inside a `describe` named after it, so its tests, and the
 * `before`/`after` hooks it registers at its top level, belong to that file's suite and the spec
 * output names the file above each test (the "failing tests" list names it on a `test at` line).
 *
 *   node --import tsx --test-reporter=spec scripts/test-in-one-process.ts test/sql/generator.test.ts …
 *
 * node:test sets the exit code to 1 when any test fails, and a file that fails to load fails its suite.
 */
import path from 'node:path';
import { describe } from 'node:test';
import { pathToFileURL } from 'node:url';

const root = path.resolve(import.meta.dirname, '..');

// One file at a time: a module two files share is then evaluated while the first of them loads,
// and no file's module code runs while another file's tests do (all load before the first test).
// Loading them side by side would put a file's tests under whichever file's suite was loading a
// shared module with top-level await when its evaluation resumed.
let allLoaded!: () => void;
const everything = new Promise<void>((resolve) => {
  allLoaded = resolve;
});
for (const file of process.argv.slice(2)) {
  await new Promise<void>((loaded) => {
    describe(file, async () => {
      try {
        await import(pathToFileURL(path.resolve(root, file)).href);
      } finally {
        loaded();
      }
      await everything;
    });
  });
}
allLoaded();
