/**
 * Runs the real service as a child process (`node dist/src/quarry.mjs`, what `npm start` runs, built
 * from src/ first by scripts/build.mjs), for tests that must kill it the hard way.
 */
import { type ChildProcess, type ChildProcessByStdio, spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import { build, serviceEntry } from '../../scripts/build.mjs';
import { repoRoot } from './repo.ts';
import { PRIVATE_TOKEN, PUBLIC_TOKEN } from './tokens.ts';

export interface ServiceProcess {
  child: ChildProcess;
  url: string;
  /** SIGKILL, and wait for the process to be gone. */
  kill9(): Promise<void>;
}

let built = false;

/** The arguments that start the service: dist/ is brought up to date with src/ once per test process. */
export function serviceArgs(): string[] {
  if (!built) {
    build();
    built = true;
  }
  return [serviceEntry];
}

/** The start-up tokens a child gets; a token left out is not set (the parent's environment's, if any, applies). */
export interface ChildTokens {
  private?: string;
  public?: string;
}

/** Starts the service (serviceArgs()) on a free port with `tokens` (default: the test tokens); the caller watches its output. */
export function spawnChild(
  dataDir: string,
  env: Record<string, string> = {},
  tokens: ChildTokens = { private: PRIVATE_TOKEN, public: PUBLIC_TOKEN },
): ChildProcessByStdio<null, Readable, Readable> {
  const tokenEnv: Record<string, string> = {};
  if (tokens.private !== undefined) tokenEnv.LOGFLARE_PRIVATE_ACCESS_TOKEN = tokens.private;
  if (tokens.public !== undefined) tokenEnv.LOGFLARE_PUBLIC_ACCESS_TOKEN = tokens.public;
  return spawn(process.execPath, serviceArgs(), {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      // Without this the child believes it is a test file of this runner.
      NODE_TEST_CONTEXT: undefined,
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      ...tokenEnv,
      ...env,
    },
  });
}

/** SIGKILL, and wait for the process to be gone. */
export function kill9(child: ChildProcess): Promise<void> {
  return new Promise<void>((done) => {
    if (child.exitCode !== null || child.signalCode !== null) return done();
    child.once('exit', () => done());
    child.kill('SIGKILL');
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
          kill9: () => kill9(child),
        });
      }
    });
  });
}
