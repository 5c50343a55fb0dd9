/**
 * `npm run import-logflare` as a function of its arguments, environment and output streams, so
 * scripts/import-logflare.ts stays a one-line wrapper and tests can run it in-process. Returns the
 * exit status: 0 done, 1 an error or events Quarry refused, 2 bad arguments, 130/143 interrupted.
 */
import { existsSync, readFileSync } from 'node:fs';
import type { Writable } from 'node:stream';
import { generatedTokenPath, loadConfig } from '../config.ts';
import { ImportError, isImportError, redactUrl } from './errors.ts';
import { type ImportReport, planSources, runImport, type StopFlag } from './importer.ts';
import { LogflareReader } from './logflare-reader.ts';
import { parseImportArgs, USAGE } from './options.ts';
import { Progress } from './progress.ts';
import { QuarryClient } from './quarry-client.ts';
import { formatReport, toJson } from './report.ts';

type Env = Record<string, string | undefined>;

export interface CommandIo {
  /** The report. */
  stdout: Writable;
  /** Progress, notes and errors. */
  stderr: Writable;
  /** stderr is a terminal: one live progress line. */
  tty: boolean;
  /**
   * Listen for SIGINT/SIGTERM on this process: the first stops after the batches in flight, a
   * second ends the process at once. Only the real command does.
   */
  handleSignals: boolean;
}

/** --token, else LOGFLARE_PRIVATE_ACCESS_TOKEN, else the token a first start generated under DATA_DIR. */
export function findToken(flag: string | undefined, env: Env): string {
  if (flag !== undefined) return flag;
  const fromEnv = env.LOGFLARE_PRIVATE_ACCESS_TOKEN?.trim();
  if (fromEnv) return fromEnv;
  let file: string | undefined;
  try {
    file = generatedTokenPath(loadConfig(env));
  } catch {
    file = undefined;
  }
  if (file !== undefined && existsSync(file)) {
    const token = readFileSync(file, 'utf8').trim();
    if (token !== '') return token;
  }
  throw new ImportError(
    'NO_TOKEN',
    "No Quarry access token: pass Quarry's private token with --token, or set LOGFLARE_PRIVATE_ACCESS_TOKEN (inside the Quarry " +
      'container it is already set), or run this where Quarry keeps its generated token (DATA_DIR/private-access-token).',
  );
}

const line = (out: Writable, text: string) => out.write(`${text}\n`);

export async function runCommand(argv: string[], env: Env, io: CommandIo): Promise<number> {
  try {
    return await run(argv, env, io);
  } catch (e) {
    if (isImportError(e)) {
      line(io.stderr, `import-logflare: ${e.message}`);
      return e.code === 'BAD_ARGUMENTS' ? 2 : 1;
    }
    line(io.stderr, `import-logflare failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    return 1;
  }
}

async function run(argv: string[], env: Env, io: CommandIo): Promise<number> {
  const options = parseImportArgs(argv, env);
  if (options.help) {
    line(io.stdout, USAGE);
    return 0;
  }
  const token = findToken(options.token, env);
  const progress = new Progress(io.stderr, { tty: io.tty, intervalMs: options.progressIntervalMs, dryRun: options.dryRun });
  const stop: StopFlag = { stopping: false };
  let signal: NodeJS.Signals | undefined;
  const onSignal = (s: NodeJS.Signals) => {
    if (stop.stopping) {
      progress.close();
      line(io.stderr, 'Stopped at once. Run the same command again to go on.');
      process.exit(s === 'SIGINT' ? 130 : 143);
    }
    stop.stopping = true;
    signal = s;
    progress.note(`${s}: finishing the batches in flight, then stopping (press Ctrl-C again to quit at once).`);
  };
  if (io.handleSignals) {
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  }
  try {
    const quarry = new QuarryClient({ baseUrl: options.to, token, retryForMs: options.retryForMs, onRetry: (l) => progress.note(l) });
    const quarrySources = await quarry.connect();
    const reader = await LogflareReader.connect(options.from, options.schema);
    let report: ImportReport;
    try {
      const plan = await planSources(await reader.listSources(), options, quarrySources, quarry);
      const since = options.since === undefined ? '' : ` since ${options.since.toISOString()}`;
      line(
        io.stderr,
        `${options.dryRun ? 'Dry run: comparing' : 'Importing'} ${plan.length} source(s)${since} from ${redactUrl(options.from)} ` +
          `(schema ${options.schema}) ${options.dryRun ? 'with' : 'into'} ${quarry.baseUrl}`,
      );
      report = await runImport(plan, options, { reader, quarry, progress, stop });
    } finally {
      await reader.close();
      progress.close();
    }
    const usage = process.resourceUsage();
    const facts = { peakRssBytes: usage.maxRSS * 1024, cpuMs: (usage.userCPUTime + usage.systemCPUTime) / 1000 };
    line(io.stdout, options.json ? JSON.stringify(toJson(report, facts)) : formatReport(report, facts));
    if (report.interrupted) return signal === 'SIGTERM' ? 143 : 130;
    return report.ok ? 0 : 1;
  } finally {
    if (io.handleSignals) {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
  }
}
