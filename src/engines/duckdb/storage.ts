/**
 * DuckDB storage: one table per source, appends through a flat staging table.
 *
 * An append writes each batch with the row appender into a flat TEMP staging table (id, timestamp,
 * message, and the other fields as one JSON text), then moves it with one `INSERT … SELECT` that
 * turns the JSON text into the table's STRUCT/LIST/scalar types with `json_transform` (absent keys
 * read as NULL). This is an order of magnitude faster than appending nested
 * values row by row, needs no file access and no SET statement, so it works under
 * `enable_external_access=false` and a locked configuration.
 *
 * Events whose fields can be read from the request's JSON text as received (`StoredEvent.raw`)
 * skip even that: one staging row per request holds the received array text and the ids,
 * timestamps and messages as JSON arrays, and the INSERT unnests them side by side. JavaScript then
 * serialises nothing per event, and crosses into DuckDB a handful of times per request.
 *
 * Durability: DuckDB writes and fsyncs its WAL when a transaction commits, so `append` resolves only
 * once the events would survive a crash. Operations run one at a time, except that an append's
 * COMMIT may still run on one writer connection while the next append stages on the other, and
 * that schema changes run on a connection of their own beside appends: the ingest pipeline never
 * appends to a table while its schema changes (src/ingest/pipeline.ts), so a slow change to one
 * table does not hold up appends to the others.
 *
 * Checkpoints: DuckDB checkpoints by itself when the write-ahead log passes `checkpoint_threshold`
 * (DUCKDB_CHECKPOINT_THRESHOLD), inside the COMMIT that crossed it. Each checkpoint writes again
 * the newest, partly filled row group of every table written since the last one, so under a steady
 * stream of groups few checkpoints are cheaper (docs/PERFORMANCE.md, "Ingest: the service against
 * the engine alone"); but rows not yet checkpointed are scanned whole by queries, and a longer log
 * takes longer to replay after a crash. With `idleCheckpointBytes` (DUCKDB_IDLE_CHECKPOINT, off by
 * default) the storage also checkpoints by itself once that much log has gathered and no append is
 * under way: when ingest pauses, or between the requests of any load that does not saturate it; so
 * a high threshold then holds only while ingest is saturated (docs/INGEST.md, "Checkpoints").
 */
import { duckDbCapabilities } from './definition.ts';
import type { DuckDBAppender, DuckDBConnection, DuckDBPreparedStatement, DuckDBType } from '@duckdb/node-api';
import { DuckDBTypeId } from '@duckdb/node-api';
import type { StorageEngine, TableBatch } from '../../storage/port.ts';
import { conformObject } from '../../storage/conform.ts';
import { overflowPart } from '../../storage/overflow.ts';
import type { StoredEvent } from '../../storage/event.ts';
import type { SchemaChange } from '../../storage/infer.ts';
import type { FieldType, TableSchema } from '../../storage/schema.ts';
import { withoutBase } from '../../storage/schema.ts';
import { isOutOfMemory, outOfMemoryError } from './out-of-memory.ts';
import type { DuckDb } from '../../embedded-db/database.ts';
import { convertExpression, duckDbType, jsonStructure, markedExpression, OVERFLOW_COLUMN, quoteIdent, quoteString, withoutPresenceText } from './types.ts';
import { PRESENCE_KEY } from '../../storage/presence.ts';
import { emptyFields, own, setOwn } from '../../storage/fields.ts';
import { wellFormed } from '../../storage/json-text.ts';
import { serialQueue } from '../../serial-queue.ts';
import { DataVersions } from '../../storage/data-versions.ts';
import { stat } from 'node:fs/promises';

const STAGE = 'quarry_stage_events';
const STAGE_ARRAYS = 'quarry_stage_arrays';

/**
 * How batches of one shape (the set of top-level fields its events carry) move from the staging
 * tables into one table: INSERTs naming only those columns, so neither their preparing nor their
 * JSON conversion grows with the table's width (DuckDB still fills the other columns with NULL).
 */
interface Plan {
  insertSql: string;
  insertArraysSql: string;
  /** Prepared on first use (parsing and binding these INSERTs costs about a millisecond each). */
  insert?: DuckDBPreparedStatement;
  insertArrays?: DuckDBPreparedStatement;
}

