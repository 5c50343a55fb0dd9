/**
 * Remembers each query's translation per AST object and row cap, for any engine's runner. A
 * translation is reused only while every source name the query mentions still resolves to the very
 * same catalogue entry (entries are replaced, never changed, when a schema grows or a source goes),
 * so a schema change always regenerates.
 */
import type { Query } from '../sql/ast.ts';
import type { GeneratedQuery } from '../sql/generator.ts';
import type { PreparedQuery } from '../sql/index.ts';
import { Lru } from '../sql/lru.ts';
import { walkQuery } from '../sql/walk.ts';
import type { Catalog, SourceTable } from '../storage/schema.ts';

export interface Translation {
  readonly catalog: Catalog;
  /** Every table name the query mentions, with what the catalogue said at generation time. */
  readonly deps: readonly (readonly [string, SourceTable | undefined])[];
  readonly generated: GeneratedQuery;
  /** The physical tables the query may read (the lock-down's second check allows exactly these). */
  readonly tables: readonly string[];
  /** The CTE names the query defines. */
  readonly ctes: readonly string[];
}

/** Generates an engine's SQL for a prepared query with an optional row cap. */
export type Generate = (ast: Query, catalog: Catalog, maxRows: number | undefined) => GeneratedQuery;

export class TranslationCache {
  /** Row caps are per endpoint: a handful per query at most; keep each map small regardless. */
  readonly #byAst = new WeakMap<Query, Lru<number | undefined, Translation>>();

  constructor(private readonly generate: Generate) {}

  get(query: PreparedQuery, maxRows: number | undefined): Translation {
    const { ast, catalog } = query;
    let perCap = this.#byAst.get(ast);
    const known = perCap?.get(maxRows);
    if (known && known.catalog === catalog && known.deps.every(([name, entry]) => catalog.sourceByName(name) === entry)) return known;
    const generated = this.generate(ast, catalog, maxRows);
    const names = new Set<string>();
    const tables = new Set<string>();
    const ctes: string[] = [];
    walkQuery(ast, {
      query(q) {
        for (const c of q.with) ctes.push(c.name);
      },
      table(t, cte) {
        names.add(t.name);
        const source = cte ? undefined : catalog.sourceByName(t.name);
        if (source) tables.add(source.table);
      },
    });
    const translation: Translation = {
      catalog,
      deps: [...names].map((n) => [n, catalog.sourceByName(n)] as const),
      generated,
      tables: [...tables],
      ctes,
    };
    if (!perCap) {
      perCap = new Lru(8);
      this.#byAst.set(ast, perCap);
    }
    perCap.set(maxRows, translation);
    return translation;
  }
}
