/**
 * The ClickHouse dialect: what ClickHouse writes differently from the base generator
 * (src/sql/generator.ts), which prints the resolved tree.
 *
 * - `@name` → `{name:Type}`, a query parameter bound by the runner, never spliced; the type is what
 *   the run binds (`paramTypes`): `String` for a string, `Int64`, `Float64`, `Bool`,
 *   `DateTime64(6, 'UTC')`, `Date32` for typed values, `Nullable(Nothing)` for NULL (Nullable
 *   placeholders in filters cost up to ~0.3 ms a query on chDB, so only NULL gets one), and
 *   `Nullable(String)` when the generator was not told (saving checks a query that way).
 * - Identifiers are backquoted; string literals escape the backslash too (an escape character in
 *   ClickHouse strings). Source tables are qualified with Quarry's database.
 * - A source's fields other than id, timestamp and event_message are paths in its `fields` JSON
 *   column: a scalar is its path cast to the catalogue's type
 *   (`CAST(t.fields.metadata.status AS Nullable(Int64))`), a record the sub-object there
 *   (`t.fields.^metadata`), a list the path as stored, cast to an array where one is needed.
 * - UNNEST of a list is `arrayJoin` in a derived table wrapping the left side (an empty list keeps
 *   its row with one NULL element for `LEFT JOIN UNNEST ... ON TRUE`); UNNEST of a record is field
 *   access (the semantic pass already made it so).
 * - Set operations say DISTINCT or ALL; an ORDER BY / LIMIT after one is applied to the whole of it.
 * - Casts are to<Type>() (NULL stays NULL, a value that does not convert is an error) or
 *   accurateCastOrNull for SAFE_CAST; a STRING read as a TIMESTAMP is parsed best-effort in UTC.
 * - Functions are spelt per printer-functions.ts.
 */
import { clickHouseCapabilities } from './definition.ts';
import { QuarryError } from '../../errors.ts';
import type { BinaryOp, CastType, DatePart, Query } from '../../sql/ast.ts';
import {
  type Capabilities,
  type FunctionTable,
  type GeneratedQuery,
  type GenerateOptions,
  generateSql,
  type Printed,
  SqlPrinter,
} from '../../sql/generator.ts';
import type { ParamBinding } from '../../sql/resolve.ts';
import type { RExpr, RFactor, RQuery, RSelect, RSetExpr } from '../../sql/resolved.ts';
import { assertNever, holdsRecord, isScalar, scalar, type VType } from '../../sql/types.ts';
import { PRESENCE_JSON_PATTERN, PRESENCE_KEY } from '../../storage/presence.ts';
import type { Catalog } from '../../storage/schema.ts';
import { type ColumnExpr, RecordOrigins, recordsInText, recordTextCall } from '../record-presence.ts';
import { quoteIdent, quoteString } from './quote.ts';
import { clickHouseFunctions, intervalFunction, STRING_TO_TIMESTAMP_EMITS, stringToTimestamp, tableEmits, textOfForm } from './printer-functions.ts';
import { type PushdownPlan, type PushedPath, pathKey, planPushdown } from './pushdown.ts';
import { arrayOf, clickHouseType } from './types.ts';

export type { GeneratedQuery } from '../../sql/generator.ts';

/** A record's JSON text without storage's presence markers. */
function withoutPresence(text: string): string {
  return `replaceRegexpAll(${text}, ${quoteString(PRESENCE_JSON_PATTERN)}, '')`;
}

export interface ClickHouseGenerateOptions extends GenerateOptions {
  /** The database holding the source tables. */
  database: string;
}

export function generateClickHouse(query: Query, options: ClickHouseGenerateOptions): GeneratedQuery {
  // The tables whose rows may lack presence markers, as the semantic pass looks the sources up.
  const unmarked = new Set<string>();
  const catalog: Catalog = {
    sourceByName: (name) => {
      const source = options.catalog.sourceByName(name);
      if (source?.unmarkedRecords === true) unmarked.add(source.table);
      return source;
    },
  };
  return generateSql(query, { ...options, catalog }, new ClickHousePrinter(options.database, options.paramTypes, unmarked));
}

