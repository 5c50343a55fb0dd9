/**
 * AST → ClickHouse SQL. The same visitor as the DuckDB generator (same scoping, same BigQuery
 * meaning), printing ClickHouse's dialect:
 *
 * - `@name` → `{name:Nullable(String)}`, a query parameter bound by the runner; never spliced.
 * - Source names → `database`.`table` from the catalogue; every identifier is backquoted and
 *   every string literal escaped (backslash included: it is an escape character in ClickHouse).
 * - A source's non-base fields are paths in its `fields` JSON column (generator-scope.ts).
 * - UNNEST follows the catalogue's types. Over a record it is plain field access (no join). Over a
 *   list it becomes `ARRAY JOIN` in a derived table wrapping the left side (`LEFT ARRAY JOIN` for
 *   `LEFT JOIN UNNEST ... ON TRUE`, so a row with an empty list stays).
 * - A record field no event ever carried reads as NULL and is reported in `warnings`.
 * - Functions are spelt per generator-functions.ts.
 */
import { QuarryError } from '../../errors.ts';
import type { Expr, From, FuncCall, OrderItem, Query, Select, SetExpr, TableFactor } from '../../sql/ast.ts';
import { isAggregate } from '../../sql/functions.ts';
import { fromFieldType, scalar, unknownType, type VType } from '../../sql/types.ts';
import type { Catalog } from '../../storage/schema.ts';
import { functionTransforms, intervalOf, stringToTimestamp } from './generator-functions.ts';
import { optimise as optimiseForDuckDb } from '../../sql/optimise.ts';
import { quoteString } from './client.ts';
import {
  asArray,
  type Column,
  type CteEnv,
  type Relation,
  type ResolveContext,
  resolveColumn,
  Scope,
  type Typed,
  quoteIdent,
  walkFields,
} from './generator-scope.ts';

export interface GenerateOptions {
  catalog: Catalog;
  /** The ClickHouse database holding the source tables. */
  database: string;
  /** Caps the rows the query returns, whatever its own LIMIT says. */
  maxRows?: number;
  /** Saving a query: see ResolveContext.strictSourceColumns. */
  strictSourceColumns?: boolean;
}

export interface GeneratedQuery {
  sql: string;
  /** Parameter names used (`{name:Nullable(String)}`), each bound as a string or NULL. */
  params: string[];
  /** Result columns, in order, with the types the encoder needs (DATETIME vs TIMESTAMP). */
  columns: Column[];
  /** Nested paths no event ever carried; they read as NULL. */
  warnings: string[];
}

export function generateClickHouse(query: Query, options: GenerateOptions): GeneratedQuery {
  const gen = new Generator(options.catalog, options.database, options.strictSourceColumns ?? false);
  const capped = options.maxRows === undefined ? query : capRows(query, options.maxRows);
  const out = gen.query(optimiseForDuckDb(capped), new Map(), undefined);
  return { sql: out.sql, params: [...gen.params], columns: out.columns, warnings: [...gen.warnings] };
}

function capRows(query: Query, maxRows: number): Query {
  const max = Math.max(0, Math.floor(maxRows));
  const cap: Expr = { kind: 'literal', type: 'number', value: String(max) };
  if (!query.limit) return { ...query, limit: cap };
  const own = query.limit;
  if (own.kind === 'literal' && own.type === 'number' && /^\d+$/.test(own.value)) {
    return Number(own.value) <= max ? query : { ...query, limit: cap };
  }
  return { ...query, limit: { kind: 'func', name: 'least', args: [own, cap] } };
}

interface QueryOut {
  sql: string;
  columns: Column[];
}

class Generator {
  readonly params = new Set<string>();
  readonly warnings = new Set<string>();
  private counter = 0;
  private readonly ctx: ResolveContext;

  constructor(
    private readonly catalog: Catalog,
    private readonly database: string,
    strictSourceColumns: boolean,
  ) {
    this.ctx = { warn: (p: string) => this.warnings.add(p), strictSourceColumns };
  }

  private fresh(prefix: string): string {
    this.counter += 1;
    return `__${prefix}${this.counter}`;
  }

