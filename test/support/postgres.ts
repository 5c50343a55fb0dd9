/**
 * A real PostgreSQL (Debian's package) on loopback for the shared-metadata tests: installed with
 * apt-get when missing (CI runs as root), a fresh cluster in a temporary directory, trust auth on
 * 127.0.0.1 only, stopped and deleted at the end.
 */
import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { asPostgres, ensurePostgresInstalled } from '../../bench/baseline/server.ts';
import { type CommandResult, freePort, run } from '../../bench/procs.ts';

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

async function must(what: string, p: Promise<CommandResult>): Promise<string> {
  const r = await p;
  if (r.code !== 0) throw new Error(`${what} failed (${r.code}): ${(r.stderr + r.stdout).slice(-800)}`);
  return r.stdout;
}

export async function startTestPostgres(): Promise<TestPostgres> {
  const bin = await ensurePostgresInstalled(() => {}, 'PostgreSQL is not installed and the tests are not root: apt-get install postgresql');
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
  const options = [`-p ${port}`, `-k ${socketDir}`, "-c listen_addresses='127.0.0.1'", '-c shared_buffers=32MB', '-c fsync=off', "-c timezone='UTC'"].join(' ');
  const pgCtl = path.join(bin, 'pg_ctl');
  const start = () => must('pg_ctl start', asPostgres(pgCtl, ['-D', dataDir, '-o', options, '-l', path.join(work, 'pg.log'), '-w', 'start']));
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
