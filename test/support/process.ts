/**
 * Runs the real service as a child process (`node --import tsx src/main.ts`), for tests that must
 * kill it the hard way.
 */
import { type ChildProcess, type ChildProcessByStdio, spawn } from 'node:child_process';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { PRIVATE_TOKEN, PUBLIC_TOKEN } from './server.ts';

export interface ServiceProcess {
  child: ChildProcess;
  url: string;
  /** SIGKILL, and wait for the process to be gone. */
  kill9(): Promise<void>;
}

const root = path.resolve(import.meta.dirname, '../..');

/** Starts `node --import tsx src/main.ts` with the test tokens on a free port; the caller watches its output. */
export function spawnChild(dataDir: string, env: Record<string, string> = {}): ChildProcessByStdio<null, Readable, Readable> {
  return spawn(process.execPath, ['--import', 'tsx', path.join(root, 'src/main.ts')], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      // Without this the child believes it is a test file of this runner.
      NODE_TEST_CONTEXT: undefined,
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      LOGFLARE_PRIVATE_ACCESS_TOKEN: PRIVATE_TOKEN,
      LOGFLARE_PUBLIC_ACCESS_TOKEN: PUBLIC_TOKEN,
      ...env,
    },
  });
}

export function spawnService(dataDir: string, env: Record<string, string> = {}): Promise<ServiceProcess> {
  return new Promise((resolve, reject) => {
    const child = spawnChild(dataDir, env);
    let out = '';
    let err = '';
    const onExit = (code: number | null) => reject(new Error(`the service exited early (${code}): ${err}`));
    child.on('exit', onExit);
    child.stderr?.on('data', (d: Buffer) => {
      err += d.toString();
    });
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m?.[1]) {
        child.off('exit', onExit);
        resolve({
          child,
          url: m[1],
          kill9: () =>
            new Promise<void>((done) => {
              if (child.exitCode !== null || child.signalCode !== null) return done();
              child.once('exit', () => done());
              child.kill('SIGKILL');
            }),
        });
      }
    });
  });
}
