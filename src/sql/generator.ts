/**
 * The base generator: prints a resolved, typed tree (resolved.ts) as SQL. Everything standard is
 * printed here once; an engine subclasses `SqlPrinter` and overrides only what its dialect writes
 * differently (the way sqlglot's dialect generators and Kysely's query compilers do):
 *
 *   abstract, every dialect says:  param, castType, interval, index, inUnnest, unnestElements, struct,
 *                                  functions (a Record<FunctionName, …> translation table)
 *   overridable defaults:          quoteIdent, stringLiteral, numberLiteral, cast, fieldAccess,
 *                                  binary, extract, arrayLiteral, datePart, tableSource, rowid
 *   capabilities:                  what the dialect can do (late materialisation by row id)
 *
 * `generateSql` is the pipeline every engine runs: row cap → AST optimisations → semantic pass
 * (resolve.ts) → tree rewrites the dialect allows (rewrite.ts) → print. The printer resolves
 * nothing: names, types and coercions are all in the tree.
 */
import { QuarryError } from '../errors.ts';
import { type BinaryOp, boundText, type CastType, type DatePart, type FrameBound, type Query, type WindowFrame } from './ast.ts';
import type { FunctionName } from './functions.ts';
import { capRows, optimise } from './optimise.ts';
import { type ParamBinding, resolveQuery } from './resolve.ts';
import type { ColumnStorage, OutColumn, RangeVar, RExpr, RFactor, RFrom, RFunc, ROrder, RQuery, RSelect, RSetExpr, RWindow } from './resolved.ts';
import { columnStorage } from './resolved.ts';
import { inlineOneRowCtes, lateMaterialise, limitCteToTopN } from './rewrite.ts';
import type { EngineCapabilities } from '../capabilities.ts';
import type { Catalog } from '../storage/schema.ts';
import { assertNever, type VType } from './types.ts';

export interface GenerateOptions {
  catalog: Catalog;
  /** Caps the rows the query returns, whatever its own LIMIT says. */
  maxRows?: number;
  /** Saving a query: a top-level column a source with fields lacks is an error (resolve.ts). */
  strictSourceColumns?: boolean;
  /** What the run binds to each parameter (resolve.ts types `@name` by it); absent: strings. */
  paramTypes?: ReadonlyMap<string, ParamBinding>;
}

export interface GeneratedQuery {
  sql: string;
  /** Parameter names used, each to be bound as `paramTypes` said (absent: a string or NULL). */
  params: string[];
  /** Result columns, in order, with their types (the encoder tells DATETIME from TIMESTAMP). */
  columns: readonly OutColumn[];
  /** Nested paths no event ever carried; they read as NULL. */
  warnings: string[];
}

/** What a dialect can do; the shared pipeline consults these instead of assuming. */
/** What the printer's engine declares of the SQL rewrites (src/capabilities.ts). */
export type Capabilities = Pick<EngineCapabilities, 'lateMaterialisation' | 'topNIntoCte'>;

/** An argument as the function table sees it: its printed SQL, type and node. */
export interface Printed {
  readonly sql: string;
  readonly type: VType;
  readonly node: RExpr;
}

export interface FunctionContext {
  /** Prints any expression (e.g. the LIMIT of `array_agg(x LIMIT n)`). */
  print(e: RExpr): string;
  /** The call's window suffix: ` OVER (...)`, or ''; `frame` in place of the call's own frame. */
  over(call: RFunc, frame?: WindowFrame): string;
  /** `ORDER BY ...` inside an aggregate, or ''. */
  innerOrder(call: RFunc): string;
  /** A fresh quoted internal name (for a translation's own derived table or column). */
  fresh(prefix: string): string;
}

export type FunctionPrinter = (call: RFunc, args: readonly Printed[], ctx: FunctionContext) => string;

/** One engine's translation of one registry function. */
export type Translation =
  | {
      readonly print: FunctionPrinter;
      /** The engine's own functions and operators this translation may emit (the DuckDB lock-down allows exactly these). */
      readonly emits: readonly string[];
    }
  /** The engine cannot express this function: calling it is QUERY_NOT_ALLOWED there. */
  | { readonly unsupported: string };

export type FunctionTable = Readonly<Record<FunctionName, Translation>>;

/** The state of one FROM clause while it is printed. */
export interface FromState {
  sql: string;
  /** Quoted aliases of the relations printed so far. */
  readonly relations: string[];
  /** Conditions to add to WHERE (`JOIN UNNEST(...) ON cond`). */
  readonly filters: string[];
}

