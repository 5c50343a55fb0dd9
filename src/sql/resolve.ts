/**
 * The semantic pass: a validated AST → the resolved, typed tree (resolved.ts). Runs after
 * validation and before any generator, once per (query, catalogue entries); generators print its
 * output and decide nothing about names or types.
 *
 * Name resolution follows BigQuery:
 * - range variables come from tables (a source or a CTE), derived tables and UNNEST; names are
 *   case-insensitive; a path's first name is tried as an UNNEST alias, then (for `a.b`) as a table
 *   alias, then as a column;
 * - UNNEST of a record or of a list of records is a value table: its fields are in scope
 *   unqualified (`path` is `r.path`); a name two range variables provide is ambiguous
 *   (INVALID_QUERY naming the candidates);
 * - select-list aliases: GROUP BY and ORDER BY try them first (and use them by position), HAVING
 *   and QUALIFY after the columns; WHERE never sees them;
 * - a subquery in an expression sees the enclosing scopes (correlated references); a derived
 *   table in FROM sees only the CTEs.
 * Schemas grow, so a path under a record that no event has carried reads as NULL and is reported
 * as a warning; a top-level column a source lacks is NULL too when running, and an error when
 * saving if the source already has fields (strictSourceColumns).
 */
import { QuarryError } from '../errors.ts';
import { allColumns } from '../storage/overflow.ts';
import {
  type CastType,
  type DatePart,
  type Expr,
  type From,
  type FuncCall,
  frameText,
  type OrderItem,
  type Query,
  type Select,
  type SetExpr,
  type TableFactor,
  type WindowFrame,
} from './ast.ts';
import { presence, scalarWithoutFrom, withoutImpliedPresence } from './presence.ts';
import { type ArgKind, functionDef, isAggregate, type FunctionName, restrictedFunction, returnType } from './functions.ts';
import {
  allOf,
  freeze,
  type OutColumn,
  type RangeVar,
  type RExpr,
  type RFactor,
  type RFrom,
  type RFunc,
  type RJoin,
  type ROrder,
  type RQuery,
  type RSelect,
  type RSetExpr,
} from './resolved.ts';
import {
  assertNever,
  findName,
  fromFieldType,
  isScalar,
  listOf,
  missingType,
  recordOf,
  scalar,
  type ScalarName,
  typeName,
  unknownType,
  type VType,
} from './types.ts';
import type { Catalog } from '../storage/schema.ts';

export interface ResolveOptions {
  catalog: Catalog;
  /** Saving a query: a top-level column a source with fields lacks is an error, not NULL. */
  strictSourceColumns?: boolean;
  /** What the run binds to each parameter; a parameter it does not name is a STRING. */
  paramTypes?: ReadonlyMap<string, ParamBinding>;
}

/**
 * What one run binds to a parameter: NULL, a string, or a typed endpoint parameter's value (an
 * engine binds it with that type, so the tree types `@name` the same way).
 */
export type ParamBinding = 'null' | 'string' | 'int' | 'float' | 'bool' | 'timestamp' | 'date';

export interface Resolved {
  query: RQuery;
  /** Paths no event has carried yet (they read as NULL), as written. */
  warnings: readonly string[];
}

export function resolveQuery(query: Query, options: ResolveOptions): Resolved {
  const r = new Resolver(options);
  const out = r.query(query, new Map(), undefined);
  return { query: out, warnings: [...r.warnings] };
}

/** A CTE visible by name. */
interface CteInfo {
  name: string;
  columns: readonly OutColumn[];
}
type CteEnv = ReadonlyMap<string, CteInfo>;

/** A range variable as name resolution sees it. */
interface ScopeRange {
  /** Lower-case names it can be qualified by. */
  names: readonly string[];
  range: RangeVar;
  columns: readonly OutColumn[];
  /** A source table: a column no event has carried reads as NULL. */
  physical: boolean;
}

/** An UNNEST alias: the value it names (a record, or a list's element). */
interface ScopeValue {
  name: string;
  written: string;
  value: RExpr;
}

interface SelectAlias {
  index: number;
  expr: RExpr;
}

class Scope {
  readonly ranges: ScopeRange[] = [];
  readonly values: ScopeValue[] = [];
  /** Select-list aliases (lower-case) → their 1-based position and expression. */
  selectAliases: Map<string, SelectAlias> | undefined;
  constructor(
    readonly parent: Scope | undefined,
    readonly ctes: CteEnv,
  ) {}
}

const T = { bool: scalar('bool'), int: scalar('int'), float: scalar('float'), string: scalar('string'), interval: scalar('interval') };
const intervalUnits: ReadonlySet<DatePart> = new Set(['microsecond', 'millisecond', 'second', 'minute', 'hour', 'day', 'week', 'month', 'quarter', 'year']);

function castResult(to: CastType): VType {
  switch (to) {
    case 'string':
      return T.string;
    case 'int64':
      return T.int;
    case 'float64':
      return T.float;
    case 'numeric':
      return scalar('numeric');
    case 'bool':
      return T.bool;
    case 'timestamp':
      return scalar('timestamp');
    case 'datetime':
      return scalar('datetime');
    case 'date':
      return scalar('date');
    case 'bytes':
      return scalar('bytes');
    default:
      return assertNever(to);
  }
}

/**
 * The types BigQuery casts to each target (its conversion rules: anything else is refused when the
 * query is analysed, before it runs). Beyond them, a record or list cast to STRING is its JSON
 * text (docs/SQL.md), and a NULL of no type yet casts to anything.
 */
