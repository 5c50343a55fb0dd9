/**
 * The test runner (docs/TESTING.md): `npm test` and `npm run test:fast`.
 *
 *   node --import tsx scripts/test.ts [--tier all|fast|unit|integration|system] [--jobs N]
 *        [--system-jobs N] [--test-name-pattern RE]… [--verbose] [--list] [--tsx] [--isolate] [--save-durations] [FILE-OR-FOLDER…]
 *
 * Tiers come from test/tiers.ts. Every file runs compiled (dist/test/….js, scripts/build.mjs). The
 * unit tier runs in ONE process (scripts/test-in-one-process.ts); the integration files in batches,
 * several files one after another in a process (`--isolate`: each in its own); a system file in a
 * process of its own. `--tsx` runs them all from their TypeScript instead. The unit process and the
 * integration batches share a pool of `--jobs` processes (default 2, the cores of the reference
 * machine); beside that pool, the system files that do not measure the machine run `--system-jobs`
 * at a time (default 1; they mostly wait on the services they spawn, dist/src/quarry.mjs, built once
 * up front), taking each of the pool's slots as soon as the pool has no job left for it (up to
 * `--jobs` at a time); then each `alone` file with nothing beside it. With GNU time installed (/usr/bin/time), each process's CPU is reported too.
 *
 * A file that passes prints one line; a file that fails prints its whole spec output (the unit
 * process: its "failing tests" list, each with the `test at FILE:LINE` that names it). Exit code 1
 * when any test fails or any process ends badly. The environment passes through to every test
 * process (QUARRY_TEST_ENGINES=duckdb narrows the engines). Filters: FILE-OR-FOLDER arguments keep
 * the files whose path contains one of them; --test-name-pattern is given to every test process.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { filesOf, type Tier, testFiles } from '../test/tiers.ts';
import { build } from './build.mjs';
import { makeScratch, type Scratch } from './test-scratch.ts';

const root = path.resolve(import.meta.dirname, '..');

interface Options {
  tier: 'all' | 'fast' | Tier;
  jobs: number;
  systemJobs: number;
  namePatterns: string[];
  filters: string[];
  verbose: boolean;
  list: boolean;
  /** Test files from their TypeScript through tsx instead of compiled (dist/test). */
  tsx: boolean;
  /** Each integration file in a process of its own instead of in batches. */
  isolate: boolean;
  /** Also write this run's durations to test/durations.json (the committed ones a fresh clone starts from). */
  saveDurations: boolean;
}

function usage(message: string): never {
  console.error(
    `${message}\nusage: node --import tsx scripts/test.ts [--tier all|fast|unit|integration|system] [--jobs N] [--system-jobs N] [--test-name-pattern RE]… [--verbose] [--list] [--tsx] [--isolate] [--save-durations] [FILE-OR-FOLDER…]`,
  );
  process.exit(2);
}

function parseArgs(argv: string[]): Options {
  const o: Options = {
    tier: 'all',
    jobs: 2,
    systemJobs: 1,
    namePatterns: [],
    filters: [],
    verbose: false,
    list: false,
    tsx: false,
    isolate: false,
    saveDurations: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const [flag, inline] = arg.startsWith('--') && arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const value = (): string => {
      const v = inline ?? argv[++i];
      if (v === undefined) usage(`${flag} needs a value`);
      return v;
    };
    const count = (): number => {
      const n = Number(value());
      if (!Number.isInteger(n) || n < 1) usage(`${flag} must be a whole number ≥ 1`);
      return n;
    };
    switch (flag) {
      case '--tier': {
        const t = value();
        if (!['all', 'fast', 'unit', 'integration', 'system'].includes(t)) usage(`unknown tier ${t}`);
        o.tier = t as Options['tier'];
        break;
      }
      case '--jobs':
        o.jobs = count();
        break;
      case '--system-jobs':
        o.systemJobs = count();
        break;
      case '--test-name-pattern':
        o.namePatterns.push(value());
        break;
      case '--verbose':
        o.verbose = true;
        break;
      case '--list':
        o.list = true;
        break;
      case '--tsx':
        o.tsx = true;
        break;
      case '--isolate':
        o.isolate = true;
        break;
      case '--save-durations':
        o.saveDurations = true;
        break;
      case '--help':
      case '-h':
        usage('');
        break;
      default:
        if (flag.startsWith('-')) usage(`unknown option ${flag}`);
        o.filters.push(path.relative(root, path.resolve(arg)) || '.');
    }
  }
  return o;
}