/** Prints a query for a dialect (see `SqlPrinter`): the shared pipeline. */
export function generateSql(query: Query, options: GenerateOptions, printer: SqlPrinter): GeneratedQuery {
  const capped = options.maxRows === undefined ? query : capRows(query, options.maxRows);
  const resolved = resolveQuery(optimise(capped), options);
  const late = printer.capabilities.lateMaterialisation;
  const inlined = inlineOneRowCtes(resolved.query);
  const topN = printer.capabilities.topNIntoCte ? limitCteToTopN(inlined) : inlined;
  const tree = late ? lateMaterialise(topN, late) : topN;
  const sql = printer.query(tree);
  return { sql, params: printer.params(), columns: resolved.query.columns, warnings: [...resolved.warnings] };
}

function not(negated: boolean): string {
  return negated ? 'NOT ' : '';
}

export abstract class SqlPrinter {
  abstract readonly capabilities: Capabilities;
  protected abstract readonly functions: FunctionTable;

  readonly #params = new Set<string>();
  /** How each list UNNEST's element is referred to, set when its FROM clause is printed. */
  readonly #elements = new Map<RangeVar, string>();
  #counter = 0;

  params(): string[] {
    return [...this.#params];
  }

  /** A fresh internal name (`__u1`), unique within one generated statement. */
  protected fresh(prefix: string): string {
    this.#counter += 1;
    return `__${prefix}${this.#counter}`;
  }

  // -------------------------------------------------------------------------------------------
  // What each dialect writes its own way

  /** A bound parameter (values are never spliced into the text). */
  protected abstract param(name: string): string;
  /** The engine's name of a BigQuery cast target. */
  protected abstract castType(to: CastType): string;
  /** `INTERVAL n unit`, with `n` already printed. */
  protected abstract interval(n: string, unit: DatePart): string;
  /** `x[OFFSET(i)]` and the like; for a record base (BigQuery's one-element array) the index is not a literal. */
  protected abstract index(e: Extract<RExpr, { kind: 'index' }>, base: string, index: string): string;
  /** `x [NOT] IN UNNEST(array)`. */
  protected abstract inUnnest(x: string, array: string, negated: boolean): string;
  /**
   * The select-list expression that turns one row into one row per element of a list UNNEST
   * (`unnest(list)`); with `factor.keepEmpty`, an empty or NULL list gives one NULL element.
   */
  protected abstract unnestElements(factor: Extract<RFactor, { kind: 'unnestList' }>, array: string): string;
  /** A record value built from named fields. */
  protected abstract struct(fields: readonly { name: string; sql: string }[]): string;
  /** A stored table named in FROM; a dialect may qualify it (with its database, say). */
  protected tableSource(table: string): string {
    return this.quoteIdent(table);
  }
  /** The engine's row identifier of a stored table (only with `capabilities.lateMaterialisation`). */
  protected rowid(alias: string): string {
    throw new QuarryError('INTERNAL', `row identifiers are not supported here (${alias})`);
  }

  // -------------------------------------------------------------------------------------------
  // Standard printing, overridable

  quoteIdent(name: string): string {
    if (name.includes('\u0000')) throw new QuarryError('INVALID_QUERY', 'Names may not contain NUL characters');
    return `"${name.replace(/"/g, '""')}"`;
  }

  stringLiteral(value: string): string {
    if (value.includes('\u0000')) throw new QuarryError('INVALID_QUERY', 'String literals may not contain NUL characters');
    return `'${value.replace(/'/g, "''")}'`;
  }

  /** A number literal, as written (already checked to be a plain decimal). */
  protected numberLiteral(text: string, _type: VType): string {
    return text;
  }

  protected cast(x: Printed, to: CastType, safe: boolean): string {
    return `${safe ? 'SAFE_CAST' : 'CAST'}(${x.sql} AS ${this.castType(to)})`;
  }

  /** A field of a record value. */
  protected fieldAccess(base: string, field: string, plainBase: boolean): string {
    return plainBase ? `${base}.${this.quoteIdent(field)}` : `(${base}).${this.quoteIdent(field)}`;
  }

  protected binary(op: BinaryOp, l: string, r: string): string {
    switch (op) {
      case 'and':
      case 'or':
        return `(${l} ${op.toUpperCase()} ${r})`;
      case '!=':
        return `(${l} <> ${r})`;
      case '=':
      case '<':
      case '<=':
      case '>':
      case '>=':
      case '+':
      case '-':
      case '*':
      case '/':
      case '%':
      case '||':
      case '&':
      case '|':
      case '^':
        return `(${l} ${op} ${r})`;
      default:
        return assertNever(op);
    }
  }

  protected extract(part: DatePart, x: string): string {
    return `extract(${this.datePart(part)} FROM ${x})`;
  }

  /** The engine's name of a date part. */
  protected datePart(part: DatePart): string {
    return part;
  }

  protected arrayLiteral(items: readonly string[]): string {
    return `[${items.join(', ')}]`;
  }

  // -------------------------------------------------------------------------------------------
  // Queries

  query(q: RQuery): string {
    return `${this.withClause(q)}${this.setExpr(q.body)}${this.queryTail(q)}`;
  }

  /** `WITH a AS (...), b AS (...) ` (with its trailing space), or ''. */
  protected withClause(q: RQuery): string {
    const ctes = q.with.map((c) => `${this.quoteIdent(c.name)} AS (${this.query(c.query)})`);
    return ctes.length > 0 ? `WITH ${ctes.join(', ')} ` : '';
  }

  /** The query's ` ORDER BY ... LIMIT ... OFFSET ...`, or ''. */
  protected queryTail(q: RQuery): string {
    let sql = '';
    if (q.orderBy.length > 0) sql += ` ORDER BY ${q.orderBy.map((o) => this.orderItem(o)).join(', ')}`;
    if (q.limit) sql += ` LIMIT ${this.expr(q.limit)}`;
    if (q.offset) sql += ` OFFSET ${this.expr(q.offset)}`;
    return sql;
  }

  protected setExpr(body: RSetExpr): string {
    switch (body.kind) {
      case 'select':
        return this.select(body);
      case 'nested':
        return `(${this.query(body.query)})`;
      case 'setop': {
        const op = body.op.toUpperCase() + (body.all ? ' ALL' : '');
        const side = (x: RSetExpr) => (x.kind === 'nested' ? this.setExpr(x) : `(${this.setExpr(x)})`);
        return `${side(body.left)} ${op} ${side(body.right)}`;
      }
      default:
        return assertNever(body);
    }
  }

  protected select(s: RSelect): string {
    // FROM first: it decides how UNNEST elements are referred to.
    const from = s.from ? this.from(s.from) : undefined;
    const items = s.columns.map((c) => `${this.expr(c.expr)} AS ${this.quoteIdent(c.name)}`);
    const where = [...(from?.filters ?? [])];
    if (s.where) where.push(this.expr(s.where));
    let sql = `SELECT ${s.distinct ? 'DISTINCT ' : ''}${items.join(', ')}`;
    // A FROM of record UNNESTs alone (`FROM UNNEST(e.metadata)`) has no relation of its own.
    if (from?.sql) sql += ` FROM ${from.sql}`;
    if (where.length > 0) sql += ` WHERE ${where.map((w) => (where.length > 1 ? `(${w})` : w)).join(' AND ')}`;
    if (s.groupBy.length > 0) sql += ` GROUP BY ${s.groupBy.map((g) => this.expr(g)).join(', ')}`;
    if (s.having) sql += ` HAVING ${this.expr(s.having)}`;
    if (s.qualify) sql += ` QUALIFY ${this.expr(s.qualify)}`;
    return sql;
  }

  protected orderItem(o: ROrder): string {
    return `${this.expr(o.expr)} ${o.desc ? 'DESC' : 'ASC'} NULLS ${o.nulls.toUpperCase()}`;
  }

  // -------------------------------------------------------------------------------------------
  // FROM

  protected from(from: RFrom): FromState {
    const state: FromState = { sql: '', relations: [], filters: [] };
    this.factor(state, from.first, 'cross', undefined, undefined);
    for (const j of from.joins) this.factor(state, j.factor, j.type, j.on, j.using);
    return state;
  }

  private factor(state: FromState, f: RFactor, type: string, on: RExpr | undefined, using: readonly string[] | undefined): void {
    switch (f.kind) {
      case 'unnestRecord':
        break;
      case 'unnestList': {
        const ref = this.unnestList(state, f, this.expr(f.array));
        this.#elements.set(f.range, ref);
        break;
      }
      case 'range': {
        const alias = this.quoteIdent(f.range.alias);
        const sql = `${this.rangeSource(f)} AS ${alias}`;
        state.relations.push(alias);
        if (!state.sql) state.sql = sql;
        else if (type === 'cross') state.sql += ` CROSS JOIN ${sql}`;
        else {
          const kw = ({ inner: 'JOIN', left: 'LEFT JOIN', right: 'RIGHT JOIN', full: 'FULL JOIN' } as Record<string, string>)[type];
          if (using) state.sql += ` ${kw} ${sql} USING (${using.map((u) => this.quoteIdent(u)).join(', ')})`;
          else state.sql += ` ${kw} ${sql} ON ${on ? this.expr(on) : 'TRUE'}`;
          return;
        }
        break;
      }
      default:
        assertNever(f);
    }
    // JOIN UNNEST(...) ON cond: the condition filters the unnested rows.
    if (on && f.kind !== 'range') state.filters.push(this.expr(on));
  }

  private rangeSource(f: Extract<RFactor, { kind: 'range' }>): string {
    const r = f.range;
    switch (r.kind) {
      case 'table':
        return this.tableSource(r.table);
      case 'cte':
        return this.quoteIdent(r.cte);
      case 'derived':
        return `(${this.query(f.query!)})`;
      default:
        return assertNever(r);
    }
  }

  /**
   * A list UNNEST in FROM: a select-list UNNEST in a derived table wrapping the left side (never a
   * lateral join, which engines run far slower). Updates `state.sql` and returns how the element is
   * referred to in the rest of the statement.
   */
  protected unnestList(state: FromState, f: Extract<RFactor, { kind: 'unnestList' }>, array: string): string {
    const elements = this.unnestElements(f, array);
    const col = this.quoteIdent(this.fresh('u'));
    if (state.relations.length === 0 && !state.sql) {
      // UNNEST first in FROM: a derived table of the elements (later list UNNESTs wrap it).
      const q = this.quoteIdent(this.fresh('t'));
      state.relations.push(q);
      state.sql = `(SELECT ${elements} AS ${col}) AS ${q}`;
      return `${q}.${col}`;
    }
    if (state.relations.length === 1) {
      const rel = state.relations[0]!;
      state.sql = `(SELECT ${rel}.*, ${elements} AS ${col} FROM ${state.sql}) AS ${rel}`;
      return `${rel}.${col}`;
    }
    throw new QuarryError('QUERY_NOT_ALLOWED', 'UNNEST of an array after a join of several tables is not supported: unnest in a subquery first');
  }

  // -------------------------------------------------------------------------------------------
  // Expressions

  expr(e: RExpr): string {
    switch (e.kind) {
      case 'column':
        return this.column(e);
      case 'missing':
        return 'NULL';
      case 'param':
        this.#params.add(e.name);
        return this.param(e.name);
      case 'literal': {
        const v = e.value;
        switch (v.type) {
          case 'string':
            return this.stringLiteral(v.value);
          case 'number':
            return this.numberLiteral(v.value, e.type);
          case 'bool':
            return v.value ? 'TRUE' : 'FALSE';
          case 'null':
            return 'NULL';
          default:
            return assertNever(v);
        }
      }
      case 'interval':
        return this.interval(this.expr(e.value), e.unit);
      case 'datepart':
        return this.datePart(e.part);
      case 'binary':
        return this.binary(e.op, this.expr(e.left), this.expr(e.right));
      case 'unary':
        return e.op === 'not' ? `(NOT ${this.expr(e.expr)})` : `(${e.op}${this.expr(e.expr)})`;
      case 'func':
        return this.func(e);
      case 'cast':
        return this.cast(this.printed(e.expr), e.to, e.safe);
      case 'case': {
        const parts = ['CASE'];
        if (e.operand) parts.push(this.expr(e.operand));
        for (const w of e.whens) parts.push(`WHEN ${this.expr(w.when)} THEN ${this.expr(w.result)}`);
        if (e.else) parts.push(`ELSE ${this.expr(e.else)}`);
        parts.push('END');
        return `(${parts.join(' ')})`;
      }
      case 'isNull':
        return `(${this.expr(e.expr)} IS ${not(e.negated)}NULL)`;
      case 'present':
        return `(${this.expr(e.value)} IS NOT NULL)`;
      case 'isBool':
        return `(${this.expr(e.expr)} IS ${not(e.negated)}${e.value ? 'TRUE' : 'FALSE'})`;
      case 'distinctFrom':
        return `(${this.expr(e.left)} IS ${not(e.negated)}DISTINCT FROM ${this.expr(e.right)})`;
      case 'inList':
        return `(${this.expr(e.expr)} ${not(e.negated)}IN (${e.list.map((x) => this.expr(x)).join(', ')}))`;
      case 'inUnnest':
        return this.inUnnest(this.expr(e.expr), this.expr(e.array), e.negated);
      case 'inQuery':
        return `(${this.expr(e.expr)} ${not(e.negated)}IN (${this.query(e.query)}))`;
      case 'between':
        return `(${this.expr(e.expr)} ${not(e.negated)}BETWEEN ${this.expr(e.low)} AND ${this.expr(e.high)})`;
      case 'like':
        return `(${this.expr(e.expr)} ${not(e.negated)}LIKE ${this.expr(e.pattern)})`;
      case 'exists':
        return `(${not(e.negated)}EXISTS (${this.query(e.query)}))`;
      case 'subquery':
        return `(${this.query(e.query)})`;
      case 'array':
        return this.arrayLiteral(e.elements.map((x) => this.expr(x)));
      case 'struct':
        return this.struct(e.fields.map((f) => ({ name: f.name, sql: this.expr(f.value) })));
      case 'index':
        return this.index(e, this.expr(e.expr), this.expr(e.index));
      case 'field':
        return this.fieldAccess(this.expr(e.expr), e.name, false);
      case 'extract':
        return this.extract(e.part, this.expr(e.expr));
      case 'position':
        return String(e.index);
      case 'rowid':
        return this.rowid(this.quoteIdent(e.from.alias));
      default:
        return assertNever(e);
    }
  }

  protected printed(node: RExpr): Printed {
    return { sql: this.expr(node), type: node.type, node };
  }

  /** How a list UNNEST's element is referred to (known once its FROM clause is printed). */
  protected element(range: RangeVar): string {
    const ref = this.#elements.get(range);
    if (ref === undefined) throw new QuarryError('INTERNAL', 'an UNNEST element was referred to before its FROM clause');
    return ref;
  }

  private column(e: Extract<RExpr, { kind: 'column' }>): string {
    let sql: string;
    if (e.from.kind === 'element') sql = this.element(e.from);
    else {
      const storage = columnStorage(e);
      if (storage !== 'typed') return this.overflowColumn(e, storage);
      sql = this.typedColumn(e);
    }
    for (const f of e.fields) sql = this.fieldAccess(sql, f, true);
    return sql;
  }

  /** A stored table's column as stored (without its fields). */
  protected typedColumn(e: Extract<RExpr, { kind: 'column' }>): string {
    return `${this.quoteIdent(e.from.alias)}.${this.quoteIdent(e.column!)}`;
  }

  /**
   * A field kept, wholly or partly, in the table's catch-all overflow column (src/storage/overflow.ts).
   * Only engines whose storage keeps one (`capabilities.keepsOverflow`) override this.
   */
  protected overflowColumn(_e: Extract<RExpr, { kind: 'column' }>, _storage: Exclude<ColumnStorage, 'typed'>): string {
    throw new QuarryError('INTERNAL', 'this engine keeps no overflow column');
  }

  private func(call: RFunc): string {
    const t = this.functions[call.name];
    if ('unsupported' in t) throw new QuarryError('QUERY_NOT_ALLOWED', `${call.name.toUpperCase()} is not supported by this engine: ${t.unsupported}`);
    const ctx: FunctionContext = {
      print: (x) => this.expr(x),
      over: (c, frame) => (c.over ? ` OVER (${this.window(c, frame ?? c.over.frame)})` : ''),
      innerOrder: (c) => (c.orderBy.length > 0 ? ` ORDER BY ${c.orderBy.map((o) => this.orderItem(o)).join(', ')}` : ''),
      fresh: (prefix) => this.quoteIdent(this.fresh(prefix)),
    };
    return t.print(
      call,
      call.args.map((a) => this.printed(a)),
      ctx,
    );
  }

  /** The window of a call: `PARTITION BY ... ORDER BY ... <frame>`; `frame` stands in for the call's own. */
  protected window(call: RFunc, frame: WindowFrame | undefined = call.over?.frame): string {
    const w = call.over!;
    const parts: string[] = [];
    if (w.partitionBy.length > 0) parts.push(`PARTITION BY ${w.partitionBy.map((x) => this.expr(x)).join(', ')}`);
    if (w.orderBy.length > 0) parts.push(`ORDER BY ${w.orderBy.map((o) => this.orderItem(o)).join(', ')}`);
    if (frame) parts.push(this.windowFrame(frame, w));
    return parts.join(' ');
  }

  /** A frame in the dialect's words: `ROWS BETWEEN 1 PRECEDING AND CURRENT ROW` (the SQL standard's). */
  protected windowFrame(frame: WindowFrame, _window: RWindow): string {
    return `${frame.units === 'rows' ? 'ROWS' : 'RANGE'} BETWEEN ${this.frameBound(frame.start)} AND ${this.frameBound(frame.end)}`;
  }

  protected frameBound(b: FrameBound): string {
    return boundText(b);
  }
}