/**
 * The placeholder type of each binding (the text `paramText` gives is parsed as this type). NULL
 * is `Nullable(Nothing)`, the type of ClickHouse's NULL literal, as the semantic pass types it.
 */
const placeholderTypes: Readonly<Record<ParamBinding, string>> = {
  null: 'Nullable(Nothing)',
  string: 'String',
  int: 'Int64',
  float: 'Float64',
  bool: 'Bool',
  timestamp: "DateTime64(6, 'UTC')",
  date: 'Date32',
};

/** The base columns of a source table; every other column is a path in `fields`. */
const BASE_COLUMNS = new Set(['id', 'timestamp', 'event_message']);

/** ClickHouse functions and operators the printer itself emits, outside the function table. */
const printerEmits: readonly string[] = [
  'and',
  'or',
  'not',
  'equals',
  'notEquals',
  'less',
  'lessOrEquals',
  'greater',
  'greaterOrEquals',
  'plus',
  'minus',
  'multiply',
  'divide',
  'modulo',
  'negate',
  'concat',
  'like',
  'notLike',
  'in',
  'notIn',
  'has',
  'isNull',
  'isNotNull',
  'isNotDistinctFrom',
  'if',
  'multiIf',
  'caseWithExpression',
  'ifNull',
  'CAST',
  '_CAST',
  'accurateCastOrNull',
  'toString',
  'toInt64',
  'toFloat64',
  'toDecimal128',
  'toBool',
  'toDate32',
  'toDateTime64',
  'parseDateTime64BestEffort',
  'parseDateTime64BestEffortOrNull',
  'formatDateTime',
  'replaceRegexpOne',
  'toMicrosecond',
  'toSecond',
  'toMinute',
  'toHour',
  'toDayOfMonth',
  'toDayOfWeek',
  'toDayOfYear',
  'toWeek',
  'toMonth',
  'toQuarter',
  'toYear',
  'intDiv',
  'bitAnd',
  'bitOr',
  'bitXor',
  'array',
  'tuple',
  'tupleElement',
  'arrayJoin',
  'arrayResize',
  'arrayElement',
  'arrayElementOrNull',
  'empty',
  'JSONAllPaths',
  'exists',
  'lambda',
  'toIntervalMicrosecond',
  'toIntervalMillisecond',
  'toIntervalSecond',
  'toIntervalMinute',
  'toIntervalHour',
  'toIntervalDay',
  'toIntervalWeek',
  'toIntervalMonth',
  'toIntervalQuarter',
  'toIntervalYear',
  'toTimeZone',
  'round',
  'replaceRegexpAll',
  'accurateCast',
  'trimBoth',
  'abs',
  'trunc',
  'sign',
  ...STRING_TO_TIMESTAMP_EMITS,
];

/** Every function a generated statement may contain (the lock-down's allow-list). */
export const emittedFunctions: ReadonlySet<string> = new Set([...printerEmits, ...tableEmits()]);

const castTypes: Readonly<Record<CastType, string>> = {
  string: 'String',
  int64: 'Int64',
  float64: 'Float64',
  numeric: 'Decimal(38, 9)',
  bool: 'Bool',
  timestamp: "DateTime64(6, 'UTC')",
  datetime: "DateTime64(6, 'UTC')",
  date: 'Date32',
  bytes: 'String',
};

/** The to<Type>() conversion: NULL stays NULL, a value that does not convert is an error. */
const conversions: Readonly<Record<CastType, (x: string) => string>> = {
  string: (x) => `toString(${x})`,
  int64: (x) => `toInt64(${x})`,
  float64: (x) => `toFloat64(${x})`,
  numeric: (x) => `toDecimal128(${x}, 9)`,
  bool: (x) => `toBool(${x})`,
  timestamp: (x) => `toDateTime64(${x}, 6, 'UTC')`,
  datetime: (x) => `toDateTime64(${x}, 6, 'UTC')`,
  date: (x) => `toDate32(${x})`,
  bytes: (x) => `toString(${x})`,
};

/**
 * Text → a number, for a value known not to be NULL: what the text does not hold (`1e3` for an
 * INT64, a value past its range) fails the query.
 */
