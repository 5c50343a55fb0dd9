/**
 * Restores package-lock.json entries for other platforms' optional binaries (DuckDB's and Biome's
 * per-platform packages). The npm registry mirror of our build machines serves only linux-x64
 * builds, so `npm install` there leaves them out of the lock, and `npm ci` then refuses the lock as
 * out of sync. Run after any `npm install` that rewrites the lock:
 *   node --import tsx scripts/lock-optional-platforms.ts
 */
import { readFileSync, writeFileSync } from 'node:fs';

interface LockEntry {
  version?: string;
  license?: string;
  dev?: boolean;
  optional?: boolean;
  os?: string[];
  cpu?: string[];
  libc?: string[];
  optionalDependencies?: Record<string, string>;
}

const path = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(path, 'utf8')) as { packages: Record<string, LockEntry> };
const platform = /-(android|darwin|linux|win32)-(arm64|x64)(-musl|-gnu)?$/;
const added: string[] = [];

for (const entry of Object.values(lock.packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const key = `node_modules/${name}`;
    const m = platform.exec(name);
    if (lock.packages[key] || !m) continue;
    const stub: LockEntry = { version, cpu: [m[2]!], license: entry.license ?? 'MIT', optional: true, os: [m[1]!] };
    if (m[1] === 'linux') stub.libc = [m[3] === '-musl' ? 'musl' : 'glibc'];
    if (entry.dev) stub.dev = true;
    // npm writes an entry's keys as version first, then in alphabetical order; so do we, or the
    // next `npm install` rewrites the lock.
    const { version: v, ...rest } = stub;
    lock.packages[key] = { version: v, ...Object.fromEntries(Object.entries(rest).sort(([a], [b]) => (a < b ? -1 : 1))) };
    added.push(name);
  }
}

const sorted = Object.fromEntries(Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : 1)));
writeFileSync(path, `${JSON.stringify({ ...lock, packages: sorted }, null, 2)}\n`);
console.log(added.length ? `Added ${added.length} optional platform entries: ${added.join(', ')}` : 'The lock already lists every platform.');