  query(q: Query, env: CteEnv, outer: Scope | undefined): QueryOut {
    const localEnv = new Map(env);
    const ctes: string[] = [];
    for (const cte of q.with) {
      const out = this.query(cte.query, localEnv, undefined);
      const qn = quoteIdent(cte.name);
      ctes.push(`${qn} AS (${out.sql})`);
      localEnv.set(cte.name.toLowerCase(), { q: qn, columns: out.columns });
    }
    const body = this.setExpr(q.body, localEnv, outer);
    let bodySql = body.sql;
    if (q.body.kind === 'setop' && (q.orderBy.length > 0 || q.limit || q.offset)) {
      // ORDER BY / LIMIT after a set operation would bind to its last SELECT in ClickHouse.
      const alias = quoteIdent(this.fresh('s'));
      bodySql = `SELECT ${body.columns.map((c) => `${alias}.${quoteIdent(c.name)}`).join(', ')} FROM (${body.sql}) AS ${alias}`;
    }
    let sql = ctes.length > 0 ? `WITH ${ctes.join(', ')} ${bodySql}` : bodySql;
    let order: string | undefined;
    if (q.orderBy.length > 0) {
      const scope = body.scope ?? outputScope(body.columns, outer, localEnv);
      order = q.orderBy.map((o) => this.orderItem(o, scope, true)).join(', ');
      sql += ` ORDER BY ${order}`;
    }
    if (q.limit) sql += ` LIMIT ${this.constant(q.limit, 'LIMIT')}`;
    if (q.offset) sql += ` OFFSET ${this.constant(q.offset, 'OFFSET')}`;
    return { sql, columns: body.columns };
  }

  /** LIMIT / OFFSET: a number, a parameter or a small expression of those. */
  private constant(e: Expr, what: string): string {
    const t = this.expr(e, new Scope(undefined), false);
    if (t.type.k === 'scalar' && t.type.t === 'string') return `toUInt64(assumeNotNull(${t.sql}))`;
    if (t.sql.includes('`')) throw new QuarryError('INVALID_QUERY', `${what} must be a constant`);
    return t.sql;
  }

  private setExpr(body: SetExpr, env: CteEnv, outer: Scope | undefined): QueryOut & { scope?: Scope } {
    switch (body.kind) {
      case 'select':
        return this.select(body, env, outer);
      case 'nested': {
        const out = this.query(body.query, env, outer);
        return { sql: `(${out.sql})`, columns: out.columns };
      }
      case 'setop': {
        const left = this.setExpr(body.left, env, outer);
        const right = this.setExpr(body.right, env, outer);
        if (left.columns.length !== right.columns.length) {
          throw new QuarryError('INVALID_QUERY', `Queries in ${body.op.toUpperCase()} have different numbers of columns`);
        }
        const op = body.op.toUpperCase() + (body.all ? ' ALL' : ' DISTINCT');
        // ClickHouse takes plain SELECTs as branches (a parenthesised first branch after WITH is a
        // syntax error); a nested query with its own ORDER BY / LIMIT stays in parentheses.
        return { sql: `${left.sql} ${op} ${right.sql}`, columns: left.columns };
      }
    }
  }

