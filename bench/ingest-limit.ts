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
 * ddl.ts), filled by `INSERT … SELECT … FROM input() FORMAT JSONAsString` with the request text as
 * sent: ClickHouse parses the objects, takes id, timestamp and event_message out and stores the rest
 * in the JSON column.
 */
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { DuckDBInstance } from '@duckdb/node-api';
import { createSourceTable, insertSettings } from '../src/engines/clickhouse/ddl.ts';

export interface IngestLimitResult {
  mode: 'grouped' | 'bulk';
  group: number;
  events: number;
  wallMs: number;
  cpuMs: number;
  eventsPerSecond: number;
}

interface Body {
  source: string;
  events: number;
  /** The request's JSON text. */
  text: Buffer;
}

/** The bench's bodies file (source, event count and JSON text per line), kept as bytes: at 1M events it is past V8's longest string. */
function readBodies(file: string): Body[] {
  const all = readFileSync(file);
  const out: Body[] = [];
  for (let start = 0; start < all.length; ) {
    let end = all.indexOf(0x0a, start);
    if (end < 0) end = all.length;
    const tab1 = all.indexOf(0x09, start);
    const tab2 = all.indexOf(0x09, tab1 + 1);
    if (end > start && tab1 > 0 && tab2 > tab1 && tab2 < end) {
      out.push({ source: all.toString('utf8', start, tab1), events: Number(all.toString('latin1', tab1 + 1, tab2)), text: all.subarray(tab2 + 1, end) });
    }
    start = end + 1;
  }
  return out;
}

/** The requests `group` at a time, each group's bodies per source (in order). */
function groups(bodies: readonly Body[], group: number): Map<string, number[]>[] {
  const out: Map<string, number[]>[] = [];
  for (let g = 0; g < bodies.length; g += group) {
    const bySource = new Map<string, number[]>();
    for (let i = g; i < Math.min(bodies.length, g + group); i++) {
      const b = bodies[i] as Body;
      const list = bySource.get(b.source);
      if (list === undefined) bySource.set(b.source, [i]);
      else list.push(i);
    }
    out.push(bySource);
  }
  return out;
}

const sqlString = (s: string) => `'${s.replace(/'/g, "''")}'`;
const sqlIdent = (s: string) => `"${s.replace(/"/g, '""')}"`;

/** Each body in a file of its own (before any clock starts), as a request's text arrives; returns where body i is. */
function writeBodyFiles(bodies: readonly Body[], work: string): (i: number) => string {
  const dir = path.join(work, 'bodies');
  mkdirSync(dir, { recursive: true });
  const fileOf = (i: number) => path.join(dir, `${i}.json`);
  for (const [i, b] of bodies.entries()) writeFileSync(fileOf(i), b.text);
  return fileOf;
}

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