const CASTS_FROM: Readonly<Record<CastType, ReadonlySet<ScalarName>>> = {
  string: new Set<ScalarName>(['string', 'bytes', 'int', 'float', 'numeric', 'bool', 'date', 'datetime', 'timestamp', 'interval']),
  int64: new Set<ScalarName>(['int', 'float', 'numeric', 'bool', 'string']),
  float64: new Set<ScalarName>(['int', 'float', 'numeric', 'string']),
  numeric: new Set<ScalarName>(['int', 'float', 'numeric', 'string']),
  bool: new Set<ScalarName>(['bool', 'int', 'string']),
  timestamp: new Set<ScalarName>(['timestamp', 'datetime', 'date', 'string']),
  datetime: new Set<ScalarName>(['timestamp', 'datetime', 'date', 'string']),
  date: new Set<ScalarName>(['timestamp', 'datetime', 'date', 'string']),
  bytes: new Set<ScalarName>(['bytes', 'string']),
};

/** `CAST(x AS to)` / `SAFE_CAST`: INVALID_QUERY naming both types where BigQuery has no such cast. */
function checkCast(from: VType, to: CastType): void {
  switch (from.k) {
    case 'scalar':
      if (CASTS_FROM[to].has(from.t)) return;
      break;
    case 'record':
    case 'list':
      if (to === 'string') return;
      break;
    case 'missing':
    case 'unknown':
      return;
    default:
      assertNever(from);
  }
  throw new QuarryError('INVALID_QUERY', `Invalid cast from ${typeName(from)} to ${typeName(castResult(to))}`);
}

function explicitCast(expr: RExpr, to: CastType, safe: boolean): RExpr {
  checkCast(expr.type, to);
  return freeze({ kind: 'cast', expr, to, safe, implicit: false, type: castResult(to) });
}

function implicitCast(expr: RExpr, to: CastType): RExpr {
  return freeze({ kind: 'cast', expr, to, safe: false, implicit: true, type: castResult(to) });
}

/** The field `name` (as stored) of a record-valued expression. */
function fieldOf(base: RExpr, name: string, type: VType): RExpr {
  if (base.kind === 'column') return freeze({ ...base, fields: freeze([...base.fields, name]), type });
  return freeze({ kind: 'field', expr: base, name, type });
}

function isIntLiteral(e: Expr | undefined): e is Extract<Expr, { kind: 'literal'; type: 'number' }> {
  return e?.kind === 'literal' && e.type === 'number' && /^\d+$/.test(e.value);
}

class Resolver {
  readonly warnings = new Set<string>();
  private counter = 0;
  private readonly strict: boolean;

  constructor(private readonly options: ResolveOptions) {
    this.strict = options.strictSourceColumns ?? false;
  }

  private fresh(prefix: string): string {
    this.counter += 1;
    return `__${prefix}${this.counter}`;
  }

  // -------------------------------------------------------------------------------------------
  // Queries

  query(q: Query, env: CteEnv, outer: Scope | undefined): RQuery {
    const localEnv = new Map(env);
    const ctes = q.with.map((cte) => {
      const query = this.query(cte.query, localEnv, undefined);
      localEnv.set(cte.name.toLowerCase(), { name: cte.name, columns: query.columns });
      return freeze({ name: cte.name, query });
    });
    const body = this.setExpr(q.body, localEnv, outer);
    const scope = body.scope ?? outputScope(body.columns, outer, localEnv);
    const orderBy = q.orderBy.map((o) => this.orderItem(o, scope, true));
    return freeze({
      kind: 'query',
      with: freeze(ctes),
      body: body.body,
      orderBy: freeze(orderBy),
      limit: q.limit ? this.rowCount(q.limit) : undefined,
      offset: q.offset ? this.rowCount(q.offset) : undefined,
      columns: body.columns,
    });
  }

  /** LIMIT / OFFSET: a number or a parameter (a string or NULL parameter is read as an integer). */
  private rowCount(e: Expr): RExpr {
    const x = this.expr(e, new Scope(undefined, new Map()), false);
    return isScalar(x.type, 'string') || x.type.k === 'unknown' ? implicitCast(x, 'int64') : x;
  }

  private setExpr(body: SetExpr, env: CteEnv, outer: Scope | undefined): { body: RSetExpr; columns: readonly OutColumn[]; scope?: Scope } {
    switch (body.kind) {
      case 'select':
        return this.select(body, env, outer);
      case 'nested': {
        const query = this.query(body.query, env, outer);
        return { body: freeze({ kind: 'nested', query }), columns: query.columns };
      }
      case 'setop': {
        const left = this.setExpr(body.left, env, outer);
        const right = this.setExpr(body.right, env, outer);
        if (left.columns.length !== right.columns.length) {
          throw new QuarryError('INVALID_QUERY', `Queries in ${body.op.toUpperCase()} have different numbers of columns`);
        }
        return { body: freeze({ kind: 'setop', op: body.op, all: body.all, left: left.body, right: right.body }), columns: left.columns };
      }
      default:
        return assertNever(body);
    }
  }

