/**
 * Start-up after a crash: the write-ahead log DuckDB 1.5.6 cannot replay when it opens the file
 * (a field added inside a STRUCT) is replayed through the second route; a log that cannot be
 * replayed at all is moved aside, never deleted, and the operator is told what to do.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { copyFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { openDuckDb } from '../../src/embedded-db/database.ts';
import { tempDirs } from '../support/temp-dirs.ts';

const root = path.resolve(import.meta.dirname, '../..');
const tempDir = tempDirs('recovery');

/** Runs `statements` in a child process on `file`, then kills it with SIGKILL (no checkpoint). */
function writeThenKill(file: string, statements: string[]): Promise<void> {
  const code = `
    import { DuckDBInstance } from '@duckdb/node-api';
    const instance = await DuckDBInstance.create(${JSON.stringify(file)});
    const conn = await instance.connect();
    for (const s of ${JSON.stringify(statements)}) await conn.run(s);
    console.log('done');
    setInterval(() => {}, 1000);
  `;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', code], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    child.on('exit', (c, signal) => (signal === 'SIGKILL' ? resolve() : reject(new Error(`child exited ${c}: ${err}`))));
    child.stdout.on('data', (d: Buffer) => {
      if (d.toString().includes('done')) child.kill('SIGKILL');
    });
  });
}

const NESTED = [
  'CREATE TABLE t (id VARCHAR, metadata STRUCT(request STRUCT(path VARCHAR)))',
  "INSERT INTO t VALUES ('before', {'request': {'path': '/a'}})",
  'CHECKPOINT',
  'ALTER TABLE t ADD COLUMN metadata.request.url VARCHAR',
  "INSERT INTO t VALUES ('after', {'request': {'path': '/b', 'url': 'https://x'}})",
];

/** Both ways the file is opened: as the default database, and attached (DUCKDB_ROW_GROUP_SIZE). */
const routes = [
  { name: 'opened as the default database', options: {} },
  { name: 'attached with its own row group size', options: { rowGroupSize: 4096 } },
] as const;

for (const route of routes) {
  test(`${route.name}: a log holding a new nested field, left by kill -9, is replayed and nothing is lost`, async () => {
    const dir = await tempDir();
    const file = path.join(dir, 'quarry.duckdb');
    await writeThenKill(file, NESTED);
    assert.ok(existsSync(`${file}.wal`), 'the crash left a write-ahead log');
    const lines: string[] = [];
    const db = await openDuckDb({ path: file, log: (m) => lines.push(m), ...route.options });
    try {
      const conn = await db.connect();
      const rows = (await conn.runAndReadAll('SELECT id, metadata.request.url AS url FROM t ORDER BY id')).getRowObjectsJS();
      assert.deepEqual(rows, [
        { id: 'after', url: 'https://x' },
        { id: 'before', url: null },
      ]);
    } finally {
      db.close();
    }
    // Attached, DuckDB replays such a log by itself (the second route is that same ATTACH).
    if (!('rowGroupSize' in route.options)) assert.match(lines.join('\n'), /replayed and checkpointed; no acknowledged data was lost/);
    assert.ok(!existsSync(`${file}.wal`), 'closing checkpointed the log');
    assert.deepEqual(
      readdirSync(dir).filter((f) => f.includes('unreplayable')),
      [],
    );
  });

  test(`${route.name}: a log that cannot be replayed at all is moved aside, never deleted, and the message says what to do`, async () => {
    const dir = await tempDir();
    const file = path.join(dir, 'quarry.duckdb');
    await writeThenKill(file, NESTED);
    const other = path.join(dir, 'other.duckdb');
    await writeThenKill(other, ['CREATE TABLE u (a INTEGER)', 'INSERT INTO u VALUES (1)', 'CHECKPOINT']);
    // A log that belongs to another database: neither route can replay it.
    await copyFile(`${file}.wal`, `${other}.wal`);
    const original = readFileSync(`${other}.wal`);
    const lines: string[] = [];
    const db = await openDuckDb({ path: other, log: (m) => lines.push(m), ...route.options });
    try {
      const conn = await db.connect();
      const rows = (await conn.runAndReadAll('SELECT a FROM u')).getRowObjectsJS();
      assert.deepEqual(rows, [{ a: 1 }], 'the checkpointed data is served');
    } finally {
      db.close();
    }
    const aside = readdirSync(dir).filter((f) => f.startsWith('other.duckdb.wal.unreplayable-'));
    assert.equal(aside.length, 1, 'the log was moved aside');
    assert.deepEqual(readFileSync(path.join(dir, aside[0] as string)), original, 'byte for byte');
    const text = lines.join('\n');
    assert.match(text, /COULD NOT REPLAY THE WRITE-AHEAD LOG/);
    assert.match(text, /moved, not deleted/);
    assert.match(text, /To recover them/);
  });
}
