/**
 * `npm start`: runs the service with the environment's configuration until SIGTERM/SIGINT.
 */
import { generatedTokenPath, loadConfig } from './config.ts';
import { startServer } from './server.ts';

async function main(): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (e) {
    console.error(`Quarry cannot start: ${(e as Error).message}`);
    process.exit(1);
  }
  const server = await startServer(config);
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
  lines.push(
    '',
    `Explore: open ${server.url}/ in a browser and sign in with the private access token`,
    `Try:     curl -H "X-API-KEY: <token>" "${server.url}/api/endpoints/query/logs.all?project=default"`,
  );
  console.log(lines.join('\n'));

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
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
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((e: unknown) => {
  console.error('Quarry failed to start:', e instanceof Error ? e.message : e);
  process.exit(1);
});