  private select(s: Select, env: CteEnv, outer: Scope | undefined): { body: RSelect; columns: readonly OutColumn[]; scope: Scope } {
    const scope = new Scope(outer, env);
    const resolvedFrom = s.from ? this.from(s.from, env, scope) : undefined;
    const aliases = new Map<string, SelectAlias>();
    let anonymous = 0;
    const items = s.columns.map((item, i) => {
      const expr = this.expr(item.expr, scope, false);
      let name = item.alias;
      if (name === undefined) {
        if (item.expr.kind === 'column') name = item.expr.path.at(-1)!;
        else if (item.expr.kind === 'field') name = item.expr.name;
        else name = `f${anonymous++}_`;
      }
      if (!aliases.has(name.toLowerCase())) aliases.set(name.toLowerCase(), { index: i + 1, expr });
      return freeze({ expr, name });
    });
    // WHERE cannot see select-list aliases: resolve it before they join the scope.
    const written = s.where ? this.expr(s.where, scope, false) : undefined;
    const pruned = resolvedFrom ? withoutImpliedPresence(resolvedFrom.from, resolvedFrom.filter, written) : undefined;
    const from = pruned?.from;
    const where = allOf(pruned?.filter, written);
    scope.selectAliases = aliases;
    const groupBy = s.groupBy.map((g) => this.groupItem(g, scope));
    const body: RSelect = freeze({
      kind: 'select',
      distinct: s.distinct,
      columns: freeze(items),
      from,
      where,
      groupBy: freeze(groupBy),
      having: s.having ? this.expr(s.having, scope, false) : undefined,
      qualify: s.qualify ? this.expr(s.qualify, scope, false) : undefined,
    });
    return { body, columns: freeze(items.map((c) => freeze({ name: c.name, type: c.expr.type }))), scope };
  }

  private groupItem(g: Expr, scope: Scope): RExpr {
    const position = this.positionOf(g, scope);
    return position ?? this.expr(g, scope, false);
  }

  /** `1`, or a select-list alias, as a position (so no same-named column can be picked instead). */
  private positionOf(e: Expr, scope: Scope): RExpr | undefined {
    if (isIntLiteral(e)) {
      const index = Number(e.value);
      return freeze<RExpr>({ kind: 'position', index, type: unknownType });
    }
    if (e.kind === 'column' && e.path.length === 1) {
      const alias = scope.selectAliases?.get(e.path[0]!.toLowerCase());
      if (alias) return freeze<RExpr>({ kind: 'position', index: alias.index, type: alias.expr.type });
    }
    return undefined;
  }

  private orderItem(o: OrderItem, scope: Scope, allowPosition: boolean): ROrder {
    const expr = (allowPosition ? this.positionOf(o.expr, scope) : undefined) ?? this.expr(o.expr, scope, true);
    // BigQuery puts NULLs first ascending and last descending.
    return freeze({ expr, desc: o.desc, nulls: o.nulls ?? (o.desc ? 'last' : 'first') });
  }

  // -------------------------------------------------------------------------------------------
  // FROM

  /**
   * The FROM, and the filter that goes with it: the presence of a record its first item unnests
   * (`FROM UNNEST(e.record)`), and the conditions of parenthesised joins that were flattened.
   * A parenthesised join tree first in FROM, or joined by an inner or cross join, is the same
   * joins in sequence with its condition applied after them; one joined by LEFT JOIN may hold one
   * table and record UNNESTs of it, which become that table's left join (the UNNESTs name
   * records and require them present, under the join's condition).
   */
  private from(from: From, env: CteEnv, scope: Scope): { from: RFrom; filter: RExpr | undefined } {
    if (hasNested(from) && sideJoin(from)) {
      throw new QuarryError(
        'QUERY_NOT_ALLOWED',
        'RIGHT and FULL joins are not supported together with a parenthesised join: write the parenthesised part as a subquery',
      );
    }
    let first: RFactor | undefined;
    const joins: RJoin[] = [];
    const filters: RExpr[] = [];
    const add = (f: TableFactor, type: RJoin['type'], on: Expr | undefined, using: readonly string[] | undefined, into: Scope): void => {
      if (f.kind === 'nested') {
        if (using) throw new QuarryError('QUERY_NOT_ALLOWED', 'JOIN ... USING with a parenthesised join: write ON with the columns instead');
        // Names inside the parentheses see only the tree's own items (and enclosing queries).
        const inner = new Scope(into.parent, into.ctes);
        if (first === undefined || type === 'cross' || type === 'inner') {
          add(f.from.first, 'cross', undefined, undefined, inner);
          for (const j of f.from.joins) add(j.table, j.type, j.on, j.using, inner);
          mergeScope(into, inner);
          if (on) filters.push(this.expr(on, into, false));
          return;
        }
        const join = this.leftNested(f.from, env, inner);
        mergeScope(into, inner);
        joins.push(freeze({ ...join, on: allOf(join.on, on ? this.expr(on, into, false) : undefined) }));
        return;
      }
      if (first === undefined) {
        const r = this.factor(f, 'cross', undefined, env, into);
        first = r.factor;
        if (r.onResolved) filters.push(r.onResolved);
        return;
      }
      joins.push(this.join(f, type, on, using, env, into));
    };
    add(from.first, 'cross', undefined, undefined, scope);
    for (const j of from.joins) add(j.table, j.type, j.on, j.using, scope);
    return { from: freeze({ first: first!, joins: freeze(joins) }), filter: allOf(...filters) };
  }