const numberFromText: Readonly<Partial<Record<CastType, (x: string) => string>>> = {
  int64: (x) => `accurateCast(${x}, 'Int64')`,
  float64: (x) => `toFloat64(${x})`,
  numeric: (x) => `toDecimal128(${x}, 9)`,
};

/** BigQuery's date text, `YYYY-[M]M-[D]D`, between spaces, of a year Date32 holds (1900-2299). */
const DATE_TEXT = '^\\s*(?:19\\d\\d|2[0-2]\\d\\d)-\\d{1,2}-\\d{1,2}\\s*$';

/**
 * Text → DATE, strictly: BigQuery's date text naming a real date (toDate32 would clamp
 * `2026-13-45` to 1900-01-01, and reads other text as NULL or a time's date). Text of that form is
 * parsed by parseDateTime64BestEffort, which refuses a day the month does not have; other text is
 * '', which it refuses too (textOfForm: a constant still folds). SAFE_CAST gives NULL.
 */
function stringToDate(x: string, safe: boolean): string {
  if (safe) return `if(match(ifNull(${x}, ''), ${quoteString(DATE_TEXT)}), toDate32(parseDateTime64BestEffortOrNull(${x}, 6, 'UTC')), NULL)`;
  return `toDate32(parseDateTime64BestEffort(${textOfForm(x, DATE_TEXT)}, 6, 'UTC'))`;
}

/** A parameter the generator was not told about: a string or NULL, as the semantic pass types it. */
const UNTYPED_PLACEHOLDER = 'Nullable(String)';

export class ClickHousePrinter extends SqlPrinter {
  readonly capabilities: Capabilities = clickHouseCapabilities;
  protected readonly functions: FunctionTable = clickHouseFunctions;
  /** Paths read through CTEs straight from the table (pushdown.ts), planned on the outermost query. */
  #pushdown: PushdownPlan | undefined;
  readonly #pushedNames = new Map<PushedPath, string>();

  /** Where the records of `present` tests are stored; made from the outermost query. */
  #origins: RecordOrigins | undefined;

  constructor(
    private readonly database: string,
    /** What the run binds to each parameter. */
    private readonly paramTypes: ReadonlyMap<string, ParamBinding> = new Map(),
    /** Tables whose rows may lack presence markers (SourceTable.unmarkedRecords). */
    private readonly unmarked: ReadonlySet<string> = new Set(),
  ) {
    super();
  }

  override quoteIdent(name: string): string {
    if (name.includes('\u0000')) throw new QuarryError('INVALID_QUERY', 'Names may not contain NUL characters');
    return quoteIdent(name);
  }

  override stringLiteral(value: string): string {
    if (value.includes('\u0000')) throw new QuarryError('INVALID_QUERY', 'String literals may not contain NUL characters');
    return quoteString(value);
  }

  protected override numberLiteral(text: string, type: VType): string {
    return isScalar(type, 'int') && BigInt(text) > 2147483647n ? `toInt64(${text})` : text;
  }

  protected param(name: string): string {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new QuarryError('INVALID_QUERY', `Invalid parameter name @${name}`);
    const bound = this.paramTypes.get(name);
    return `{${name}:${bound === undefined ? UNTYPED_PLACEHOLDER : placeholderTypes[bound]}}`;
  }

  protected castType(to: CastType): string {
    return castTypes[to];
  }

  protected override cast(x: Printed, to: CastType, safe: boolean): string {
    if (to === 'string' && holdsRecord(x.type)) return withoutPresence(this.castValue(x, to, safe));
    return this.castValue(x, to, safe);
  }

