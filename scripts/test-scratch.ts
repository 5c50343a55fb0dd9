/**
 * Where the test processes put their temporary folders (`TMPDIR`, which `os.tmpdir()` reads): data
 * folders, PostgreSQL clusters, chDB sessions. They create and delete thousands of small files and
 * sync them; on a disk's file system that is kernel CPU (about a tenth of the suite's CPU on the
 * reference machine) and waits, while a memory-backed folder answers at once. Nothing a test checks
 * depends on it: kill -9 leaves the page cache to the next process on either, and the one test about
 * a full disk mounts a file system of its own.
 *
 * The choice, in order: `QUARRY_TEST_TMPDIR` when set ("" keeps the environment's `TMPDIR`); the
 * environment's own `TMPDIR` when set; else /dev/shm when it is a tmpfs with `MIN_FREE_BYTES` free;
 * else nothing changes. A folder of this run's own is made inside it and removed when the run ends.
 */
import { chmodSync, mkdtempSync, rmSync, statfsSync } from 'node:fs';
import path from 'node:path';

const TMPFS_MAGIC = 0x01021994;
/** Well above what a whole run holds at once (86 MiB at its peak; docs/TESTING.md). */
const MIN_FREE_BYTES = 4 * 2 ** 30;
const SHM = '/dev/shm';

export interface Scratch {
  /** The folder given to the test processes as `TMPDIR`. */
  dir: string;
  /** Why this folder: printed once at the start of a run. */
  why: string;
  remove(): void;
}

function parentFor(env: NodeJS.ProcessEnv): { parent: string; why: string } | undefined {
  const chosen = env.QUARRY_TEST_TMPDIR;
  if (chosen !== undefined) return chosen === '' ? undefined : { parent: chosen, why: 'QUARRY_TEST_TMPDIR' };
  if (env.TMPDIR !== undefined && env.TMPDIR !== '') return undefined;
  try {
    const s = statfsSync(SHM, { bigint: true });
    const free = s.bavail * s.bsize;
    if (s.type === BigInt(TMPFS_MAGIC) && free >= BigInt(MIN_FREE_BYTES)) return { parent: SHM, why: `${SHM} is memory-backed (tmpfs)` };
  } catch {
    // no /dev/shm: the default temporary folder
  }
  return undefined;
}

/** Makes this run's temporary folder, or undefined when the test processes keep the environment's. */
export function makeScratch(env: NodeJS.ProcessEnv = process.env): Scratch | undefined {
  const chosen = parentFor(env);
  if (chosen === undefined) return undefined;
  const dir = mkdtempSync(path.join(chosen.parent, 'quarry-test-'));
  // As /tmp is: the PostgreSQL of the tests runs as the user postgres when they run as root.
  chmodSync(dir, 0o1777);
  return { dir, why: chosen.why, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