/** One table's plans for the schema they were made for, by shape, least recently used first. */
interface TablePlans {
  schema: TableSchema;
  fields: Record<string, FieldType>;
  overflow: Record<string, FieldType> | undefined;
  names: readonly string[];
  shapes: Map<string, Plan>;
}

/** How long storage must have had no append under way before it checkpoints by itself. */
const IDLE_BEFORE_CHECKPOINT_MS = 100;

export interface DuckDbStorageOptions {
  /**
   * Checkpoint once the write-ahead log holds this many bytes and no append is under way (see the
   * top of this file); undefined: only DuckDB's own threshold applies.
   */
  idleCheckpointBytes?: number;
}

/** Shapes remembered per table and writer connection (an ordinary source sends a handful). */
const SHAPES_PER_TABLE = 16;

/** One writer connection with its own staging tables and prepared INSERTs. */
interface Writer {
  conn: DuckDBConnection;
  plans: Map<string, TablePlans>;
  /** Settles when this writer's last COMMIT has finished. */
  committing: Promise<unknown>;
}

export class DuckDbStorage implements StorageEngine {
  readonly capabilities = duckDbCapabilities;
  /** Schema changes and reads run on the first writer's connection. */
  private readonly conn: DuckDBConnection;
  private readonly writers: Writer[];
  private nextWriter = 0;
  /** Runs after every earlier operation (an append's COMMIT may still be running). */
  private readonly locked = serialQueue();
  /** Schema changes, one at a time, on their own connection. */
  private readonly ddlConn: DuckDBConnection;
  private readonly ddl = serialQueue();
  /**
   * Per table, the appends and schema changes not finished yet. Each waits for the other kind's
   * earlier ones on the same table, so an INSERT never meets an ALTER of its table in flight
   * (DuckDB refuses that transaction), whatever the caller does.
   */
  private readonly appendsOf = new Map<string, Set<Promise<unknown>>>();
  private readonly changesOf = new Map<string, Set<Promise<unknown>>>();
  /** Bumped after every write to a table has committed (or failed): see dataVersion(). */
  private readonly versions = new DataVersions();
  /** Appends not finished yet (the idle checkpoint waits for none). */
  private appending = 0;
  private idleTimer: NodeJS.Timeout | undefined;
  private closed = false;
  /** The write-ahead log's file and the size that calls for an idle checkpoint, when the database has a file and they are on. */
  private readonly idle: { wal: string; bytes: number } | undefined;

  private constructor(conns: DuckDBConnection[], ddlConn: DuckDBConnection, path: string, options: DuckDbStorageOptions) {
    this.conn = conns[0] as DuckDBConnection;
    this.ddlConn = ddlConn;
    this.writers = conns.map((conn) => ({ conn, plans: new Map<string, TablePlans>(), committing: Promise.resolve() }));
    this.idle = path !== ':memory:' && options.idleCheckpointBytes !== undefined ? { wal: `${path}.wal`, bytes: options.idleCheckpointBytes } : undefined;
  }

  /**
   * Two writer connections: one group's staging and INSERTs run while the previous group's COMMIT
   * (the WAL fsync) runs on the other connection. Everything else waits for both commits.
   */
  static async open(db: DuckDb, options: DuckDbStorageOptions = {}): Promise<DuckDbStorage> {
    const conns: DuckDBConnection[] = [];
    for (let i = 0; i < 2; i++) {
      const conn = await db.connect();
      // TEMP: lives in memory, per connection, never in the WAL. `tbl` says which batch of the
      // group a row belongs to, so the whole group is staged with one appender per staging table.
      await conn.run(`CREATE OR REPLACE TEMP TABLE ${STAGE} (tbl INTEGER, id VARCHAR, ts BIGINT, event_message VARCHAR, fields VARCHAR, overflow VARCHAR)`);
      await conn.run(`CREATE OR REPLACE TEMP TABLE ${STAGE_ARRAYS} (tbl INTEGER, ids VARCHAR, ts VARCHAR, event_messages VARCHAR, events VARCHAR)`);
      conns.push(conn);
    }
    return new DuckDbStorage(conns, await db.connect(), db.path, options);
  }

