/**
 * One owner per data folder: an exclusive lock on `<folder>/quarry.lock`, taken before anything
 * else in the folder is opened or changed, held for the process's life.
 *
 * The lock is an open-file-description lock (`fcntl(F_OFD_SETLK)`, through fs-native-extensions):
 * the kernel drops it when the process dies, however it dies, so a `kill -9` never leaves a stale
 * lock, and it holds across processes, containers sharing a volume and two opens in one process.
 * The holder writes who it is (pid, host, start time) into the file so that a refused process can
 * say who holds it; the refused process only reads.
 *
 * A folder may be `shared` within one process (several nodes of one process on one embedded chDB
 * folder, as chDB binds one folder per process anyway); another process is still refused.
 */
import { closeSync, constants, ftruncateSync, mkdirSync, openSync, readFileSync, realpathSync, writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { hostname } from 'node:os';
import path from 'node:path';
import { errnoCode, isNotWritable, StartupError } from './startup-error.ts';

interface NativeLocks {
  tryLock(fd: number, offset?: number, length?: number, opts?: { shared?: boolean }): boolean;
  waitForLockSync(fd: number, offset?: number, length?: number, opts?: { shared?: boolean }): void;
  unlock(fd: number, offset?: number, length?: number): void;
}

const native = createRequire(import.meta.url)('fs-native-extensions') as NativeLocks;

export const LOCK_FILE = 'quarry.lock';

/**
 * Two byte ranges of the lock file: the holder locks OWNER, writes who it is, then locks
 * DESCRIBED. A refused process reads the description only once DESCRIBED is held, so it never names
 * a previous holder whose description is still in the file.
 */
const OWNER = [0, 1] as const;
const DESCRIBED = [1, 1] as const;

/** What the holder writes into the lock file. */
export interface LockHolder {
  pid: number;
  host: string;
  /** When the holding process started (ISO-8601). */
  started_at: string;
  /** What holds it: `DATA_DIR`, `chDB folder`, a tool's name. */
  purpose: string;
}

export interface FolderLock {
  readonly dir: string;
  /** Drops the lock (the file stays: removing it would race with the next holder). */
  release(): void;
}

export interface LockOptions {
  /** Named in messages: what the folder is to the operator (`DATA_DIR`, `the chDB folder`). */
  what: string;
  /** Written into the lock file: what holds it. */
  purpose: string;
  /** Named in the refusal: what to give a second process instead (default: another DATA_DIR). */
  instead?: string;
  /** Let other holders in this same process share it (refcounted). */
  shared?: boolean;
}

interface Held {
  fd: number;
  count: number;
}

/** Locks held with `shared`, by real path. */
const sharedLocks = new Map<string, Held>();

const processStart = new Date(Date.now() - process.uptime() * 1000).toISOString();

/**
 * Takes `dir`'s lock (creating the folder when it does not exist), or throws a StartupError:
 * `DATA_DIR_IN_USE` naming the holder, `DATA_DIR_NOT_WRITABLE`, or `DISK_FULL`.
 */
export function lockFolder(dir: string, options: LockOptions): FolderLock {
  const real = prepareFolder(dir, options.what);
  if (options.shared) {
    const held = sharedLocks.get(real);
    if (held) {
      held.count++;
      return sharedHandle(real, held);
    }
  }
  const file = path.join(real, LOCK_FILE);
  let fd: number;
  try {
    // O_CREAT without O_TRUNC: an existing file (another holder's) is opened as it is.
    fd = openSync(file, constants.O_RDWR | constants.O_CREAT, 0o644);
  } catch (e) {
    throw notWritable(options.what, real, e);
  }
  let locked: boolean;
  try {
    locked = native.tryLock(fd, ...OWNER);
  } catch (e) {
    closeSync(fd);
    throw new StartupError(
      'LOCK_UNAVAILABLE',
      `The lock on ${options.what} ${real} could not be taken (${(e as Error).message}): its file system may not support locks. Put the data on a local disk; nothing was changed.`,
      { cause: e },
    );
  }
  if (!locked) {
    const holder = describedHolder(fd, file);
    closeSync(fd);
    throw inUse(options, real, holder);
  }
  // A refused process may be probing DESCRIBED this very moment (its probe holds it for an instant).
  if (writeHolder(fd, options.purpose)) native.waitForLockSync(fd, ...DESCRIBED);
  if (!options.shared) return { dir: real, release: once(() => unlockAndClose(fd)) };
  const held: Held = { fd, count: 1 };
  sharedLocks.set(real, held);
  return sharedHandle(real, held);
}

/** How long a refused process waits for the holder to have described itself. */
const DESCRIBED_WAIT_MS = 1000;
const DESCRIBED_STEP_MS = 20;

/**
 * The holder's description, once the holder has written it (DESCRIBED held); undefined when it
 * does not within DESCRIBED_WAIT_MS (a holder that could not write it: a full disk).
 */
function describedHolder(fd: number, file: string): LockHolder | undefined {
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (const until = Date.now() + DESCRIBED_WAIT_MS; ; ) {
    let free: boolean;
    try {
      free = native.tryLock(fd, ...DESCRIBED, { shared: true });
    } catch {
      return undefined;
    }
    if (!free) return readHolder(file);
    native.unlock(fd, ...DESCRIBED);
    if (Date.now() >= until) return undefined;
    Atomics.wait(pause, 0, 0, DESCRIBED_STEP_MS);
  }
}

/** Who holds `dir`'s lock now, as its lock file says (undefined when free or unknown). */
export function readHolder(file: string): LockHolder | undefined {
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<LockHolder>;
    if (typeof parsed.pid !== 'number') return undefined;
    return {
      pid: parsed.pid,
      host: String(parsed.host ?? '?'),
      started_at: String(parsed.started_at ?? '?'),
      purpose: String(parsed.purpose ?? '?'),
    };
  } catch {
    return undefined;
  }
}

