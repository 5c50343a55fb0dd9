/**
 * Test helpers: source tables laid out as storage lays them out (one DuckDB table per source,
 * records as STRUCTs, lists as LISTs), an in-memory catalogue, and events to fill them.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { type DuckDb, openDuckDb } from '../../src/embedded-db/database.ts';
import { duckDbType, markedExpression } from '../../src/engines/duckdb/types.ts';
import { baseColumns, type Catalog, type FieldType, type SourceTable, type TableSchema } from '../../src/storage/schema.ts';

export const str: FieldType = { kind: 'scalar', type: 'string' };
export const int: FieldType = { kind: 'scalar', type: 'int' };
export const float: FieldType = { kind: 'scalar', type: 'float' };
export const bool: FieldType = { kind: 'scalar', type: 'bool' };
export const ts: FieldType = { kind: 'scalar', type: 'timestamp' };
export const rec = (fields: Record<string, FieldType>): FieldType => ({ kind: 'record', fields });
export const list = (element: FieldType): FieldType => ({ kind: 'list', element });

export function schema(columns: Record<string, FieldType>): TableSchema {
  return { columns: { ...baseColumns, ...columns } };
}

export function makeCatalog(sources: SourceTable[]): Catalog {
  const byName = new Map(sources.map((s) => [s.name, s]));
  return { sourceByName: (name) => byName.get(name) };
}

function q(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

export function duckType(t: FieldType): string {
  switch (t.kind) {
    case 'scalar':
      return { string: 'VARCHAR', int: 'BIGINT', float: 'DOUBLE', bool: 'BOOLEAN', timestamp: 'TIMESTAMP' }[t.type];
    case 'record':
      return `STRUCT(${Object.entries(t.fields)
        .map(([k, v]) => `${q(k)} ${duckType(v)}`)
        .join(', ')})`;
    case 'list':
      return `${duckType(t.element)}[]`;
  }
}

export async function createSourceTable(conn: DuckDBConnection, source: SourceTable): Promise<void> {
  // As storage stores them: records with their presence markers (src/storage/presence.ts).
  const cols = Object.entries(source.schema.columns).map(([k, v]) => `${q(k)} ${duckDbType(v)}`);
  await conn.run(`CREATE TABLE ${q(source.table)} (${cols.join(', ')})`);
}

/** The json_transform structure for a type (missing keys read as NULL). */
function jsonStructure(t: FieldType): unknown {
  switch (t.kind) {
    case 'scalar':
      return duckType(t);
    case 'record':
      return Object.fromEntries(Object.entries(t.fields).map(([k, v]) => [k, jsonStructure(v)]));
    case 'list':
      return [jsonStructure(t.element)];
  }
}

/** Inserts events (plain objects; timestamps as ISO strings). */
export async function insertEvents(conn: DuckDBConnection, source: SourceTable, events: object[]): Promise<void> {
  if (events.length === 0) return;
  const structure = JSON.stringify([jsonStructure({ kind: 'record', fields: source.schema.columns })]);
  const names = Object.keys(source.schema.columns);
  await conn.run(
    `INSERT INTO ${q(source.table)} (${names.map(q).join(', ')}) SELECT ${names.map((k) => markedExpression(`r.${q(k)}`, source.schema.columns[k] as FieldType)).join(', ')} FROM (SELECT unnest(json_transform(CAST($rows AS JSON), $structure)) AS r)`,
    { rows: JSON.stringify(events), structure },
  );
}

export interface TestDb {
  db: DuckDb;
  conn: DuckDBConnection;
  catalog: Catalog;
  sources: SourceTable[];
}

export async function openTestDb(sources: SourceTable[], data: Record<string, object[]>): Promise<TestDb> {
  const db = await openDuckDb({ path: ':memory:', threads: 2 });
  const conn = await db.connect();
  for (const s of sources) {
    await createSourceTable(conn, s);
    await insertEvents(conn, s, data[s.name] ?? []);
  }
  return { db, conn, catalog: makeCatalog(sources), sources };
}