const opts = parseArgs(process.argv.slice(2));

/** Every *.test.ts under test/, relative to the repository root, sorted. */
function discover(): string[] {
  return readdirSync(path.join(root, 'test'), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.test.ts'))
    .map((e) => path.relative(root, path.join(e.parentPath, e.name)))
    .sort();
}

// ---- durations of earlier runs: the longest files start first, so none is left running alone at the end.

const timesFile = path.join(root, 'node_modules/.cache/quarry-test/durations.json');
/**
 * The durations of a full run on the reference machine, committed, for a clone that has not run the
 * tests yet (CI): without them the integration batches are balanced by file count and the longest
 * system files may start last. Refreshed with `--save-durations`.
 */
const seedTimesFile = path.join(root, 'test/durations.json');

function readJson(file: string): Record<string, number> {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Record<string, number>;
  } catch {
    return {};
  }
}

function readTimes(): Record<string, number> {
  return { ...readJson(seedTimesFile), ...readJson(timesFile) };
}

function writeTimes(times: Record<string, number>): void {
  try {
    mkdirSync(path.dirname(timesFile), { recursive: true });
    const kept = Object.keys(times)
      .filter((f) => existsSync(path.join(root, f)))
      .sort();
    writeFileSync(timesFile, `${JSON.stringify(times, kept, 1)}\n`);
    if (opts.saveDurations) writeFileSync(seedTimesFile, `${JSON.stringify(times, kept, 2)}\n`);
  } catch {
    // only an ordering hint
  }
}

// ---- output

const color = process.stdout.isTTY && process.env.NO_COLOR === undefined;
const paint = (code: string, s: string) => (color ? `\x1b[${code}m${s}\x1b[0m` : s);
const green = (s: string) => paint('32', s);
const red = (s: string) => paint('31', s);
const dim = (s: string) => paint('2', s);
const bold = (s: string) => paint('1', s);
const stripAnsi = (s: string) => stripVTControlCharacters(s);

const started = performance.now();
const clock = (ms = performance.now() - started): string => {
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
};
const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

interface Counts {
  tests: number;
  pass: number;
  fail: number;
  cancelled: number;
  skipped: number;
  todo: number;
}

const zero = (): Counts => ({ tests: 0, pass: 0, fail: 0, cancelled: 0, skipped: 0, todo: 0 });

function add(a: Counts, b: Counts): void {
  for (const k of Object.keys(a) as (keyof Counts)[]) a[k] += b[k];
}

/** The counts of the spec reporter's closing summary (`ℹ tests 12` …), or undefined when it never printed one. */
function summary(output: string): Counts | undefined {
  const c = zero();
  let seen = false;
  for (const m of stripAnsi(output).matchAll(/^ℹ (tests|pass|fail|cancelled|skipped|todo) (\d+)$/gm)) {
    c[m[1] as keyof Counts] += Number(m[2]);
    seen = true;
  }
  return seen ? c : undefined;
}

// ---- processes

const running = new Set<ChildProcess>();
let interrupted = false;

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    interrupted = true;
    for (const child of running) killGroup(child);
    console.log(red(`\n${signal}: stopped the running test processes`));
    process.exit(130);
  });
}

function killGroup(child: ChildProcess): void {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
  } catch {
    // the group is gone already
  }
}