  createSourceTable(table: string): Promise<void> {
    return this.exclusive(async () => {
      await this.conn.run(`CREATE TABLE IF NOT EXISTS ${quoteIdent(table)} (id VARCHAR, timestamp TIMESTAMP, event_message VARCHAR)`);
    });
  }

  dropSourceTable(table: string): Promise<void> {
    return this.exclusive(async () => {
      try {
        await this.conn.run(`DROP TABLE IF EXISTS ${quoteIdent(table)}`);
      } finally {
        this.versions.bump([table]);
      }
      for (const w of this.writers) dropPlans(w, table);
    });
  }

  /**
   * The version of the data in `tables`: it changes once a write to any of them has committed,
   * before that write is acknowledged. The query runner reuses a prepared statement only while the
   * version of the tables it reads is the one it was prepared at (data-versions.ts says why).
   */
  dataVersion(tables: readonly string[]): number {
    return this.versions.of(tables);
  }

  /**
   * Runs beside appends, on the schema connection (the caller appends nothing to `table` until it
   * resolves); after and before every operation that needs the database alone.
   */
  applySchemaChanges(table: string, before: TableSchema, _after: TableSchema, changes: readonly SchemaChange[]): Promise<void> {
    const t = quoteIdent(table);
    const statements: string[] = [];
    let overflow = before.overflow !== undefined;
    for (const change of changes) {
      const sql = alterStatement(t, change, overflow, before.overflow);
      if (sql === undefined) continue;
      statements.push(sql);
      overflow ||= change.kind === 'overflow_field' || change.kind === 'overflow_retype';
    }
    // Fields of an existing overflow column need nothing but their catalogue entry.
    if (statements.length === 0) return Promise.resolve();
    const conn = this.ddlConn;
    const earlier = [...(this.appendsOf.get(table) ?? [])];
    return this.track(this.changesOf, [table], async () => {
      await Promise.allSettled(earlier);
      return this.ddl(() =>
        this.alter(conn, statements)
          .catch(rethrowStorageError)
          .finally(() => this.versions.bump([table])),
      );
    });
  }

  private async alter(conn: DuckDBConnection, statements: readonly string[]): Promise<void> {
    await conn.run('BEGIN TRANSACTION');
    try {
      for (const sql of statements) await conn.run(sql);
      await conn.run('COMMIT');
    } catch (e) {
      await conn.run('ROLLBACK').catch(() => undefined);
      throw e;
    }
  }

  /** Runs `fn` registered under each of `tables` in `registry` until it settles. */
  private track<T>(registry: Map<string, Set<Promise<unknown>>>, tables: readonly string[], fn: () => Promise<T>): Promise<T> {
    const run = fn();
    const settled = run.then(
      () => undefined,
      () => undefined,
    );
    for (const table of tables) {
      let set = registry.get(table);
      if (set === undefined) {
        set = new Set();
        registry.set(table, set);
      }
      const s = set;
      s.add(settled);
      void settled.then(() => {
        s.delete(settled);
        if (s.size === 0 && registry.get(table) === s) registry.delete(table);
      });
    }
    return run;
  }

  /** The table's schema as DuckDB holds it (the truth the catalogue is reconciled with). */
  describeTable(table: string): Promise<TableSchema | undefined> {
    return this.exclusive(async () => {
      const exists = await this.conn.runAndReadAll("SELECT 1 FROM duckdb_tables() WHERE table_name = $name AND schema_name = 'main' AND NOT temporary", {
        name: table,
      });
      if (exists.currentRowCount === 0) return undefined;
      const result = await this.conn.run(`SELECT * FROM ${quoteIdent(table)} LIMIT 0`);
      const names = result.columnNames();
      const types = result.columnTypes();
      // fromEntries defines every name as an own key (`__proto__` included: names are user input).
      const columns: Record<string, FieldType> = Object.fromEntries(
        names.flatMap((name, i) => (name === OVERFLOW_COLUMN ? [] : [[name, fieldType(types[i] as DuckDBType)]])),
      );
      // Which fields the catch-all column holds is known only to the catalogue.
      return names.includes(OVERFLOW_COLUMN) ? { columns, overflow: {} } : { columns };
    });
  }

