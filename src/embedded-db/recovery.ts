/**
 * Opening a database file after a crash, acting only on failures identified positively and never
 * deleting anything.
 *
 * A failed open is classified by what DuckDB said (`classifyOpenFailure`). Only two of them lead to
 * an action, each written for one failure:
 *
 * - The write-ahead log DuckDB 1.5.6 cannot replay when it opens the file as its default database
 *   (a log holding `ALTER TABLE … ADD COLUMN a.b.c`, a field added inside a STRUCT): "Failure while
 *   replaying WAL file …: Calling DatabaseManager::GetDefaultDatabase with no default database set".
 *   The same log replays when the file is ATTACHed to an in-memory database, so it is replayed that
 *   way and checkpointed into the file.
 * - A log whose tail is corrupt ("Corrupt WAL file: entry at byte position N …", e.g. zeros a crash
 *   left after the last entry): a copy of the whole log is kept beside it, the log is cut where that
 *   entry starts (the entries before it are whole and checksummed), and the open is tried again.
 * - A log that still cannot be replayed ("Failure while replaying WAL file" on the second route too)
 *   is moved aside (never deleted) under a name that says what it is, and the operator told.
 *
 * Everything else (a lock held by another process, a read-only or full disk, a file written by a
 * newer DuckDB, an error not recognised) stops start-up with a message, and nothing is touched.
 * The data folder's own lock (src/data-dir/lock.ts) is taken before any of this runs.
 */
import { copyFile, rename, truncate } from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { isNotWritable, StartupError } from '../data-dir/startup-error.ts';
import { isDiskFull } from '../storage/disk-full.ts';

export { StartupError };

export type OpenLog = (message: string) => void;

/** What a failed open means, read from DuckDB's message. */
export type OpenFailure =
  | { readonly kind: 'wal-needs-default-database' }
  | { readonly kind: 'wal-corrupt-at'; readonly position: number }
  | { readonly kind: 'wal-unreplayable' }
  | { readonly kind: 'locked'; readonly holder: string }
  | { readonly kind: 'disk-full' }
  | { readonly kind: 'not-writable' }
  | { readonly kind: 'too-new' }
  | { readonly kind: 'unknown' };

export function classifyOpenFailure(e: unknown): OpenFailure {
  const text = messageOf(e);
  if (isDiskFull(e)) return { kind: 'disk-full' };
  const lock = /Could not set lock on file .*?Conflicting lock is held in (.*?)(?:\. See also|$)/s.exec(text);
  if (lock) return { kind: 'locked', holder: (lock[1] ?? '').trim() };
  if (/Trying to read a database file with version number \d+, but we can only read versions/.test(text) && /newer version of DuckDB/.test(text)) {
    return { kind: 'too-new' };
  }
  if (isNotWritable(e)) return { kind: 'not-writable' };
  if (/Failure while replaying WAL file/.test(text)) {
    const corrupt = /Corrupt WAL file: entry at byte position (\d+) computed checksum \d+ does not match stored checksum/.exec(text);
    if (corrupt) return { kind: 'wal-corrupt-at', position: Number(corrupt[1]) };
    if (/GetDefaultDatabase with no default database set/.test(text)) return { kind: 'wal-needs-default-database' };
    return { kind: 'wal-unreplayable' };
  }
  return { kind: 'unknown' };
}

/** Opens attempts at most this many times (each recognised failure is dealt with once). */
const MAX_ATTEMPTS = 4;

/** The name an attached database file goes by (`AttachOptions`). */
export const ATTACHED_CATALOG = 'quarry';

/**
 * Open the file by ATTACHing it to an in-memory database, with options DuckDB takes only there
 * (`ROW_GROUP_SIZE`: not a database setting in DuckDB 1.5). Connections then `USE` ATTACHED_CATALOG.
 */
export interface AttachOptions {
  rowGroupSize: number;
}

