/**
 * Why the service (or a tool opening a data folder) could not start, as a typed value with a
 * stable code. Its message speaks to the operator: what happened, that nothing was changed (when
 * true), and what to do. `main.ts` prints it and exits non-zero.
 */
export type StartupProblem =
  /** Another process holds the data folder's lock. */
  | 'DATA_DIR_IN_USE'
  /** The folder's file system cannot take the lock (some network file systems). */
  | 'LOCK_UNAVAILABLE'
  /** The folder or a file in it cannot be written (read-only file system, permissions). */
  | 'DATA_DIR_NOT_WRITABLE'
  /** No space left on the disk holding the data. */
  | 'DISK_FULL'
  /** Written by a newer Quarry or DuckDB than this build (a downgrade). */
  | 'DATA_TOO_NEW'
  /** A database file did not open for a reason Quarry does not recognise; nothing was touched. */
  | 'DATA_UNREADABLE'
  /** The HTTP port could not be bound. */
  | 'LISTEN_FAILED';

export class StartupError extends Error {
  readonly code: StartupProblem;

  constructor(code: StartupProblem, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StartupError';
    this.code = code;
  }
}

export function isStartupError(e: unknown): e is StartupError {
  return e instanceof StartupError;
}

/** The errno code of a Node file-system error, if it is one. */
export function errnoCode(e: unknown): string | undefined {
  const code = typeof e === 'object' && e !== null ? (e as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : undefined;
}

/** Whether `e` says the file system refuses writes here (read-only mount, permissions). */
export function isNotWritable(e: unknown): boolean {
  const code = errnoCode(e);
  if (code === 'EROFS' || code === 'EACCES' || code === 'EPERM') return true;
  const text = e instanceof Error ? e.message : typeof e === 'string' ? e : '';
  return /read-only file system|permission denied/i.test(text);
}
