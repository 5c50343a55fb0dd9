/**
 * A local stand-in for `node:20-bookworm-slim`, for machines that reach Debian's mirror and the npm
 * registry but no registry of container images (docs/DEPLOY.md): Debian bookworm's minimal system
 * (`debootstrap --variant=minbase`), without apt's lists and caches, documentation or locales, plus
 * this machine's own Node.js and npm in /usr/local, where the official image keeps them. Debian's
 * own `nodejs` package in bookworm is Node 18, older than the service needs.
 *
 * The result is imported into podman as one layer, tagged by Debian release and Node version; it is
 * the cache: a later build finds it and skips all of this.
 */
import { execFileSync, spawn } from 'node:child_process';
import { chmod, copyFile, cp, mkdir, mkdtemp, readdir, realpath, rm, stat, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { podmanEnv } from './podman.ts';

export const SUITE = 'bookworm';

/** The local base's name: it changes with the Node.js version it carries. */
export function localBaseName(): string {
  return `localhost/quarry-base:${SUITE}-node${process.versions.node}`;
}

export interface BaseOptions {
  /** Debian mirror for debootstrap (default: DEBIAN_MIRROR, else http://deb.debian.org/debian). */
  mirror?: string;
  /** Progress lines for the person waiting. */
  say: (line: string) => void;
}

/** Folders emptied in the base: what a slim image leaves out. */
const TRIM = ['var/cache/apt/archives', 'var/lib/apt/lists', 'var/log', 'usr/share/doc', 'usr/share/man', 'usr/share/info', 'usr/share/locale'];

/** Makes the local base and imports it into podman as `name`. Needs root (debootstrap). */
export async function makeLocalBase(name: string, options: BaseOptions): Promise<void> {
  const { say } = options;
  if (process.getuid?.() !== 0) {
    throw new Error('making the local base image needs root (debootstrap): run this as root, or pass --base with an image of Node.js 20');
  }
  if (Number(process.versions.node.split('.')[0]) !== 20) {
    say(`note: this machine's Node.js is ${process.version}; the local base carries it (the official base is Node 20)`);
  }
  const work = await mkdtemp(path.join(tmpdir(), 'quarry-base-'));
  const root = path.join(work, 'rootfs');
  try {
    const mirror = options.mirror ?? process.env.DEBIAN_MIRROR ?? 'http://deb.debian.org/debian';
    say(`debootstrap --variant=minbase ${SUITE} from ${mirror}`);
    await debootstrap(root, mirror, say);

    for (const dir of TRIM) await emptyFolder(path.join(root, dir));
    await rm(path.join(root, 'var/cache/apt/pkgcache.bin'), { force: true });
    await rm(path.join(root, 'var/cache/apt/srcpkgcache.bin'), { force: true });

    const node = await realpath(process.execPath);
    const npm = npmFolder();
    say(`adding this machine's Node.js ${process.version} (${node}) and npm (${npm})`);
    await mkdir(path.join(root, 'usr/local/bin'), { recursive: true });
    await mkdir(path.join(root, 'usr/local/lib/node_modules'), { recursive: true });
    await copyFile(node, path.join(root, 'usr/local/bin/node'));
    await chmod(path.join(root, 'usr/local/bin/node'), 0o755);
    await cp(npm, path.join(root, 'usr/local/lib/node_modules/npm'), { recursive: true, verbatimSymlinks: true });
    await symlink('../lib/node_modules/npm/bin/npm-cli.js', path.join(root, 'usr/local/bin/npm'));
    await symlink('../lib/node_modules/npm/bin/npx-cli.js', path.join(root, 'usr/local/bin/npx'));

    say(`importing it into podman as ${name}`);
    await importRootfs(root, name);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** Where this machine's npm lives (`npm root -g`/npm). */
function npmFolder(): string {
  const globalRoot = execFileSync('npm', ['root', '-g'], { encoding: 'utf8' }).trim();
  return path.join(globalRoot, 'npm');
}

async function emptyFolder(dir: string): Promise<void> {
  const entries = await readdir(dir).catch(() => []);
  for (const e of entries) {
    // apt's lists folder keeps its lock and `partial/` so apt-get still works in a derived image.
    if (e === 'lock' || e === 'partial') continue;
    await rm(path.join(dir, e), { recursive: true, force: true });
  }
}

/** debootstrap, its hundreds of lines condensed to one per phase with a count and a time. */
function debootstrap(root: string, mirror: string, say: (line: string) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('debootstrap', ['--variant=minbase', SUITE, root, mirror], { stdio: ['ignore', 'pipe', 'pipe'] });
    let phase: { verb: string; count: number; started: number } | undefined;
    let tail: string[] = [];
    const endPhase = () => {
      if (phase && phase.count > 0)
        say(`  debootstrap: ${phase.verb.toLowerCase()} ${phase.count} packages (${((Date.now() - phase.started) / 1000).toFixed(1)} s)`);
      phase = undefined;
    };
    const onLine = (line: string) => {
      tail = [...tail.slice(-19), line];
      const m = /^I: (Retrieving|Validating|Extracting|Unpacking|Configuring|Installing) (.*)$/.exec(line);
      if (m?.[1] && m[2] !== undefined) {
        // Each package is retrieved then validated: one phase, counted once.
        const verb = m[1] === 'Validating' ? 'Retrieving' : m[1];
        if (phase?.verb !== verb) {
          endPhase();
          phase = { verb, count: 0, started: Date.now() };
        }
        // One line per package, besides a few about the whole (`Unpacking the base system...`).
        if (m[1] !== 'Validating' && !/^(required packages|base packages|core packages|the base system|InRelease|Packages)\b/.test(m[2])) phase.count++;
        return;
      }
      if (/^[WE]:/.test(line) || /^I: Base system installed/.test(line)) {
        endPhase();
        say(`  debootstrap: ${line}`);
      }
    };
    let partial = '';
    const take = (chunk: Buffer) => {
      partial += chunk.toString();
      const lines = partial.split('\n');
      partial = lines.pop() ?? '';
      for (const l of lines) onLine(l);
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    child.on('error', (e) => reject(new Error(`debootstrap could not run (${e.message}): apt-get install debootstrap`)));
    child.on('close', (code) => {
      endPhase();
      if (code === 0) resolve();
      else reject(new Error(`debootstrap failed (exit ${code}); its last lines:\n${tail.join('\n')}`));
    });
  });
}

/** `tar -C root . | podman import - name`, with the settings the official image has. */
async function importRootfs(root: string, name: string): Promise<void> {
  await stat(path.join(root, 'usr/local/bin/node'));
  const tar = spawn('tar', ['--numeric-owner', '--exclude=./dev/*', '--exclude=./proc/*', '--exclude=./sys/*', '-C', root, '-cf', '-', '.'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const changes = [
    'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    `ENV NODE_VERSION=${process.versions.node}`,
    'CMD ["node"]',
    `LABEL org.opencontainers.image.description="Debian ${SUITE} minbase with Node.js ${process.versions.node}: Quarry's local stand-in for node:20-bookworm-slim"`,
  ];
  const importer = spawn('podman', ['import', ...changes.flatMap((c) => ['--change', c]), '--quiet', '-', name], {
    env: podmanEnv(),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  tar.stdout.pipe(importer.stdin);
  let errors = '';
  tar.stderr.on('data', (d: Buffer) => {
    errors += d.toString();
  });
  importer.stderr.on('data', (d: Buffer) => {
    errors += d.toString();
  });
  importer.stdout.resume();
  const exited = (p: ReturnType<typeof spawn>) => new Promise<number | null>((done) => p.on('close', done));
  const [tarCode, importCode] = await Promise.all([exited(tar), exited(importer)]);
  if (tarCode !== 0 || importCode !== 0) throw new Error(`importing the base failed (tar ${tarCode}, podman import ${importCode}): ${errors.trim()}`);
}