async function duckDbLimit(
  bodies: readonly Body[],
  work: string,
  schemaFrom: string,
  group: number,
  bulk: boolean,
): Promise<Omit<IngestLimitResult, 'mode' | 'group'>> {
  const columns = await duckDbColumns(schemaFrom);
  const fileOf = writeBodyFiles(bodies, work);
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
      `INSERT INTO ${sqlIdent(source)} SELECT * FROM read_json([${indexes.map((i) => sqlString(fileOf(i))).join(', ')}], format = 'array', columns = ${spec.get(source)})`;
    const work_ = bulk ? groups(bodies, bodies.length) : groups(bodies, group);
    const started = performance.now();
    const cpu = process.cpuUsage();
    for (const g of work_) {
      await conn.run('BEGIN');
      for (const [source, indexes] of g) await conn.run(insert(source, indexes));
      await conn.run('COMMIT');
    }
    await conn.run('CHECKPOINT');
    const wallMs = performance.now() - started;
    const used = process.cpuUsage(cpu);
    const counted = (
      await conn.runAndReadAll(`SELECT ${[...columns.keys()].map((s) => `(SELECT count(*) FROM ${sqlIdent(s)})`).join(' + ')}`)
    ).getRows()[0]?.[0];
    return { events: Number(counted), wallMs, cpuMs: (used.user + used.system) / 1000, eventsPerSecond: 0 };
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
function clickHouseRows(body: Body): Buffer {
  const rows = (JSON.parse(body.text.toString('utf8')) as Record<string, unknown>[]).map((e) => {
    const { id, timestamp, event_message, ...fields } = e;
    return JSON.stringify({ id, timestamp: String(timestamp).replace('T', ' ').replace('Z', ''), event_message, fields });
  });
  return Buffer.from(`${rows.join('\n')}\n`);
}

async function clickHouseLimit(bodies: readonly Body[], work: string, group: number, bulk: boolean): Promise<Omit<IngestLimitResult, 'mode' | 'group'>> {
  // Shaped before the clock starts: the engine's part only.
  const rows = bodies.map(clickHouseRows);
  const { Session } = createRequire(import.meta.url)('chdb') as { Session: new (path: string) => ChdbSession };
  const session = new Session(path.join(work, 'chdb'));
  const target = { database: 'limit_ingest' };
  session.query('CREATE DATABASE IF NOT EXISTS limit_ingest');
  const tables = new Map<string, string>();
  for (const source of new Set(bodies.map((b) => b.source))) {
    const table = `t${tables.size}`;
    for (const ddl of createSourceTable(target, table, source)) session.query(ddl);
    tables.set(source, table);
  }
  const settings = insertSettings(target);
  const work_ = bulk ? groups(bodies, bodies.length) : groups(bodies, group);
  let n = 0;
  const started = performance.now();
  const cpu = process.cpuUsage();
  // ClickHouse has no transaction across tables: each INSERT is one durable part (fsync_after_insert).
  for (const g of work_) {
    for (const [source, indexes] of g) {
      await session.insert({
        table: `limit_ingest.${tables.get(source)}`,
        values: Buffer.concat(indexes.map((i) => rows[i] as Buffer)),
        format: 'JSONEachRow',
        settings: { ...settings, insert_deduplication_token: `g${n++}` },
      });
    }
  }
  const wallMs = performance.now() - started;
  const used = process.cpuUsage(cpu);
  const counted = session.query(`SELECT sum(rows) FROM system.parts WHERE database = 'limit_ingest' AND active`, 'TSV').trim();
  return { events: Number(counted), wallMs, cpuMs: (used.user + used.system) / 1000, eventsPerSecond: 0 };
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
  const bodies = readBodies(values.bodies);
  const work = path.join(values.work, `ingest-limit-${engine}-${bulk ? 'bulk' : 'grouped'}`);
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  try {
    let r: Omit<IngestLimitResult, 'mode' | 'group'>;
    if (engine === 'duckdb') {
      if (values['schema-from'] === undefined) throw new Error('--schema-from (the service database file) is needed on DuckDB');
      // A copy, so the service's file (which the query limit opens next) is never opened here.
      const copy = path.join(work, 'schema');
      mkdirSync(copy);
      cpSync(values['schema-from'], path.join(copy, 'quarry.duckdb'));
      cpSync(path.join(path.dirname(values['schema-from']), 'metadata.duckdb'), path.join(copy, 'metadata.duckdb'));
      r = await duckDbLimit(bodies, work, path.join(copy, 'quarry.duckdb'), group, bulk);
    } else if (engine === 'clickhouse') {
      r = await clickHouseLimit(bodies, work, group, bulk);
    } else throw new Error(`--engine must be duckdb or clickhouse, got "${engine}"`);
    const expected = bodies.reduce((n, b) => n + b.events, 0);
    if (r.events !== expected) throw new Error(`the limit stored ${r.events} events of ${expected}`);
    const result: IngestLimitResult = {
      mode: bulk ? 'bulk' : 'grouped',
      group: bulk ? bodies.length : group,
      ...r,
      eventsPerSecond: Math.round(r.events / (r.wallMs / 1000)),
    };
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  console.error(`ingest limit failed: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});
