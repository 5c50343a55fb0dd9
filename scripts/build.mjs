/**
 * Compiles src/ to plain JavaScript in dist/ (docs/ARCHITECTURE.md, "Running compiled"):
 *
 *   node scripts/build.mjs [--quiet]
 *
 * Each TypeScript file is transformed on its own by esbuild, as tsx does at load time, and its
 * relative `.ts` imports become `.js`; every other file under src/ (SQL, the LQL grammar, the web
 * explorer) and package.json are copied beside them, so paths read relative to a module stay true.
 *
 * Then the service is bundled, with the JavaScript of its dependencies (not their native parts:
 * DuckDB, chDB, the file lock), into dist/src/quarry.mjs and the chunks it imports on demand
 * (dist/src/quarry-<hash>.mjs). `npm start`, the tests that spawn the service, the bench and the
 * image run it with plain Node: resolving, reading and compiling ~1,000 module files was most of
 * the start's CPU. It sits in dist/src/ so the files the modules read beside themselves
 * (src/source-files.ts) are found from it too.
 *
 * `build({ tests: true })` also compiles test/, bench/ and scripts/ the same way, for the test
 * runner: the integration files run compiled (docs/TESTING.md), and `dist/node_modules` links to
 * the real one so files a test reads relative to itself are found.
 *
 * A file is rewritten only when its source is newer, and every write is a temporary file renamed
 * into place, so several test processes may build at once and a service starting meanwhile never
 * reads half a file. Plain JavaScript, because it runs before any TypeScript loader.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync, transformSync } from 'esbuild';

// scripts/build.mjs, or its copy in dist/scripts/ when the tests run compiled.
const here = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const root = path.basename(here) === 'dist' ? path.dirname(here) : here;
const distDir = path.join(root, 'dist');

/** The bundled service (what `npm start` runs). */
export const serviceEntry = path.join(distDir, 'src', 'quarry.mjs');

/**
 * Loaded by Node at run time instead of bundled: native addons (and the packages that find them
 * by path), and what a module requires only if it is installed.
 */
const NOT_BUNDLED = ['@duckdb/node-bindings', '@duckdb/node-bindings-*', 'chdb', 'fs-native-extensions', 'require-addon', 'pg-native'];

/** Folders of generated or measured output, never compiled or copied. */
const SKIPPED = new Set(['node_modules', '.work', 'output', 'results']);

function filesUnder(dir) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!SKIPPED.has(entry.name)) out.push(...filesUnder(p));
    } else if (entry.isFile()) out.push(p);
  }
  return out;
}

/** Modification time in ms, or undefined for a file that is not there. */
function mtimeOf(file) {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return undefined;
  }
}

function newerThan(source, target, sourceMtime = mtimeOf(source)) {
  const built = mtimeOf(target);
  return sourceMtime === undefined || built === undefined || sourceMtime > built;
}

