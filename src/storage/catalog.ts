/**
 * The schema catalogue: every source's physical table and current schema, held in memory for the
 * SQL layer and persisted through a repository (a metadata table in the embedded database; a shared
 * store when several nodes run).
 *
 * Entries are never mutated: a schema change replaces the entry, so a reader holding one keeps a
 * consistent view.
 */
import { combineCarried, withCarried } from './carried.ts';
import { mergeSchema } from './infer.ts';
import { type Catalog, type SourceTable, type TableSchema, withoutBase } from './schema.ts';

export interface CatalogRepository {
  loadAll(): Promise<SourceTable[]>;
  /**
   * A shared repository (several nodes write it) says here when anything changed, cheaply;
   * a repository only this process writes has no `version`.
   */
  version?(): Promise<string>;
  /** Inserts or replaces the entry of `entry.id`. */
  save(entry: SourceTable): Promise<void>;
  remove(sourceId: string): Promise<void>;
}

export class SchemaCatalog implements Catalog {
  private readonly repository: CatalogRepository;
  private readonly byId = new Map<string, SourceTable>();
  private readonly byName = new Map<string, SourceTable>();
  private seenVersion: string | undefined;
  private checking: { started: number; done: Promise<boolean> } | undefined;

  private constructor(repository: CatalogRepository) {
    this.repository = repository;
  }

  static async load(repository: CatalogRepository): Promise<SchemaCatalog> {
    const catalog = new SchemaCatalog(repository);
    for (const entry of await repository.loadAll()) catalog.remember(entry);
    return catalog;
  }

  sourceByName(name: string): SourceTable | undefined {
    return this.byName.get(name);
  }

  sourceById(id: string): SourceTable | undefined {
    return this.byId.get(id);
  }

  list(): SourceTable[] {
    return [...this.byId.values()];
  }

  /** Persists the entry, then makes it visible. */
  async put(entry: SourceTable): Promise<void> {
    await this.repository.save(entry);
    this.remember(entry);
  }

  async remove(sourceId: string): Promise<void> {
    await this.repository.remove(sourceId);
    const old = this.byId.get(sourceId);
    if (old === undefined) return;
    this.byId.delete(sourceId);
    if (this.byName.get(old.name) === old) this.byName.delete(old.name);
  }

  /**
   * Learns what other nodes wrote to a shared repository: when its version moved, reloads and
   * merges each entry into the one held (schemas only grow, so nothing held is lost). True when an
   * entry changed here. `notBefore` (epoch ms): a check that started earlier does not count, so
   * a caller sees every write that finished before it asked; concurrent callers share one check.
   */
  async refresh(notBefore = Date.now()): Promise<boolean> {
    if (this.repository.version === undefined) return false;
    for (let c = this.checking; c !== undefined; c = this.checking) {
      if (c.started >= notBefore) return c.done;
      await c.done.catch(() => undefined);
    }
    const started = Date.now();
    const done = this.reload().finally(() => {
      if (this.checking?.done === done) this.checking = undefined;
    });
    this.checking = { started, done };
    return done;
  }

  private async reload(): Promise<boolean> {
    const version = await this.repository.version?.();
    if (version === this.seenVersion) return false;
    const loaded = await this.repository.loadAll();
    this.seenVersion = version;
    let changed = false;
    for (const entry of loaded) {
      const held = this.byId.get(entry.id);
      const next = held === undefined ? entry : { ...entry, schema: mergeEntrySchemas(held.schema, entry.schema) };
      if (held !== undefined && held.name === next.name && held.table === next.table && JSON.stringify(held.schema) === JSON.stringify(next.schema)) continue;
      this.remember(next);
      changed = true;
    }
    return changed;
  }

  private remember(entry: SourceTable): void {
    const old = this.byId.get(entry.id);
    if (old !== undefined && this.byName.get(old.name) === old) this.byName.delete(old.name);
    this.byId.set(entry.id, entry);
    this.byName.set(entry.name, entry);
  }
}

/**
 * Two views of one source's schema (held here and read back, or two nodes' saves) as one: the
 * fields of both (schemas only grow), the records both say every event carried.
 */
export function mergeEntrySchemas(a: TableSchema, b: TableSchema): TableSchema {
  return withCarried(mergeSchema(a, withoutBase(b.columns)).schema, combineCarried(a, b));
}
