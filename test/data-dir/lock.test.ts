/**
 * The data folder lock (src/data-dir/lock.ts) on its own: one holder per folder, in one process
 * and across processes; shared holders within a process; released by the kernel on kill -9; and a
 * refusal that names the right holder even when it comes between the holder taking the lock and
 * writing who it is, over a description a dead holder left.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { LOCK_FILE, lockFolder } from '../../src/data-dir/lock.ts';
import { kill9 } from '../support/process.ts';
import { tempDirs } from '../support/temp-dirs.ts';

const root = path.resolve(import.meta.dirname, '../..');
const tempDir = tempDirs('lock');

const refusal = (pid: number) => (e: unknown) =>
  e instanceof Error && e.name === 'StartupError' && (e as { code?: string }).code === 'DATA_DIR_IN_USE' && new RegExp(`PID ${pid}\\b`).test(e.message);

/** A child that takes the folder's lock as lock.ts does, but waits `writeAfterMs` before it writes who it is. */
function slowHolder(dir: string, writeAfterMs: number): Promise<ChildProcess> {
  const code = `
    const fs = require('node:fs');
    const fsx = require('fs-native-extensions');
    const fd = fs.openSync(${JSON.stringify(path.join(dir, LOCK_FILE))}, fs.constants.O_RDWR | fs.constants.O_CREAT);
    // The holder's protocol (lock.ts): the owner byte, the description, then the described byte.
    if (!fsx.tryLock(fd, 0, 1)) process.exit(3);
    console.log('locked');
    setTimeout(() => {
      const text = Buffer.alloc(512, ' ');
      Buffer.from(JSON.stringify({ pid: process.pid, host: 'h', started_at: 'now', purpose: 'the slow holder' })).copy(text);
      fs.writeSync(fd, text, 0, text.length, 0);
      fsx.waitForLockSync(fd, 1, 1);
    }, ${writeAfterMs});
    setInterval(() => {}, 1000);
  `;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', code], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
    child.once('exit', (c) => reject(new Error(`the holder exited ${c}`)));
    child.stdout?.on('data', (d: Buffer) => {
      if (d.toString().includes('locked')) resolve(child);
    });
  });
}

test('one holder per folder within a process; released, the folder can be taken again', async () => {
  const dir = await tempDir();
  const first = lockFolder(dir, { what: 'DATA_DIR', purpose: 'test' });
  assert.throws(() => lockFolder(dir, { what: 'DATA_DIR', purpose: 'test' }), refusal(process.pid));
  first.release();
  first.release();
  lockFolder(dir, { what: 'DATA_DIR', purpose: 'test' }).release();
});

test('shared holders within a process count; another process is refused until the last lets go', async () => {
  const dir = await tempDir();
  const a = lockFolder(dir, { what: 'the chDB folder', purpose: 'test', shared: true });
  const b = lockFolder(dir, { what: 'the chDB folder', purpose: 'test', shared: true });
  assert.throws(() => lockFolder(dir, { what: 'the chDB folder', purpose: 'test' }), refusal(process.pid));
  a.release();
  assert.throws(() => lockFolder(dir, { what: 'the chDB folder', purpose: 'test' }), refusal(process.pid));
  b.release();
  lockFolder(dir, { what: 'the chDB folder', purpose: 'test' }).release();
});

test('a refusal between the holder taking the lock and writing who it is names that holder, not a dead one', async () => {
  const dir = await tempDir();
  // What a holder that died long ago left in the file.
  await writeFile(path.join(dir, LOCK_FILE), JSON.stringify({ pid: 999999, host: 'gone', started_at: 'then', purpose: 'a dead holder' }));
  const holder = await slowHolder(dir, 200);
  try {
    assert.throws(() => lockFolder(dir, { what: 'DATA_DIR', purpose: 'test' }), refusal(holder.pid as number));
  } finally {
    await kill9(holder);
  }
});

test('kill -9 of the holder frees the folder at once (the kernel drops the lock)', async () => {
  const dir = await tempDir();
  const holder = await slowHolder(dir, 0);
  assert.throws(() => lockFolder(dir, { what: 'DATA_DIR', purpose: 'test' }));
  await kill9(holder);
  lockFolder(dir, { what: 'DATA_DIR', purpose: 'test' }).release();
});
