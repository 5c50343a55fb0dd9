/**
 * A throw-away PostgreSQL 15 on loopback for the baseline: installs Debian's package when missing
 * (as root), initialises a cluster in a temp directory, starts it, and stops it again.
 */
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { freePort, run } from '../procs.ts';

export interface PgServer {
  host: string;
  port: number;
  version: string;
  stop(): Promise<void>;
}

const BIN_DIRS = ['/usr/lib/postgresql/15/bin', '/usr/lib/postgresql/16/bin', '/usr/lib/postgresql/17/bin'];

function findBinDir(): string | undefined {
  return BIN_DIRS.find((d) => existsSync(path.join(d, 'initdb')));
}

/**
 * The directory of Debian's PostgreSQL binaries, installing the package first when it is missing
 * (as root only; `notRoot` is the message otherwise).
 */
export async function ensurePostgresInstalled(log: (line: string) => void, notRoot: string): Promise<string> {
  const found = findBinDir();
  if (found !== undefined) return found;
  if (process.getuid?.() !== 0) throw new Error(notRoot);
  log('  installing PostgreSQL (apt-get install -y postgresql) ...');
  const update = await run('apt-get', ['update']);
  if (update.code !== 0) throw new Error(`apt-get update failed: ${update.stderr.slice(-500)}`);
  const inst = await run('apt-get', ['install', '-y', '--no-install-recommends', 'postgresql']);
  if (inst.code !== 0) throw new Error(`apt-get install postgresql failed: ${inst.stderr.slice(-500)}`);
  const bin = findBinDir();
  if (bin === undefined) throw new Error('PostgreSQL was installed but initdb was not found');
  return bin;
}

/** Runs a PostgreSQL tool as the `postgres` user when we are root (initdb refuses root). */
export function asPostgres(bin: string, args: readonly string[]) {
  if (process.getuid?.() !== 0) return run(bin, args);
  const quoted = [bin, ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(' ');
  return run('su', ['postgres', '-s', '/bin/sh', '-c', quoted]);
}

export async function startPostgres(workDir: string, log: (line: string) => void): Promise<PgServer> {
  const bin = await ensurePostgresInstalled(log, 'PostgreSQL is not installed and the bench is not root: install `postgresql` or pass --no-baseline');
  const dataDir = path.join(workDir, 'pgdata');
  const socketDir = path.join(workDir, 'pgsock');
  rmSync(dataDir, { recursive: true, force: true });
  mkdirSync(dataDir, { recursive: true });
  mkdirSync(socketDir, { recursive: true });
  if (process.getuid?.() === 0) {
    await run('chown', ['-R', 'postgres:postgres', workDir]);
    await run('chmod', ['755', workDir]);
  }
  const init = await asPostgres(path.join(bin, 'initdb'), ['-D', dataDir, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8']);
  if (init.code !== 0) throw new Error(`initdb failed: ${init.stderr.slice(-800)}`);
  const port = await freePort();
  // A fair, modestly tuned configuration for a 2-core machine: more shared buffers and sort memory
  // than the defaults; parallel query as shipped; loopback only.
  const options = [
    `-p ${port}`,
    `-k ${socketDir}`,
    "-c listen_addresses='127.0.0.1'",
    '-c shared_buffers=512MB',
    '-c work_mem=64MB',
    '-c maintenance_work_mem=256MB',
    '-c max_wal_size=4GB',
    '-c synchronous_commit=on',
    "-c timezone='UTC'",
  ].join(' ');
  const start = await asPostgres(path.join(bin, 'pg_ctl'), ['-D', dataDir, '-o', options, '-l', path.join(workDir, 'pg.log'), '-w', 'start']);
  if (start.code !== 0) throw new Error(`pg_ctl start failed: ${start.stderr.slice(-800)} ${start.stdout.slice(-800)}`);
  const version = (await run(path.join(bin, 'postgres'), ['--version'])).stdout.trim();
  return {
    host: '127.0.0.1',
    port,
    version,
    async stop() {
      await asPostgres(path.join(bin, 'pg_ctl'), ['-D', dataDir, '-m', 'fast', '-w', 'stop']);
    },
  };
}

/** Where the PostgreSQL client tools live (for psql). */
export function psqlPath(): string {
  const dir = findBinDir();
  return dir === undefined ? 'psql' : path.join(dir, 'psql');
}