  /**
   * `LEFT JOIN (t CROSS JOIN UNNEST(t.record) AS r ...)` as one left join of t, requiring the
   * records present; the caller adds the join's own condition.
   */
  private leftNested(from: From, env: CteEnv, scope: Scope): RJoin {
    const unsupported = () =>
      new QuarryError(
        'QUERY_NOT_ALLOWED',
        'LEFT JOIN of a parenthesised join is supported for one table and UNNESTs of its records; write the parenthesised part as a subquery',
      );
    if (from.first.kind !== 'table' && from.first.kind !== 'derived') throw unsupported();
    const table = this.factor(from.first, 'left', undefined, env, scope);
    const conditions: RExpr[] = [];
    for (const j of from.joins) {
      if (j.table.kind !== 'unnest' || (j.type !== 'cross' && j.type !== 'inner') || j.using) throw unsupported();
      const u = this.unnest(j.table, 'cross', j.on, scope);
      if (u.factor.kind !== 'unnestRecord') throw unsupported();
      if (u.onResolved) conditions.push(u.onResolved);
    }
    return freeze({ type: 'left', factor: table.factor, on: allOf(...conditions), using: undefined });
  }

  private join(f: TableFactor, type: RJoin['type'], on: Expr | undefined, using: readonly string[] | undefined, env: CteEnv, scope: Scope): RJoin {
    const { factor, onResolved } = this.factor(f, type, on, env, scope);
    if (factor.kind !== 'range' || type === 'cross') return freeze({ type, factor, on: onResolved, using: undefined });
    if (using) return freeze({ type, factor, on: undefined, using: freeze([...using]) });
    return freeze({ type, factor, on: on ? this.expr(on, scope, false) : undefined, using: undefined });
  }

  private factor(f: TableFactor, joinType: RJoin['type'], on: Expr | undefined, env: CteEnv, scope: Scope): { factor: RFactor; onResolved?: RExpr } {
    if (f.kind === 'unnest') return this.unnest(f, joinType, on, scope);
    if (f.kind === 'nested') throw new QuarryError('INVALID_QUERY', 'a parenthesised join cannot stand here');
    let entry: ScopeRange;
    let query: RQuery | undefined;
    if (f.kind === 'derived') {
      query = this.query(f.query, env, undefined);
      const alias = f.alias ?? this.fresh('d');
      entry = { names: [alias.toLowerCase()], range: freeze({ kind: 'derived', alias, columns: query.columns }), columns: query.columns, physical: false };
    } else {
      const names = f.alias ? [f.alias.toLowerCase()] : [f.name.toLowerCase(), f.name.split('.').at(-1)!.toLowerCase()];
      const alias = f.alias ?? f.name;
      const cte = env.get(f.name.toLowerCase());
      if (cte) {
        entry = { names, range: freeze({ kind: 'cte', alias, cte: cte.name, columns: cte.columns }), columns: cte.columns, physical: false };
      } else {
        const source = this.options.catalog.sourceByName(f.name);
        if (!source) throw new QuarryError('QUERY_NOT_ALLOWED', `can't find source ${f.name}`);
        const columns = freeze(Object.entries(allColumns(source.schema)).map(([name, t]) => freeze({ name, type: fromFieldType(t) })));
        const typed = source.schema.overflow === undefined ? {} : { typed: source.schema.columns };
        const carried = source.schema.carried === undefined || source.schema.carried.length === 0 ? {} : { carried: source.schema.carried };
        entry = { names, range: freeze({ kind: 'table', alias, table: source.table, columns, ...typed, ...carried }), columns, physical: true };
      }
    }
    if (scope.ranges.some((r) => r.range.alias === entry.range.alias)) {
      throw new QuarryError('INVALID_QUERY', `Duplicate table alias ${f.alias ?? (f.kind === 'table' ? f.name : '')}`);
    }
    scope.ranges.push(entry);
    return { factor: freeze({ kind: 'range', range: entry.range as Extract<RFactor, { kind: 'range' }>['range'], query }) };
  }

  private unnest(
    f: Extract<TableFactor, { kind: 'unnest' }>,
    joinType: RJoin['type'],
    on: Expr | undefined,
    scope: Scope,
  ): { factor: RFactor; onResolved?: RExpr } {
    const written = f.alias ?? this.fresh('u');
    const name = written.toLowerCase();
    const keepEmpty = joinType === 'left';
    if (joinType === 'right' || joinType === 'full') throw new QuarryError('QUERY_NOT_ALLOWED', 'RIGHT and FULL joins with UNNEST are not supported');
    const onTrue = on === undefined || (on.kind === 'literal' && on.type === 'bool' && on.value);
    if (!onTrue && keepEmpty) throw new QuarryError('QUERY_NOT_ALLOWED', 'LEFT JOIN UNNEST supports only ON TRUE');
    const array = this.expr(f.expr, scope, false);
    let factor: RFactor;
    let present: RExpr | undefined;
    if (array.type.k === 'record' || array.type.k === 'missing') {
      // A record is one object per row: the alias simply names it. As in BigQuery, a CROSS JOIN of
      // a record the event did not carry gives no row; LEFT JOIN keeps the event.
      scope.values.push({ name, written, value: array });
      factor = freeze({ kind: 'unnestRecord', value: array });
      if (!keepEmpty) present = presence(array);
    } else if (array.type.k === 'scalar') {
      throw new QuarryError('INVALID_QUERY', `UNNEST expects an array, got a ${array.type.t.toUpperCase()} value`);
    } else {
      const element = array.type.k === 'list' ? array.type.element : unknownType;
      const range = freeze({ kind: 'element' as const, alias: written, type: element });
      scope.values.push({ name, written, value: freeze({ kind: 'column', from: range, column: undefined, fields: freeze([]), type: element }) });
      factor = freeze({ kind: 'unnestList', range, array, keepEmpty });
    }
    // JOIN UNNEST(...) ON cond: the condition filters the unnested rows.
    return { factor, onResolved: allOf(present, onTrue ? undefined : this.expr(on!, scope, false)) };
  }

