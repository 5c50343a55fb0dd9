/**
 * The DuckDB engine as the registry lists it: its settings (DUCKDB_*), its capabilities, and how it
 * opens: one embedded database file, DATA_DIR/quarry.duckdb. The engine's code loads when it opens.
 */
import path from 'node:path';
import type { EngineCapabilities } from '../../capabilities.ts';
import { byteSize, optional, parseBytes, wholeNumber } from '../../settings.ts';
import type { EngineDefinition } from '../engine.ts';

export const duckDbCapabilities: EngineCapabilities = {
  keepsOverflow: true,
  typedParams: true,
  lateMaterialisation: { maxRows: 10_000 },
};

const SIZE = /^\d+(\.\d+)?\s*(B|KB|KiB|MB|MiB|GB|GiB|TB|TiB)$/i;

function size(env: Readonly<Record<string, string | undefined>>, name: string, example: string): string | undefined {
  const raw = optional(env, name);
  if (raw !== undefined && (!SIZE.test(raw.trim()) || parseBytes(raw) === undefined))
    throw new Error(`${name} must be a size such as ${example}, got "${raw}"`);
  return raw?.trim();
}

/** DuckDB's own row group size, and the largest DuckDB 1.5 takes for a file in its default storage version. */
const DUCKDB_ROW_GROUP_SIZE = 122_880;
/** DuckDB's vector size: a row group holds whole vectors. */
const VECTOR_SIZE = 2048;
const DEFAULT_ROW_GROUP_SIZE = 16_384;

function rowGroupSizeOf(env: Readonly<Record<string, string | undefined>>): number {
  const n = wholeNumber(env, 'DUCKDB_ROW_GROUP_SIZE', DEFAULT_ROW_GROUP_SIZE);
  if (n < VECTOR_SIZE || n > DUCKDB_ROW_GROUP_SIZE || n % VECTOR_SIZE !== 0) {
    throw new Error(
      `DUCKDB_ROW_GROUP_SIZE must be a multiple of ${VECTOR_SIZE} from ${VECTOR_SIZE} to ${DUCKDB_ROW_GROUP_SIZE}, got "${optional(env, 'DUCKDB_ROW_GROUP_SIZE')}"`,
    );
  }
  return n;
}

export const duckDb: EngineDefinition = {
  name: 'duckdb',
  title: 'DuckDB, embedded (the default)',
  capabilities: duckDbCapabilities,
  settings: [
    { name: 'DUCKDB_MEMORY_LIMIT', description: "DuckDB's own memory_limit (default: half of MEMORY_BUDGET)" },
    { name: 'DUCKDB_THREADS', description: 'DuckDB worker threads (default: the core count)' },
    { name: 'DUCKDB_MAX_TEMP_SIZE', description: "spill space for large queries under DATA_DIR (default: DuckDB's, 90% of free disk)" },
    {
      name: 'DUCKDB_CHECKPOINT_THRESHOLD',
      description: 'write-ahead log size at which DuckDB checkpoints inside the commit that reaches it (default 64MiB)',
    },
    {
      name: 'DUCKDB_ROW_GROUP_SIZE',
      description: `rows per row group of the rows written from now on: a multiple of 2048 up to 122880, DuckDB's own default (default ${DEFAULT_ROW_GROUP_SIZE}; smaller makes each checkpoint cheaper under steady ingest, see docs/PERFORMANCE.md)`,
    },
    {
      name: 'DUCKDB_IDLE_CHECKPOINT',
      description:
        'write-ahead log size at which Quarry checkpoints as soon as no append is under way (default off: only DUCKDB_CHECKPOINT_THRESHOLD); with a larger DUCKDB_CHECKPOINT_THRESHOLD it trades query speed for ingest, see docs/INGEST.md',
    },
  ],
  selfContained: { env: {}, available: () => true },
  configure(env, context) {
    const memoryLimit = size(env, 'DUCKDB_MEMORY_LIMIT', '1GiB') ?? `${Math.floor(context.memoryBudgetBytes / 2 / 2 ** 20)}MiB`;
    const threads = optional(env, 'DUCKDB_THREADS') === undefined ? undefined : Math.max(1, wholeNumber(env, 'DUCKDB_THREADS', 1));
    const maxTempSize = size(env, 'DUCKDB_MAX_TEMP_SIZE', '4GiB');
    const checkpointThreshold = size(env, 'DUCKDB_CHECKPOINT_THRESHOLD', '64MiB');
    const rowGroupSize = rowGroupSizeOf(env);
    const idleCheckpoint = optional(env, 'DUCKDB_IDLE_CHECKPOINT');
    const idleCheckpointBytes = idleCheckpoint === undefined || idleCheckpoint.toLowerCase() === 'off' ? undefined : byteSize(env, 'DUCKDB_IDLE_CHECKPOINT', 0);
    return {
      name: 'duckdb',
      folders: [],
      async open() {
        const { openDuckDbEngine } = await import('./index.ts');
        return openDuckDbEngine({
          path: path.join(context.dataDir, 'quarry.duckdb'),
          memoryLimit,
          ...(threads !== undefined ? { threads } : {}),
          ...(maxTempSize !== undefined ? { maxTempSize } : {}),
          ...(checkpointThreshold !== undefined ? { checkpointThreshold } : {}),
          ...(idleCheckpointBytes !== undefined ? { idleCheckpointBytes } : {}),
          ...(rowGroupSize !== DUCKDB_ROW_GROUP_SIZE ? { rowGroupSize } : {}),
        });
      },
    };
  },
};