  private select(s: Select, env: CteEnv, outer: Scope | undefined): QueryOut & { scope: Scope } {
    const scope = new Scope(outer, env);
    const fromSql = s.from ? this.from(s.from, env, scope) : { sql: '', filters: [] as string[] };
    const items: string[] = [];
    const columns: Column[] = [];
    const aliases = new Map<string, { index: number; expr: Typed }>();
    let anonymous = 0;
    s.columns.forEach((item, i) => {
      const t = this.expr(item.expr, scope, false);
      let name = item.alias;
      if (name === undefined) {
        if (item.expr.kind === 'column') name = item.expr.path.at(-1)!;
        else if (item.expr.kind === 'field') name = item.expr.name;
        else name = `f${anonymous++}_`;
      }
      items.push(`${t.sql} AS ${quoteIdent(name)}`);
      columns.push({ name, type: t.type });
      if (!aliases.has(name.toLowerCase())) aliases.set(name.toLowerCase(), { index: i + 1, expr: t });
    });
    // WHERE cannot see select-list aliases: resolve it before they join the scope.
    const where = [...fromSql.filters];
    if (s.where) where.push(this.expr(s.where, scope, false).sql);
    scope.selectAliases = aliases;
    let sql = `SELECT ${s.distinct ? 'DISTINCT ' : ''}${items.join(', ')}`;
    if (fromSql.sql) sql += ` FROM ${fromSql.sql}`;
    if (where.length > 0) sql += ` WHERE ${where.map((w) => (where.length > 1 ? `(${w})` : w)).join(' AND ')}`;
    if (s.groupBy.length > 0) {
      sql += ` GROUP BY ${s.groupBy.map((g) => this.groupItem(g, scope)).join(', ')}`;
    }
    if (s.having) sql += ` HAVING ${this.expr(s.having, scope, false).sql}`;
    if (s.qualify) sql += ` QUALIFY ${this.expr(s.qualify, scope, false).sql}`;
    return { sql, columns, scope };
  }

  private groupItem(g: Expr, scope: Scope): string {
    if (g.kind === 'literal' && g.type === 'number' && /^\d+$/.test(g.value)) return g.value;
    if (g.kind === 'column' && g.path.length === 1) {
      const alias = scope.selectAliases?.get(g.path[0]!.toLowerCase());
      // Positional, so ClickHouse cannot pick a same-named source column instead of the alias.
      if (alias) return String(alias.index);
    }
    return this.expr(g, scope, false).sql;
  }

  private orderItem(o: OrderItem, scope: Scope, allowPosition: boolean): string {
    let sql: string;
    const alias = o.expr.kind === 'column' && o.expr.path.length === 1 ? scope.selectAliases?.get(o.expr.path[0]!.toLowerCase()) : undefined;
    if (allowPosition && alias) sql = String(alias.index);
    else if (allowPosition && o.expr.kind === 'literal' && o.expr.type === 'number' && /^\d+$/.test(o.expr.value)) sql = o.expr.value;
    else sql = this.expr(o.expr, scope, true).sql;
    // BigQuery puts NULLs first ascending and last descending.
    const nulls = o.nulls ?? (o.desc ? 'last' : 'first');
    return `${sql} ${o.desc ? 'DESC' : 'ASC'} NULLS ${nulls.toUpperCase()}`;
  }

  // -------------------------------------------------------------------------------------------
  // FROM

  private from(from: From, env: CteEnv, scope: Scope): { sql: string; filters: string[] } {
    let sql = '';
    const filters: string[] = [];
    const add = (factor: TableFactor, type: string, on: Expr | undefined, using: readonly string[] | undefined) => {
      if (factor.kind === 'unnest') {
        sql = this.unnest(factor, type, on, sql, scope, filters);
        return;
      }
      const { sql: fsql, relation } = this.factor(factor, env);
      if (scope.relations.some((r) => r.q === relation.q)) {
        throw new QuarryError('INVALID_QUERY', `Duplicate table alias ${factor.alias ?? (factor.kind === 'table' ? factor.name : '')}`);
      }
      scope.relations.push(relation);
      if (!sql) {
        sql = fsql;
        return;
      }
      if (type === 'cross') sql += ` CROSS JOIN ${fsql}`;
      else {
        const kw = { inner: 'JOIN', left: 'LEFT JOIN', right: 'RIGHT JOIN', full: 'FULL JOIN' }[type];
        if (using) sql += ` ${kw} ${fsql} USING (${using.map(quoteIdent).join(', ')})`;
        else sql += ` ${kw} ${fsql} ON ${on ? this.expr(on, scope, false).sql : 'TRUE'}`;
      }
    };
    add(from.first, 'cross', undefined, undefined);
    for (const j of from.joins) add(j.table, j.type, j.on, j.using);
    return { sql, filters };
  }

