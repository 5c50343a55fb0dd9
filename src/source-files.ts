/**
 * Where the program's own files are: src/ when run from TypeScript, dist/src/ when compiled file by
 * file or bundled (scripts/build.mjs puts the bundle in dist/src/ itself), so that one rule finds
 * the SQL, grammar and web files that sit beside the modules in every form.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const sourceDir = path.dirname(fileURLToPath(import.meta.url));

/** A path under src/ (or its compiled mirror), e.g. `sourceFile('web', 'index.html')`. */
export function sourceFile(...parts: string[]): string {
  return path.join(sourceDir, ...parts);
}