/** A process that takes longer than this is stopped and counts as failed (QUARRY_TEST_FILE_TIMEOUT, seconds). */
const fileTimeoutMs = Number(process.env.QUARRY_TEST_FILE_TIMEOUT ?? 1200) * 1000;

interface Outcome {
  ok: boolean;
  output: string;
  ms: number;
  /** CPU seconds (user + system) of the process and everything it waited for; undefined without /usr/bin/time. */
  cpu?: number;
  counts: Counts;
  /** Why the process failed apart from failing tests. */
  problem?: string;
}

/**
 * Runs `node --test-reporter=spec …args` (with `--import tsx` under `--tsx`) in a process
 * group of its own (so a timeout stops what it spawned too), its stdout and stderr collected;
 * `onLine` sees each stdout line.
 */
function runNode(args: string[], opts: Options, onLine?: (line: string) => void): Promise<Outcome> {
  const t0 = performance.now();
  const patterns = opts.namePatterns.flatMap((p) => ['--test-name-pattern', p]);
  const env: NodeJS.ProcessEnv = { ...process.env, ...(color ? { FORCE_COLOR: '1' } : {}), ...(scratch === undefined ? {} : { TMPDIR: scratch.dir }) };
  delete env.NODE_TEST_CONTEXT;
  const nodeArgs = [...(opts.tsx ? ['--import', 'tsx'] : []), '--test-reporter=spec', ...patterns, ...args];
  // GNU time counts the CPU of the test process and of every process it waited for (the services
  // it spawned and killed), which is what decides how long the suite takes on two cores.
  const cpuFile = cpuDir === undefined ? undefined : path.join(cpuDir, `${cpuSeq++}`);
  const [command, commandArgs] =
    cpuFile === undefined ? [process.execPath, nodeArgs] : [timeCommand, ['-q', '-f', '%U %S', '-o', cpuFile, process.execPath, ...nodeArgs]];
  const child = spawn(command, commandArgs, {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  running.add(child);
  let output = '';
  let pending = '';
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    output += chunk;
    if (opts.verbose) process.stdout.write(chunk);
    if (onLine) {
      pending += chunk;
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) onLine(stripAnsi(line));
    }
  });
  child.stderr.on('data', (chunk: string) => {
    output += chunk;
    if (opts.verbose) process.stderr.write(chunk);
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup(child);
  }, fileTimeoutMs);
  // Whatever the file spawned and left behind goes with it (a leftover holding the output pipes
  // open would otherwise keep 'close' from coming).
  child.on('exit', () => setTimeout(() => killGroup(child), 1000).unref());
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      running.delete(child);
      killGroup(child);
      if (onLine && pending !== '') onLine(stripAnsi(pending));
      const counts = summary(output);
      const problem = timedOut
        ? `stopped after ${fileTimeoutMs / 1000} s (QUARRY_TEST_FILE_TIMEOUT)`
        : counts === undefined
          ? `ended (${signal ?? `exit ${code}`}) without a test summary`
          : code !== 0 && counts.fail === 0
            ? `exit ${code ?? signal} with no failing test`
            : undefined;
      const c = counts ?? zero();
      if (problem !== undefined) c.fail += 1;
      const cpu = cpuFile === undefined ? undefined : cpuSeconds(cpuFile);
      resolve({
        ok: code === 0 && problem === undefined,
        output,
        ms: performance.now() - t0,
        counts: c,
        ...(cpu === undefined ? {} : { cpu }),
        ...(problem === undefined ? {} : { problem }),
      });
    });
  });
}

const timeCommand = '/usr/bin/time';
const cpuDir = existsSync(timeCommand) ? mkdtempSync(path.join(tmpdir(), 'quarry-test-cpu-')) : undefined;
let cpuSeq = 0;
/** The test processes' TMPDIR (scripts/test-scratch.ts), made once the files to run are known. */
let scratch: Scratch | undefined;
process.on('exit', () => {
  if (cpuDir !== undefined) rmSync(cpuDir, { recursive: true, force: true });
  scratch?.remove();
});

