/**
 * ClickHouse storage: one MergeTree table per source (on a cluster, ReplicatedMergeTree tables
 * behind a Distributed one); the statements' text is ddl.ts's, docs/SCALING.md says why.
 *
 * Layout: `id String, timestamp DateTime64(6, 'UTC'), event_message Nullable(String), fields JSON`.
 * Every field other than the three base columns lives in the `JSON` column, which keeps each path
 * it has seen as a column of its own (typed per part, so a path that carried an Int64 and later a
 * String keeps both, and no event is lost or rewritten). The schema grows without any DDL; the
 * catalogue (src/storage) records each field's merged type, and the generator reads paths cast to
 * it.
 *
 * - `PARTITION BY toYYYYMMDD(timestamp)`: a time window skips whole days, and retention drops
 *   whole partitions (a metadata operation); only the boundary day is trimmed with a lightweight
 *   DELETE.
 * - `ORDER BY (project, timestamp)` for the Supabase sources (the project read from the path the
 *   source keeps it in), `ORDER BY timestamp` for others: a project filter and a time window both
 *   prune, and newest-first top-n reads stop early (`optimize_read_in_order`). Tables created before
 *   the project led the key keep `ORDER BY timestamp`: they read the same, without project pruning.
 *
 * Durability: an insert returns once its part is written; with `fsync_after_insert` and
 * `fsync_part_directory` the part's files and directory are fsynced first, so a 200 means the
 * rows survive a crash of the process and of the machine (single server). On a cluster the insert
 * also waits for every shard and a majority of each shard's replicas (ddl.ts `insertSettings`).
 *
 * Retries: each table's insert carries an `insert_deduplication_token` of its own, and the tables
 * keep a deduplication window, so an insert retried after an unclear failure (timeout, lost
 * connection) stores its rows once.
 */
import { clickHouseCapabilities } from './definition.ts';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { Readable } from 'node:stream';
import type { ClickHouseClient } from '@clickhouse/client';
import { isQuarryError } from '../../errors.ts';
import type { SchemaChange } from '../../storage/infer.ts';
import type { FieldType, TableSchema } from '../../storage/schema.ts';
import { baseColumns } from '../../storage/schema.ts';
import type { StorageEngine, TableBatch } from '../../storage/port.ts';
import { type RawInsert, quoteIdent } from './client.ts';
import * as ddl from './ddl.ts';
import { type EncodedRows, InsertLanes } from './insert-lanes.ts';
import { rowsBinary } from './rows-binary.ts';
import { rowsText } from './rows-text.ts';
import type { ClickHouseCatalogRepository } from './storage-catalog.ts';

/** Inserts retried after an unclear failure (same deduplication token each time). */
const INSERT_ATTEMPTS = 3;

export interface ClickHouseStorageOptions {
  client: ClickHouseClient;
  database: string;
  /** CLICKHOUSE_CLUSTER: replicated tables behind Distributed ones, DDL ON CLUSTER. */
  cluster?: string;
  /** Where the schemas live (describeTable reads them back). */
  catalog: ClickHouseCatalogRepository;
  /** Embedded chDB: inserts hand the rows to chDB as bytes (client.ts). */
  rawInsert?: RawInsert;
  /** With `rawInsert`: rows as RowBinary where every value fits (rows-binary.ts; default), else text. */
  binaryRows?: boolean;
}

export class ClickHouseStorage implements StorageEngine {
  private readonly client: ClickHouseClient;
  private readonly db: string;
  private readonly target: ddl.DdlTarget;
  private readonly catalog: ClickHouseCatalogRepository;
  private readonly rawInsert: RawInsert | undefined;
  private readonly binary: boolean;
  private readonly lanes = new InsertLanes((table, rows) => this.insertWithRetry(table, rows));
  /** Requests the ingest pipeline may hand over before the first is stored: the lanes batch them. */
  readonly capabilities = clickHouseCapabilities;

  constructor(options: ClickHouseStorageOptions) {
    this.client = options.client;
    this.db = quoteIdent(options.database);
    this.target = options.cluster === undefined ? { database: options.database } : { database: options.database, cluster: options.cluster };
    this.catalog = options.catalog;
    this.rawInsert = options.rawInsert;
    this.binary = this.rawInsert !== undefined && options.binaryRows !== false;
  }

  /** `db`.`table`. */
  qualified(table: string): string {
    return `${this.db}.${quoteIdent(table)}`;
  }

  async createSourceTable(table: string, source?: { name: string }): Promise<void> {
    for (const query of ddl.createSourceTable(this.target, table, source?.name)) await this.client.command({ query });
  }

  async dropSourceTable(table: string): Promise<void> {
    for (const query of ddl.dropSourceTable(this.target, table)) await this.client.command({ query });
  }

  /**
   * Nothing to do: the JSON column takes new paths and new types as they come, and stored parts
   * are never rewritten. The catalogue entry written after this call is the schema's record.
   */
  async applySchemaChanges(_table: string, _before: TableSchema, _after: TableSchema, _changes: readonly SchemaChange[]): Promise<void> {}

