/**
 * The text of every statement that shapes Quarry's ClickHouse tables, on one server and on a
 * cluster (`CLICKHOUSE_CLUSTER`), kept apart from running them so it can be checked without a
 * server (test/engines/clickhouse/ddl.test.ts parses each one with chDB's ClickHouse parser).
 * docs/SCALING.md says why the layout is what it is.
 *
 * One server: a MergeTree table per source. A cluster: per source, a ReplicatedMergeTree table
 * `<table>_local` on every node (ON CLUSTER) and, under the source's own table name, a Distributed
 * table over them sharded by `cityHash64(id)`; the generated queries name the Distributed table, so
 * the printer is the same for both. Retention runs on the local tables ON CLUSTER. The schema
 * catalogue is one ReplicatedMergeTree on every node (same replication path on every shard: it is
 * small and every node reads all of it).
 */
import { quoteIdent, quoteString } from './quote.ts';

export interface DdlTarget {
  /** The database holding Quarry's tables. */
  database: string;
  /** A cluster name from the servers' `remote_servers`; absent on one server. */
  cluster?: string;
}

/**
 * The path each Supabase source keeps its project in (what logs.all filters on), which leads the
 * sorting key so a project filter prunes. Other sources sort by time alone.
 */
const PROJECT_PATHS: Readonly<Record<string, readonly string[]>> = {
  'cloudflare.logs.prod': ['project'],
  'postgres.logs': ['project'],
  'gotrue.logs.prod': ['project'],
  'postgREST.logs.prod': ['project'],
  'pgbouncer.logs.prod': ['project'],
  'realtime.logs.prod': ['metadata', 'project'],
  'storage.logs.prod.2': ['metadata', 'project'],
  'deno-relay-logs': ['metadata', 'project_ref'],
  'deno-subhosting-events': ['metadata', 'project_ref'],
};

export function projectPath(sourceName: string | undefined): readonly string[] | undefined {
  return sourceName === undefined ? undefined : PROJECT_PATHS[sourceName];
}

/**
 * The sorting key. The project expression is exactly how the printer reads a STRING field
 * (`CAST(t.fields.project AS Nullable(String))`), so ClickHouse matches a query's project filter
 * against the key; a value of another type reads as its text, and an object as NULL, so no event
 * can fail the key.
 */
export function sortingKey(sourceName: string | undefined): string {
  const p = projectPath(sourceName);
  if (p === undefined) return 'timestamp';
  return `(CAST(fields.${p.map(quoteIdent).join('.')} AS Nullable(String)), timestamp)`;
}

/**
 * The columns, and a min/max index on `id` per granule: event ids are UUIDv7 (time-ordered), so
 * within a table sorted by time a lookup by id skips nearly every granule, whatever the query
 * around it (a filter on logs.all's ordered CTE does not reach PREWHERE; an index is analysed
 * first).
 */
const COLUMNS = "id String, timestamp DateTime64(6, 'UTC'), event_message Nullable(String), fields JSON";
const ID_INDEX = 'INDEX id_range id TYPE minmax GRANULARITY 1';
const DURABLE = 'fsync_after_insert = 1, fsync_part_directory = 1';

function onCluster(t: DdlTarget): string {
  return t.cluster === undefined ? '' : ` ON CLUSTER ${quoteIdent(t.cluster)}`;
}

function qualified(t: DdlTarget, table: string): string {
  return `${quoteIdent(t.database)}.${quoteIdent(table)}`;
}

/** The table rows are stored in: the source table itself, or its `_local` table on a cluster. */
export function localTable(t: DdlTarget, table: string): string {
  return t.cluster === undefined ? table : `${table}_local`;
}

/** `CREATE DATABASE` for Quarry's database. */
export function createDatabase(t: DdlTarget): string {
  return `CREATE DATABASE IF NOT EXISTS ${quoteIdent(t.database)}${onCluster(t)}`;
}

/** The statements creating a source's table(s), in order. */
export function createSourceTable(t: DdlTarget, table: string, sourceName?: string): string[] {
  const key = sortingKey(sourceName);
  const nullableKey = key === 'timestamp' ? '' : ', allow_nullable_key = 1';
  const layout = `PARTITION BY toYYYYMMDD(timestamp) ORDER BY ${key}`;
  if (t.cluster === undefined) {
    return [
      `CREATE TABLE IF NOT EXISTS ${qualified(t, table)} (${COLUMNS}, ${ID_INDEX}) ENGINE = MergeTree ${layout} ` +
        `SETTINGS non_replicated_deduplication_window = 10000, ${DURABLE}${nullableKey}`,
    ];
  }
  const local = localTable(t, table);
  // {shard} and {replica} are each server's macros; the table's own name keeps paths apart.
  const zkPath = quoteString(`/clickhouse/tables/{shard}/${t.database}/${local}`);
  return [
    `CREATE TABLE IF NOT EXISTS ${qualified(t, local)}${onCluster(t)} (${COLUMNS}, ${ID_INDEX}) ` +
      `ENGINE = ReplicatedMergeTree(${zkPath}, '{replica}') ${layout} ` +
      `SETTINGS replicated_deduplication_window = 10000, ${DURABLE}${nullableKey}`,
    // The columns spelt out (not `AS` the local table): a Distributed table has no index.
    `CREATE TABLE IF NOT EXISTS ${qualified(t, table)}${onCluster(t)} (${COLUMNS}) ` +
      `ENGINE = Distributed(${quoteString(t.cluster)}, ${quoteString(t.database)}, ${quoteString(local)}, cityHash64(id))`,
  ];
}