/** "user system" as GNU time wrote it (its last line: earlier ones say how the command ended). */
function cpuSeconds(file: string): number | undefined {
  const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const m = /([\d.]+) ([\d.]+)\s*$/.exec(text);
  return m === null ? undefined : Number(m[1]) + Number(m[2]);
}

// ---- jobs

interface Job {
  /** What the progress line names: a file, or "unit tier (N files in one process)". */
  label: string;
  tier: Tier;
  files: string[];
  run(): Promise<Outcome>;
}

interface Result {
  job: Job;
  outcome: Outcome;
}

const results: Result[] = [];

/** Total CPU seconds of `rs`, when every one of them was measured. */
function cpuOf(rs: readonly Result[]): number | undefined {
  if (rs.some((r) => r.outcome.cpu === undefined)) return undefined;
  return rs.reduce((n, r) => n + (r.outcome.cpu ?? 0), 0);
}
const times = readTimes();

function report(job: Job, outcome: Outcome, place: string): void {
  results.push({ job, outcome });
  if (job.files.length === 1) times[job.files[0] as string] = Math.round(outcome.ms);
  const c = outcome.counts;
  const extra = [c.skipped ? `${c.skipped} skipped` : '', c.todo ? `${c.todo} todo` : '', c.fail ? red(`${c.fail} failed`) : ''].filter(Boolean).join(', ');
  const mark = outcome.ok ? green('✔') : red('✖');
  console.log(
    `${mark} ${job.label}  ${dim(`${plural(c.tests, 'test')}${extra ? `, ${extra}` : ''}, ${secs(outcome.ms)}${outcome.cpu === undefined ? '' : ` (CPU ${secs(outcome.cpu * 1000)})`}`)}  ${dim(`[${place}, ${clock()}]`)}`,
  );
  if (!outcome.ok) {
    if (outcome.problem) console.log(red(`  ${job.label}: ${outcome.problem}`));
    if (job.tier !== 'unit' && !opts.verbose) {
      console.log(dim(`---- output of ${job.label} ----`));
      console.log(outcome.output.trimEnd());
      console.log(dim(`---- end of ${job.label} ----`));
    }
  }
}

/** dist/'s compiled copy of a test file (scripts/build.mjs `build({ tests: true })`). */
function compiledPath(file: string): string {
  return path.join('dist', file.replace(/\.ts$/, '.js'));
}

function fileJob(file: string, tier: Tier, opts: Options): Job {
  // Test files run compiled: tsx's loader thread and transforms were about a third of an
  // integration file's CPU (and a quarter of the unit process's).
  return { label: file, tier, files: [file], run: () => runNode([opts.tsx ? file : compiledPath(file)], opts) };
}

/**
 * Several files in one process (scripts/test-in-one-process.ts), one after another: the unit tier,
 * or a batch of integration files. A process costs seconds of CPU before its first test (Node, the service's modules, Fastify's schema compilers, DuckDB and
 * chDB), and a warm one runs the next file's code already optimised: an integration file takes
 * about half the CPU in a batch that it takes alone.
 */
function batchJob(label: string, tier: Tier, files: string[], opts: Options): Job {
  const compiled = !opts.tsx;
  return {
    label,
    tier,
    files,
    run: async () => {
      // Per-file progress from the spec output: a file's suite closes at column 0.
      const seen = new Set<string>();
      const runner = compiled ? compiledPath('scripts/test-in-one-process.ts') : 'scripts/test-in-one-process.ts';
      // The runner imports its files relative to its own folder's parent: dist/ when compiled.
      const outcome = await runNode([runner, ...files.map((f) => (compiled ? f.replace(/\.ts$/, '.js') : f))], opts, (line) => {
        const m = /^([✔✖﹣]) (test\/\S+\.test)\.[jt]s \(([\d.]+)ms\)/.exec(line);
        const file = m === null ? undefined : `${m[2]}.ts`;
        if (m === null || file === undefined || seen.has(file)) return;
        seen.add(file);
        if (tier !== 'unit') times[file] = Math.round(Number(m[3]));
        if (opts.verbose) return;
        const mark = m[1] === '✖' ? red('✖') : green('✔');
        console.log(`  ${mark} ${file}  ${dim(`${secs(Number(m[3]))}  [${label} ${seen.size}/${files.length}, ${clock()}]`)}`);
      });
      if (!outcome.ok && !opts.verbose) {
        const text = stripAnsi(outcome.output);
        const at = text.indexOf('✖ failing tests:');
        console.log(dim(`---- ${label}: failures ----`));
        console.log((at >= 0 ? text.slice(at) : text).trimEnd());
        console.log(dim(`---- end of ${label} failures ----`));
      }
      return outcome;
    },
  };
}

