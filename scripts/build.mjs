/**
 * Builds what runs with plain Node into dist/ (docs/ARCHITECTURE.md, "compiling the service"):
 *
 *   node scripts/build.mjs [--quiet]
 *
 * The service is bundled, with the JavaScript of its dependencies (not their native parts: DuckDB,
 * chDB, the file lock), into dist/src/quarry.mjs and the chunks it imports on demand
 * (dist/src/quarry-<hash>.mjs). `npm start`, the tests that spawn the service, the bench and the
 * image run it: resolving, reading and compiling ~1,000 module files was most of the start's CPU.
 * Every file under src/ that is not TypeScript (SQL, the LQL grammar, the web explorer) and
 * package.json are copied beside it, so the files the modules read beside themselves
 * (src/source-files.ts) are found from it.
 *
 * `build({ tests: true })`, for the test runner, also builds:
 * - src/'s modules, one esbuild build with every module an entry and code splitting: each keeps its
 *   path (dist/src/http/app.js) and what several import, the dependencies' JavaScript included,
 *   lives once in shared chunks (dist/src/chunk-<hash>.js), so a module is still evaluated once per
 *   process whichever entries a program imports. A test process that loads the service this way
 *   reads about 240 files instead of ~800, and compiles no CommonJS through Node's ESM loader: 0.6 s
 *   of CPU instead of 1.7–2 s, which each of ~35 test processes paid;
 * - test/, bench/ and scripts/, each file on its own (the transform tsx applies at load time;
 *   relative `.ts` imports become `.js`, so they import src/'s entries), and `dist/node_modules`
 *   links to the real one so files a test reads relative to itself are found.
 *
 * A file (or src/'s build) is rewritten only when a source is newer, and every write is a temporary
 * file renamed into place, chunks before the entries that import them, so several test processes
 * may build at once and a program starting meanwhile never reads half a file. Plain JavaScript,
 * because it runs before any TypeScript loader.
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
  /** src/'s TypeScript modules: the entries of its build. */
  const srcModules = [];
  for (const file of trees.flatMap((tree) => filesUnder(path.join(root, tree)))) {
    const rel = path.relative(root, file);
    const mtime = mtimeOf(file);
    const inSrc = rel.startsWith(`src${path.sep}`);
    if (inSrc) newestSource = Math.max(newestSource, mtime ?? 0);
    if (inSrc && isNodeTypeScript(rel)) {
      srcModules.push(file);
    } else if (isNodeTypeScript(rel)) {
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
  if (tests && isStale(modulesStamp, newestSource)) written += buildModules(srcModules);
  if (isStale(serviceEntry, newestSource)) {
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

/** `built` is older than the newest source file, the installed dependencies or this script (or missing). */
function isStale(built, newestSource) {
  const builtAt = mtimeOf(built);
  if (builtAt === undefined) return true;
  const inputs = [path.join(root, 'package-lock.json'), path.join(root, 'node_modules', '.package-lock.json'), fileURLToPath(import.meta.url)].map(
    (f) => mtimeOf(f) ?? 0,
  );
  return Math.max(newestSource, ...inputs) > builtAt;
}

/** The bundle's chunks (loaded on demand by `import()`) sit beside it: `quarry-<hash>.mjs`. */
const CHUNK = /^quarry-[A-Z0-9]+\.mjs$/;

/** Written after src/'s build: its time says which sources that build has seen. */
const modulesStamp = path.join(distDir, 'src', '.modules-built');

/** src/'s build's shared chunks: `chunk-<hash>.js`. */
const MODULE_CHUNK = /^chunk-[A-Z0-9]+\.js$/;

const esbuildCommon = {
  bundle: true,
  write: false,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  splitting: true,
  external: NOT_BUNDLED,
  // The CommonJS dependencies inside an ES module still call require() for Node's own modules.
  banner: { js: "import { createRequire as __quarryRequire } from 'node:module'; const require = __quarryRequire(import.meta.url);" },
  logLevel: 'warning',
};

/**
 * Writes `outputFiles`, the chunks (the names `chunk` matches) before the entries that import them,
 * then removes the chunks in `outdir` that this build did not write, once no program that started
 * from an earlier build can still be loading them. Returns how many files it wrote.
 */
function writeBuild(outputFiles, outdir, chunk) {
  const written = new Set(outputFiles.map((f) => f.path));
  const isEntry = (file) => !chunk.test(path.basename(file.path));
  for (const file of [...outputFiles].sort((a, b) => Number(isEntry(a)) - Number(isEntry(b)))) {
    writeAtomically(file.path, file.contents);
  }
  for (const name of readdirSync(outdir)) {
    const file = path.join(outdir, name);
    if (chunk.test(name) && !written.has(file) && Date.now() - statSync(file).mtimeMs > 10 * 60_000) rmSync(file, { force: true });
  }
  return outputFiles.length;
}

/** src/'s modules, one entry each, sharing chunks (see the top of this file). */
function buildModules(modules) {
  const outdir = path.join(distDir, 'src');
  const { outputFiles } = buildSync({
    ...esbuildCommon,
    entryPoints: modules,
    outbase: path.join(root, 'src'),
    outdir,
    chunkNames: 'chunk-[hash]',
  });
  const written = writeBuild(outputFiles, outdir, MODULE_CHUNK);
  writeAtomically(modulesStamp, '');
  return written;
}

function bundle() {
  const outdir = path.dirname(serviceEntry);
  const { outputFiles } = buildSync({
    ...esbuildCommon,
    entryPoints: { quarry: path.join(root, 'src', 'main.ts') },
    outdir,
    // main.ts claims the data folder before it imports the rest (a second start on a held folder
    // must give up within seconds); with one file, every module and dependency would be compiled
    // and the native ones loaded first. Splitting keeps that import a separate chunk.
    chunkNames: 'quarry-[hash]',
    outExtension: { '.js': '.mjs' },
    // V8 keeps each module's source text for as long as the process runs (to compile functions
    // when first called): without comments and indentation it is 2.6 MB instead of 4.4, and held
    // as one byte per character (a comment's "≤" made a whole chunk two bytes per character).
    // Names are kept, so stack traces still read.
    minifyWhitespace: true,
  });
  writeBuild(outputFiles, outdir, CHUNK);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const started = performance.now();
  const written = build();
  if (!process.argv.includes('--quiet')) {
    console.log(`dist/ is up to date with src/ (${written} file${written === 1 ? '' : 's'} written in ${Math.round(performance.now() - started)} ms)`);
  }
}
