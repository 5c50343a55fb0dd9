/**
 * Boots the whole service on loopback (port 0) with a fresh temporary DATA_DIR, the way users run it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Env, loadConfig } from '../../src/config.ts';
import { type RunningServer, type StartOptions, startServer } from '../../src/server.ts';
import { PRIVATE_TOKEN, PUBLIC_TOKEN } from './tokens.ts';

export { PRIVATE_TOKEN, PUBLIC_TOKEN };

export interface TestServer {
  server: RunningServer;
  url: string;
  dataDir: string;
  env: Env;
  /**
   * fetch relative to the server, sending `token` as X-API-KEY (default: the private token; null
   * sends none). Credentials already in `init.headers` or the query string win.
   */
  fetch(pathAndQuery: string, init?: RequestInit, token?: string | null): Promise<Response>;
  /** Stops the server (keeps the data dir). */
  stop(): Promise<void>;
  /** Stops the server and deletes its data dir. */
  close(): Promise<void>;
}

export async function tempDataDir(): Promise<string> {
  return mkdtemp(path.join(tmpdir(), 'quarry-test-'));
}

export async function startTestServer(env: Env = {}, dataDir?: string, options: StartOptions = {}): Promise<TestServer> {
  const dir = dataDir ?? (await tempDataDir());
  const fullEnv: Env = {
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dir,
    LOG_LEVEL: 'silent',
    LOGFLARE_PRIVATE_ACCESS_TOKEN: PRIVATE_TOKEN,
    LOGFLARE_PUBLIC_ACCESS_TOKEN: PUBLIC_TOKEN,
    ...env,
  };
  const server = await startServer(loadConfig(fullEnv), options);
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await server.close();
  };
  return {
    server,
    url: server.url,
    dataDir: dir,
    env: fullEnv,
    fetch(p, init = {}, token = PRIVATE_TOKEN) {
      const headers = new Headers(init.headers);
      if (token !== null && !headers.has('authorization') && !headers.has('x-api-key') && !p.includes('api_key=')) {
        headers.set('x-api-key', token);
      }
      return fetch(`${server.url}${p}`, { ...init, headers });
    },
    stop,
    async close() {
      await stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
