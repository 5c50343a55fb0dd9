/**
 * Name resolution for the ClickHouse generator: which relation, UNNEST alias, column or record field
 * each part of a column path means (BigQuery's rules: range variables first, then columns; names
 * case-insensitive), and what ClickHouse SQL reaches it.
 *
 * Records are JSON values: a source's fields live in its `fields` JSON column, a record is the
 * sub-object at a path (`t.fields.^metadata`), a scalar field is its path cast to the catalogue's
 * type (`CAST(t.fields.metadata.status AS Nullable(Int64))`), a list the raw path (cast where it is
 * consumed). A typed value that is a record therefore remembers its JSON base and path, so a field
 * below it extends the path instead of nesting accesses.
 */
import { QuarryError } from '../../errors.ts';
import { findName, missingType, unknownType, type VType } from '../../sql/types.ts';
import { quoteIdent } from './client.ts';

export { quoteIdent };

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
  json?: JsonPath;
}

/** Where a record lives: a JSON-typed expression and the path below it. */
export interface JsonPath {
  base: string;
  path: string[];
}

export interface Typed {
  sql: string;
  type: VType;
  /** Set for record values reachable as a JSON path (fields below extend it). */
  json?: JsonPath;
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

/** The base columns of a source table, stored as columns of their own; the rest is in `fields`. */
export const BASE_COLUMNS = new Set(['id', 'timestamp', 'event_message']);

/** The ClickHouse type a value of `t` is cast to. */
export function clickHouseType(t: VType, nullable = true): string {
  switch (t.k) {
    case 'scalar': {
      const name = {
        string: 'String',
        int: 'Int64',
        float: 'Float64',
        numeric: 'Decimal(38, 9)',
        bool: 'Bool',
        timestamp: "DateTime64(6, 'UTC')",
        datetime: "DateTime64(6, 'UTC')",
        date: 'Date32',
        interval: 'Int64',
        bytes: 'String',
      }[t.t];
      return nullable ? `Nullable(${name})` : name;
    }
    case 'list':
      return `Array(${clickHouseType(t.element, true)})`;
    case 'record':
      return 'JSON';
    case 'missing':
    case 'unknown':
      return 'Nullable(String)';
  }
}

/** `base.a.b` (a leaf path) or `base.^a.b` (the sub-object there). */
function pathSql(json: JsonPath, subObject: boolean): string {
  if (json.path.length === 0) return json.base;
  return `${json.base}.${subObject ? '^' : ''}${json.path.map(quoteIdent).join('.')}`;
}

/** The value at a JSON path, read as the catalogue's type says. */
export function jsonValue(json: JsonPath, type: VType): Typed {
  switch (type.k) {
    case 'record':
      return { sql: pathSql(json, true), type, json };
    case 'scalar':
      return { sql: `CAST(${pathSql(json, false)} AS ${clickHouseType(type)})`, type };
    default:
      // Lists (and anything untyped) stay as stored; consumers cast a list where they need one.
      return { sql: pathSql(json, false), type };
  }
}

/** A list value as a ClickHouse array of its element type (absent → []). */
export function asArray(list: Typed): string {
  const element = list.type.k === 'list' ? list.type.element : unknownType;
  return `CAST(${list.sql} AS Array(${clickHouseType(element)}))`;
}

export interface ResolveContext {
  /** Paths that no event ever carried, reported back as warnings. */
  warn(path: string): void;
  /**
   * Saving a query: a top-level column that a source which already has fields lacks is a
   * misspelling (INVALID_QUERY). Running one: it reads as NULL.
   */
  strictSourceColumns?: boolean;
}

function hasFields(rel: Relation): boolean {
  return rel.columns.length > 3;
}

function missingSourceColumn(rel: Relation, path: readonly string[], ctx: ResolveContext, name: string): Typed {
  if (ctx.strictSourceColumns && hasFields(rel)) throw new QuarryError('INVALID_QUERY', `Unrecognized name: ${name}`);
  ctx.warn(path.join('.'));
  return { sql: 'NULL', type: missingType };
}

/** A column of a relation: a source's non-base columns are paths in its `fields` JSON column. */
export function columnValue(rel: Relation, col: Column): Typed {
  if (rel.physical && !BASE_COLUMNS.has(col.name)) return jsonValue({ base: `${rel.q}.${quoteIdent('fields')}`, path: [col.name] }, col.type);
  const sql = `${rel.q}.${quoteIdent(col.name)}`;
  if (col.type.k === 'record') return { sql, type: col.type, json: { base: sql, path: [] } };
  return { sql, type: col.type };
}

/** Walks record fields of a value; a field the catalogue never saw reads as NULL. */
export function walkFields(base: Typed, rest: readonly string[], fullPath: readonly string[], ctx: ResolveContext): Typed {
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
      const json = cur.json ?? { base: cur.sql, path: [] };
      cur = jsonValue({ base: json.base, path: [...json.path, found[0]] }, found[1]);
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
    const json = cur.json ?? { base: cur.sql, path: [] };
    cur = jsonValue({ base: json.base, path: [...json.path, name] }, unknownType);
  }
  return cur;
}

export function resolveColumn(path: readonly string[], scope: Scope, ctx: ResolveContext, allowSelectAliases: boolean): Typed {
  const head = path[0]!.toLowerCase();
  const rest = path.slice(1);
  if (allowSelectAliases && path.length === 1 && scope.selectAliases?.has(head)) {
    return scope.selectAliases.get(head)!.expr;
  }
  for (let s: Scope | undefined = scope; s; s = s.parent) {
    const value = s.values.findLast((v) => v.name === head);
    if (value) {
      const typed: Typed = value.json ? { sql: value.sql, type: value.type, json: value.json } : { sql: value.sql, type: value.type };
      return walkFields(typed, rest, path, ctx);
    }
    if (path.length >= 2) {
      const rel = s.relations.find((r) => r.names.includes(head));
      if (rel) {
        const col = findName(
          rel.columns.map((c) => [c.name, c] as [string, Column]),
          path[1]!,
        );
        if (col) return walkFields(columnValue(rel, col[1]), path.slice(2), path, ctx);
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
      return walkFields(columnValue(rel, col), rest, path, ctx);
    }
  }
  if (!allowSelectAliases && path.length === 1 && scope.selectAliases?.has(head)) {
    return scope.selectAliases.get(head)!.expr;
  }
  const only = scope.relations.length === 1 && scope.values.length === 0 ? scope.relations[0] : undefined;
  if (only?.physical) return missingSourceColumn(only, path, ctx, path[0]!);
  throw new QuarryError('INVALID_QUERY', `Unrecognized name: ${path[0]}`);
}