  private castValue(x: Printed, to: CastType, safe: boolean): string {
    if (isScalar(x.type, 'string')) {
      if (to === 'timestamp' || to === 'datetime') return stringToTimestamp(x.sql, safe);
      if (to === 'date') return stringToDate(x.sql, safe);
      const number = numberFromText[to];
      if (number !== undefined) {
        // BigQuery reads the number between spaces; ClickHouse's conversions refuse them.
        if (safe) return `accurateCastOrNull(trimBoth(${x.sql}), ${quoteString(castTypes[to])})`;
        // A Nullable(String)'s conversion answers NULL for text that is not a number: the value is
        // converted apart from its NULL, so that such text fails the query (as on DuckDB).
        return `if(isNull(${x.sql}), NULL, ${number(`trimBoth(ifNull(${x.sql}, '0'))`)})`;
      }
    }
    if (to === 'string' && (isScalar(x.type, 'timestamp') || isScalar(x.type, 'datetime'))) {
      // As DuckDB prints a TIMESTAMP: seconds, then the fraction only when there is one.
      return `if(toMicrosecond(${x.sql}) = 0, formatDateTime(${x.sql}, '%Y-%m-%d %H:%i:%S'), replaceRegexpOne(toString(${x.sql}), '0+$', ''))`;
    }
    // BigQuery rounds a float to an integer half away from zero (ClickHouse's round() goes to the
    // even one), and a value past INT64 (or NaN, ±inf) fails, where toInt64() would wrap it.
    if (to === 'int64' && isScalar(x.type, 'float')) {
      const whole = `(trunc(${x.sql}) + if(abs(${x.sql} - trunc(${x.sql})) >= 0.5, sign(${x.sql}), 0))`;
      return safe ? `accurateCastOrNull(${whole}, 'Int64')` : `accurateCast(${whole}, 'Nullable(Int64)')`;
    }
    if (safe) return `accurateCastOrNull(${x.sql}, ${quoteString(castTypes[to])})`;
    // A NULL of no type yet (a NULL parameter) becomes a NULL of that type; to<Type>() would keep it untyped.
    if (x.type.k === 'unknown') return `CAST(${x.sql} AS Nullable(${castTypes[to]}))`;
    // A NUMERIC rounds half away from zero; past INT64 it fails (DECIMAL_OVERFLOW).
    if (to === 'int64' && isScalar(x.type, 'numeric')) return `toInt64(round(${x.sql}))`;
    return conversions[to](x.sql);
  }

  protected interval(n: string, unit: DatePart): string {
    const f = intervalFunction(unit);
    if (f === undefined) throw new QuarryError('INVALID_QUERY', `INTERVAL does not support ${unit.toUpperCase()}`);
    return `${f}(toInt64(${n}))`;
  }

  protected override extract(part: DatePart, x: string): string {
    switch (part) {
      case 'dayofweek':
        return `toDayOfWeek(${x}, 3)`;
      case 'dayofyear':
        return `toDayOfYear(${x})`;
      case 'week':
        return `toWeek(${x}, 0)`;
      // As the DuckDB engine counts them: within the minute.
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
      default:
        return assertNever(part);
    }
  }

  protected override binary(op: BinaryOp, l: string, r: string): string {
    switch (op) {
      case '||':
        return `concat(${l}, ${r})`;
      case '&':
        return `bitAnd(${l}, ${r})`;
      case '|':
        return `bitOr(${l}, ${r})`;
      case '^':
        return `bitXor(${l}, ${r})`;
      default:
        return super.binary(op, l, r);
    }
  }

  protected override fieldAccess(base: string, field: string): string {
    return `tupleElement(${base}, ${quoteString(field)})`;
  }

  protected index(e: Extract<RExpr, { kind: 'index' }>, base: string, index: string): string {
    const t = e.expr.type;
    const literal =
      e.index.kind === 'literal' && e.index.value.type === 'number' && /^\d+$/.test(e.index.value.value) ? Number(e.index.value.value) : undefined;
    if (t.k === 'record' || t.k === 'missing') {
      // A record is a one-element array: [OFFSET(0)] / [ORDINAL(1)] is the record itself.
      if (t.k === 'missing' || literal === (e.oneBased ? 1 : 0)) return base;
      throw new QuarryError('INVALID_QUERY', 'A record has one element: only [OFFSET(0)] / [ORDINAL(1)] reach it on the ClickHouse engine');
    }
    const array = arrayOf(base, t);
    const pos = literal !== undefined ? String(e.oneBased ? literal : literal + 1) : e.oneBased ? index : `(${index} + 1)`;
    // Records inside lists are JSON values, which cannot be NULL: out of range reads an empty one.
    if (e.type.k === 'record') return `arrayElement(${array}, ${pos})`;
    return literal !== undefined ? `arrayElementOrNull(${array}, ${pos})` : `if(${pos} >= 1, arrayElementOrNull(${array}, ${pos}), NULL)`;
  }