/** Bytes the holder's description is padded to: rewritten in place, it needs no new block on a full disk. */
const HOLDER_BYTES = 512;

/** Best effort (the lock is held either way; the description only makes a refusal say who holds it); false when not written. */
function writeHolder(fd: number, purpose: string): boolean {
  const holder: LockHolder = { pid: process.pid, host: hostname(), started_at: processStart, purpose };
  const text = Buffer.from(JSON.stringify(holder));
  const padded = Buffer.alloc(Math.max(HOLDER_BYTES, text.length + 1), ' ');
  text.copy(padded);
  padded[padded.length - 1] = 0x0a;
  try {
    writeSync(fd, padded, 0, padded.length, 0);
    ftruncateSync(fd, padded.length);
    return true;
  } catch {
    return false;
  }
}

function prepareFolder(dir: string, what: string): string {
  try {
    mkdirSync(dir, { recursive: true });
    return realpathSync(dir);
  } catch (e) {
    if (errnoCode(e) === 'ENOSPC') throw new StartupError('DISK_FULL', `${what} ${dir} could not be created: the disk is full.`, { cause: e });
    throw notWritable(what, dir, e);
  }
}

function sharedHandle(real: string, held: Held): FolderLock {
  return {
    dir: real,
    release: once(() => {
      held.count--;
      if (held.count > 0) return;
      sharedLocks.delete(real);
      unlockAndClose(held.fd);
    }),
  };
}

function unlockAndClose(fd: number): void {
  try {
    native.unlock(fd);
  } finally {
    closeSync(fd);
  }
}

function once(f: () => void): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    f();
  };
}

function inUse(options: LockOptions, dir: string, holder: LockHolder | undefined): StartupError {
  const who =
    holder === undefined
      ? 'another process (its PID could not be read from the lock file)'
      : `another Quarry process (PID ${holder.pid} on host ${holder.host}, started ${holder.started_at}, holding it as ${holder.purpose})`;
  return new StartupError(
    'DATA_DIR_IN_USE',
    `${options.what} ${dir} is in use by ${who}. Only one process may use a data folder at a time: stop it, or give this one ${options.instead ?? 'another DATA_DIR'}. Nothing in the folder was opened or changed.`,
  );
}

function notWritable(what: string, dir: string, cause: unknown): StartupError {
  if (errnoCode(cause) === 'ENOSPC') {
    return new StartupError('DISK_FULL', `The disk holding ${what} ${dir} is full. Free some space on it, then start again; nothing was changed.`, { cause });
  }
  const reason = isNotWritable(cause)
    ? errnoCode(cause) === 'EROFS'
      ? 'it is on a read-only file system'
      : 'this user may not write there'
    : (cause as Error).message;
  return new StartupError(
    'DATA_DIR_NOT_WRITABLE',
    `${what} ${dir} cannot be used: ${reason}. Quarry needs to write to its data folder; mount it read-write or give this process write permission, then start again. Nothing was changed.`,
    { cause },
  );
}