function unitJob(files: string[], opts: Options): Job {
  return batchJob(`unit tier (${files.length} files in one process)`, 'unit', files, opts);
}

/**
 * The integration files in batches of one process each, balanced by earlier runs' durations:
 * twice as many batches as `--jobs`, so no batch is left running alone at the end. `--isolate`
 * (or a single file) runs each in a process of its own.
 */
function integrationJobs(files: string[], opts: Options): Job[] {
  if (opts.isolate || files.length < 2) return files.map((f) => fileJob(f, 'integration', opts));
  const count = Math.min(files.length, opts.jobs * 2);
  const batches = Array.from({ length: count }, () => ({ files: [] as string[], ms: 0 }));
  const expected = (f: string) => times[f] ?? 10_000;
  for (const f of [...files].sort((a, b) => expected(b) - expected(a))) {
    const lightest = batches.reduce((a, b) => (b.ms < a.ms ? b : a));
    lightest.files.push(f);
    lightest.ms += expected(f);
  }
  return batches.map((b, i) =>
    b.files.length === 1
      ? fileJob(b.files[0] as string, 'integration', opts)
      : batchJob(`integration batch ${i + 1}/${count} (${plural(b.files.length, 'file')})`, 'integration', b.files.sort(), opts),
  );
}

/**
 * Process slots one pool hands to another as it runs out of jobs: the system lane takes each core
 * the unit and integration processes leave as soon as no job is left for it, not only once the last
 * of them has ended.
 */
class Handover {
  #free = 0;
  #waiting: (() => void)[] = [];

  give(): void {
    const next = this.#waiting.shift();
    if (next === undefined) this.#free += 1;
    else next();
  }