  /**
   * Stages and inserts under the lock, then commits outside it on this writer's connection, so the
   * next append (on the other writer) can stage while this COMMIT fsyncs. Resolves after COMMIT.
   */
  append(batches: readonly TableBatch[]): Promise<void> {
    const work = batches.filter((b) => b.events.length > 0);
    if (work.length === 0) return Promise.resolve();
    const tables = work.map((b) => b.table);
    const earlier = tables.flatMap((t) => [...(this.changesOf.get(t) ?? [])]);
    this.appending++;
    clearTimeout(this.idleTimer);
    return this.track(this.appendsOf, tables, async () => {
      if (earlier.length > 0) await Promise.allSettled(earlier);
      // A failed COMMIT bumps too: whether its rows became visible is not certain.
      await this.appendNow(work)
        .catch(rethrowStorageError)
        .finally(() => this.versions.bump(tables));
    }).finally(() => {
      if (--this.appending === 0 && this.idle !== undefined && !this.closed) {
        this.idleTimer = setTimeout(() => void this.checkpointIfIdle(), IDLE_BEFORE_CHECKPOINT_MS);
        this.idleTimer.unref();
      }
    });
  }

  /** The idle checkpoint (see the top of this file); best effort: DuckDB's own threshold still applies. */
  private async checkpointIfIdle(): Promise<void> {
    const idle = this.idle;
    if (idle === undefined || this.appending > 0 || this.closed) return;
    const size = (await stat(idle.wal).catch(() => undefined))?.size ?? 0;
    if (size < idle.bytes || this.appending > 0) return;
    await this.exclusive(async () => {
      if (!this.closed) await this.conn.run('CHECKPOINT');
    }).catch(() => undefined);
  }

  private async appendNow(work: readonly TableBatch[]): Promise<void> {
    // This append's own COMMIT: `w.committing` may already belong to a later append when we await.
    let committed: Promise<void> = Promise.resolve();
    await this.locked(async () => {
      const w = this.writers[this.nextWriter] as Writer;
      this.nextWriter = (this.nextWriter + 1) % this.writers.length;
      // This connection's previous transaction must have finished before it begins another.
      await w.committing.catch(() => undefined);
      await this.insert(w, work);
      committed = w.conn.run('COMMIT').then(
        () => undefined,
        async (e: unknown) => {
          await w.conn.run('ROLLBACK').catch(() => undefined);
          throw e;
        },
      );
      w.committing = committed;
    });
    await committed;
  }

  /** BEGIN, staging and the INSERTs of one group on `w` (rolled back if any of it fails). */
  private async insert(w: Writer, work: readonly TableBatch[]): Promise<void> {
    const conn = w.conn;
    const tables = work.map((b) => tablePlans(w, b.table, b.schema));
    await conn.run('BEGIN TRANSACTION');
    try {
      const staged = await stage(conn, work, tables);
      for (let k = 0; k < work.length; k++) {
        const rows = staged.rows[k] as number;
        const arrays = staged.arrays[k] as number;
        if (rows === 0 && arrays === 0) continue;
        const plan = planFor((work[k] as TableBatch).table, tables[k] as TablePlans, staged.shapes[k] as Set<string>);
        if (rows > 0) {
          plan.insert ??= await conn.prepare(plan.insertSql);
          plan.insert.bindInteger(1, k);
          await plan.insert.run();
        }
        if (arrays > 0) {
          plan.insertArrays ??= await conn.prepare(plan.insertArraysSql);
          plan.insertArrays.bindInteger(1, k);
          await plan.insertArrays.run();
        }
      }
      if (staged.rows.some((r) => r > 0)) await conn.run(`DELETE FROM temp.main.${STAGE}`);
      if (staged.arrays.some((r) => r > 0)) await conn.run(`DELETE FROM temp.main.${STAGE_ARRAYS}`);
    } catch (e) {
      await conn.run('ROLLBACK').catch(() => undefined);
      throw e;
    }
  }

