/**
 * Scratch folders for binary inserts (src/engines/clickhouse/chdb-writer.ts): a start-up removes
 * what a crashed process left, including a folder under this very pid (a restarted container
 * often runs Quarry under the pid it had before), and keeps folders still in use.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { releaseScratchFolder, scratchFolder } from '../../../src/engines/clickhouse/chdb-writer.ts';

test("a start-up removes crashed processes' scratch folders and keeps those in use", async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'quarry-scratch-'));
  try {
    const parent = path.join(dir, 'quarry-insert-scratch');
    const left = {
      samePid: path.join(parent, `${process.pid}-before-a-restart`),
      dead: path.join(parent, '2147483646-dead'),
      odd: path.join(parent, 'not-a-pid'),
      otherProcess: path.join(parent, `${process.ppid}-still-running`),
    };
    for (const folder of Object.values(left)) {
      await mkdir(folder, { recursive: true });
      await writeFile(path.join(folder, 'rows.bin'), 'unacknowledged');
    }
    const first = scratchFolder(dir);
    const second = scratchFolder(dir);
    assert.equal(existsSync(left.samePid), false);
    assert.equal(existsSync(left.dead), false);
    assert.equal(existsSync(left.odd), false);
    assert.equal(existsSync(left.otherProcess), true, 'another running process keeps its folder');
    assert.equal(existsSync(first), true, 'a folder open in this process survives the next start-up');
    assert.deepEqual((await readdir(parent)).sort(), [path.basename(left.otherProcess), path.basename(first), path.basename(second)].sort());
    await releaseScratchFolder(first);
    assert.equal(existsSync(first), false);
    scratchFolder(dir);
    assert.equal(existsSync(second), true);
    await releaseScratchFolder(second);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
