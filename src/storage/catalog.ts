/**
 * The schema catalogue: every source's physical table and current schema, held in memory for the
 * SQL layer and persisted through a repository (a metadata table in the embedded database; a shared
 * store when several nodes run).
 *
 * Entries are never mutated: a schema change replaces the entry, so a reader holding one keeps a
 * consistent view.
 */
import type { Catalog, SourceTable } from './schema.ts';

export interface CatalogRepository {
  loadAll(): Promise<SourceTable[]>;
  /** Inserts or replaces the entry of `entry.id`. */
  save(entry: SourceTable): Promise<void>;
  remove(sourceId: string): Promise<void>;
}

export class SchemaCatalog implements Catalog {
  private readonly repository: CatalogRepository;
  private readonly byId = new Map<string, SourceTable>();
  private readonly byName = new Map<string, SourceTable>();

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

  private remember(entry: SourceTable): void {
    const old = this.byId.get(entry.id);
    if (old !== undefined && this.byName.get(old.name) === old) this.byName.delete(old.name);
    this.byId.set(entry.id, entry);
    this.byName.set(entry.name, entry);
  }
}