  protected inUnnest(x: string, array: string, negated: boolean): string {
    return `(${negated ? 'NOT ' : ''}has(${array}, ${x}))`;
  }

  protected struct(fields: readonly { name: string; sql: string }[]): string {
    return `tuple(${fields.map((f) => f.sql).join(', ')})`;
  }

  protected unnestElements(f: Extract<RFactor, { kind: 'unnestList' }>, printed: string): string {
    const array = arrayOf(printed, f.array.type);
    return `arrayJoin(${f.keepEmpty ? `if(empty(${array}), arrayResize(${array}, 1), ${array})` : array})`;
  }

  protected override tableSource(table: string): string {
    return `${this.quoteIdent(this.database)}.${this.quoteIdent(table)}`;
  }

  // -------------------------------------------------------------------------------------------
  // Queries

  override query(q: RQuery): string {
    if (this.#pushdown === undefined) {
      this.#origins = new RecordOrigins(q);
      this.#pushdown = planPushdown(q, (e) => this.markerOf(e) !== undefined && this.#origins?.carried(e) !== true);
      for (const byPath of this.#pushdown.paths.values()) for (const p of byPath.values()) this.#pushedNames.set(p, this.fresh('p'));
    }
    if (q.body.kind !== 'setop' || (q.orderBy.length === 0 && !q.limit && !q.offset)) return super.query(q);
    // ORDER BY / LIMIT after a set operation would bind to its last SELECT in ClickHouse: the set
    // operation becomes a derived table first.
    const alias = this.quoteIdent(this.fresh('s'));
    const withClause = this.withClause(q);
    const columns = q.columns.map((c) => `${alias}.${this.quoteIdent(c.name)}`).join(', ');
    return `${withClause}SELECT ${columns} FROM (${this.setExpr(q.body)}) AS ${alias}${this.queryTail(q)}`;
  }

  protected override setExpr(body: RSetExpr): string {
    if (body.kind !== 'setop') return super.setExpr(body);
    // Plain SELECTs as branches (a parenthesised first branch after WITH does not parse).
    const op = body.op.toUpperCase() + (body.all ? ' ALL' : ' DISTINCT');
    return `${this.setExpr(body.left)} ${op} ${this.setExpr(body.right)}`;
  }

  protected override select(s: RSelect): string {
    const pushed = this.#pushdown?.selects.get(s);
    const sql = super.select(s);
    if (!pushed || !sql.startsWith('SELECT ')) return sql;
    // First, so ORDER BY positions (there are none in such a CTE) and the caller's names are unchanged.
    const extra = pushed.map((p) => `${this.printColumn(p.source)} AS ${this.quoteIdent(this.#pushedNames.get(p) as string)}`);
    return `SELECT ${extra.join(', ')}, ${sql.slice('SELECT '.length)}`;
  }

  // -------------------------------------------------------------------------------------------
  // Expressions that need their operands' types

  override expr(e: RExpr): string {
    // ClickHouse reads an absent record as an empty object: text made of one is NULL, as on DuckDB.
    const records = recordsInText(e);
    if (records.length > 0) return `if(${records.map((r) => this.present(r)).join(' AND ')}, ${this.exprText(e)}, NULL)`;
    return this.exprText(e);
  }

  private exprText(e: RExpr): string {
    switch (e.kind) {
      case 'column':
        return this.printColumn(e);
      case 'field':
        return this.jsonOrTuple(this.expr(e.expr), [e.name], e.type);
      case 'isNull': {
        const x = this.expr(e.expr);
        const test = e.expr.type.k === 'record' && e.expr.kind !== 'struct' ? `empty(JSONAllPaths(${x}))` : `${x} IS NULL`;
        return `(${e.negated ? 'NOT ' : ''}${test})`;
      }
      case 'isBool':
        return `(${e.negated ? 'NOT ' : ''}ifNull(${this.expr(e.expr)} = ${e.value ? 'true' : 'false'}, false))`;
      case 'distinctFrom':
        // `<=>` is ClickHouse's NULL-safe equality (IS NOT DISTINCT FROM).
        return `(${e.negated ? '' : 'NOT '}(${this.expr(e.left)} <=> ${this.expr(e.right)}))`;
      case 'inUnnest':
        return this.inUnnest(this.expr(e.expr), arrayOf(this.expr(e.array), e.array.type), e.negated);
      case 'present':
        return this.present(e.value);
      case 'func':
        // A record's JSON text without storage's presence markers.
        return recordTextCall(e) ? withoutPresence(super.expr(e)) : super.expr(e);
      case 'binary': {
        if (e.op !== '||' || !(holdsRecord(e.left.type) || holdsRecord(e.right.type))) return super.expr(e);
        // A record's text as a cast writes it (concat's own conversion escapes `/`).
        const text = (x: RExpr) => (holdsRecord(x.type) ? `toString(${this.expr(x)})` : this.expr(x));
        return withoutPresence(`concat(${text(e.left)}, ${text(e.right)})`);
      }
      case 'struct': {
        const types = e.fields.map((f) => `${this.quoteIdent(f.name)} ${clickHouseType(f.value.type)}`);
        return `CAST(tuple(${e.fields.map((f) => this.expr(f.value)).join(', ')}) AS Tuple(${types.join(', ')}))`;
      }
      default:
        return super.expr(e);
    }
  }

  /**
   * The presence marker's path below `e`'s record (a column of a table or CTE), when the record is
   * stored in a table whose rows all carry markers; else undefined.
   */
  private markerOf(e: ColumnExpr): ColumnExpr | undefined {
    if (e.from.kind === 'element' || e.column === undefined) return undefined;
    const stored = this.#origins?.stored(e);
    if (stored?.from.kind !== 'table' || this.unmarked.has(stored.from.table)) return undefined;
    return { ...e, fields: [...e.fields, PRESENCE_KEY], type: scalar('bool') };
  }

  /**
   * The row carried the record `value`: true where every event carried it, its presence marker
   * (one narrow path), else (a table
   * written before markers, a record the query built) every path below it.
   */
  private present(value: RExpr): string {
    if (value.kind === 'column' && this.#origins?.carried(value) === true) return 'true';
    const marker = value.kind === 'column' ? this.markerOf(value) : undefined;
    if (marker !== undefined) return `(${this.printColumn(marker)} IS NOT NULL)`;
    const x = this.expr(value);
    return value.kind === 'struct' ? `(${x} IS NOT NULL)` : `(NOT empty(JSONAllPaths(${x})))`;
  }

  private printColumn(e: Extract<RExpr, { kind: 'column' }>): string {
    const from = e.from;
    if (from.kind === 'element') return this.jsonPath(this.element(from), e.fields, e.type);
    const alias = this.quoteIdent(from.alias);
    if (from.kind === 'cte' && e.fields.length > 0) {
      const pushed = this.#pushdown?.paths.get(from.cte)?.get(pathKey(e.column!, e.fields));
      if (pushed) return `${alias}.${this.quoteIdent(this.#pushedNames.get(pushed) as string)}`;
    }
    if (from.kind === 'table' && !BASE_COLUMNS.has(e.column!)) return this.jsonPath(`${alias}.${this.quoteIdent('fields')}`, [e.column!, ...e.fields], e.type);
    return this.jsonPath(`${alias}.${this.quoteIdent(e.column!)}`, e.fields, e.type);
  }

  /** The value at a path below a JSON (or named tuple) column, read as `type`. */
  private jsonPath(base: string, path: readonly string[], type: VType): string {
    if (path.length === 0) return base;
    const p = path.map((x) => this.quoteIdent(x)).join('.');
    switch (type.k) {
      case 'record':
        return `${base}.^${p}`;
      case 'scalar':
        return `CAST(${base}.${p} AS ${clickHouseType(type)})`;
      default:
        return `${base}.${p}`;
    }
  }

  /** A field of a record-valued expression that is not a column path. */
  private jsonOrTuple(base: string, path: readonly string[], type: VType): string {
    const sql = path.reduce((acc, f) => this.fieldAccess(acc, f), base);
    return type.k === 'scalar' ? `CAST(${sql} AS ${clickHouseType(type)})` : sql;
  }
}
