/**
 * `npm run image`: builds the container image (the repository's Dockerfile) with podman, as
 * `localhost/quarry:dev` (docs/DEPLOY.md).
 *
 * Where the official base `node:20-bookworm-slim` cannot be pulled (no registry of container
 * images is reachable), it first makes a local base from Debian packages (scripts/image/base.ts),
 * once: later builds find it in podman's storage.
 *
 * The build runs without podman's per-step cache (`--layers=false`): with vfs storage each cached
 * step costs a full copy of the image to make and another to delete, more than redoing the steps
 * (measured on this 2-core machine: 3 min 30 s with it, 1 min 7 s without). npm's downloads stay cached
 * (a cache mount), and an image built from the same files on the same base is not built again: it
 * carries their digest as the label `org.quarry.build-input`.
 *
 *   npm run image                       # localhost/quarry:dev
 *   npm run image -- --with-chdb        # localhost/quarry:dev-chdb (build argument WITH_CHDB=true)
 *   npm run image -- --base IMAGE       # build FROM another image of Node.js 20 and npm
 *   npm run image -- --rebuild-base     # make the local base again
 *   npm run image -- --force            # build even when the image is up to date
 *   npm run image -- --tag NAME
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { localBaseName, makeLocalBase } from './image/base.ts';
import { imageExists, megabytes, podman, podmanEnv, podmanVersion, run, seconds } from './image/podman.ts';

const root = path.resolve(import.meta.dirname, '..');
const OFFICIAL_BASE = 'docker.io/library/node:20-bookworm-slim';

const started = Date.now();
const say = (line: string) => console.log(`image: ${line}`);
const clock = () => {
  const s = Math.floor((Date.now() - started) / 1000);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
};

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      'with-chdb': { type: 'boolean', default: false },
      tag: { type: 'string' },
      base: { type: 'string' },
      'rebuild-base': { type: 'boolean', default: false },
      force: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(
      'npm run image [-- --with-chdb] [--tag NAME] [--base IMAGE] [--rebuild-base] [--force]\n' +
        'Builds the Dockerfile with podman as localhost/quarry:dev (localhost/quarry:dev-chdb with --with-chdb). See docs/DEPLOY.md.',
    );
    return;
  }
  const withChdb = values['with-chdb'];
  const tag = values.tag ?? (withChdb ? 'localhost/quarry:dev-chdb' : 'localhost/quarry:dev');

  const version = podmanVersion();
  if (version === undefined) {
    throw new Error('podman is not installed: apt-get install podman runc uidmap debootstrap (docs/DEPLOY.md), or build with `docker build -t quarry .`');
  }
  const env = podmanEnv();
  say(`${version}; CONTAINERS_CONF=${env.CONTAINERS_CONF} CONTAINERS_STORAGE_CONF=${env.CONTAINERS_STORAGE_CONF}`);

  say('step 1/2: the base image');
  let t = Date.now();
  const base = await chooseBase(values.base, values['rebuild-base']);
  say(`step 1/2 done in ${seconds(Date.now() - t)}: FROM ${base}`);

  const input = await buildInput(base, withChdb);
  if (!values.force && (await labelOf(tag, INPUT_LABEL)) === input) {
    say(`step 2/2: ${tag} is up to date (built from these same files on this base; --force builds anyway)`);
    say(`done in ${seconds(Date.now() - started)}`);
    return;
  }
  say(`step 2/2: podman build${withChdb ? ' --build-arg WITH_CHDB=true' : ''} -t ${tag}`);
  t = Date.now();
  const args = ['build', '--format', 'docker', '--layers=false', '--build-arg', `BASE_IMAGE=${base}`, '--build-arg', `WITH_CHDB=${withChdb}`];
  args.push('--label', `${INPUT_LABEL}=${input}`, '--tag', tag);
  const ca = caBundle();
  if (ca) {
    say(`  npm in the build trusts ${ca} (build secret npm_ca; not kept in the image)`);
    args.push('--secret', `id=npm_ca,src=${ca}`);
  }
  args.push('--file', path.join(root, 'Dockerfile'), root);
  const previous = await imageId(tag);
  await withHeartbeat(() => podman(args, { onLine: buildLine }));
  const size = Number((await podman(['image', 'inspect', tag, '--format', '{{.Size}}'])).trim());
  say(`step 2/2 done in ${seconds(Date.now() - t)}`);
  // The image this one replaces, untagged now, would keep a full copy on disk with vfs.
  if (previous && previous !== (await imageId(tag)) && (await run('podman', ['rmi', previous])).code === 0) {
    say(`removed the image it replaces (${previous.slice(0, 12)})`);
  }
  say(`built ${tag} (${megabytes(size)}) in ${seconds(Date.now() - started)}. Run it:`);
  say(`  podman run -d --name quarry -p 127.0.0.1:4000:4000 -v quarry-data:/data -e LOGFLARE_PUBLIC_ACCESS_TOKEN=… -e LOGFLARE_PRIVATE_ACCESS_TOKEN=… ${tag}`);
  say(`  (with CONTAINERS_CONF and CONTAINERS_STORAGE_CONF as above; docs/DEPLOY.md)`);
}

/** The image to build FROM: the one asked for, the official one when it is here or can be pulled, else the local base. */
async function chooseBase(asked: string | undefined, rebuild: boolean): Promise<string> {
  if (asked) return asked;
  const local = localBaseName();
  if (!rebuild) {
    if (await imageExists(OFFICIAL_BASE)) return OFFICIAL_BASE;
    say(`  pulling ${OFFICIAL_BASE}...`);
    const pulled = await run('podman', ['pull', '--quiet', OFFICIAL_BASE], { timeoutMs: 3 * 60_000 });
    if (pulled.code === 0) return OFFICIAL_BASE;
    const why = pulled.code === null ? 'no answer in 3 minutes' : (pulled.stderr.trim().split('\n').pop() ?? '').split(': ').slice(-2).join(': ');
    say(`  it cannot be pulled (${why || `exit ${pulled.code}`})`);
    if (await imageExists(local)) {
      say(`  using the local base made earlier from Debian packages, ${local}`);
      return local;
    }
  }
  say(`  making a local base from Debian packages, ${local} (about a minute; kept for later builds)`);
  const t = Date.now();
  if (await imageExists(local)) await podman(['untag', local]);
  await makeLocalBase(local, { say: (line) => say(`  [${clock()}] ${line}`) });
  say(`  local base made in ${seconds(Date.now() - t)}`);
  return local;
}

