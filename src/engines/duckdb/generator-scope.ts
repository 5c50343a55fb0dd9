/**
 * Name resolution for the DuckDB generator: which relation, UNNEST alias, column or record field
 * each part of a column path means, following BigQuery's rules (range variables first, then
 * columns; names case-insensitive), and what SQL reaches it.
 */
import { QuarryError } from '../../errors.ts';
import { findName, missingType, unknownType, type VType } from '../../sql/types.ts';

export interface Column {
  name: string;
  type: VType;
}

/** A table, CTE or derived table in a FROM clause. */
export interface Relation {
  /** Lower-case names it can be qualified by (its alias, or its table name). */
  names: string[];
  /** Quoted alias in the emitted SQL. */
  q: string;
  columns: Column[];
  /** A source table: a column no event has carried yet reads as NULL (schemas grow). */
  physical: boolean;
}

/** A name bound to a value: an UNNEST alias (`m` in `unnest(metadata) as m`). */
export interface ValueAlias {
  name: string;
  sql: string;
  type: VType;
}

export interface Typed {
  sql: string;
  type: VType;
}

/** A CTE visible by name: its quoted name and output columns. */
export interface CteInfo {
  q: string;
  columns: Column[];
}

export type CteEnv = ReadonlyMap<string, CteInfo>;

export class Scope {
  readonly relations: Relation[] = [];
  readonly values: ValueAlias[] = [];
  /** Select-list aliases, visible in GROUP BY / HAVING / QUALIFY / ORDER BY. */
  selectAliases: Map<string, { index: number; expr: Typed }> | undefined;

  /** `ctes`: the CTEs visible here, for subqueries in expressions. */
  constructor(
    readonly parent: Scope | undefined,
    readonly ctes: CteEnv = parent?.ctes ?? new Map(),
  ) {}
}

export function quoteIdent(name: string): string {
  if (name.includes('\u0000')) throw new QuarryError('INVALID_QUERY', 'Names may not contain NUL characters');
  return `"${name.replace(/"/g, '""')}"`;
}

const plainChain = /^"(?:[^"]|"")*"(?:\."(?:[^"]|"")*")*$/;

/** SQL for a struct field of `sql`. */
export function fieldAccess(sql: string, field: string): string {
  return plainChain.test(sql) ? `${sql}.${quoteIdent(field)}` : `(${sql}).${quoteIdent(field)}`;
}

export interface ResolveContext {
  /** Paths that no event ever carried, reported back as warnings. */
  warn(path: string): void;
  /**
   * Saving a query: a top-level column that a source which already has fields lacks is a
   * misspelling (INVALID_QUERY). Running one: it reads as NULL, so a saved query keeps working on
   * sources that have not seen a field yet (and on a brand-new, empty source even when saved).
   */
  strictSourceColumns?: boolean;
}

/** The source has received fields beyond id, timestamp and event_message. */
function hasFields(rel: Relation): boolean {
  return rel.columns.length > 3;
}

function missingSourceColumn(rel: Relation, path: string[], ctx: ResolveContext, name: string): Typed {
  if (ctx.strictSourceColumns && hasFields(rel)) throw new QuarryError('INVALID_QUERY', `Unrecognized name: ${name}`);
  ctx.warn(path.join('.'));
  return { sql: 'NULL', type: missingType };
}

/** Walks record fields of a value; a field the catalogue never saw reads as NULL. */
export function walkFields(base: Typed, rest: string[], fullPath: string[], ctx: ResolveContext): Typed {
  let cur = base;
  for (let i = 0; i < rest.length; i++) {
    const name = rest[i]!;
    const t = cur.type;
    if (t.k === 'missing') {
      ctx.warn(fullPath.join('.'));
      return { sql: 'NULL', type: missingType };
    }
    if (t.k === 'record') {
      const found = findName(Object.entries(t.fields), name);
      if (!found) {
        ctx.warn(fullPath.join('.'));
        return { sql: 'NULL', type: missingType };
      }
      cur = { sql: fieldAccess(cur.sql, found[0]), type: found[1] };
      continue;
    }
    if (t.k === 'list') {
      const where = fullPath.slice(0, fullPath.length - rest.length + i).join('.');
      throw new QuarryError('INVALID_QUERY', `Cannot access field ${name} on ${where}, which is an array: UNNEST it first`);
    }
    if (t.k === 'scalar') {
      const where = fullPath.slice(0, fullPath.length - rest.length + i).join('.');
      throw new QuarryError('INVALID_QUERY', `Cannot access field ${name} on ${where}, which is a ${t.t.toUpperCase()} value`);
    }
    cur = { sql: fieldAccess(cur.sql, name), type: unknownType };
  }
  return cur;
}

export function resolveColumn(path: string[], scope: Scope, ctx: ResolveContext, allowSelectAliases: boolean): Typed {
  const head = path[0]!.toLowerCase();
  const rest = path.slice(1);
  if (allowSelectAliases && path.length === 1 && scope.selectAliases?.has(head)) {
    // BigQuery resolves GROUP BY / ORDER BY names to select-list aliases first.
    return scope.selectAliases.get(head)!.expr;
  }
  for (let s: Scope | undefined = scope; s; s = s.parent) {
    const value = s.values.findLast((v) => v.name === head);
    if (value) return walkFields({ sql: value.sql, type: value.type }, rest, path, ctx);
    if (path.length >= 2) {
      const rel = s.relations.find((r) => r.names.includes(head));
      if (rel) {
        const col = findName(
          rel.columns.map((c) => [c.name, c] as [string, Column]),
          path[1]!,
        );
        if (col) return walkFields({ sql: `${rel.q}.${quoteIdent(col[1].name)}`, type: col[1].type }, path.slice(2), path, ctx);
        if (rel.physical) return missingSourceColumn(rel, path, ctx, `${path[0]}.${path[1]}`);
        throw new QuarryError('INVALID_QUERY', `Name ${path[1]} not found inside ${path[0]}`);
      }
    }
    const matches: [Relation, Column][] = [];
    for (const rel of s.relations) {
      const col = findName(
        rel.columns.map((c) => [c.name, c] as [string, Column]),
        path[0]!,
      );
      if (col) matches.push([rel, col[1]]);
    }
    if (matches.length > 1) throw new QuarryError('INVALID_QUERY', `Column name ${path[0]} is ambiguous`);
    if (matches.length === 1) {
      const [rel, col] = matches[0]!;
      return walkFields({ sql: `${rel.q}.${quoteIdent(col.name)}`, type: col.type }, rest, path, ctx);
    }
  }
  if (!allowSelectAliases && path.length === 1 && scope.selectAliases?.has(head)) {
    return scope.selectAliases.get(head)!.expr;
  }
  // A source table whose events never carried this top-level key yet: NULL, not an error.
  const only = scope.relations.length === 1 && scope.values.length === 0 ? scope.relations[0] : undefined;
  if (only?.physical) return missingSourceColumn(only, path, ctx, path[0]!);
  throw new QuarryError('INVALID_QUERY', `Unrecognized name: ${path[0]}`);
}
