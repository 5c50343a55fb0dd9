/**
 * Running podman the way this kind of machine needs (docs/DEPLOY.md): runc, vfs storage and no
 * rlimits, through the two configuration files next to this one, unless the caller's environment
 * already names its own (CONTAINERS_CONF, CONTAINERS_STORAGE_CONF).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import path from 'node:path';

const here = import.meta.dirname;

/** The environment podman runs with: the caller's, plus this folder's configuration files where it names none. */
export function podmanEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return {
    ...env,
    CONTAINERS_CONF: env.CONTAINERS_CONF || path.join(here, 'containers.conf'),
    CONTAINERS_STORAGE_CONF: env.CONTAINERS_STORAGE_CONF || path.join(here, 'storage.conf'),
  };
}

/** podman's version, or undefined when it is not installed. */
export function podmanVersion(): string | undefined {
  try {
    return execFileSync('podman', ['--version'], { encoding: 'utf8', env: podmanEnv(), stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return undefined;
  }
}

export interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  /** Called with each line of output (stdout and stderr) as it comes. */
  onLine?: (line: string) => void;
  /** Killed (SIGKILL) after this long; the result's code is then null. */
  timeoutMs?: number;
  /** Written to the process's stdin, which is closed after. */
  input?: string;
}

/** Runs a command to its end; never throws for a non-zero exit (see `podman`). */
export function run(command: string, args: string[], options: RunOptions = {}): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child: ChildProcess = spawn(command, args, { env: podmanEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const lines = (take: (s: string) => void) => {
      let partial = '';
      return (chunk: Buffer) => {
        const text = chunk.toString();
        take(text);
        if (!options.onLine) return;
        partial += text;
        const parts = partial.split(/\r?\n/);
        partial = parts.pop() ?? '';
        for (const line of parts) options.onLine(line);
      };
    };
    child.stdout?.on(
      'data',
      lines((s) => {
        stdout += s;
      }),
    );
    child.stderr?.on(
      'data',
      lines((s) => {
        stderr += s;
      }),
    );
    const timer = options.timeoutMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin?.end(options.input ?? '');
  });
}

/** `podman …`; throws with podman's message when it fails. Resolves to its stdout. */
export async function podman(args: string[], options: RunOptions = {}): Promise<string> {
  const r = await run('podman', args, options);
  if (r.code !== 0) {
    const why = r.code === null ? `no answer within ${options.timeoutMs} ms` : `exit ${r.code}`;
    throw new Error(`podman ${args.join(' ')} failed (${why}): ${(r.stderr || r.stdout).trim()}`);
  }
  return r.stdout;
}

/** Whether podman's storage holds this image. */
export async function imageExists(name: string): Promise<boolean> {
  return (await run('podman', ['image', 'exists', name])).code === 0;
}

/** 83.4 s, 2 min 05 s. */
export function seconds(ms: number): string {
  const s = ms / 1000;
  if (s < 100) return `${s.toFixed(1)} s`;
  const whole = Math.round(s);
  return `${Math.floor(whole / 60)} min ${String(whole % 60).padStart(2, '0')} s`;
}

/** 303 MB (decimal, as podman and docker print sizes). */
export function megabytes(bytes: number): string {
  return `${Math.round(bytes / 1e6)} MB`;
}
