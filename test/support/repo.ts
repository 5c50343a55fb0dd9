/**
 * The repository's root and its entry points, the same whether a test runs from its TypeScript
 * (test/…) or compiled (dist/test/…, how scripts/test.ts runs the integration and system files).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const above = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** This test runs from dist/ (scripts/build.mjs `build({ tests: true })`). */
export const runsCompiled = path.basename(above) === 'dist';

/** The repository's root (never dist/): package.json, deploy/, docs/, the TypeScript sources. */
export const repoRoot = runsCompiled ? path.dirname(above) : above;

/**
 * Node's arguments that run `file` (a TypeScript entry point, relative to the root) as this test
 * runs: its compiled copy when compiled, else through tsx.
 */
export function entryArgs(file: string): string[] {
  return runsCompiled ? [path.join(above, file.replace(/\.ts$/, '.js'))] : ['--import', 'tsx', path.join(repoRoot, file)];
}