  // -------------------------------------------------------------------------------------------
  // Names

  private column(path: readonly string[], scope: Scope, aliasesFirst: boolean): RExpr {
    const head = path[0]!.toLowerCase();
    const rest = path.slice(1);
    if (aliasesFirst && path.length === 1 && scope.selectAliases?.has(head)) return scope.selectAliases.get(head)!.expr;
    for (let s: Scope | undefined = scope; s; s = s.parent) {
      const value = s.values.findLast((v) => v.name === head);
      if (value) return this.fields(value.value, rest, path);
      if (path.length >= 2) {
        const range = s.ranges.find((r) => r.names.includes(head));
        if (range) {
          const col = findName(
            range.columns.map((c) => [c.name, c] as const),
            path[1]!,
          );
          if (col) return this.fields(columnOf(range.range, col[1]), path.slice(2), path);
          if (range.physical) return this.missingSourceColumn(range, path, `${path[0]}.${path[1]}`);
          throw new QuarryError('INVALID_QUERY', `Name ${path[1]} not found inside ${path[0]}`);
        }
      }
      const columns: { written: string; value: RExpr }[] = [];
      for (const range of s.ranges) {
        const col = findName(
          range.columns.map((c) => [c.name, c] as const),
          path[0]!,
        );
        if (col) columns.push({ written: `${range.range.alias}.${col[0]}`, value: columnOf(range.range, col[1]) });
      }
      // A value table's fields are columns too, but a table's own column wins over them: Studio's
      // `select timestamp from auth_logs cross join unnest(metadata) as metadata` means the event's
      // time even when metadata carries a `timestamp` of its own (docs/SQL.md, "Names").
      const fields: { written: string; value: RExpr }[] = [];
      for (const v of s.values) {
        const t = v.value.type;
        if (t.k !== 'record') continue;
        const field = findName(Object.entries(t.fields), path[0]!);
        if (field) fields.push({ written: `${v.written}.${field[0]}`, value: fieldOf(v.value, field[0], field[1]) });
      }
      const matches = columns.length > 0 ? columns : fields;
      if (matches.length > 1) {
        throw new QuarryError('INVALID_QUERY', `Column name ${path[0]} is ambiguous: it may be ${matches.map((m) => m.written).join(' or ')}`);
      }
      if (matches.length === 1) return this.fields(matches[0]!.value, rest, path);
      // A range variable on its own is its row, as a STRUCT (`select pgl as raw_log_data`).
      const row = path.length === 1 ? s.ranges.find((r) => r.names.includes(head)) : undefined;
      if (row) return rowStruct(row);
    }
    if (!aliasesFirst && path.length === 1 && scope.selectAliases?.has(head)) return scope.selectAliases.get(head)!.expr;
    // A source table whose events never carried this top-level key yet: NULL, not an error.
    const only = scope.ranges.length === 1 && scope.values.length === 0 ? scope.ranges[0] : undefined;
    if (only?.physical) return this.missingSourceColumn(only, path, path[0]!);
    throw new QuarryError('INVALID_QUERY', `Unrecognized name: ${path[0]}`);
  }

  private missingSourceColumn(range: ScopeRange, path: readonly string[], name: string): RExpr {
    // Beyond id, timestamp and event_message: the source has received fields of its own.
    if (this.strict && range.columns.length > 3) throw new QuarryError('INVALID_QUERY', `Unrecognized name: ${name}`);
    this.warnings.add(path.join('.'));
    return freeze({ kind: 'missing', type: missingType });
  }

  /** Walks record fields below a value; a field the catalogue never saw reads as NULL. */
  private fields(base: RExpr, rest: readonly string[], fullPath: readonly string[]): RExpr {
    let cur = base;
    for (let i = 0; i < rest.length; i++) {
      const name = rest[i]!;
      const t = cur.type;
      switch (t.k) {
        case 'missing':
          this.warnings.add(fullPath.join('.'));
          return freeze({ kind: 'missing', type: missingType });
        case 'record': {
          const found = findName(Object.entries(t.fields), name);
          if (!found) {
            this.warnings.add(fullPath.join('.'));
            return freeze({ kind: 'missing', type: missingType });
          }
          cur = fieldOf(cur, found[0], found[1]);
          break;
        }
        case 'list':
          throw new QuarryError('INVALID_QUERY', `Cannot access field ${name} on ${prefix(fullPath, rest, i)}, which is an array: UNNEST it first`);
        case 'scalar':
          throw new QuarryError('INVALID_QUERY', `Cannot access field ${name} on ${prefix(fullPath, rest, i)}, which is a ${t.t.toUpperCase()} value`);
        case 'unknown':
          cur = fieldOf(cur, name, unknownType);
          break;
        default:
          return assertNever(t);
      }
    }
    return cur;
  }

  // -------------------------------------------------------------------------------------------
  // Expressions