  /**
   * Gives every record of the source tables (outside lists) the presence marker it lacks: tables
   * written before markers existed. `ADD COLUMN … DEFAULT true` is a metadata change: a row whose
   * record is NULL reads NULL through it; DuckDB rewrites the table (about a second per 3 million
   * rows). `starting` hears how many records of how many tables, before the work. Returns the
   * statements run.
   */
  addPresenceMarkers(starting?: (records: number, tables: number) => void): Promise<string[]> {
    return this.exclusive(async () => {
      const tables = await this.conn.runAndReadAll(
        "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' AND NOT temporary AND starts_with(table_name, 'src_')",
      );
      const statements: string[] = [];
      const altered = new Set<string>();
      for (const [name] of tables.getRows()) {
        const table = String(name);
        const result = await this.conn.run(`SELECT * FROM ${quoteIdent(table)} LIMIT 0`);
        const types = result.columnTypes();
        result.columnNames().forEach((column, i) => {
          for (const path of unmarkedRecords(types[i] as DuckDBType, [column])) {
            statements.push(
              `ALTER TABLE ${quoteIdent(table)} ADD COLUMN IF NOT EXISTS ${[...path, PRESENCE_KEY].map(quoteIdent).join('.')} BOOLEAN DEFAULT true`,
            );
            altered.add(table);
          }
        });
      }
      if (statements.length === 0) return statements;
      starting?.(statements.length, altered.size);
      await this.alter(this.ddlConn, statements);
      this.versions.bump(tables.getRows().map(([n]) => String(n)));
      return statements;
    });
  }

  deleteOlderThan(table: string, cutoff: bigint): Promise<number> {
    return this.exclusive(async () => {
      const result = await this.conn
        .runAndReadAll(`DELETE FROM ${quoteIdent(table)} WHERE timestamp < make_timestamp(CAST($cutoff AS BIGINT))`, { cutoff })
        .finally(() => this.versions.bump([table]));
      const count = result.getRows()[0]?.[0];
      return typeof count === 'bigint' || typeof count === 'number' ? Number(count) : 0;
    });
  }

  async *exportEvents(table: string, schema: TableSchema, batchSize: number): AsyncIterable<StoredEvent[]> {
    const fields = Object.keys(withoutBase(schema.columns));
    const members = fields.map((f) => `${quoteIdent(f)} := ${quoteIdent(f)}`).join(', ');
    let packed = fields.length === 0 ? "'{}'" : withoutPresenceText(`CAST(to_json(struct_pack(${members})) AS VARCHAR)`);
    // Fields kept in the overflow column (src/storage/overflow.ts) are merged back in.
    if (schema.overflow !== undefined) packed = `CAST(json_merge_patch(${packed}, COALESCE(${quoteIdent(OVERFLOW_COLUMN)}, '{}')) AS VARCHAR)`;
    for (let offset = 0; ; offset += batchSize) {
      const reader = await this.ddlConn.runAndReadAll(
        `SELECT id, epoch_us(timestamp) AS ts, event_message, ${packed} AS fields FROM ${quoteIdent(table)} ORDER BY rowid LIMIT ${batchSize} OFFSET ${offset}`,
      );
      const rows = reader.getRows();
      if (rows.length === 0) return;
      yield rows.map(
        ([id, ts, message, json]): StoredEvent => ({
          id: String(id),
          timestamp: BigInt(ts as bigint),
          event_message: message === null ? null : String(message),
          fields: JSON.parse(String(json)) as StoredEvent['fields'],
        }),
      );
    }
  }

  countRows(tables: readonly string[]): Promise<Map<string, number>> {
    return this.exclusive(async () => {
      const counts = new Map<string, number>();
      const existing = await this.conn.runAndReadAll("SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' AND NOT temporary");
      const present = new Set(existing.getRows().map((r) => String(r[0])));
      const wanted = tables.filter((t) => present.has(t));
      if (wanted.length === 0) return counts;
      // count(*) reads row-group metadata, not the rows: a few milliseconds for millions of events.
      const sql = wanted.map((t, i) => `SELECT ${i} AS i, count(*) AS n FROM ${quoteIdent(t)}`).join(' UNION ALL ');
      for (const [i, n] of (await this.conn.runAndReadAll(sql)).getRows()) counts.set(wanted[Number(i)]!, Number(n));
      return counts;
    });
  }