  take(): Promise<void> {
    if (this.#free === 0) return new Promise((resolve) => this.#waiting.push(resolve));
    this.#free -= 1;
    return Promise.resolve();
  }
}

/**
 * Runs jobs `width` at a time, longest (by earlier runs) first. `gives`: each of the `width` slots
 * is handed over once no job is left for it. `takes`: up to `extra` more workers, each starting
 * when a slot is handed over.
 */
async function pool(jobs: Job[], width: number, name: string, share: { gives?: Handover; takes?: { from: Handover; extra: number } } = {}): Promise<void> {
  const expected = (j: Job) => (j.tier === 'unit' ? Number.POSITIVE_INFINITY : j.files.reduce((n, f) => n + (times[f] ?? 10_000), 0));
  const queue = [...jobs].sort((a, b) => expected(b) - expected(a));
  let done = 0;
  const worker = async () => {
    for (let job = queue.shift(); job !== undefined && !interrupted; job = queue.shift()) {
      const outcome = await job.run();
      done += 1;
      report(job, outcome, `${name} ${done}/${jobs.length}`);
    }
    share.gives?.give();
  };
  const workers = Math.min(width, jobs.length);
  for (let i = workers; i < width; i++) share.gives?.give();
  const extra = share.takes === undefined ? 0 : share.takes.extra;
  await Promise.all([
    ...Array.from({ length: workers }, worker),
    ...Array.from({ length: extra }, async () => {
      await share.takes?.from.take();
      if (queue.length > 0) await worker();
    }),
  ]);
}

function heading(text: string): void {
  console.log(bold(`\n== ${text}  ${dim(`[${clock()}]`)}`));
}

// ---- main

const found = discover();
const selected = (f: string) => opts.filters.length === 0 || opts.filters.some((x) => x === '.' || f === x || f.startsWith(`${x}/`) || f.includes(x));
const unclassified = found.filter((f) => testFiles[f] === undefined && selected(f));
const present = (files: string[]) => files.filter((f) => existsSync(path.join(root, f)) && selected(f));

const wants = (t: Tier) => opts.tier === 'all' || opts.tier === t || (opts.tier === 'fast' && t === 'unit');
const unitFiles = wants('unit') ? present(filesOf('unit')) : [];
// Files missing from test/tiers.ts run in a process of their own with the integration tier
// (test/tiers.test.ts fails until they are classified).
const integrationFiles =
  opts.tier === 'fast'
    ? present(filesOf('integration').filter((f) => testFiles[f]?.fast))
    : wants('integration')
      ? present([...filesOf('integration'), ...unclassified])
      : [];
const systemFiles = wants('system') ? present(filesOf('system')) : [];
const together = systemFiles.filter((f) => !testFiles[f]?.alone);
const alone = systemFiles.filter((f) => testFiles[f]?.alone);

if (unclassified.length > 0) console.log(red(`not in test/tiers.ts (run with the integration tier): ${unclassified.join(', ')}`));

if (opts.list) {
  for (const [name, files] of [
    ['unit (one process)', unitFiles],
    ['integration', integrationFiles],
    ['system', together],
    ['system, alone', alone],
  ] as const) {
    console.log(bold(`${name}: ${plural(files.length, 'file')}`));
    for (const f of files) console.log(`  ${f}`);
  }
  process.exit(0);
}

const total = unitFiles.length + integrationFiles.length + systemFiles.length;
if (total === 0) usage('no test file matches');
console.log(
  bold(
    `quarry tests, tier ${opts.tier}: ${unitFiles.length} unit files (one process), ${integrationFiles.length} integration (${opts.jobs} at a time), ${systemFiles.length} system (${together.length} ${opts.systemJobs} at a time, ${alone.length} alone)`,
  ),
);
if (process.env.QUARRY_TEST_ENGINES) console.log(dim(`QUARRY_TEST_ENGINES=${process.env.QUARRY_TEST_ENGINES}`));
scratch = makeScratch();
if (scratch !== undefined) console.log(dim(`temporary folders in ${scratch.dir} (${scratch.why}; QUARRY_TEST_TMPDIR= keeps TMPDIR)`));

const tierStart: Partial<Record<string, number>> = {};
const tierEnd: Partial<Record<string, number>> = {};

// The service the system files spawn (dist/src/quarry.mjs) and the compiled test files are built
// once here, before any of them runs.
if (!opts.tsx || systemFiles.length > 0) build({ tests: !opts.tsx });

// The system files that do not measure the machine mostly wait on the processes they start: they
// run in a lane of their own beside the unit process and the integration files.
const freed = new Handover();
const first =
  unitFiles.length + integrationFiles.length > 0
    ? (async () => {
        heading(`unit (${plural(unitFiles.length, 'file')}, one process) and integration (${plural(integrationFiles.length, 'file')}, ${opts.jobs} at a time)`);
        tierStart.first = performance.now();
        const jobs = [...(unitFiles.length > 0 ? [unitJob(unitFiles, opts)] : []), ...integrationJobs(integrationFiles, opts)];
        await pool(jobs, opts.jobs, 'unit+integration', { gives: freed });
        tierEnd.first = performance.now();
      })()
    : pool([], opts.jobs, 'unit+integration', { gives: freed });
const beside =
  together.length > 0
    ? (async () => {
        heading(
          `system (${plural(together.length, 'file')}, ${opts.systemJobs} at a time beside the others, then up to ${Math.max(opts.systemJobs, opts.jobs)} as their jobs run out)`,
        );
        tierStart.system = performance.now();
        await pool(
          together.map((f) => fileJob(f, 'system', opts)),
          opts.systemJobs,
          'system',
          { takes: { from: freed, extra: Math.max(0, opts.jobs - opts.systemJobs) } },
        );
        tierEnd.system = performance.now();
      })()
    : Promise.resolve();
await Promise.all([first, beside]);
if (alone.length > 0 && !interrupted) {
  heading(`system, alone (${plural(alone.length, 'file')} that measure the machine, one at a time)`);
  tierStart.alone = performance.now();
  await pool(
    alone.map((f) => fileJob(f, 'system', opts)),
    1,
    'alone',
  );
  tierEnd.alone = performance.now();
}
writeTimes(times);

// ---- summary

heading('summary');
const all = zero();
for (const tier of ['unit', 'integration', 'system'] as const) {
  const rs = results.filter((r) => r.job.tier === tier);
  if (rs.length === 0) continue;
  const c = zero();
  for (const r of rs) add(c, r.outcome.counts);
  add(all, c);
  const files = rs.reduce((n, r) => n + r.job.files.length, 0);
  const busy = rs.reduce((n, r) => n + r.outcome.ms, 0);
  const cpu = cpuOf(rs);
  console.log(
    `${tier.padEnd(12)} ${String(files).padStart(3)} files  ${String(c.tests).padStart(5)} tests  ${String(c.pass).padStart(5)} pass  ${c.fail ? red(`${c.fail} fail`) : '0 fail'}  ${c.skipped} skipped  ${c.todo} todo  ${dim(`(process time ${secs(busy)}${cpu === undefined ? '' : `, CPU ${secs(cpu * 1000)}`})`)}`,
  );
}
const phases = [
  ['unit+integration', tierStart.first, tierEnd.first],
  ['system', tierStart.system, tierEnd.system],
  ['system alone', tierStart.alone, tierEnd.alone],
] as const;
console.log(
  dim(
    phases
      .filter(([, a, b]) => a !== undefined && b !== undefined)
      .map(([n, a, b]) => `${n} ${clock((b as number) - (a as number))}`)
      .join(', '),
  ),
);
const slowest = results
  .filter((r) => r.job.files.length === 1)
  .sort((a, b) => b.outcome.ms - a.outcome.ms)
  .slice(0, 5);
if (slowest.length > 0) console.log(dim(`slowest: ${slowest.map((r) => `${r.job.label} ${secs(r.outcome.ms)}`).join(', ')}`));
const busiest = results
  .filter((r) => r.job.files.length === 1 && r.outcome.cpu !== undefined)
  .sort((a, b) => (b.outcome.cpu ?? 0) - (a.outcome.cpu ?? 0))
  .slice(0, 8);
if (busiest.length > 0) {
  const cpu = cpuOf(results) ?? 0;
  console.log(
    dim(`CPU ${clock(cpu * 1000)} in all (user + system); most: ${busiest.map((r) => `${r.job.label} ${secs((r.outcome.cpu ?? 0) * 1000)}`).join(', ')}`),
  );
}
const failed = results.filter((r) => !r.outcome.ok);
console.log(
  bold(
    `total: ${total} files, ${all.tests} tests, ${all.pass} pass, ${all.fail} fail, ${all.cancelled} cancelled, ${all.skipped} skipped, ${all.todo} todo in ${clock()} (${secs(performance.now() - started)})`,
  ),
);
if (failed.length > 0) {
  console.log(red(`failed: ${failed.map((r) => r.job.label).join(', ')}`));
  process.exitCode = 1;
} else if (unclassified.length > 0) {
  console.log(red(`not in test/tiers.ts: ${unclassified.join(', ')}`));
  process.exitCode = 1;
} else {
  console.log(green('all passed'));
}
