/**
 * Ids for events that arrive without one: UUIDv7 (RFC 9562), whose first 48 bits are the unix time
 * in milliseconds. Rows are stored in arrival order, so the ids of one row group share a narrow
 * prefix range and DuckDB's per-row-group min/max of `id` lets a lookup by id (Studio's single-log
 * view: `where id = '…'`) skip almost the whole table, where random UUIDv4 ids would force a scan.
 */
import { randomFillSync } from 'node:crypto';

const POOL_IDS = 256;
const pool = Buffer.alloc(10 * POOL_IDS);
let offset = pool.length;

const HEX: string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** Formats 16 bytes (6 of time, 10 random) as a version-7 UUID. */
export function formatUuidV7(ms: number, random: Uint8Array, at = 0): string {
  const t = Math.max(0, Math.floor(ms));
  const hi = Math.floor(t / 2 ** 16);
  const lo = t % 2 ** 16;
  const b6 = 0x70 | (random[at]! & 0x0f);
  const b8 = 0x80 | (random[at + 2]! & 0x3f);
  return (
    hi.toString(16).padStart(8, '0') +
    '-' +
    lo.toString(16).padStart(4, '0') +
    '-' +
    HEX[b6] +
    HEX[random[at + 1]!] +
    '-' +
    HEX[b8] +
    HEX[random[at + 3]!] +
    '-' +
    HEX[random[at + 4]!] +
    HEX[random[at + 5]!] +
    HEX[random[at + 6]!] +
    HEX[random[at + 7]!] +
    HEX[random[at + 8]!] +
    HEX[random[at + 9]!]
  );
}

export function newEventId(now: number = Date.now()): string {
  if (offset >= pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const id = formatUuidV7(now, pool, offset);
  offset += 10;
  return id;
}