  expr(e: Expr, scope: Scope, aliasesFirst: boolean): RExpr {
    switch (e.kind) {
      case 'column':
        return this.column(e.path, scope, aliasesFirst);
      case 'param': {
        // Bound to NULL: typed as the NULL literal is, so `coalesce(@p, 5)` is an INT64.
        const bound = this.options.paramTypes?.get(e.name);
        const type = bound === undefined ? T.string : bound === 'null' ? unknownType : scalar(bound);
        return freeze({ kind: 'param', name: e.name, type });
      }
      case 'literal':
        return literal(e);
      case 'interval': {
        if (!intervalUnits.has(e.unit)) throw new QuarryError('INVALID_QUERY', `INTERVAL does not support ${e.unit.toUpperCase()}`);
        return freeze({ kind: 'interval', value: this.expr(e.value, scope, aliasesFirst), unit: e.unit, type: T.interval });
      }
      case 'datepart':
        throw new QuarryError('INVALID_QUERY', `Date part ${e.part.toUpperCase()} is only allowed as a function argument`);
      case 'binary':
        return binary(e.op, this.expr(e.left, scope, aliasesFirst), this.expr(e.right, scope, aliasesFirst));
      case 'distinctFrom':
        return freeze({
          kind: 'distinctFrom',
          left: this.expr(e.left, scope, aliasesFirst),
          right: this.expr(e.right, scope, aliasesFirst),
          negated: e.negated,
          type: T.bool,
        });
      case 'unary': {
        const x = this.expr(e.expr, scope, aliasesFirst);
        return freeze({ kind: 'unary', op: e.op, expr: x, type: e.op === 'not' ? T.bool : x.type });
      }
      case 'func':
        return this.func(e, scope, aliasesFirst);
      case 'cast':
        return explicitCast(this.expr(e.expr, scope, aliasesFirst), e.to, e.safe);
      case 'case': {
        const operand = e.operand ? this.expr(e.operand, scope, aliasesFirst) : undefined;
        let type: VType = unknownType;
        const whens = e.whens.map((w) => {
          const when = this.expr(w.when, scope, aliasesFirst);
          const result = this.expr(w.result, scope, aliasesFirst);
          if (type.k === 'unknown') type = result.type;
          return freeze({ when, result });
        });
        const other = e.else ? this.expr(e.else, scope, aliasesFirst) : undefined;
        if (other && type.k === 'unknown') type = other.type;
        return freeze({ kind: 'case', operand, whens: freeze(whens), else: other, type });
      }
      case 'isNull':
        return freeze({ kind: 'isNull', expr: this.expr(e.expr, scope, aliasesFirst), negated: e.negated, type: T.bool });
      case 'isBool':
        return freeze({ kind: 'isBool', expr: this.expr(e.expr, scope, aliasesFirst), value: e.value, negated: e.negated, type: T.bool });
      case 'inList': {
        const x = this.expr(e.expr, scope, aliasesFirst);
        return freeze({
          kind: 'inList',
          expr: x,
          list: freeze(e.list.map((i) => coerceTo(x, this.expr(i, scope, aliasesFirst)))),
          negated: e.negated,
          type: T.bool,
        });
      }
      case 'inUnnest':
        return freeze({
          kind: 'inUnnest',
          expr: this.expr(e.expr, scope, aliasesFirst),
          array: this.expr(e.array, scope, aliasesFirst),
          negated: e.negated,
          type: T.bool,
        });
      case 'inQuery':
        return freeze({
          kind: 'inQuery',
          expr: this.expr(e.expr, scope, aliasesFirst),
          query: this.query(e.query, scope.ctes, scope),
          negated: e.negated,
          type: T.bool,
        });
      case 'between': {
        const x = this.expr(e.expr, scope, aliasesFirst);
        return freeze({
          kind: 'between',
          expr: x,
          low: coerceTo(x, this.expr(e.low, scope, aliasesFirst)),
          high: coerceTo(x, this.expr(e.high, scope, aliasesFirst)),
          negated: e.negated,
          type: T.bool,
        });
      }
      case 'like':
        return freeze({
          kind: 'like',
          expr: this.expr(e.expr, scope, aliasesFirst),
          pattern: this.expr(e.pattern, scope, aliasesFirst),
          negated: e.negated,
          type: T.bool,
        });
      case 'exists':
        return freeze({ kind: 'exists', query: this.query(e.query, scope.ctes, scope), negated: e.negated, type: T.bool });
      case 'subquery': {
        const query = this.query(e.query, scope.ctes, scope);
        if (query.columns.length !== 1) throw new QuarryError('INVALID_QUERY', 'A scalar subquery must return exactly one column');
        return scalarWithoutFrom(query) ?? freeze({ kind: 'subquery', query, type: query.columns[0]!.type });
      }
      case 'array': {
        const elements = e.elements.map((x) => this.expr(x, scope, aliasesFirst));
        return freeze({ kind: 'array', elements: freeze(elements), type: listOf(elements[0]?.type ?? unknownType) });
      }
      case 'struct': {
        const seen = new Set<string>();
        const fields = e.fields.map((f, i) => {
          const value = this.expr(f.value, scope, aliasesFirst);
          const name = f.name ?? (f.value.kind === 'column' ? f.value.path.at(-1)! : `_field_${i + 1}`);
          if (seen.has(name.toLowerCase())) throw new QuarryError('INVALID_QUERY', `STRUCT has two fields called ${name}`);
          seen.add(name.toLowerCase());
          const target = f.type;
          return freeze({ name, value: target ? explicitCast(value, target, false) : value });
        });
        return freeze({ kind: 'struct', fields: freeze(fields), type: recordOf(Object.fromEntries(fields.map((f) => [f.name, f.value.type])), true) });
      }
      case 'index':
        return this.index(this.expr(e.expr, scope, aliasesFirst), e.index, e.mode, scope, aliasesFirst);
      case 'field':
        return this.fields(this.expr(e.expr, scope, aliasesFirst), [e.name], [e.name]);
      case 'extract':
        return freeze({ kind: 'extract', part: e.part, expr: this.expr(e.expr, scope, aliasesFirst), type: T.int });
      default:
        return assertNever(e);
    }
  }

