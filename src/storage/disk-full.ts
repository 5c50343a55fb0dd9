import { QuarryError } from '../errors.ts';

/**
 * Whether an error means the disk is full, whoever raised it: Node's file system (`ENOSPC`,
 * `EDQUOT`) or an engine's I/O error text ("No space left on device", "Disk quota exceeded",
 * ClickHouse's "Cannot reserve 1.00 MiB, not enough space").
 */
const DISK_FULL = /no space left on device|disk quota exceeded|\bENOSPC\b|\bEDQUOT\b|disk is full|cannot reserve .*not enough space|\bNOT_ENOUGH_SPACE\b/i;

export function isDiskFull(e: unknown): boolean {
  if (typeof e === 'object' && e !== null) {
    const code = (e as { code?: unknown }).code;
    if (code === 'ENOSPC' || code === 'EDQUOT') return true;
    const cause = (e as { cause?: unknown }).cause;
    if (cause !== undefined && cause !== e && isDiskFull(cause)) return true;
  }
  const text = e instanceof Error ? e.message : typeof e === 'string' ? e : '';
  return DISK_FULL.test(text);
}

/** What a client is told when a write failed because the disk is full (CONTRACT §3: 507). */
export function diskFullError(cause: unknown): QuarryError {
  return new QuarryError('INSUFFICIENT_STORAGE', 'The disk holding the data is full: nothing from this request was stored. Retry once space has been freed.', {
    cause,
    retryAfter: 30,
  });
}
