/**
 * Opening the database file after a crash, without ever deleting anything.
 *
 * DuckDB 1.5.6 cannot replay, when it opens a database file as its default database, a
 * write-ahead log that holds `ALTER TABLE … ADD COLUMN a.b.c` (a field added inside a STRUCT):
 * "Failure while replaying WAL file …: Calling DatabaseManager::GetDefaultDatabase with no default
 * database set". The same log replays correctly when the file is ATTACHed to an in-memory
 * database, because a default database then exists. So when the normal open fails and a log is
 * there, the log is replayed that way and checkpointed into the file, and the file is opened again
 * normally. Only when that fails too is the log moved aside (never deleted) under a name that says
 * what it is, and the operator told what happened and what to do.
 *
 * A full disk is never treated as a bad log: the start-up stops with a message saying so.
 */
import { existsSync } from 'node:fs';
import { rename } from 'node:fs/promises';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { isDiskFull } from '../../storage/disk-full.ts';
import { quoteString } from './types.ts';

/** A start-up failure whose message tells a person what happened and what to do. */
export class StartupError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StartupError';
  }
}

export type OpenLog = (message: string) => void;

export async function createInstance(file: string, settings: Record<string, string>, log: OpenLog): Promise<DuckDBInstance> {
  if (file === ':memory:') return DuckDBInstance.create(file, settings);
  let first: unknown;
  try {
    return await DuckDBInstance.create(file, settings);
  } catch (e) {
    first = e;
  }
  if (isDiskFull(first)) throw diskFull(file, first);
  const wal = `${file}.wal`;
  if (!existsSync(wal)) {
    throw new StartupError(
      `The database ${file} could not be opened: ${messageOf(first)}. Nothing was changed or deleted. ` +
        'Check that the file is readable and not open in another process (only one Quarry may use a DATA_DIR), then start again.',
      { cause: first },
    );
  }
  log(
    `The database ${file} did not open the normal way (${firstLine(first)}). ` +
      'Replaying its write-ahead log through a second route (ATTACH from an in-memory database), which DuckDB 1.5 needs after a crash that followed a new nested field.',
  );
  try {
    await replayByAttach(file);
    log(`The write-ahead log of ${file} was replayed and checkpointed; no acknowledged data was lost.`);
  } catch (e) {
    if (isDiskFull(e)) throw diskFull(file, e);
    const aside = `${wal}.unreplayable-${new Date().toISOString().replace(/[:.]/g, '-')}`;
    await rename(wal, aside);
    log(
      `QUARRY COULD NOT REPLAY THE WRITE-AHEAD LOG of ${file}: ${firstLine(e)}. ` +
        `It was moved, not deleted, to ${aside}. The service starts with the data checkpointed before the crash; ` +
        'events and changes committed after the last checkpoint are in that file only. To recover them: stop Quarry, ' +
        `copy ${file} and ${aside} somewhere safe, and open the copy (renamed back to ${path.basename(wal)}) with a newer DuckDB ` +
        'release; report the message above with the files.',
    );
  }
  try {
    return await DuckDBInstance.create(file, settings);
  } catch (e) {
    if (isDiskFull(e)) throw diskFull(file, e);
    throw new StartupError(
      `The database ${file} could not be opened even after its write-ahead log was dealt with: ${messageOf(e)}. Nothing was deleted.`,
      { cause: e },
    );
  }
}

/** Replays the log by attaching the file to an in-memory database, then checkpoints it. */
async function replayByAttach(file: string): Promise<void> {
  const instance = await DuckDBInstance.create(':memory:');
  try {
    const conn = await instance.connect();
    try {
      await conn.run(`ATTACH ${quoteString(file)} AS quarry_recovered`);
      await conn.run('CHECKPOINT quarry_recovered');
      await conn.run('DETACH quarry_recovered');
    } finally {
      conn.closeSync();
    }
  } finally {
    instance.closeSync();
  }
}

function diskFull(file: string, cause: unknown): StartupError {
  return new StartupError(
    `The disk holding ${path.dirname(file)} is full (${firstLine(cause)}). Quarry needs free space to open its database ` +
      '(it replays and checkpoints its write-ahead log at start-up). Free some space on that disk, then start again; nothing was changed or deleted.',
    { cause },
  );
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

function firstLine(e: unknown): string {
  return (messageOf(e).split('\n')[0] ?? '').trim();
}