  close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.idleTimer);
    return this.exclusive(async () => {
      for (const w of this.writers) {
        for (const table of [...w.plans.keys()]) dropPlans(w, table);
        w.conn.closeSync();
      }
      this.ddlConn.closeSync();
    });
  }

  /** Runs alone: after every earlier operation, including schema changes and the COMMITs of earlier appends. */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    return this.ddl(() =>
      this.locked(async () => {
        for (const w of this.writers) await w.committing.catch(() => undefined);
        return fn();
      }),
    );
  }
}

/**
 * The DDL statement of one schema change on table `t` (already quoted); `overflow` says whether
 * the table has its catch-all column already, `overflowFields` what the catalogue had in it.
 */
function alterStatement(t: string, change: SchemaChange, overflow: boolean, overflowFields: Record<string, FieldType> | undefined): string | undefined {
  switch (change.kind) {
    case 'overflow_field':
    case 'overflow_retype':
      return overflow ? undefined : `ALTER TABLE ${t} ADD COLUMN IF NOT EXISTS ${quoteIdent(OVERFLOW_COLUMN)} VARCHAR`;
    case 'add_column':
      return `ALTER TABLE ${t} ADD COLUMN IF NOT EXISTS ${quoteIdent(change.column)} ${duckDbType(change.type)}`;
    case 'add_field':
      return `ALTER TABLE ${t} ADD COLUMN IF NOT EXISTS ${change.path.map(quoteIdent).join('.')} ${duckDbType(change.type)}`;
    case 'retype_column': {
      const c = quoteIdent(change.column);
      // Overflowed fields of a record that becomes text join its text (src/storage/overflow.ts).
      const kept = overflowFields === undefined ? undefined : { type: own(overflowFields, change.column), path: [change.column] };
      return `ALTER TABLE ${t} ALTER COLUMN ${c} SET DATA TYPE ${duckDbType(change.to)} USING ${convertExpression(c, change.from, change.to, 0, kept)}`;
    }
  }
}

/** The writer's plans for `table` under `schema`; those made for an earlier schema are dropped. */
function tablePlans(w: Writer, table: string, schema: TableSchema): TablePlans {
  const existing = w.plans.get(table);
  if (existing !== undefined && existing.schema === schema) return existing;
  dropPlans(w, table);
  const fields = withoutBase(schema.columns);
  const plans: TablePlans = { schema, fields, overflow: schema.overflow, names: Object.keys(fields), shapes: new Map() };
  w.plans.set(table, plans);
  return plans;
}

/**
 * The INSERTs for batches carrying the fields in `present`. Each event's fields travel as one JSON
 * text and are cast to a STRUCT of those columns, then spread into them: one string per event
 * crosses from JavaScript, and the parsing runs on DuckDB's threads.
 */
