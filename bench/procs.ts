/**
 * Small process and network helpers for the benchmark: free loopback ports, running commands,
 * reading a process's peak memory.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  cwd?: string;
  /** The child's whole environment (default: this process's). */
  env?: NodeJS.ProcessEnv;
}

/** Runs a command to completion; never throws for a non-zero exit (look at `code`). */
export function run(command: string, args: readonly string[], input?: string, options: RunOptions = {}): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'], ...options });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.on('error', () => {});
    child.stdin.end(input ?? '');
  });
}

/** Peak resident set size of a live process in bytes (Linux `VmHWM`), or NaN. */
export function peakRssBytes(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const m = /VmHWM:\s+(\d+)\s+kB/.exec(status);
    return m === null ? Number.NaN : Number(m[1]) * 1024;
  } catch {
    return Number.NaN;
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** CPU time (user + system) a live process has used, in ms, or NaN. */
export function cpuMs(pid: number): number {
  return cpuTicks(pid) * 10;
}

/** CPU time (user + system) a live process has used, in clock ticks (USER_HZ, 100 on Linux), or NaN. */
function cpuTicks(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) in parentheses.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return Number.NaN;
  }
}

/**
 * Waits until a process has used less than `share` of one core in two samples of `sampleMs` in a
 * row (its background work after ingest, e.g. ClickHouse merging parts or DuckDB checkpointing, is
 * done), at most `maxMs`. Returns the milliseconds waited.
 */
export async function waitQuiet(pid: number, maxMs = 120_000, share = 0.1, sampleMs = 1_000): Promise<number> {
  const started = Date.now();
  const ticksPerSecond = 100; // USER_HZ on Linux
  let quiet = 0;
  let last = cpuTicks(pid);
  while (Date.now() - started < maxMs && Number.isFinite(last)) {
    await sleep(sampleMs);
    const now = cpuTicks(pid);
    quiet = (now - last) / ticksPerSecond < (share * sampleMs) / 1_000 ? quiet + 1 : 0;
    last = now;
    if (quiet >= 2) break;
  }
  return Date.now() - started;
}