  private factor(f: Exclude<TableFactor, { kind: 'unnest' }>, env: CteEnv): { sql: string; relation: Relation } {
    if (f.kind === 'derived') {
      const out = this.query(f.query, env, undefined);
      const alias = f.alias ?? this.fresh('d');
      const q = quoteIdent(alias);
      return { sql: `(${out.sql}) AS ${q}`, relation: { names: [alias.toLowerCase()], q, columns: out.columns, physical: false } };
    }
    const names = f.alias ? [f.alias.toLowerCase()] : [f.name.toLowerCase(), f.name.split('.').at(-1)!.toLowerCase()];
    const q = quoteIdent(f.alias ?? f.name);
    const cte = env.get(f.name.toLowerCase());
    if (cte) return { sql: `${cte.q} AS ${q}`, relation: { names, q, columns: cte.columns, physical: false } };
    const source = this.catalog.sourceByName(f.name);
    if (!source) throw new QuarryError('QUERY_NOT_ALLOWED', `can't find source ${f.name}`);
    const columns = Object.entries(source.schema.columns).map(([name, t]) => ({ name, type: fromFieldType(t) }));
    return { sql: `${quoteIdent(this.database)}.${quoteIdent(source.table)} AS ${q}`, relation: { names, q, columns, physical: true } };
  }

  private unnest(
    f: Extract<TableFactor, { kind: 'unnest' }>,
    joinType: string,
    on: Expr | undefined,
    left: string,
    scope: Scope,
    filters: string[],
  ): string {
    const alias = (f.alias ?? this.fresh('u')).toLowerCase();
    const keepEmpty = joinType === 'left';
    if (joinType === 'right' || joinType === 'full') throw new QuarryError('QUERY_NOT_ALLOWED', 'RIGHT and FULL joins with UNNEST are not supported');
    const onTrue = on === undefined || (on.kind === 'literal' && on.type === 'bool' && on.value);
    if (!onTrue && keepEmpty) throw new QuarryError('QUERY_NOT_ALLOWED', 'LEFT JOIN UNNEST supports only ON TRUE');
    const arr = this.expr(f.expr, scope, false);
    let result: string;
    if (arr.type.k === 'record' || arr.type.k === 'missing') {
      // A record is one object per row: the alias simply names it.
      scope.values.push(arr.json ? { name: alias, sql: arr.sql, type: arr.type, json: arr.json } : { name: alias, sql: arr.sql, type: arr.type });
      result = left;
    } else if (arr.type.k === 'scalar') {
      throw new QuarryError('INVALID_QUERY', `UNNEST expects an array, got a ${arr.type.t.toUpperCase()} value`);
    } else {
      const element = arr.type.k === 'list' ? arr.type.element : unknownType;
      const a = asArray(arr);
      // LEFT JOIN UNNEST keeps a row with an empty list: one element, NULL (an empty object for records).
      const list = keepEmpty ? `if(empty(${a}), arrayResize(${a}, 1), ${a})` : a;
      const col = this.fresh('u');
      const bind = (sql: string) => {
        scope.values.push(element.k === 'record' ? { name: alias, sql, type: element, json: { base: sql, path: [] } } : { name: alias, sql, type: element });
      };
      if (scope.relations.length === 0 && !left) {
        // UNNEST first in FROM: a derived table of the elements (later list UNNESTs wrap it).
        const name = this.fresh('t');
        const q = quoteIdent(name);
        scope.relations.push({ names: [], q, columns: [{ name: col, type: element }], physical: false });
        bind(`${q}.${quoteIdent(col)}`);
        result = `(SELECT arrayJoin(${list}) AS ${quoteIdent(col)}) AS ${q}`;
      } else if (scope.relations.length === 1) {
        const rel = scope.relations[0]!;
        bind(`${rel.q}.${quoteIdent(col)}`);
        result = `(SELECT ${rel.q}.*, arrayJoin(${list}) AS ${quoteIdent(col)} FROM ${left}) AS ${rel.q}`;
      } else {
        throw new QuarryError('QUERY_NOT_ALLOWED', 'UNNEST of an array after a join of several tables is not supported: unnest in a subquery first');
      }
    }
    // JOIN UNNEST(...) ON cond: the condition filters the unnested rows.
    if (!onTrue) filters.push(this.expr(on!, scope, false).sql);
    return result;
  }