export async function createInstance(file: string, settings: Record<string, string>, log: OpenLog, attach?: AttachOptions): Promise<DuckDBInstance> {
  if (file === ':memory:') return DuckDBInstance.create(file, settings);
  const open = attach === undefined ? () => DuckDBInstance.create(file, settings) : () => attachInstance(file, settings, attach);
  const wal = `${file}.wal`;
  // What this start has already done to the files, for a refusal that comes after it.
  const done: string[] = [];
  const record: OpenLog = (message) => {
    done.push(message);
    log(message);
  };
  let attempts = 0;
  for (;;) {
    let failure: unknown;
    try {
      return await open();
    } catch (e) {
      failure = e;
    }
    attempts++;
    const kind = classifyOpenFailure(failure);
    const walFailure = kind.kind === 'wal-needs-default-database' || kind.kind === 'wal-corrupt-at' || kind.kind === 'wal-unreplayable';
    if (!walFailure || attempts >= MAX_ATTEMPTS || !existsSync(wal)) throw refusal(file, kind, failure, done);
    if (kind.kind === 'wal-needs-default-database') {
      record(
        `The database ${file} did not open the normal way (${firstLine(failure)}). ` +
          'Replaying its write-ahead log through a second route (ATTACH from an in-memory database), which DuckDB 1.5 needs after a crash that followed a new nested field.',
      );
      const second = await replayByAttach(file).then(
        () => undefined,
        (e: unknown) => e,
      );
      if (second === undefined) {
        record(`The write-ahead log of ${file} was replayed and checkpointed; no acknowledged data was lost.`);
        continue;
      }
      const again = classifyOpenFailure(second);
      if (again.kind === 'wal-corrupt-at') await cutCorruptTail(file, again.position, second, record);
      else if (again.kind === 'wal-needs-default-database' || again.kind === 'wal-unreplayable') await moveAside(file, second, record);
      else throw refusal(file, again, second, done);
      continue;
    }
    if (kind.kind === 'wal-corrupt-at') await cutCorruptTail(file, kind.position, failure, record);
    else await moveAside(file, failure, record);
  }
}

/** The StartupError for a failure that is not dealt with here; `done` is what this start already did. */
function refusal(file: string, failure: OpenFailure, cause: unknown, done: readonly string[] = []): StartupError {
  const error = refusalOf(file, failure, cause);
  if (done.length === 0) return error;
  const message = error.message.replace(/ ?Nothing was changed( or deleted)?\./, '');
  return new StartupError(error.code, `${message} Before this, the start-up had done this: ${done.join(' ')}`, { cause });
}

function refusalOf(file: string, failure: OpenFailure, cause: unknown): StartupError {
  const dir = path.dirname(file);
  switch (failure.kind) {
    case 'disk-full':
      return new StartupError(
        'DISK_FULL',
        `The disk holding ${dir} is full (${firstLine(cause)}). Quarry needs free space to open its database ` +
          '(it replays and checkpoints its write-ahead log at start-up). Free some space on that disk, then start again; nothing was changed or deleted.',
        { cause },
      );
    case 'locked':
      return new StartupError(
        'DATA_DIR_IN_USE',
        `The database ${file} is open in another process (${failure.holder}). Only one process may use a data folder: stop it, or give this one another DATA_DIR. Nothing was changed.`,
        { cause },
      );
    case 'not-writable':
      return new StartupError(
        'DATA_DIR_NOT_WRITABLE',
        `The database ${file} cannot be opened for writing (${firstLine(cause)}). Mount the data folder read-write or give this process write permission, then start again; nothing was changed.`,
        { cause },
      );
    case 'too-new':
      return new StartupError(
        'DATA_TOO_NEW',
        `The database ${file} was written by a newer DuckDB than this build of Quarry uses (${firstLine(cause)}). ` +
          'Run the newer Quarry again, or restore a copy of the data folder made for this version. Nothing was changed.',
        { cause },
      );
    case 'wal-needs-default-database':
    case 'wal-corrupt-at':
    case 'wal-unreplayable':
    case 'unknown':
      return new StartupError(
        'DATA_UNREADABLE',
        `The database ${file} could not be opened: ${messageOf(cause)}. Nothing was changed or deleted. ` +
          'Keep a copy of the data folder and report this message with it.',
        { cause },
      );
  }
}

