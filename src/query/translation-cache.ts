/**
 * Remembers each query's translation per AST object, row cap and parameter signature, for any
 * engine's runner. The signature is what the run binds to each parameter the query uses (NULL, a
 * string, or a typed value's type): the semantic pass types `@name` by it and an engine may print
 * its placeholder by it, so each distinct signature has a translation of its own. A translation is
 * reused only while every source name the query mentions still resolves to the very same catalogue
 * entry (entries are replaced, never changed, when a schema grows or a source goes), so a schema
 * change always regenerates.
 */
import type { Query } from '../sql/ast.ts';
import type { GeneratedQuery } from '../sql/generator.ts';
import type { PreparedQuery } from '../sql/index.ts';
import { Lru } from '../sql/lru.ts';
import type { ParamBinding } from '../sql/resolve.ts';
import { walkQuery } from '../sql/walk.ts';
import type { Catalog, SourceTable } from '../storage/schema.ts';
import { boundValue, type ParamValue, paramBinding } from './port.ts';

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

/** Generates an engine's SQL for a prepared query with an optional row cap and the run's parameter types. */
export type Generate = (ast: Query, catalog: Catalog, maxRows: number | undefined, paramTypes: ReadonlyMap<string, ParamBinding>) => GeneratedQuery;

export type RunParams = Readonly<Record<string, ParamValue | null | undefined>>;

/**
 * Translations per (row cap, signature). Row caps are per endpoint and each parameter of an
 * endpoint has one declared type (bound, or NULL when absent): a handful per query; the LRU keeps
 * any query to this many whatever callers send.
 */
const PER_QUERY = 16;

const signatureLetters: Readonly<Record<ParamBinding, string>> = { null: 'n', string: 's', int: 'i', float: 'f', bool: 'b', timestamp: 't', date: 'd' };

interface PerQuery {
  /** The parameter names the query uses, once each, in a fixed order. */
  readonly names: readonly string[];
  readonly translations: Lru<string, Translation>;
}

export class TranslationCache {
  readonly #byAst = new WeakMap<Query, PerQuery>();

  constructor(private readonly generate: Generate) {}

  get(query: PreparedQuery, maxRows: number | undefined, params: RunParams): Translation {
    const { ast, catalog } = query;
    let perQuery = this.#byAst.get(ast);
    if (!perQuery) {
      perQuery = { names: paramNames(ast), translations: new Lru(PER_QUERY) };
      this.#byAst.set(ast, perQuery);
    }
    const bindings = perQuery.names.map((name) => paramBinding(boundValue(params, name)));
    const key = `${maxRows ?? '-'}/${bindings.map((b) => signatureLetters[b]).join('')}`;
    const known = perQuery.translations.get(key);
    if (known && known.catalog === catalog && known.deps.every(([name, entry]) => catalog.sourceByName(name) === entry)) return known;
    const paramTypes = new Map(perQuery.names.map((name, i) => [name, bindings[i] as ParamBinding]));
    const generated = this.generate(ast, catalog, maxRows, paramTypes);
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
    perQuery.translations.set(key, translation);
    return translation;
  }
}

/** The parameter names a query uses, once each, in the order they first appear. */
export function paramNames(ast: Query): readonly string[] {
  const names = new Set<string>();
  walkQuery(ast, {
    expr(e) {
      if (e.kind === 'param') names.add(e.name);
    },
  });
  return [...names];
}