  // -------------------------------------------------------------------------------------------
  // Expressions

  expr(e: Expr, scope: Scope, aliasesFirst: boolean): Typed {
    const sub = (x: Expr) => this.expr(x, scope, aliasesFirst);
    switch (e.kind) {
      case 'column':
        return resolveColumn(e.path, scope, this.ctx, aliasesFirst);
      case 'param':
        this.params.add(e.name);
        return { sql: `{${e.name}:Nullable(String)}`, type: scalar('string') };
      case 'literal':
        switch (e.type) {
          case 'string':
            return { sql: stringLiteral(e.value), type: scalar('string') };
          case 'number':
            if (!/^(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(e.value)) throw new QuarryError('INVALID_QUERY', `Invalid number ${e.value}`);
            return /^\d+$/.test(e.value)
              ? { sql: BigInt(e.value) > 2147483647n ? `toInt64(${e.value})` : e.value, type: scalar('int') }
              : { sql: `toFloat64(${e.value})`, type: scalar('float') };
          case 'bool':
            return { sql: e.value ? 'TRUE' : 'FALSE', type: scalar('bool') };
          case 'null':
            return { sql: 'NULL', type: unknownType };
        }
        break;
      case 'interval':
        return { sql: intervalOf(sub(e.value).sql, e.unit), type: scalar('interval') };
      case 'datepart':
        throw new QuarryError('INVALID_QUERY', `Date part ${e.part.toUpperCase()} is only allowed as a function argument`);
      case 'binary':
        return this.binary(e.op, sub(e.left), sub(e.right));
      case 'distinctFrom':
        // `<=>` is ClickHouse's NULL-safe equality (IS NOT DISTINCT FROM).
        return { sql: `(${e.negated ? '' : 'NOT '}(${sub(e.left).sql} <=> ${sub(e.right).sql}))`, type: scalar('bool') };
      case 'unary': {
        const x = sub(e.expr);
        if (e.op === 'not') return { sql: `(NOT ${x.sql})`, type: scalar('bool') };
        return { sql: `(${e.op}${x.sql})`, type: x.type };
      }
      case 'func':
        return this.func(e, scope, aliasesFirst);
      case 'cast':
        return this.cast(sub(e.expr), e.to, e.safe);
      case 'case': {
        const parts = ['CASE'];
        if (e.operand) parts.push(sub(e.operand).sql);
        let type: VType = unknownType;
        for (const w of e.whens) {
          const then = sub(w.result);
          if (type.k === 'unknown') type = then.type;
          parts.push(`WHEN ${sub(w.when).sql} THEN ${then.sql}`);
        }
        if (e.else) {
          const other = sub(e.else);
          if (type.k === 'unknown') type = other.type;
          parts.push(`ELSE ${other.sql}`);
        }
        parts.push('END');
        return { sql: `(${parts.join(' ')})`, type };
      }
      case 'isNull': {
        const x = sub(e.expr);
        // A record is absent when its sub-object holds no path.
        const test = x.type.k === 'record' ? `empty(JSONAllPaths(${x.sql}))` : `${x.sql} IS NULL`;
        return { sql: `(${e.negated ? 'NOT ' : ''}${test})`, type: scalar('bool') };
      }
      case 'isBool': {
        const test = `ifNull(${sub(e.expr).sql} = ${e.value ? 'true' : 'false'}, false)`;
        return { sql: `(${e.negated ? 'NOT ' : ''}${test})`, type: scalar('bool') };
      }
      case 'inList': {
        const x = sub(e.expr);
        const list = e.list.map((i) => this.coerceTo(x, sub(i)));
        return { sql: `(${x.sql} ${e.negated ? 'NOT ' : ''}IN (${list.join(', ')}))`, type: scalar('bool') };
      }
      case 'inUnnest': {
        const x = sub(e.expr);
        const a = sub(e.array);
        const sql = `has(${asArray(a)}, ${x.sql})`;
        return { sql: e.negated ? `(NOT ${sql})` : sql, type: scalar('bool') };
      }
      case 'inQuery': {
        const x = sub(e.expr);
        const q = this.query(e.query, scope.ctes, scope);
        return { sql: `(${x.sql} ${e.negated ? 'NOT ' : ''}IN (${q.sql}))`, type: scalar('bool') };
      }
      case 'between': {
        const x = sub(e.expr);
        return {
          sql: `(${x.sql} ${e.negated ? 'NOT ' : ''}BETWEEN ${this.coerceTo(x, sub(e.low))} AND ${this.coerceTo(x, sub(e.high))})`,
          type: scalar('bool'),
        };
      }
      case 'like':
        return { sql: `(${sub(e.expr).sql} ${e.negated ? 'NOT ' : ''}LIKE ${sub(e.pattern).sql})`, type: scalar('bool') };
      case 'exists': {
        const q = this.query(e.query, scope.ctes, scope);
        return { sql: `(${e.negated ? 'NOT ' : ''}EXISTS (${q.sql}))`, type: scalar('bool') };
      }
      case 'subquery': {
        const q = this.query(e.query, scope.ctes, scope);
        if (q.columns.length !== 1) throw new QuarryError('INVALID_QUERY', 'A scalar subquery must return exactly one column');
        return { sql: `(${q.sql})`, type: q.columns[0]!.type };
      }
      case 'array': {
        const items = e.elements.map(sub);
        return { sql: `[${items.map((i) => i.sql).join(', ')}]`, type: { k: 'list', element: items[0]?.type ?? unknownType } };
      }
      case 'index':
        return this.index(sub(e.expr), e.index, e.mode, scope, aliasesFirst);
      case 'field':
        return walkFields(sub(e.expr), [e.name], [e.name], this.ctx);
      case 'extract': {
        const x = sub(e.expr);
        return { sql: extractPart(e.part, x.sql), type: scalar('int') };
      }
    }
    throw new QuarryError('INVALID_QUERY', 'Unsupported expression');
  }

  /** A comparison's other side, turned into a TIMESTAMP when it is a string compared to one. */
  private coerceTo(target: Typed, other: Typed): string {
    if (target.type.k === 'scalar' && target.type.t === 'timestamp' && other.type.k === 'scalar' && other.type.t === 'string') {
      return stringToTimestamp(other.sql);
    }
    return other.sql;
  }

  private binary(op: string, l: Typed, r: Typed): Typed {
    switch (op) {
      case 'and':
      case 'or':
        return { sql: `(${l.sql} ${op.toUpperCase()} ${r.sql})`, type: scalar('bool') };
      case '=':
      case '!=':
      case '<':
      case '<=':
      case '>':
      case '>=':
        return { sql: `(${this.coerceTo(r, l)} ${op === '!=' ? '<>' : op} ${this.coerceTo(l, r)})`, type: scalar('bool') };
      case '||':
        return { sql: `concat(${l.sql}, ${r.sql})`, type: scalar('string') };
      case '/':
        return { sql: `(${l.sql} / ${r.sql})`, type: scalar('float') };
      case '+':
      case '-': {
        const isTime = (t: VType) => t.k === 'scalar' && (t.t === 'timestamp' || t.t === 'datetime' || t.t === 'date');
        const type = isTime(l.type) ? l.type : isTime(r.type) ? r.type : numeric(l.type, r.type);
        return { sql: `(${l.sql} ${op} ${r.sql})`, type };
      }
      case '*':
      case '%':
        return { sql: `(${l.sql} ${op} ${r.sql})`, type: numeric(l.type, r.type) };
      case '&':
        return { sql: `bitAnd(${l.sql}, ${r.sql})`, type: scalar('int') };
      case '|':
        return { sql: `bitOr(${l.sql}, ${r.sql})`, type: scalar('int') };
      case '^':
        return { sql: `bitXor(${l.sql}, ${r.sql})`, type: scalar('int') };
    }
    throw new QuarryError('INVALID_QUERY', `Unsupported operator ${op}`);
  }

  private cast(x: Typed, to: string, safe: boolean): Typed {
    const fromString = x.type.k === 'scalar' && x.type.t === 'string';
    const fromFloat = x.type.k === 'scalar' && (x.type.t === 'float' || x.type.t === 'numeric');
    const fromTime = x.type.k === 'scalar' && (x.type.t === 'timestamp' || x.type.t === 'datetime');
    // The to<Type> functions keep NULL as NULL and refuse a value that does not convert.
    const functions: Record<string, string> = {
      String: 'toString(',
      Int64: 'toInt64(',
      Float64: 'toFloat64(',
      'Decimal(38, 9)': 'toDecimal128(',
      Bool: 'toBool(',
      Date32: 'toDate32(',
      "DateTime64(6, 'UTC')": 'toDateTime64(',
    };
    const suffix: Record<string, string> = { 'Decimal(38, 9)': ', 9)', "DateTime64(6, 'UTC')": ", 6, 'UTC')" };
    const conv = (sql: string, type: string) => (safe ? `accurateCastOrNull(${sql}, '${type}')` : `${functions[type]}${sql}${suffix[type] ?? ')'}`);
    switch (to) {
      case 'string':
        return { sql: fromTime ? timestampText(x.sql) : conv(x.sql, 'String'), type: scalar('string') };
      case 'int64':
        // BigQuery rounds (half away from zero) where ClickHouse would truncate.
        return { sql: conv(fromFloat ? `round(${x.sql})` : x.sql, 'Int64'), type: scalar('int') };
      case 'float64':
        return { sql: conv(x.sql, 'Float64'), type: scalar('float') };
      case 'numeric':
        return { sql: conv(x.sql, 'Decimal(38, 9)'), type: scalar('numeric') };
      case 'bool':
        return { sql: conv(x.sql, 'Bool'), type: scalar('bool') };
      case 'timestamp':
        return { sql: fromString ? stringToTimestamp(x.sql, safe) : conv(x.sql, "DateTime64(6, 'UTC')"), type: scalar('timestamp') };
      case 'datetime':
        return { sql: fromString ? stringToTimestamp(x.sql, safe) : conv(x.sql, "DateTime64(6, 'UTC')"), type: scalar('datetime') };
      case 'date':
        return { sql: conv(x.sql, 'Date32'), type: scalar('date') };
      case 'bytes':
        return { sql: conv(x.sql, 'String'), type: scalar('bytes') };
    }
    throw new QuarryError('INVALID_QUERY', `Unsupported cast to ${to}`);
  }

  private index(base: Typed, index: Expr, mode: string, scope: Scope, aliasesFirst: boolean): Typed {
    const i = this.expr(index, scope, aliasesFirst);
    const oneBased = mode === 'ordinal' || mode === 'safe_ordinal';
    const literal = index.kind === 'literal' && index.type === 'number' && /^\d+$/.test(index.value) ? Number(index.value) : undefined;
    if (base.type.k === 'record' || base.type.k === 'missing') {
      // A record is a one-element array: [OFFSET(0)] / [ORDINAL(1)] is the record itself.
      if (literal === (oneBased ? 1 : 0)) return base;
      if (base.type.k === 'missing') return base;
      throw new QuarryError('INVALID_QUERY', `A record has one element: only [OFFSET(0)] / [ORDINAL(1)] reach it`);
    }
    if (base.type.k === 'scalar') throw new QuarryError('INVALID_QUERY', `Cannot index a ${base.type.t.toUpperCase()} value`);
    const element = base.type.k === 'list' ? base.type.element : unknownType;
    const pos = literal !== undefined ? String(oneBased ? literal : literal + 1) : oneBased ? i.sql : `(${i.sql} + 1)`;
    // Out of range (or below 1) reads NULL, as on DuckDB.
    const sql = `if(${pos} >= 1, arrayElementOrNull(${asArray(base)}, ${pos}), NULL)`;
    if (element.k === 'record') return { sql: `arrayElement(${asArray(base)}, ${pos})`, type: element, json: { base: `arrayElement(${asArray(base)}, ${pos})`, path: [] } };
    return { sql: literal !== undefined ? `arrayElementOrNull(${asArray(base)}, ${pos})` : sql, type: element };
  }

  private func(call: FuncCall, scope: Scope, aliasesFirst: boolean): Typed {
    const transform = Object.hasOwn(functionTransforms, call.name) ? functionTransforms[call.name] : undefined;
    if (!transform) throw new QuarryError('QUERY_NOT_ALLOWED', `Restricted function ${call.name}`);
    return transform(call, {
      arg: (x: Expr) => this.expr(x, scope, aliasesFirst),
      over: (c: FuncCall) => (c.over ? ` OVER (${this.window(c, scope)})` : ''),
      innerOrder: (c: FuncCall) => (c.orderBy ?? []).map((o) => ({ sql: this.expr(o.expr, scope, aliasesFirst).sql, desc: o.desc })),
    });
  }

  private window(call: FuncCall, scope: Scope): string {
    const w = call.over!;
    const parts: string[] = [];
    if (w.partitionBy.length > 0) parts.push(`PARTITION BY ${w.partitionBy.map((p) => this.expr(p, scope, true).sql).join(', ')}`);
    if (w.orderBy.length > 0) parts.push(`ORDER BY ${w.orderBy.map((o) => this.orderItem(o, scope, false)).join(', ')}`);
    if (w.frame) parts.push(w.frame);
    if (isAggregate(call.name) && call.distinct) throw new QuarryError('INVALID_QUERY', 'DISTINCT is not supported in window aggregates');
    return parts.join(' ');
  }
}

function numeric(a: VType, b: VType): VType {
  const isInt = (t: VType) => t.k === 'scalar' && t.t === 'int';
  return isInt(a) && isInt(b) ? scalar('int') : scalar('float');
}

export function stringLiteral(value: string): string {
  if (value.includes('\u0000')) throw new QuarryError('INVALID_QUERY', 'String literals may not contain NUL characters');
  return quoteString(value);
}

/** A TIMESTAMP as DuckDB prints it as text: seconds, then the fraction only when there is one. */
function timestampText(sql: string): string {
  return `if(toMicrosecond(${sql}) = 0, formatDateTime(${sql}, '%Y-%m-%d %H:%i:%S'), replaceRegexpOne(toString(${sql}), '0+$', ''))`;
}

/** EXTRACT(part FROM x), numbered as BigQuery (and the DuckDB engine) number them. */
function extractPart(part: string, x: string): string {
  switch (part) {
    case 'dayofweek':
      return `toDayOfWeek(${x}, 3)`;
    case 'dayofyear':
      return `toDayOfYear(${x})`;
    case 'week':
      return `toWeek(${x}, 0)`;
    case 'microsecond':
      return `(toSecond(${x}) * 1000000 + toMicrosecond(${x}))`;
    case 'millisecond':
      return `(toSecond(${x}) * 1000 + intDiv(toMicrosecond(${x}), 1000))`;
    case 'second':
      return `toSecond(${x})`;
    case 'minute':
      return `toMinute(${x})`;
    case 'hour':
      return `toHour(${x})`;
    case 'day':
      return `toDayOfMonth(${x})`;
    case 'month':
      return `toMonth(${x})`;
    case 'quarter':
      return `toQuarter(${x})`;
    case 'year':
      return `toYear(${x})`;
  }
  throw new QuarryError('INVALID_QUERY', `EXTRACT does not support ${part.toUpperCase()}`);
}

/** Resolution scope for ORDER BY over a set operation: its output columns by name. */
function outputScope(columns: Column[], outer: Scope | undefined, env: CteEnv): Scope {
  const scope = new Scope(outer, env);
  // ORDER BY over a set operation can only name output columns: emitted by position.
  scope.selectAliases = new Map(columns.map((c, i) => [c.name.toLowerCase(), { index: i + 1, expr: { sql: String(i + 1), type: c.type } }]));
  return scope;
}