const INPUT_LABEL = 'org.quarry.build-input';

/** A digest of what the build reads: the files the Dockerfile copies, the base image's id and WITH_CHDB. */
async function buildInput(base: string, withChdb: boolean): Promise<string> {
  const hash = createHash('sha256');
  hash.update(`WITH_CHDB=${withChdb}\0${(await podman(['image', 'inspect', base, '--format', '{{.Id}}'])).trim()}\0`);
  const files = ['Dockerfile', '.dockerignore', 'package.json', 'package-lock.json', 'tsconfig.json'];
  for (const f of await readdir(path.join(root, 'src'), { recursive: true, withFileTypes: true })) {
    if (f.isFile()) files.push(path.relative(root, path.join(f.parentPath, f.name)));
  }
  for (const f of files.sort()) {
    hash.update(`${f}\0`);
    hash.update(await readFile(path.join(root, f)));
    hash.update('\0');
  }
  return hash.digest('hex').slice(0, 32);
}

async function imageId(image: string): Promise<string | undefined> {
  const r = await run('podman', ['image', 'inspect', image, '--format', '{{.Id}}']);
  return r.code === 0 ? r.stdout.trim() : undefined;
}

/** A label of an image; undefined when the image or the label is missing. */
async function labelOf(image: string, label: string): Promise<string | undefined> {
  const r = await run('podman', ['image', 'inspect', image, '--format', `{{index .Labels "${label}"}}`]);
  const value = r.stdout.trim();
  return r.code === 0 && value !== '' && value !== '<no value>' ? value : undefined;
}

/** The CA bundle this machine's npm trusts beyond Node's own (a TLS-inspecting proxy's), if any. */
function caBundle(): string | undefined {
  const candidates = [process.env.NODE_EXTRA_CA_CERTS, process.env.npm_config_cafile];
  try {
    candidates.push(execFileSync('npm', ['config', 'get', 'cafile'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
  } catch {
    // no npm config: nothing to add
  }
  return candidates.find((c) => c && c !== 'null' && c !== 'undefined' && existsSync(c));
}

let lastLine = Date.now();
let lastStep = '';

/** podman build's output, with the time since start; the per-commit signature chatter is left out. */
function buildLine(line: string): void {
  lastLine = Date.now();
  if (/^(Copying (blob|config)|Writing manifest|Storing signatures|Getting image source signatures)/.test(line.trim())) return;
  if (/STEP \d+\/\d+:/.test(line)) lastStep = line.replace(/\s+/g, ' ').slice(0, 100);
  console.log(`  [${clock()}] ${line}`);
}

/** While `work` runs, a line every 20 s without output, so a long silent copy does not look hung. */
async function withHeartbeat<T>(work: () => Promise<T>): Promise<T> {
  const timer = setInterval(() => {
    if (Date.now() - lastLine < 20_000) return;
    lastLine = Date.now();
    console.log(`  [${clock()}] ... still at ${lastStep || 'the start'}`);
  }, 5_000);
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}

main().catch((e: unknown) => {
  console.error(`image: failed after ${seconds(Date.now() - started)}: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});