/**
 * An in-memory instance with `file` attached as ATTACHED_CATALOG. Spills go beside the file, as
 * they do when the file is the default database (an in-memory one would spill into the working
 * directory).
 */
async function attachInstance(file: string, settings: Record<string, string>, attach: AttachOptions): Promise<DuckDBInstance> {
  const instance = await DuckDBInstance.create(':memory:', { temp_directory: `${file}.tmp`, ...settings });
  try {
    await runOnce(instance, [`ATTACH ${quoteString(file)} AS ${ATTACHED_CATALOG} (ROW_GROUP_SIZE ${attach.rowGroupSize})`]);
    return instance;
  } catch (e) {
    instance.closeSync();
    throw e;
  }
}

/** Replays the log by attaching the file to an in-memory database, then checkpoints it. */
async function replayByAttach(file: string): Promise<void> {
  const instance = await DuckDBInstance.create(':memory:');
  try {
    await runOnce(instance, [`ATTACH ${quoteString(file)} AS quarry_recovered`, 'CHECKPOINT quarry_recovered', 'DETACH quarry_recovered']);
  } finally {
    instance.closeSync();
  }
}

/** Runs `statements` in order on a connection of its own, closed afterwards. */
async function runOnce(instance: DuckDBInstance, statements: readonly string[]): Promise<void> {
  const conn = await instance.connect();
  try {
    for (const sql of statements) await conn.run(sql);
  } finally {
    conn.closeSync();
  }
}

/**
 * A log entry starts with its size and checksum (8 bytes each); DuckDB's message gives the
 * position of the entry's data, after them.
 */
const ENTRY_HEADER_BYTES = 16;

/** Keeps a copy of the whole log, then cuts the log where its first corrupt entry starts. */
async function cutCorruptTail(file: string, position: number, cause: unknown, log: OpenLog): Promise<void> {
  const wal = `${file}.wal`;
  const bytes = readFileSync(wal);
  const start = position - ENTRY_HEADER_BYTES;
  if (start <= 0 || start >= bytes.length) throw refusalOf(file, { kind: 'unknown' }, cause);
  const copy = `${wal}.corrupt-tail-${stamp()}`;
  await copyFile(wal, copy);
  await truncate(wal, start);
  const zeros = bytes.subarray(start).every((b) => b === 0);
  log(
    zeros
      ? `The write-ahead log of ${file} ended in ${bytes.length - start} zero bytes after its last whole entry (as a crash can leave); the log was cut there. ` +
          `Nothing acknowledged is lost (every acknowledged write was whole before the crash). The log as it was is kept at ${copy}.`
      : `THE WRITE-AHEAD LOG of ${file} HAS A CORRUPT ENTRY at byte ${start} of ${bytes.length} (${firstLine(cause)}). ` +
          `Everything before it is replayed; the log as it was, with whatever followed, is kept at ${copy}. Report this message with that file.`,
  );
}

async function moveAside(file: string, cause: unknown, log: OpenLog): Promise<void> {
  const wal = `${file}.wal`;
  const aside = `${wal}.unreplayable-${stamp()}`;
  await rename(wal, aside);
  log(
    `QUARRY COULD NOT REPLAY THE WRITE-AHEAD LOG of ${file}: ${firstLine(cause)}. ` +
      `It was moved, not deleted, to ${aside}. The service starts with the data checkpointed before the crash; ` +
      'events and changes committed after the last checkpoint are in that file only. To recover them: stop Quarry, ' +
      `copy ${file} and ${aside} somewhere safe, and open the copy (renamed back to ${path.basename(wal)}) with a newer DuckDB ` +
      'release; report the message above with the files.',
  );
}

function stamp(): string {
  return new Date().toISOString().replace(/[:.]/g, '-');
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

function firstLine(e: unknown): string {
  return (messageOf(e).split('\n')[0] ?? '').trim();
}

function quoteString(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}