function planFor(table: string, plans: TablePlans, present: ReadonlySet<string>): Plan {
  const names = present.size === 0 ? [] : plans.names.filter((n) => present.has(n));
  const overflow = present.has(OVERFLOW_COLUMN);
  const key = overflow ? `${names.join('\u0000')}\u0000${OVERFLOW_COLUMN}` : names.join('\u0000');
  const existing = plans.shapes.get(key);
  if (existing !== undefined) {
    plans.shapes.delete(key);
    plans.shapes.set(key, existing);
    return existing;
  }
  if (plans.shapes.size >= SHAPES_PER_TABLE) {
    const [oldest, plan] = plans.shapes.entries().next().value as [string, Plan];
    destroyPlan(plan);
    plans.shapes.delete(oldest);
  }
  const fields = emptyFields<FieldType>();
  for (const n of names) setOwn(fields, n, plans.fields[n] as FieldType);
  const record: FieldType = { kind: 'record', fields };
  const targets = ['id', 'timestamp', 'event_message', ...names.map(quoteIdent)].join(', ');
  // Records get their presence markers here (src/storage/presence.ts): the JSON never holds them.
  const spread = names.map((n) => `, ${markedExpression(`struct_extract(f, ${quoteString(n)})`, plans.fields[n] as FieldType)}`).join('');
  const structure = names.length === 0 ? '' : quoteString(JSON.stringify(jsonStructure(record)));
  const overflowTarget = overflow ? `, ${quoteIdent(OVERFLOW_COLUMN)}` : '';
  const overflowValue = overflow ? ', overflow' : '';
  const insertSql =
    names.length === 0
      ? `INSERT INTO ${quoteIdent(table)} (${targets}${overflowTarget}) SELECT id, make_timestamp(ts), event_message${overflowValue} FROM temp.main.${STAGE} WHERE tbl = $1`
      : `INSERT INTO ${quoteIdent(table)} (${targets}${overflowTarget}) SELECT id, make_timestamp(ts), event_message${spread}${overflowValue} FROM (SELECT id, ts, event_message, json_transform(fields, ${structure}) AS f${overflowValue} FROM temp.main.${STAGE} WHERE tbl = $1)`;
  // Several unnest() in one select list run side by side, element i of each on row i.
  const arrayStructure = names.length === 0 ? '' : quoteString(JSON.stringify([jsonStructure(record)]));
  const insertArraysSql = `INSERT INTO ${quoteIdent(table)} (${targets}) SELECT id, make_timestamp(ts), event_message${spread} FROM (SELECT unnest(json_transform(ids, '["VARCHAR"]')) AS id, unnest(json_transform(ts, '["BIGINT"]')) AS ts, unnest(json_transform(event_messages, '["VARCHAR"]')) AS event_message${
    names.length === 0 ? '' : `, unnest(json_transform(events, ${arrayStructure})) AS f`
  } FROM temp.main.${STAGE_ARRAYS} WHERE tbl = $1)`;
  const plan: Plan = { insertSql, insertArraysSql };
  plans.shapes.set(key, plan);
  return plan;
}

/**
 * Fills the staging tables with a group's batches; returns how many rows each batch put in each,
 * and the top-level fields each batch's events carry.
 */
async function stage(
  conn: DuckDBConnection,
  batches: readonly TableBatch[],
  tables: readonly TablePlans[],
): Promise<{ rows: number[]; arrays: number[]; shapes: Set<string>[] }> {
  const rows = batches.map(() => 0);
  const arrays = batches.map(() => 0);
  const shapes = batches.map(() => new Set<string>());
  let rowAppender: DuckDBAppender | undefined;
  let arrayAppender: DuckDBAppender | undefined;
  try {
    for (let k = 0; k < batches.length; k++) {
      const events = (batches[k] as TableBatch).events;
      const plans = tables[k] as TablePlans;
      const shape = shapes[k] as Set<string>;
      for (let i = 0; i < events.length; ) {
        const event = events[i] as StoredEvent;
        const raw = event.raw;
        if (raw === undefined) {
          rowAppender ??= await conn.createAppender(STAGE, 'main', 'temp');
          appendEvent(rowAppender, k, plans, event, shape);
          rows[k] = (rows[k] as number) + 1;
          i++;
          continue;
        }
        const end = i + raw.count;
        for (let j = i; j < end; j++) {
          if (events[j]?.raw !== raw) throw new Error('storage: the events of a raw array must be consecutive');
        }
        arrayAppender ??= await conn.createAppender(STAGE_ARRAYS, 'main', 'temp');
        appendArray(arrayAppender, k, events, i, end, raw.text);
        for (const key of raw.keys ?? plans.names) shape.add(key);
        arrays[k] = (arrays[k] as number) + 1;
        i = end;
      }
    }
    rowAppender?.flushSync();
    arrayAppender?.flushSync();
  } finally {
    rowAppender?.closeSync();
    arrayAppender?.closeSync();
  }
  return { rows, arrays, shapes };
}

function dropPlans(w: Writer, table: string): void {
  const plans = w.plans.get(table);
  if (plans === undefined) return;
  for (const plan of plans.shapes.values()) destroyPlan(plan);
  w.plans.delete(table);
}

function destroyPlan(plan: Plan): void {
  plan.insert?.destroySync();
  plan.insertArrays?.destroySync();
}