  private index(base: RExpr, index: Expr, mode: Extract<Expr, { kind: 'index' }>['mode'], scope: Scope, aliasesFirst: boolean): RExpr {
    const i = this.expr(index, scope, aliasesFirst);
    const oneBased = mode === 'ordinal' || mode === 'safe_ordinal';
    const t = base.type;
    switch (t.k) {
      case 'record':
      case 'missing':
        // A record is a one-element array: [OFFSET(0)] / [ORDINAL(1)] is the record itself.
        if (isIntLiteral(index) && Number(index.value) === (oneBased ? 1 : 0)) return base;
        return freeze({ kind: 'index', expr: base, index: i, oneBased, type: t });
      case 'scalar':
        throw new QuarryError('INVALID_QUERY', `Cannot index a ${t.t.toUpperCase()} value`);
      case 'list':
        return freeze({ kind: 'index', expr: base, index: i, oneBased, type: t.element });
      case 'unknown':
        return freeze({ kind: 'index', expr: base, index: i, oneBased, type: unknownType });
      default:
        return assertNever(t);
    }
  }

  private func(call: FuncCall, scope: Scope, aliasesFirst: boolean): RExpr {
    const def = functionDef(call.name);
    if (!def) throw restrictedFunction(call.name);
    const name = call.name as FunctionName;
    const upper = name.toUpperCase();
    const args = call.args.map((a, i) => this.argument(a, def.args[i] ?? 'any', upper, i, scope, aliasesFirst));
    // A record is BigQuery's REPEATED RECORD of one: `COALESCE(jwt.apikey, [])`, Studio's guard
    // for an absent one, is the record itself (absent, it unnests to no element), as is a field
    // no event has carried yet.
    const first = args[0];
    const guarded = first !== undefined && ((first.type.k === 'record' && !first.type.value) || first.type.k === 'missing');
    if (name === 'coalesce' && guarded && args.slice(1).every((a) => a.kind === 'array' && a.elements.length === 0)) return first;
    if (name === 'approx_quantiles') {
      const n = call.args[1];
      if (!isIntLiteral(n) || Number(n.value) < 1 || Number(n.value) > 1000) {
        throw new QuarryError('INVALID_QUERY', 'APPROX_QUANTILES needs a constant number of quantiles between 1 and 1000');
      }
    }
    if (call.over && call.distinct && isAggregate(name)) throw new QuarryError('INVALID_QUERY', 'DISTINCT is not supported in window aggregates');
    const node: RFunc = freeze({
      kind: 'func',
      name,
      args: freeze(args),
      star: call.star ?? false,
      distinct: call.distinct ?? false,
      orderBy: freeze((call.orderBy ?? []).map((o) => this.orderItem(o, scope, false))),
      limit: call.limit ? this.expr(call.limit, scope, aliasesFirst) : undefined,
      ignoreNulls: call.ignoreNulls ?? false,
      over: call.over
        ? freeze({
            partitionBy: freeze(call.over.partitionBy.map((p) => this.expr(p, scope, true))),
            orderBy: freeze(call.over.orderBy.map((o) => this.orderItem(o, scope, false))),
            frame: call.over.frame,
          })
        : undefined,
      maxBytes: call.maxBytes,
      type: returnType(
        name,
        args.map((a) => a.type),
      ),
    });
    if (node.over?.frame) checkFrame(name, node.over.frame, node.over.orderBy);
    return node;
  }

  private argument(a: Expr, kind: ArgKind, fn: string, i: number, scope: Scope, aliasesFirst: boolean): RExpr {
    switch (kind) {
      case 'datepart':
        if (a.kind !== 'datepart') throw new QuarryError('INVALID_QUERY', `${fn} expects a date part (e.g. MINUTE, HOUR, DAY) as argument ${i + 1}`);
        if (fn.endsWith('_TRUNC') && (a.part === 'dayofweek' || a.part === 'dayofyear')) {
          throw new QuarryError('INVALID_QUERY', `Cannot truncate to ${a.part.toUpperCase()}`);
        }
        return freeze({ kind: 'datepart', part: a.part, type: unknownType });
      case 'interval':
        if (a.kind !== 'interval') throw new QuarryError('INVALID_QUERY', `${fn} expects an INTERVAL as argument ${i + 1}`);
        return this.expr(a, scope, aliasesFirst);
      case 'timestamp': {
        const x = this.expr(a, scope, aliasesFirst);
        return isScalar(x.type, 'string') || isScalar(x.type, 'date') ? implicitCast(x, 'timestamp') : x;
      }
      case 'any':
        return this.expr(a, scope, aliasesFirst);
      default:
        return assertNever(kind);
    }
  }
}

/** Functions BigQuery gives no window frame: they see the whole partition, or number its rows. */
const FRAMELESS: ReadonlySet<FunctionName> = new Set<FunctionName>([
  'row_number',
  'rank',
  'dense_rank',
  'percent_rank',
  'cume_dist',
  'ntile',
  'lag',
  'lead',
  'percentile_cont',
  'percentile_disc',
]);

/**
 * What a frame needs of its call (BigQuery's rules, so both engines answer alike): a function that
 * takes one, and for RANGE with an offset exactly one ORDER BY key, a number.
 */