function writeAtomically(target, content) {
  mkdirSync(path.dirname(target), { recursive: true });
  const tmp = `${target}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  writeFileSync(tmp, content);
  renameSync(tmp, target);
}

// esbuild prints every import with double quotes: `from "./x.ts"`, `import("./x.ts")`.
const RELATIVE_TS_IMPORT = /((?:\bfrom|\bimport)\s*\(?\s*")(\.{1,2}\/[^"]+)\.ts"/g;

/** A TypeScript file to compile (not the browser's: src/web is JavaScript served as it is). */
function isNodeTypeScript(rel) {
  return rel.endsWith('.ts') && !rel.endsWith('.d.ts') && !rel.startsWith(path.join('src', 'web') + path.sep);
}

/** Brings dist/ up to date with src/ (and test/, bench/, scripts/ with `tests`); returns how many files it wrote. */
export function build({ tests = false } = {}) {
  let written = 0;
  /** The newest file under src/: the bundle is older than it, or up to date. */
  let newestSource = 0;
  const trees = tests ? ['src', 'test', 'bench', 'scripts'] : ['src'];
  for (const file of trees.flatMap((tree) => filesUnder(path.join(root, tree)))) {
    const rel = path.relative(root, file);
    const mtime = mtimeOf(file);
    if (rel.startsWith(`src${path.sep}`)) newestSource = Math.max(newestSource, mtime ?? 0);
    if (isNodeTypeScript(rel)) {
      const target = path.join(distDir, rel.replace(/\.ts$/, '.js'));
      if (!newerThan(file, target, mtime)) continue;
      const { code } = transformSync(readFileSync(file, 'utf8'), { loader: 'ts', format: 'esm', platform: 'node', target: 'node20', sourcefile: rel });
      writeAtomically(target, code.replace(RELATIVE_TS_IMPORT, '$1$2.js"'));
      written++;
    } else if (!file.endsWith('.d.ts')) {
      const target = path.join(distDir, rel);
      if (!newerThan(file, target, mtime)) continue;
      writeAtomically(target, readFileSync(file));
      written++;
    }
  }
  const pkg = path.join(distDir, 'package.json');
  if (newerThan(path.join(root, 'package.json'), pkg)) {
    writeAtomically(pkg, readFileSync(path.join(root, 'package.json')));
    written++;
  }
  if (bundleIsStale(newestSource)) {
    bundle();
    written++;
  }
  const modules = path.join(distDir, 'node_modules');
  if (tests && !existsSync(modules)) {
    try {
      symlinkSync(path.join('..', 'node_modules'), modules, 'dir');
    } catch (e) {
      if (e.code !== 'EEXIST') throw e;
    }
  }
  return written;
}

/** The bundle is older than the newest source file or than the installed dependencies. */
function bundleIsStale(newestSource) {
  const built = mtimeOf(serviceEntry);
  if (built === undefined) return true;
  const installed = [path.join(root, 'package-lock.json'), path.join(root, 'node_modules', '.package-lock.json')].map((f) => mtimeOf(f) ?? 0);
  return Math.max(newestSource, ...installed) > built;
}

/** The bundle's chunks (loaded on demand by `import()`) sit beside it: `quarry-<hash>.mjs`. */
const CHUNK = /^quarry-[A-Z0-9]+\.mjs$/;

function bundle() {
  const outdir = path.dirname(serviceEntry);
  const { outputFiles } = buildSync({
    entryPoints: { quarry: path.join(root, 'src', 'main.ts') },
    bundle: true,
    write: false,
    outdir,
    // main.ts claims the data folder before it imports the rest (a second start on a held folder
    // must give up within seconds); with one file, every module and dependency would be compiled
    // and the native ones loaded first. Splitting keeps that import a separate chunk.
    splitting: true,
    chunkNames: 'quarry-[hash]',
    outExtension: { '.js': '.mjs' },
    format: 'esm',
    platform: 'node',
    target: 'node20',
    external: NOT_BUNDLED,
    // The CommonJS dependencies inside an ES module still call require() for Node's own modules.
    banner: { js: "import { createRequire as __quarryRequire } from 'node:module'; const require = __quarryRequire(import.meta.url);" },
    logLevel: 'warning',
  });
  // Chunks first (named by their content), the entry last, so a start meanwhile finds them all.
  const written = new Set(outputFiles.map((f) => path.basename(f.path)));
  for (const file of [...outputFiles].sort((a, b) => Number(a.path === serviceEntry) - Number(b.path === serviceEntry))) {
    writeAtomically(file.path, file.contents);
  }
  // Chunks of earlier builds, once no service that started from them can still be loading them.
  for (const name of readdirSync(outdir)) {
    const file = path.join(outdir, name);
    if (CHUNK.test(name) && !written.has(name) && Date.now() - statSync(file).mtimeMs > 10 * 60_000) rmSync(file, { force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const started = performance.now();
  const written = build();
  if (!process.argv.includes('--quiet')) {
    console.log(`dist/ is up to date with src/ (${written} file${written === 1 ? '' : 's'} written in ${Math.round(performance.now() - started)} ms)`);
  }
}
