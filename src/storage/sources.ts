/**
 * Source tables: creates, grows and drops the physical table behind each source and keeps the
 * catalogue in step. The only writer of schemas; the ingest pipeline calls `evolve` before it
 * appends.
 */
import type { KeyRule } from '../schemas/source.ts';
import type { StorageEngine } from './port.ts';
import { QuarryError } from '../errors.ts';
import { afterAppend, sameCarried, withCarried } from './carried.ts';
import type { SchemaCatalog } from './catalog.ts';
import type { SchemaChange } from './infer.ts';
import { mergeSchema, sameType } from './infer.ts';
import { checkFieldLimit } from './limits.ts';
import { growSchema } from './overflow.ts';
import type { FieldType, RecordPath, SourceTable, TableSchema } from './schema.ts';
import { baseColumns, withoutBase } from './schema.ts';

export interface SourceRef {
  id: string;
  name: string;
  /** Physical table, when the source registry already chose one (default `physicalTableName(id)`). */
  table?: string;
  /** How ingest names its fields (src/ingest/keys.ts); Logflare's rule when absent. */
  key_rule?: KeyRule;
}

/** `src_` + the id's letters and digits: a physical name that needs no quoting and never collides. */
export function physicalTableName(sourceId: string): string {
  return `src_${sourceId.toLowerCase().replace(/[^a-z0-9]/g, '')}`;
}

/** How far `evolve` may grow a schema (src/storage/limits.ts); unbounded when absent. */
export interface GrowthLimits {
  maxFields?: number;
  /** Beyond it new fields go to the overflow; give it only for engines that keep one. */
  maxTypedFields?: number;
}

export class SourceTables {
  readonly catalog: SchemaCatalog;
  private readonly engine: StorageEngine;
  private readonly creating = new Map<string, Promise<SourceTable>>();

  constructor(engine: StorageEngine, catalog: SchemaCatalog) {
    this.engine = engine;
    this.catalog = catalog;
  }

  /**
   * Brings the catalogue in line with the stored tables after a crash between a schema change
   * and its catalogue write: the stored table is the truth.
   */
  async reconcile(): Promise<void> {
    for (const entry of this.catalog.list()) {
      const stored = await this.engine.describeTable(entry.table);
      if (stored === undefined) {
        await this.engine.createSourceTable(entry.table, { name: entry.name });
        const base: TableSchema = { columns: { ...baseColumns } };
        const { schema, changes } = mergeSchema(base, withoutBase(entry.schema.columns));
        const overflow = entry.schema.overflow;
        // The overflow's fields come back as changes too, so the engine adds its catch-all column.
        const all = overflow === undefined ? changes : [...changes, ...overflowChanges(overflow)];
        await this.engine.applySchemaChanges(entry.table, base, overflow === undefined ? schema : { ...schema, overflow }, all);
        continue;
      }
      // The stored table is the truth for the typed columns; only the catalogue knows the
      // overflow's fields (they need no DDL), so they are kept.
      if (!sameSchema(stored, entry.schema)) {
        const schema: TableSchema =
          entry.schema.overflow === undefined ? { columns: stored.columns } : { columns: stored.columns, overflow: entry.schema.overflow };
        await this.catalog.put({ ...entry, schema });
      }
      if (entry.schema.overflow !== undefined && stored.overflow === undefined) {
        await this.engine.applySchemaChanges(entry.table, stored, entry.schema, overflowChanges(entry.schema.overflow));
      }
    }
  }

  /** The source's table, created when missing; a changed name is recorded. Idempotent. */
  ensure(source: SourceRef): Promise<SourceTable> {
    const existing = this.catalog.sourceById(source.id);
    if (existing !== undefined && existing.name === source.name) return Promise.resolve(existing);
    const pending = this.creating.get(source.id);
    if (pending !== undefined) return pending;
    const run = this.create(source).finally(() => this.creating.delete(source.id));
    this.creating.set(source.id, run);
    return run;
  }

  private async create(source: SourceRef): Promise<SourceTable> {
    const existing = this.catalog.sourceById(source.id);
    if (existing !== undefined) {
      if (existing.name === source.name) return existing;
      const renamed = { ...existing, name: source.name };
      await this.catalog.put(renamed);
      return renamed;
    }
    const entry: SourceTable = {
      id: source.id,
      name: source.name,
      table: source.table ?? physicalTableName(source.id),
      schema: { columns: { ...baseColumns }, unwritten: true },
    };
    await this.engine.createSourceTable(entry.table, { name: entry.name });
    await this.catalog.put(entry);
    return entry;
  }

  /** Drops the source's table and catalogue entry. */
  async drop(sourceId: string): Promise<void> {
    const entry = this.catalog.sourceById(sourceId);
    if (entry === undefined) return;
    await this.engine.dropSourceTable(entry.table);
    await this.catalog.remove(sourceId);
  }

  /**
   * Grows the source's schema to hold the observed field types, before an append of events of
   * those types; DDL runs only when something actually changed. `carriedBy` says which record
   * paths every event of that append carries (src/storage/carried.ts; none when absent). Returns
   * the entry to append with and the changes applied. Growing past `maxFields` leaf fields is
   * refused (BAD_REQUEST naming the first field over the limit) and changes nothing.
   */
  async evolve(
    sourceId: string,
    observed: Record<string, FieldType>,
    limits: GrowthLimits = {},
    carriedBy?: (paths: readonly RecordPath[]) => RecordPath[],
  ): Promise<{ entry: SourceTable; changes: SchemaChange[] }> {
    const entry = this.catalog.sourceById(sourceId);
    if (entry === undefined) throw new Error(`no table for source ${sourceId}`);
    const maxFields = limits.maxFields ?? Number.POSITIVE_INFINITY;
    const grown = growSchema(entry.schema, observed, limits.maxTypedFields ?? Number.POSITIVE_INFINITY);
    const changes = grown.changes;
    const schema = withCarried(grown.schema, afterAppend(entry.schema, grown.schema.columns, carriedBy));
    if (changes.length === 0) {
      if (sameCarried(schema, entry.schema)) return { entry, changes };
      const next = { ...entry, schema };
      await this.catalog.put(next);
      return { entry: next, changes };
    }
    const breach = checkFieldLimit(entry.schema, changes, maxFields);
    if (breach !== undefined) {
      throw new QuarryError(
        'BAD_REQUEST',
        `Field "${breach.path}" would take source "${entry.name}" to ${breach.total} fields, over its limit of ${breach.limit} ` +
          '(INGEST_MAX_FIELDS). Nothing was stored.',
      );
    }
    await this.engine.applySchemaChanges(entry.table, entry.schema, schema, changes);
    const next = { ...entry, schema };
    await this.catalog.put(next);
    return { entry: next, changes };
  }
}

/** Every field of an overflow tree as a change (the catch-all column is then created if missing). */
function overflowChanges(overflow: Record<string, FieldType>): SchemaChange[] {
  return Object.keys(overflow).map((name) => ({ kind: 'overflow_field', path: [name], type: overflow[name] as FieldType }));
}

function sameSchema(a: TableSchema, b: TableSchema): boolean {
  const ak = Object.keys(a.columns);
  const bk = Object.keys(b.columns);
  if (ak.length !== bk.length) return false;
  return ak.every((k, i) => bk[i] === k && sameType(a.columns[k] as FieldType, b.columns[k] as FieldType));
}
