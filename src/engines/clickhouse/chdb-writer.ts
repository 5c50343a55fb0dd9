/**
 * A chDB session for event inserts, taking rows as JSONEachRow text or as RowBinary.
 *
 * Text goes through chDB's raw insert (the bytes handed to ClickHouse as they are). RowBinary costs
 * ClickHouse far less to read into the `JSON` column (rows-binary.ts), but chDB passes raw-insert
 * bytes inline in the statement, where binary data is not safe (two newline bytes in a row end it
 * early), so binary rows are written to a scratch file beside the database and read with
 * `INSERT … FROM INFILE`; the file is removed once the insert has finished. It is only a transport:
 * the rows are durable once the insert returns (ddl.ts), as with text.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { rm, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { quoteString } from './quote.ts';

export type RowFormat = 'JSONEachRow' | 'RowBinary';

interface ChdbSession {
  insert(p: { table: string; values: Buffer; format: 'JSONEachRow'; settings: Record<string, string | number> }): Promise<unknown>;
  queryAsync(sql: string, format?: string): Promise<unknown>;
  close(): void;
}

export interface ChdbModule {
  Session: new (path: string) => ChdbSession;
}

export interface ChdbWriter {
  /** Inserts `rows` into `table` (plain `db.table`); resolves once ClickHouse has stored them. */
  insert(table: string, rows: Buffer, format: RowFormat, settings: Record<string, string | number>): Promise<void>;
  close(): void;
}

/** Scratch folders this process has open (`scratchFolder`, released by `releaseScratchFolder`). */
const openFolders = new Set<string>();

/**
 * A folder of its own, under the chDB directory, for one connection's scratch files
 * (`quarry-insert-scratch/<pid>-<random>`). Folders left by a crash are removed first: their files
 * are rows of inserts that never finished, so never acknowledged. A folder is left only when it is
 * open in this process or its pid is another running process; a restarted container often runs
 * Quarry under the same pid as before, so this process's pid alone does not keep a folder.
 */
export function scratchFolder(dir: string): string {
  const parent = path.join(dir, 'quarry-insert-scratch');
  mkdirSync(parent, { recursive: true });
  for (const name of readdirSync(parent)) {
    const folder = path.join(parent, name);
    const pid = Number(name.split('-')[0]);
    const inUse = openFolders.has(folder) || (Number.isInteger(pid) && pid !== process.pid && running(pid));
    if (!inUse) rmSync(folder, { recursive: true, force: true });
  }
  const own = path.join(parent, `${process.pid}-${randomUUID()}`);
  mkdirSync(own);
  openFolders.add(own);
  return own;
}

/** Removes a folder `scratchFolder` gave, once its connection's inserts are over. */
export async function releaseScratchFolder(folder: string): Promise<void> {
  openFolders.delete(folder);
  await rm(folder, { recursive: true, force: true });
}

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as { code?: string }).code === 'EPERM';
  }
}

/** Opens an insert session on the chDB database at `dir`, its scratch files in `scratch` (`scratchFolder`). */
export function openChdbWriter(dir: string, scratch: string, chdb: ChdbModule): ChdbWriter {
  const session = new chdb.Session(dir);
  return {
    async insert(table, rows, format, settings) {
      if (format === 'JSONEachRow') {
        await session.insert({ table, values: rows, format, settings });
        return;
      }
      const file = path.join(scratch, `${randomUUID()}.bin`);
      await writeFile(file, rows);
      try {
        await session.queryAsync(`INSERT INTO ${table} FROM INFILE ${quoteString(file)}${settingsClause(settings)} FORMAT RowBinary`);
      } finally {
        await unlink(file).catch(() => undefined);
      }
    },
    close() {
      session.close();
    },
  };
}

/** ` SETTINGS k = v, …` for our own setting names: numbers as they are, anything else a string literal. */
function settingsClause(settings: Record<string, string | number>): string {
  const entries = Object.entries(settings);
  if (entries.length === 0) return '';
  for (const [k] of entries) if (!/^\w+$/.test(k)) throw new Error(`not a setting name: ${k}`);
  return ` SETTINGS ${entries.map(([k, v]) => `${k} = ${typeof v === 'number' && Number.isFinite(v) ? String(v) : quoteString(String(v))}`).join(', ')}`;
}