function appendEvent(appender: DuckDBAppender, tbl: number, plans: TablePlans, event: StoredEvent, shape: Set<string>): void {
  appender.appendInteger(tbl);
  appender.appendVarchar(event.id);
  appender.appendBigInt(event.timestamp);
  if (event.event_message === null) appender.appendNull();
  else appender.appendVarchar(event.event_message);
  const fields = conformObject(event.fields, plans.fields);
  for (const key in fields) if (fields[key] !== null) shape.add(key);
  appender.appendVarchar(JSON.stringify(fields));
  const overflow = plans.overflow === undefined ? undefined : overflowPart(event.fields, plans.overflow);
  if (overflow === undefined) appender.appendNull();
  else {
    shape.add(OVERFLOW_COLUMN);
    appender.appendVarchar(JSON.stringify(overflow));
  }
  appender.endRow();
}

/** One staging row for events[start, end), which share one received array text. */
function appendArray(appender: DuckDBAppender, tbl: number, events: readonly StoredEvent[], start: number, end: number, text: string): void {
  const ids: string[] = [];
  const messages: (string | null)[] = [];
  let ts = '[';
  for (let i = start; i < end; i++) {
    const e = events[i] as StoredEvent;
    ids.push(e.id);
    messages.push(e.event_message);
    ts += i === start ? String(e.timestamp) : `,${e.timestamp}`;
  }
  appender.appendInteger(tbl);
  appender.appendVarchar(jsonStrings(ids));
  appender.appendVarchar(`${ts}]`);
  appender.appendVarchar(jsonStrings(messages));
  appender.appendVarchar(text);
  appender.endRow();
}

const LONE_SURROGATE_ESCAPE = /\\ud[89a-f]/i;

/**
 * JSON text of a string array. A lone surrogate (which DuckDB's JSON reader refuses; ingest already
 * replaces it, this covers any other writer) is replaced by U+FFFD first, as the row appender does
 * when it encodes text as UTF-8.
 */
function jsonStrings(values: (string | null)[]): string {
  const text = JSON.stringify(values);
  if (!text.includes('\\u') || !LONE_SURROGATE_ESCAPE.test(text)) return text;
  return JSON.stringify(values.map((v) => (v === null ? null : wellFormed(v))));
}

/** Paths of the STRUCTs (outside lists) in a column of `type` that lack the presence marker, outermost first. */
function unmarkedRecords(type: DuckDBType, path: readonly string[]): string[][] {
  if (type.typeId !== DuckDBTypeId.STRUCT) return [];
  const own = type.entryNames.includes(PRESENCE_KEY) ? [] : [[...path]];
  return [...own, ...type.entryNames.flatMap((name, i) => unmarkedRecords(type.entryTypes[i] as DuckDBType, [...path, name]))];
}

/** DuckDB type → FieldType, for the types this storage creates. */
function fieldType(type: DuckDBType): FieldType {
  switch (type.typeId) {
    case DuckDBTypeId.VARCHAR:
      return { kind: 'scalar', type: 'string' };
    case DuckDBTypeId.BIGINT:
      return { kind: 'scalar', type: 'int' };
    case DuckDBTypeId.DOUBLE:
      return { kind: 'scalar', type: 'float' };
    case DuckDBTypeId.BOOLEAN:
      return { kind: 'scalar', type: 'bool' };
    case DuckDBTypeId.TIMESTAMP:
      return { kind: 'scalar', type: 'timestamp' };
    case DuckDBTypeId.LIST:
      return { kind: 'list', element: fieldType(type.valueType) };
    case DuckDBTypeId.STRUCT: {
      const fields: Record<string, FieldType> = Object.fromEntries(
        type.entryNames.flatMap((name, i) => (name === PRESENCE_KEY ? [] : [[name, fieldType(type.entryTypes[i] as DuckDBType)]])),
      );
      return { kind: 'record', fields };
    }
    default:
      return { kind: 'scalar', type: 'string' };
  }
}

/** A write that ran out of DuckDB's memory limit is the caller's 503, never a 500 (out-of-memory.ts). */
function rethrowStorageError(e: unknown): never {
  throw isOutOfMemory(e) ? outOfMemoryError(e) : e;
}
