/**
 * The data folder's format marker, `DATA_DIR/quarry-format.json`: which layout of the folder a
 * build wrote, so that an older build refuses a folder a newer one has written (a downgrade)
 * instead of misreading it. Bumped when a change to what is stored cannot be read by earlier
 * builds. A folder without a marker (new, or from a build before markers) gets this build's.
 */
import { readFileSync } from 'node:fs';
import { readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { sourceFile } from '../source-files.ts';
import { errnoCode, isNotWritable, StartupError } from './startup-error.ts';

/**
 * The format this build writes and the newest it reads. 1: the first marked layout. 2: every
 * record holds a presence marker (src/storage/presence.ts), which an earlier build would show as a
 * field and fail to insert beside; an earlier folder is upgraded at open. 3: each source records the
 * rule its keys are renamed by (`key_rule`, src/ingest/keys.ts), a column of the embedded metadata
 * that an earlier build's inserts would not fill.
 */
export const DATA_FORMAT = 3;
export const FORMAT_FILE = 'quarry-format.json';

interface Marker {
  format: number;
  written_by: string;
}

const quarryVersion = (() => {
  try {
    const pkg = JSON.parse(readFileSync(sourceFile('..', 'package.json'), 'utf8')) as { version?: string };
    return `quarry ${pkg.version ?? '?'}`;
  } catch {
    return 'quarry';
  }
})();

/**
 * Refuses a folder written in a newer format (StartupError `DATA_TOO_NEW`, nothing changed);
 * otherwise records this build's format when the marker is missing or older. Call with the
 * folder's lock held.
 */
export async function checkDataFormat(dir: string, what = 'DATA_DIR'): Promise<void> {
  const file = path.join(dir, FORMAT_FILE);
  const text = await readFile(file, 'utf8').catch((e: unknown) => {
    if (errnoCode(e) === 'ENOENT') return undefined;
    throw new StartupError('DATA_UNREADABLE', `${file} could not be read (${(e as Error).message}); nothing was changed.`, { cause: e });
  });
  if (text !== undefined) {
    const marker = parse(text);
    if (marker === undefined) {
      throw new StartupError(
        'DATA_UNREADABLE',
        `${file} is not a format marker Quarry can read. Nothing was changed. If ${what} ${dir} was written by this version, remove that file and start again.`,
      );
    }
    if (marker.format > DATA_FORMAT) {
      throw new StartupError(
        'DATA_TOO_NEW',
        `${what} ${dir} was written by a newer Quarry (${marker.written_by}, data format ${marker.format}); this build (${quarryVersion}) reads formats up to ${DATA_FORMAT}. ` +
          'Run that newer version again, or restore a copy of the folder made for this one. Nothing was changed.',
      );
    }
    if (marker.format === DATA_FORMAT) return;
  }
  const fresh: Marker = { format: DATA_FORMAT, written_by: quarryVersion };
  const temp = `${file}.tmp-${process.pid}`;
  try {
    await writeFile(temp, `${JSON.stringify(fresh)}\n`);
    await rename(temp, file);
  } catch (e) {
    if (errnoCode(e) === 'ENOSPC')
      throw new StartupError('DISK_FULL', `The disk holding ${what} ${dir} is full. Free some space on it, then start again.`, { cause: e });
    if (isNotWritable(e))
      throw new StartupError('DATA_DIR_NOT_WRITABLE', `${what} ${dir} cannot be written (${(e as Error).message}). Quarry needs to write to its data folder.`, {
        cause: e,
      });
    throw e;
  }
}

function parse(text: string): Marker | undefined {
  try {
    const m = JSON.parse(text) as Partial<Marker>;
    if (typeof m.format !== 'number' || !Number.isInteger(m.format) || m.format < 1) return undefined;
    return { format: m.format, written_by: typeof m.written_by === 'string' ? m.written_by : 'an unknown version' };
  } catch {
    return undefined;
  }
}
