/**
 * The ClickHouse engine as the registry lists it: its settings (CLICKHOUSE_*), its capabilities,
 * and how it opens: a server (`CLICKHOUSE_URL=http://…`) or embedded chDB (`chdb:`, a folder of its
 * own that start-up claims). The engine's code loads when it opens.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import type { EngineCapabilities } from '../../capabilities.ts';
import { byteSize, optional } from '../../settings.ts';
import type { EngineDefinition, EngineFolder } from '../engine.ts';

export const clickHouseCapabilities: EngineCapabilities = {
  keepsOverflow: false,
  concurrentAppends: 256,
  typedParams: true,
  topNIntoCte: true,
};

/** The chDB data directory `chdb:` (under DATA_DIR) or `chdb:///dir` names; undefined for a server URL. */
export function chdbPath(url: string, dataDir: string): string | undefined {
  if (!url.startsWith('chdb:')) return undefined;
  const rest = url.slice('chdb:'.length);
  if (rest === '' || rest === '//') return path.join(dataDir, 'clickhouse');
  return path.resolve(rest.replace(/^\/\//, ''));
}

export const clickHouse: EngineDefinition = {
  name: 'clickhouse',
  title: 'ClickHouse: a server, a cluster, or embedded chDB',
  capabilities: clickHouseCapabilities,
  settings: [
    { name: 'CLICKHOUSE_URL', description: 'http(s)://host:port of a server, or chdb: (embedded, under DATA_DIR) / chdb:///dir' },
    { name: 'CLICKHOUSE_USER', description: "the server's user (default: the server's default user)" },
    { name: 'CLICKHOUSE_PASSWORD', description: "that user's password" },
    { name: 'CLICKHOUSE_DATABASE', description: "the database holding Quarry's tables (default quarry)" },
    {
      name: 'CLICKHOUSE_MAX_MEMORY_USAGE',
      description: "each query's max_memory_usage (default: half of MEMORY_BUDGET; DUCKDB_MEMORY_LIMIT, its older name, is still read)",
    },
    { name: 'CLICKHOUSE_CLUSTER', description: "a cluster of the servers' remote_servers: tables are created ON CLUSTER" },
  ],
  selfContained: {
    env: { QUARRY_ENGINE: 'clickhouse', CLICKHOUSE_URL: 'chdb:' },
    available() {
      try {
        createRequire(import.meta.url).resolve('chdb/connection');
        return true;
      } catch {
        return false;
      }
    },
  },
  configure(env, context) {
    const url = optional(env, 'CLICKHOUSE_URL');
    if (url === undefined) {
      throw new Error('QUARRY_ENGINE=clickhouse needs CLICKHOUSE_URL (http://host:8123, or chdb: for an embedded chDB under DATA_DIR)');
    }
    if (!/^(https?:\/\/|chdb:)/.test(url)) throw new Error(`CLICKHOUSE_URL must start with http://, https:// or chdb:, got "${url}"`);
    const database = optional(env, 'CLICKHOUSE_DATABASE') ?? 'quarry';
    if (!/^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(database)) {
      throw new Error(`CLICKHOUSE_DATABASE must be letters, digits and _ (at most 64), got "${database}"`);
    }
    const user = optional(env, 'CLICKHOUSE_USER');
    const password = optional(env, 'CLICKHOUSE_PASSWORD');
    const cluster = optional(env, 'CLICKHOUSE_CLUSTER');
    const embedded = chdbPath(url, context.dataDir);
    if (cluster !== undefined) {
      if (!/^[A-Za-z_][A-Za-z0-9_-]{0,63}$/.test(cluster))
        throw new Error(`CLICKHOUSE_CLUSTER must be letters, digits, - and _ (at most 64), got "${cluster}"`);
      if (embedded !== undefined) throw new Error('CLICKHOUSE_CLUSTER needs a ClickHouse server (CLICKHOUSE_URL=http://…): embedded chDB is one machine');
    }
    // chDB binds one folder per process, so nodes of one process (tests) share it; other processes are refused.
    const folders: EngineFolder[] =
      embedded === undefined
        ? []
        : [{ path: embedded, what: 'the chDB folder', shared: true, instead: 'another DATA_DIR (or CLICKHOUSE_URL=chdb:///another-folder)' }];
    const memoryName = optional(env, 'CLICKHOUSE_MAX_MEMORY_USAGE') !== undefined ? 'CLICKHOUSE_MAX_MEMORY_USAGE' : 'DUCKDB_MEMORY_LIMIT';
    const maxMemoryBytes = byteSize(env, memoryName, Math.floor(context.memoryBudgetBytes / 2));
    return {
      name: 'clickhouse',
      folders,
      async open() {
        const { openClickHouseEngine } = await import('./index.ts');
        return openClickHouseEngine({
          database,
          ...(embedded !== undefined ? { chdbPath: embedded } : { url }),
          ...(user !== undefined ? { user } : {}),
          ...(password !== undefined ? { password } : {}),
          ...(maxMemoryBytes > 0 ? { maxMemoryBytes } : {}),
          ...(cluster !== undefined ? { cluster } : {}),
        });
      },
    };
  },
};