function checkFrame(name: FunctionName, frame: WindowFrame, orderBy: readonly ROrder[]): void {
  const text = frameText(frame);
  if (FRAMELESS.has(name)) throw new QuarryError('INVALID_QUERY', `${name.toUpperCase()} does not take a window frame (${text})`);
  const offset = [frame.start, frame.end].some((b) => b.kind === 'preceding' || b.kind === 'following');
  if (frame.units !== 'range' || !offset) return;
  const key = orderBy.length === 1 ? orderBy[0]!.expr.type : undefined;
  if (!key || !(isScalar(key, 'int') || isScalar(key, 'float') || isScalar(key, 'numeric'))) {
    throw new QuarryError('INVALID_QUERY', `The window frame ${text} needs exactly one ORDER BY key, a number (INT64, FLOAT64 or NUMERIC)`);
  }
}

/** The part of a written path before field `i` of `rest`, for messages. */
function prefix(fullPath: readonly string[], rest: readonly string[], i: number): string {
  return fullPath.slice(0, fullPath.length - rest.length + i).join('.');
}

function columnOf(range: RangeVar, col: OutColumn): RExpr {
  return freeze({ kind: 'column', from: range, column: col.name, fields: freeze([]), type: col.type });
}

/** Scope for ORDER BY over a set operation: its output columns, by position. */
function outputScope(columns: readonly OutColumn[], outer: Scope | undefined, env: CteEnv): Scope {
  const scope = new Scope(outer, env);
  scope.selectAliases = new Map(
    columns.map((c, i): [string, SelectAlias] => [c.name.toLowerCase(), { index: i + 1, expr: freeze({ kind: 'position', index: i + 1, type: c.type }) }]),
  );
  return scope;
}

function literal(ast: Extract<Expr, { kind: 'literal' }>): RExpr {
  const e = freeze({ ...ast });
  switch (e.type) {
    case 'string':
      return freeze({ kind: 'literal', value: e, type: T.string });
    case 'number':
      if (!/^(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(e.value)) throw new QuarryError('INVALID_QUERY', `Invalid number ${e.value}`);
      return freeze({ kind: 'literal', value: e, type: /^\d+$/.test(e.value) ? T.int : T.float });
    case 'bool':
      return freeze({ kind: 'literal', value: e, type: T.bool });
    case 'null':
      return freeze({ kind: 'literal', value: e, type: unknownType });
    default:
      return assertNever(e);
  }
}

/** A comparison's other side, read as a TIMESTAMP when it is a string compared with one (BigQuery coerces literals). */
function coerceTo(target: RExpr, other: RExpr): RExpr {
  return isScalar(target.type, 'timestamp') && isScalar(other.type, 'string') ? implicitCast(other, 'timestamp') : other;
}

const isTime = (t: VType) => t.k === 'scalar' && (t.t === 'timestamp' || t.t === 'datetime' || t.t === 'date');
const numeric = (a: VType, b: VType): VType => (isScalar(a, 'int') && isScalar(b, 'int') ? T.int : T.float);

function binaryNode(op: Extract<Expr, { kind: 'binary' }>['op'], left: RExpr, right: RExpr, type: VType): RExpr {
  return freeze({ kind: 'binary', op, left, right, type });
}

function binary(op: Extract<Expr, { kind: 'binary' }>['op'], l: RExpr, r: RExpr): RExpr {
  switch (op) {
    case 'and':
    case 'or':
      return binaryNode(op, l, r, T.bool);
    case '=':
    case '!=':
    case '<':
    case '<=':
    case '>':
    case '>=':
      return binaryNode(op, coerceTo(r, l), coerceTo(l, r), T.bool);
    case '||':
      return binaryNode(op, l, r, T.string);
    case '/':
      return binaryNode(op, l, r, T.float);
    case '+':
    case '-':
      return binaryNode(op, l, r, isTime(l.type) ? l.type : isTime(r.type) ? r.type : numeric(l.type, r.type));
    case '*':
    case '%':
      return binaryNode(op, l, r, numeric(l.type, r.type));
    case '&':
    case '|':
    case '^':
      return binaryNode(op, l, r, T.int);
    default:
      return assertNever(op);
  }
}

function rowStruct(row: ScopeRange): RExpr {
  const fields = row.columns.map((c) => freeze({ name: c.name, value: columnOf(row.range, c) }));
  return freeze({ kind: 'struct', fields: freeze(fields), type: recordOf(Object.fromEntries(fields.map((f) => [f.name, f.value.type])), true) });
}

/** The items of a parenthesised join join the enclosing FROM's scope. */
function mergeScope(into: Scope, inner: Scope): void {
  for (const r of inner.ranges) {
    if (into.ranges.some((x) => x.range.alias === r.range.alias)) throw new QuarryError('INVALID_QUERY', `Duplicate table alias ${r.range.alias}`);
    into.ranges.push(r);
  }
  into.values.push(...inner.values);
}

function hasNested(from: From): boolean {
  return [from.first, ...from.joins.map((j) => j.table)].some((f) => f.kind === 'nested');
}

/** A RIGHT or FULL join anywhere in the FROM, parenthesised parts included. */
function sideJoin(from: From): boolean {
  return (
    from.joins.some((j) => j.type === 'right' || j.type === 'full' || (j.table.kind === 'nested' && sideJoin(j.table.from))) ||
    (from.first.kind === 'nested' && sideJoin(from.first.from))
  );
}
