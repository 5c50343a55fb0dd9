/**
 * A real PostgreSQL (Debian's package) on loopback for the shared-metadata tests: installed with
 * apt-get when missing (CI runs as root), a fresh cluster in a temporary directory, trust auth on
 * 127.0.0.1 only, stopped and deleted at the end.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface TestPostgres {
  /** postgres://postgres@127.0.0.1:<port>/<database> */
  url(database?: string): string;
  port: number;
  /** Creates a database and returns its URL. */
  createDatabase(name: string): Promise<string>;
  /** Stops the server (fast shutdown) without deleting it; `start` brings it back on the same port. */
  pause(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

const BIN_DIRS = ['/usr/lib/postgresql/15/bin', '/usr/lib/postgresql/16/bin', '/usr/lib/postgresql/17/bin'];

function binDir(): string | undefined {
  return BIN_DIRS.find((d) => existsSync(path.join(d, 'initdb')));
}

function run(command: string, args: readonly string[]): Promise<{ code: number; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, out }));
  });
}

function asPostgres(bin: string, args: readonly string[]) {
  if (process.getuid?.() !== 0) return run(bin, args);
  const quoted = [bin, ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(' ');
  return run('su', ['postgres', '-s', '/bin/sh', '-c', quoted]);
}

async function must(what: string, p: Promise<{ code: number; out: string }>): Promise<string> {
  const r = await p;
  if (r.code !== 0) throw new Error(`${what} failed (${r.code}): ${r.out.slice(-800)}`);
  return r.out;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const a = server.address();
      const port = typeof a === 'object' && a !== null ? a.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function ensureInstalled(): Promise<string> {
  let bin = binDir();
  if (bin !== undefined) return bin;
  if (process.getuid?.() !== 0) {
    throw new Error('PostgreSQL is not installed and the tests are not root: apt-get install postgresql');
  }
  await must('apt-get update', run('apt-get', ['update']));
  await must('apt-get install postgresql', run('apt-get', ['install', '-y', '--no-install-recommends', 'postgresql']));
  bin = binDir();
  if (bin === undefined) throw new Error('PostgreSQL was installed but initdb was not found');
  return bin;
}

export async function startTestPostgres(): Promise<TestPostgres> {
  const bin = await ensureInstalled();
  const work = await mkdtemp(path.join(tmpdir(), 'quarry-pg-'));
  const dataDir = path.join(work, 'data');
  const socketDir = path.join(work, 'sock');
  await mkdir(dataDir);
  await mkdir(socketDir);
  if (process.getuid?.() === 0) {
    await must('chown', run('chown', ['-R', 'postgres:postgres', work]));
    await chmod(work, 0o755);
  }
  await must('initdb', asPostgres(path.join(bin, 'initdb'), ['-D', dataDir, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8']));
  const port = await freePort();
  const options = [
    `-p ${port}`,
    `-k ${socketDir}`,
    "-c listen_addresses='127.0.0.1'",
    '-c shared_buffers=32MB',
    '-c fsync=off',
    "-c timezone='UTC'",
  ].join(' ');
  const pgCtl = path.join(bin, 'pg_ctl');
  const start = () =>
    must('pg_ctl start', asPostgres(pgCtl, ['-D', dataDir, '-o', options, '-l', path.join(work, 'pg.log'), '-w', 'start']));
  const halt = () => must('pg_ctl stop', asPostgres(pgCtl, ['-D', dataDir, '-m', 'fast', '-w', 'stop']));
  await start();
  const url = (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`;
  return {
    url,
    port,
    async createDatabase(name) {
      await must('createdb', asPostgres(path.join(bin, 'createdb'), ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', name]));
      return url(name);
    },
    pause: async () => {
      await halt();
    },
    start: async () => {
      await start();
    },
    async stop() {
      await halt().catch(() => undefined);
      await rm(work, { recursive: true, force: true });
    },
  };
}
