/**
 * The ingest "limit": the bench's request bodies written straight into an engine's storage by
 * hand-written code, with the engine's own JSON reader and no HTTP, no service, no JavaScript parse.
 * It runs in a process of its own (chDB binds one data directory per process) on a fresh folder,
 * after the service has stopped, and prints one JSON line: events, wall ms, CPU ms.
 *
 *   node --import tsx bench/ingest-limit.ts --engine duckdb|clickhouse --bodies FILE --work DIR
 *     [--schema-from DUCKDB_FILE] [--group N] [--bulk]
 *
 * - grouped (default): the requests in their order, `--group` at a time (the bench's in-flight
 *   count), each group one transaction holding one INSERT per source it touches: the service's own
 *   promise (a request is acknowledged once committed, requests committed in groups).
 * - `--bulk`: every request of a source in one INSERT, one commit: what the engine does at best with
 *   the whole load known in advance.
 *
 * DuckDB: each body is a file (written before the clock starts) read by `read_json(..., columns=)`
 * with no checkpoint until the end (`INGEST_LIMIT_CHECKPOINT_THRESHOLD` sets another threshold)
 * into a table with the service's columns (from `--schema-from`, the service's database file after
 * the run: the schema its ingest grew) without Quarry's presence markers and overflow column, the
 * table a person would write by hand. ClickHouse: Quarry's own table layout (src/engines/clickhouse/
 * ddl.ts), filled with each body's events shaped into its rows before the clock starts (id,
 * timestamp, event_message and the rest as `fields`) and sent as `JSONEachRow` through chDB's raw
 * insert. (ClickHouse parsing the request text itself, `JSONAsString` into the JSON column, was
 * slower still: docs/PERFORMANCE.md.)
 */
import { cpSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { DuckDBInstance } from '@duckdb/node-api';
import { createSourceTable, insertSettings } from '../src/engines/clickhouse/ddl.ts';
import type { IngestRequest } from '../src/demo/ingest-client.ts';
import { readBodies } from './bodies.ts';

export interface IngestLimitResult {
  mode: 'grouped' | 'bulk';
  group: number;
  events: number;
  wallMs: number;
  cpuMs: number;
  eventsPerSecond: number;
}

/** A request of the bodies file, without its text (which each limit turns into its own payload first). */
interface Request {
  source: string;
  events: number;
}

/** The requests in order, and each one's payload made by `prepare` as the file is read (untimed). */
async function readRequests<T>(file: string, prepare: (r: IngestRequest, i: number) => T): Promise<{ requests: Request[]; payloads: T[] }> {
  const requests: Request[] = [];
  const payloads: T[] = [];
  for await (const r of readBodies(file)) {
    payloads.push(prepare(r, requests.length));
    requests.push({ source: r.source, events: r.events });
  }
  return { requests, payloads };
}

/** The requests `group` at a time, each group's requests by source (in order). */
function groups(requests: readonly Request[], group: number): Map<string, number[]>[] {
  const out: Map<string, number[]>[] = [];
  for (let g = 0; g < requests.length; g += group) {
    const bySource = new Map<string, number[]>();
    for (let i = g; i < Math.min(requests.length, g + group); i++) {
      const { source } = requests[i] as Request;
      const list = bySource.get(source);
      if (list === undefined) bySource.set(source, [i]);
      else list.push(i);
    }
    out.push(bySource);
  }
  return out;
}

/** Wall and CPU time of `run` (the engine's part of a limit). */
async function timed(run: () => Promise<void>): Promise<{ wallMs: number; cpuMs: number }> {
  const started = performance.now();
  const cpu = process.cpuUsage();
  await run();
  const used = process.cpuUsage(cpu);
  return { wallMs: performance.now() - started, cpuMs: (used.user + used.system) / 1000 };
}

/** What a limit measured: the events its tables hold afterwards, and the time of the load. */
type Measured = Pick<IngestLimitResult, 'events' | 'wallMs' | 'cpuMs'>;

const sqlString = (s: string) => `'${s.replace(/'/g, "''")}'`;
const sqlIdent = (s: string) => `"${s.replace(/"/g, '""')}"`;

/** Each source's columns in the service's database file, without Quarry's presence markers and overflow. */
async function duckDbColumns(databaseFile: string): Promise<Map<string, [string, string][]>> {
  const instance = await DuckDBInstance.create(databaseFile, { access_mode: 'READ_ONLY' });
  const conn = await instance.connect();
  try {
    await conn.run(`ATTACH ${sqlString(path.join(path.dirname(databaseFile), 'metadata.duckdb'))} AS quarry_metadata (READ_ONLY)`);
    const sources = (await conn.runAndReadAll('SELECT name, "table" FROM quarry_metadata._quarry_sources')).getRows();
    const out = new Map<string, [string, string][]>();
    for (const [name, table] of sources) {
      const columns = (
        await conn.runAndReadAll(
          `SELECT column_name, data_type FROM duckdb_columns() WHERE database_name = current_database() AND table_name = ${sqlString(String(table))} ORDER BY column_index`,
        )
      ).getRows();
      out.set(
        String(name),
        columns
          .filter(([c]) => !String(c).startsWith('$') && c !== '_overflow')
          .map(([c, t]) => [String(c), String(t).replace(/, "\$present" BOOLEAN/g, '')] as [string, string]),
      );
    }
    return out;
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}

/** Writes each body to a file of its own under `work`, as a request's text arrives; returns where. */
function bodyFile(work: string): (r: IngestRequest, i: number) => string {
  const dir = path.join(work, 'bodies');
  mkdirSync(dir, { recursive: true });
  return (r, i) => {
    const f = path.join(dir, `${i}.json`);
    writeFileSync(f, r.body);
    return f;
  };
}

async function duckDbLimit(requests: readonly Request[], files: readonly string[], work: string, schemaFrom: string, group: number): Promise<Measured> {
  const columns = await duckDbColumns(schemaFrom);
  const instance = await DuckDBInstance.create(path.join(work, 'limit.duckdb'));
  const conn = await instance.connect();
  try {
    await conn.run("SET TimeZone = 'UTC'");
    // As fast as the engine allows: no checkpoint while loading (the write-ahead log holds it all,
    // as durable), one at the end, timed. DuckDB's default (16 MB) or the service's (64 MiB) cost
    // 2-3x as much CPU per event at 8 requests per commit (docs/PERFORMANCE.md).
    await conn.run(`SET checkpoint_threshold = '${process.env.INGEST_LIMIT_CHECKPOINT_THRESHOLD ?? '16GiB'}'`);
    const spec = new Map<string, string>();
    for (const [source, cols] of columns) {
      await conn.run(`CREATE TABLE ${sqlIdent(source)} (${cols.map(([c, t]) => `${sqlIdent(c)} ${t}`).join(', ')})`);
      spec.set(source, `{${cols.map(([c, t]) => `${sqlString(c)}: ${sqlString(t)}`).join(', ')}}`);
    }
    const insert = (source: string, indexes: readonly number[]) =>
      `INSERT INTO ${sqlIdent(source)} SELECT * FROM read_json([${indexes.map((i) => sqlString(files[i] as string)).join(', ')}], format = 'array', columns = ${spec.get(source)})`;
    const time = await timed(async () => {
      for (const g of groups(requests, group)) {
        await conn.run('BEGIN');
        for (const [source, indexes] of g) await conn.run(insert(source, indexes));
        await conn.run('COMMIT');
      }
      await conn.run('CHECKPOINT');
    });
    const counted = (
      await conn.runAndReadAll(`SELECT ${[...columns.keys()].map((s) => `(SELECT count(*) FROM ${sqlIdent(s)})`).join(' + ')}`)
    ).getRows()[0]?.[0];
    return { events: Number(counted), ...time };
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}

interface ChdbSession {
  query(sql: string, format?: string): string;
  insert(p: { table: string; values: Buffer; format: 'JSONEachRow'; settings: Record<string, string | number> }): Promise<unknown>;
}

/** A body's events as the rows of Quarry's ClickHouse table (JSONEachRow: id, timestamp, event_message, fields). */
function clickHouseRows(body: string): Buffer {
  const rows = (JSON.parse(body) as Record<string, unknown>[]).map((e) => {
    const { id, timestamp, event_message, ...fields } = e;
    return JSON.stringify({ id, timestamp: String(timestamp).replace('T', ' ').replace('Z', ''), event_message, fields });
  });
  return Buffer.from(`${rows.join('\n')}\n`);
}

async function clickHouseLimit(requests: readonly Request[], rows: readonly Buffer[], work: string, group: number): Promise<Measured> {
  const { Session } = createRequire(import.meta.url)('chdb') as { Session: new (path: string) => ChdbSession };
  const session = new Session(path.join(work, 'chdb'));
  const target = { database: 'limit_ingest' };
  session.query('CREATE DATABASE IF NOT EXISTS limit_ingest');
  const tables = new Map<string, string>();
  for (const { source } of requests) {
    if (tables.has(source)) continue;
    const table = `t${tables.size}`;
    for (const ddl of createSourceTable(target, table, source)) session.query(ddl);
    tables.set(source, table);
  }
  const settings = insertSettings(target);
  let n = 0;
  // ClickHouse has no transaction across tables: each INSERT is one durable part (fsync_after_insert).
  const time = await timed(async () => {
    for (const g of groups(requests, group)) {
      for (const [source, indexes] of g) {
        await session.insert({
          table: `limit_ingest.${tables.get(source)}`,
          values: Buffer.concat(indexes.map((i) => rows[i] as Buffer)),
          format: 'JSONEachRow',
          settings: { ...settings, insert_deduplication_token: `g${n++}` },
        });
      }
    }
  });
  const counted = session.query(`SELECT sum(rows) FROM system.parts WHERE database = 'limit_ingest' AND active`, 'TSV').trim();
  return { events: Number(counted), ...time };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      engine: { type: 'string' },
      bodies: { type: 'string' },
      work: { type: 'string' },
      'schema-from': { type: 'string' },
      group: { type: 'string' },
      bulk: { type: 'boolean' },
    },
  });
  const engine = values.engine ?? 'duckdb';
  if (values.bodies === undefined || values.work === undefined) throw new Error('--bodies FILE and --work DIR are needed');
  const group = Number(values.group ?? 8);
  const bulk = values.bulk === true;
  const work = path.join(values.work, `ingest-limit-${engine}-${bulk ? 'bulk' : 'grouped'}`);
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  try {
    let r: Measured;
    let requests: Request[];
    if (engine === 'duckdb') {
      const schemaFrom = values['schema-from'];
      if (schemaFrom === undefined) throw new Error('--schema-from (the service database file) is needed on DuckDB');
      // A copy, so the service's file (which the query limit opens next) is never opened here.
      const copy = path.join(work, 'schema');
      mkdirSync(copy);
      cpSync(schemaFrom, path.join(copy, 'quarry.duckdb'));
      cpSync(path.join(path.dirname(schemaFrom), 'metadata.duckdb'), path.join(copy, 'metadata.duckdb'));
      const read = await readRequests(values.bodies, bodyFile(work));
      requests = read.requests;
      r = await duckDbLimit(requests, read.payloads, work, path.join(copy, 'quarry.duckdb'), bulk ? requests.length : group);
    } else if (engine === 'clickhouse') {
      // Shaped as the file is read, before the clock starts: only the engine's part is timed.
      const read = await readRequests(values.bodies, (b) => clickHouseRows(b.body));
      requests = read.requests;
      r = await clickHouseLimit(requests, read.payloads, work, bulk ? requests.length : group);
    } else throw new Error(`--engine must be duckdb or clickhouse, got "${engine}"`);
    const expected = requests.reduce((n, b) => n + b.events, 0);
    if (r.events !== expected) throw new Error(`the limit stored ${r.events} events of ${expected}`);
    const result: IngestLimitResult = {
      mode: bulk ? 'bulk' : 'grouped',
      group: bulk ? requests.length : group,
      ...r,
      eventsPerSecond: Math.round(r.events / (r.wallMs / 1000)),
    };
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    // chDB may still be finishing a merge in its folder just after it closed (ENOTEMPTY): retried,
    // and a folder left in the bench's temp directory does not fail the measurement.
    try {
      rmSync(work, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
    } catch (e) {
      console.error(`ingest limit: could not remove ${work}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
}

main().catch((e: unknown) => {
  console.error(`ingest limit failed: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});
