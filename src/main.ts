/**
 * `npm start`: runs the service with the environment's configuration until SIGTERM/SIGINT.
 */
import { statfs } from 'node:fs/promises';
import { type Config, generatedTokenPath, loadConfig } from './config.ts';
import type { RunningServer } from './server.ts';
import { claimDataFolders } from './data-dir/claim.ts';
import { isStartupError } from './data-dir/startup-error.ts';
import { isDiskFull } from './storage/disk-full.ts';

/** Below this much free space under DATA_DIR, start-up warns that ingest will soon answer 507. */
const LOW_SPACE_BYTES = 64 * 1024 * 1024;

async function warnIfDiskFull(config: Config): Promise<void> {
  const s = await statfs(config.dataDir).catch(() => undefined);
  if (s === undefined) return;
  const free = s.bavail * s.bsize;
  if (free >= LOW_SPACE_BYTES) return;
  console.error(
    `WARNING: the disk holding ${config.dataDir} is ${free < 1024 * 1024 ? 'full' : 'almost full'} (${Math.floor(free / 1024)} KiB free). ` +
      'Queries work, but ingest answers 507 INSUFFICIENT_STORAGE while the disk is full; free some space (no restart is needed).',
  );
}

async function main(): Promise<void> {
  // The signal handlers come first. As PID 1 in a container, a signal without a handler is ignored,
  // so a `docker stop` during start-up would otherwise wait for SIGKILL. Before the data is opened a
  // stop exits at once; while it is being opened, the start completes and then closes cleanly.
  let server: RunningServer | undefined;
  let opening = false;
  let stopping = false;
  /** A stop asked for while the data was being opened, acted on once the start is complete. */
  let deferredSignal: string | undefined;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    if (server !== undefined) {
      closeAndExit(server, signal);
    } else if (!opening) {
      console.log(`Received ${signal} before the data was opened: exiting.`);
      process.exit(0);
    } else {
      deferredSignal = signal;
      console.log(`Received ${signal} while opening the data: stopping as soon as the start is complete...`);
    }
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));

  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (e) {
    console.error(`Quarry cannot start: ${(e as Error).message}`);
    process.exit(1);
  }
  try {
    // The folders are claimed before the service's modules load (seconds on a busy machine), so a
    // second instance on a held folder is told at once.
    const folders = await claimDataFolders(config);
    const { startServer } = await import('./server.ts');
    opening = true;
    server = await startServer(config, { folders });
  } catch (e) {
    if (isStartupError(e)) {
      console.error(`Quarry cannot start: ${e.message}`);
      process.exit(1);
    }
    if (isDiskFull(e)) {
      console.error(
        `Quarry failed to start: the disk holding ${config.dataDir} is full (${e instanceof Error ? e.message.split('\n')[0] : String(e)}). ` +
          'Free some space on that disk, then start again; nothing was changed or deleted.',
      );
      process.exit(1);
    }
    throw e;
  }
  await warnIfDiskFull(config);
  const lines = [`Quarry is listening on ${server.url} (data in ${config.dataDir})`];
  if (server.generatedPrivateToken) {
    lines.push(
      '',
      'No LOGFLARE_PRIVATE_ACCESS_TOKEN was set, so a private access token was generated (shown only this once;',
      `it is also kept in ${generatedTokenPath(config)}):`,
      '',
      `    ${server.generatedPrivateToken}`,
    );
  }
  // `npm run demo` reads the same PORT, HOST and DATA_DIR, so it finds this service and its token.
  const env = [
    config.port !== 4000 ? `PORT=${new URL(server.url).port}` : '',
    process.env.HOST ? `HOST=${config.host}` : '',
    process.env.DATA_DIR ? `DATA_DIR=${config.dataDir}` : '',
  ]
    .filter((x) => x !== '')
    .join(' ');
  lines.push(
    '',
    `Demo:    ${env === '' ? '' : `${env} `}npm run demo   (in another terminal: loads ~20k Supabase-like logs for project "default")`,
    `Explore: open ${server.url}/ in a browser and sign in with ${server.generatedPrivateToken ? 'the token above' : 'your private access token'}`,
    `Try:     curl -H "X-API-KEY: <token>" "${server.url}/api/endpoints/query/logs.all?project=default"`,
    '',
    `Requests are logged one line each at LOG_LEVEL=debug (now ${config.logLevel}).`,
  );
  console.log(lines.join('\n'));
  if (deferredSignal !== undefined) closeAndExit(server, deferredSignal);
}

function closeAndExit(server: RunningServer, signal: string): void {
  console.log(`Received ${signal}: finishing in-flight requests and flushing to disk...`);
  server.close().then(
    () => {
      console.log('Quarry stopped cleanly.');
      process.exit(0);
    },
    (e: unknown) => {
      console.error('Quarry could not stop cleanly:', e);
      process.exit(1);
    },
  );
}

main().catch((e: unknown) => {
  console.error('Quarry failed to start:', e instanceof Error ? e.message : e);
  process.exit(1);
});