  async describeTable(table: string): Promise<TableSchema | undefined> {
    const result = await this.client.query({
      query: 'SELECT count() AS n FROM system.tables WHERE database = {db:String} AND name = {table:String}',
      query_params: { db: this.dbName(), table },
      format: 'JSONEachRow',
    });
    const rows = (await result.json()) as { n: number | string }[];
    if (Number(rows[0]?.n ?? 0) === 0) return undefined;
    return (await this.catalog.schemaOf(table)) ?? { columns: { ...baseColumns } };
  }

  /**
   * Hands each batch to its table's lane and resolves once every one of them is stored. Batches of
   * different tables are inserted at once; see `InsertLanes`.
   */
  async append(batches: readonly TableBatch[]): Promise<void> {
    const inserts: Promise<void>[] = [];
    for (const batch of batches) {
      if (batch.events.length === 0) continue;
      inserts.push(this.lanes.add(batch.table, this.encode(batch)));
    }
    // Every insert settles before the append does, so a caller that retries after a failure never
    // overlaps an insert of the same rows still running.
    const outcomes = await Promise.allSettled(inserts);
    for (const o of outcomes) if (o.status === 'rejected') throw o.reason;
  }

  /**
   * A batch's rows as RowBinary where the in-process insert takes it and every value fits
   * (rows-binary.ts), else as JSONEachRow text.
   */
  private encode(batch: TableBatch): EncodedRows {
    const events = batch.events.length;
    const binary = this.binary && this.plainName(batch.table) !== undefined ? rowsBinary(batch.events, batch.schema) : undefined;
    if (binary !== undefined) return { format: 'RowBinary', data: binary, events };
    return { format: 'JSONEachRow', data: Buffer.from(rowsText(batch.events, batch.schema)), events };
  }

  /** `db.table` as chDB's insert takes it, when both names are plain words. */
  private plainName(table: string): string | undefined {
    const name = `${this.target.database}.${table}`;
    return /^\w+\.\w+$/.test(name) ? name : undefined;
  }

  /** One insert of `rows` into `table`, with its own deduplication token. */
  private async insertWithRetry(table: string, rows: EncodedRows): Promise<void> {
    const token = deduplicationToken(table, rows.events);
    const settings = { ...ddl.insertSettings(this.target), insert_deduplication_token: token };
    const plainName = this.plainName(table);
    if (this.rawInsert && plainName !== undefined) {
      // In-process: no connection to lose, so nothing to retry; the rows go as bytes, no
      // stream. (chDB takes the table as plain `db.table`; other names go the client's way below.)
      await this.rawInsert(plainName, rows.data, rows.format, settings);
      return;
    }
    for (let attempt = 1; ; attempt++) {
      try {
        const result = await this.client.exec({
          query: `INSERT INTO ${this.qualified(table)} FORMAT ${rows.format}`,
          values: Readable.from([rows.data], { objectMode: false }),
          clickhouse_settings: settings,
        });
        result.stream.resume();
        await once(result.stream, 'end');
        return;
      } catch (e) {
        // Only an insert that got no answer (the connection failed: client.ts makes that 503
        // UNAVAILABLE) is retried, with the same token; a refusal by ClickHouse will not change.
        if (attempt >= INSERT_ATTEMPTS || !(isQuarryError(e) && e.code === 'UNAVAILABLE')) throw e;
      }
    }
  }

  async deleteOlderThan(table: string, cutoff: bigint): Promise<number> {
    const t = this.target;
    const counted = await this.client.query({ query: ddl.countBefore(t, table, cutoff), format: 'JSONEachRow' });
    const n = Number(((await counted.json()) as { n: number | string }[])[0]?.n ?? 0);
    if (n === 0) return 0;
    // Whole days before the cutoff's day go as partitions; the cutoff's own day is trimmed.
    const parts = await this.client.query({ query: ddl.partitionsBefore(t, table, cutoff), format: 'JSONEachRow' });
    for (const { partition_id } of (await parts.json()) as { partition_id: string }[]) {
      if (!/^\d{8}$/.test(partition_id)) continue;
      await this.client.command({ query: ddl.dropPartition(t, table, partition_id) });
    }
    await this.client.command({ query: ddl.deleteBefore(t, table, cutoff) });
    return n;
  }

  /** Rows per table, from the active parts' row counts (no scan). */
  async countRows(tables: readonly string[]): Promise<Map<string, number>> {
    const counts = new Map<string, number>();
    if (tables.length === 0) return counts;
    const result = await this.client.query({
      query: `SELECT name, total_rows AS n FROM system.tables WHERE database = {db:String} AND has({tables:Array(String)}, name)`,
      query_params: { db: this.dbName(), tables: [...tables] },
      format: 'JSONEachRow',
    });
    for (const { name, n } of (await result.json()) as { name: string; n: number | string | null }[]) counts.set(name, Number(n ?? 0));
    return counts;
  }

  private dbName(): string {
    return this.db.slice(1, -1).replaceAll('\\`', '`').replaceAll('\\\\', '\\');
  }
}

/**
 * One token per insert: every attempt of that insert carries it, so a retry after an unclear
 * failure is stored once, while the same events sent again in a later request are stored again
 * (as on DuckDB).
 */
function deduplicationToken(table: string, events: number): string {
  return `${table}:${events}:${randomUUID()}`;
}

export type { FieldType };
export { timestampText } from './rows-text.ts';