/** The statements dropping a source's table(s): the Distributed table first, then the data. */
export function dropSourceTable(t: DdlTarget, table: string): string[] {
  const drop = (name: string) => `DROP TABLE IF EXISTS ${qualified(t, name)}${onCluster(t)}${t.cluster === undefined ? '' : ' SYNC'}`;
  return t.cluster === undefined ? [drop(table)] : [drop(table), drop(localTable(t, table))];
}

/** Drops one day's partition (`YYYYMMDD`) of a source's stored rows. */
export function dropPartition(t: DdlTarget, table: string, partitionId: string): string {
  if (!/^\d{8}$/.test(partitionId)) throw new Error(`not a day partition: ${partitionId}`);
  return `ALTER TABLE ${qualified(t, localTable(t, table))}${onCluster(t)} DROP PARTITION ID '${partitionId}'`;
}

/**
 * `cutoff` (unix µs) as a DateTime64. Written into the text, not bound: a statement ON CLUSTER is
 * sent to the other servers as text. A bigint prints as digits only.
 */
export function cutoffTime(cutoff: bigint): string {
  return `fromUnixTimestamp64Micro(toInt64(${cutoff.toString()}), 'UTC')`;
}

/** Deletes the rows before `cutoff` (unix µs) that the partition drops left. */
export function deleteBefore(t: DdlTarget, table: string, cutoff: bigint): string {
  return `DELETE FROM ${qualified(t, localTable(t, table))}${onCluster(t)} WHERE timestamp < ${cutoffTime(cutoff)}`;
}

/** Counts the rows before `cutoff` (unix µs), through the Distributed table on a cluster. */
export function countBefore(t: DdlTarget, table: string, cutoff: bigint): string {
  return `SELECT count() AS n FROM ${qualified(t, table)} WHERE timestamp < ${cutoffTime(cutoff)}`;
}

/**
 * The day partitions holding rows before `cutoff`, from the parts' metadata (no scan); on a
 * cluster, from every replica's parts.
 */
export function partitionsBefore(t: DdlTarget, table: string, cutoff: bigint): string {
  const parts = t.cluster === undefined ? 'system.parts' : `clusterAllReplicas(${quoteString(t.cluster)}, system.parts)`;
  return (
    `SELECT DISTINCT partition_id FROM ${parts} WHERE database = ${quoteString(t.database)} ` +
    `AND table = ${quoteString(localTable(t, table))} AND active ` +
    `AND toUInt32OrZero(partition_id) < toYYYYMMDD(${cutoffTime(cutoff)})`
  );
}

export const CATALOG_TABLE = '_quarry_catalog';

/**
 * The schema catalogue's table: a row per schema save, never collapsed (storage-catalog.ts folds a
 * source's rows into its entry).
 */
export function createCatalogTable(t: DdlTarget): string {
  const columns = 'source_id String, source_name String, table_name String, schema_json String, deleted UInt8, version UInt64';
  const layout = `ORDER BY (source_id, version) SETTINGS ${DURABLE}`;
  if (t.cluster === undefined) return `CREATE TABLE IF NOT EXISTS ${qualified(t, CATALOG_TABLE)} (${columns}) ENGINE = MergeTree ${layout}`;
  // One replication path for the whole cluster: every node holds the whole catalogue.
  const zkPath = quoteString(`/clickhouse/tables/all/${t.database}/${CATALOG_TABLE}`);
  return (
    `CREATE TABLE IF NOT EXISTS ${qualified(t, CATALOG_TABLE)}${onCluster(t)} (${columns}) ` +
    `ENGINE = ReplicatedMergeTree(${zkPath}, '{shard}-{replica}') ${layout}`
  );
}

/**
 * Settings of every event insert. JSON strings stay strings (no date or number guessing); a key
 * repeated within an object keeps its first value (rows-text.ts copies objects as received). On a
 * cluster the insert goes to the Distributed table and returns only once every shard's part is
 * written (`distributed_foreground_insert`) on a majority of its replicas (`insert_quorum`).
 */
export function insertSettings(t: DdlTarget): Record<string, string | number> {
  const base: Record<string, string | number> = {
    input_format_try_infer_dates: 0,
    input_format_try_infer_datetimes: 0,
    input_format_json_try_infer_numbers_from_strings: 0,
    input_format_json_infer_incomplete_types_as_strings: 1,
    type_json_skip_duplicated_paths: 1,
    async_insert: 0,
    date_time_input_format: 'basic',
  };
  if (t.cluster === undefined) return base;
  return { ...base, distributed_foreground_insert: 1, insert_quorum: 'auto', insert_quorum_parallel: 1, insert_deduplicate: 1 };
}
