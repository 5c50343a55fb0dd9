/** Temporary folders for one test file, removed when the file's tests are over. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after } from 'node:test';

/** A maker of folders named `quarry-<prefix>-…` under the system's temp folder. */
export function tempDirs(prefix: string): () => Promise<string> {
  const made: string[] = [];
  after(async () => {
    for (const d of made) await rm(d, { recursive: true, force: true });
  });
  return async () => {
    const d = await mkdtemp(path.join(tmpdir(), `quarry-${prefix}-`));
    made.push(d);
    return d;
  };
}
