/**
 * The DuckDB dialect: what DuckDB writes differently from the base generator (src/sql/generator.ts).
 *
 * - `@name` → `$name`, bound by the runner as VARCHAR (NULL when absent); never spliced.
 * - Casts use DuckDB's type names; a STRING read as a TIMESTAMP goes through TIMESTAMPTZ so an
 *   offset or `Z` in the text is honoured.
 * - Intervals are `to_hours(n)` and the like (n may be a parameter).
 * - Lists are 1-based (`x[i + 1]` for OFFSET); a record indexed by a non-constant is a CASE.
 * - UNNEST of a list is a select-list `unnest()` in a derived table wrapping the left side
 *   (`LEFT JOIN UNNEST ... ON TRUE` unnests `[NULL]` for an empty list so the row stays). DuckDB's
 *   lateral join form is never emitted: it is two orders of magnitude slower on this workload.
 * - Late materialisation by `rowid` for top-n queries of up to 10,000 rows (DuckDB does it itself
 *   only up to 50).
 * - Functions are spelt per generator-functions.ts.
 */
import { duckDbCapabilities } from './definition.ts';
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
import type { RExpr, RFactor, RQuery } from '../../sql/resolved.ts';
import { columnStorage, freeze } from '../../sql/resolved.ts';
import { emptyFields, setOwn } from '../../storage/fields.ts';
import { PRESENCE_KEY } from '../../storage/presence.ts';
import { RecordOrigins, recordTextCall } from '../record-presence.ts';
import { OVERFLOW_COLUMN, withoutPresenceText } from './types.ts';
import { assertNever, holdsRecord, isScalar, type VType } from '../../sql/types.ts';
import { asText, duckDbFunctions, duckPart, RECORD_JSON_EMITS, stringToTimestamp } from './generator-functions.ts';

export type { GeneratedQuery, GenerateOptions } from '../../sql/generator.ts';

export function generateDuckDb(query: Query, options: GenerateOptions & { materialiseCtes?: boolean }): GeneratedQuery {
  return generateSql(query, options, new DuckDbPrinter(options.materialiseCtes === true));
}

/** DuckDB functions and operators the printer itself emits, outside the function table. */
export const printerEmits: readonly string[] = [
  'to_microseconds',
  'to_milliseconds',
  'to_seconds',
  'to_minutes',
  'to_hours',
  'to_days',
  'to_weeks',
  'to_months',
  'to_years',
  'len',
  'list_contains',
  'list_value',
  'struct_pack',
  'unnest',
  'dayofweek',
  'dayofyear',
  'date_part',
  'extract',
  'floor',
  'xor',
  'array_extract',
  'list_extract',
  'struct_extract',
  'json_extract',
  'json_transform',
  // Records' JSON text without storage's presence markers (withoutPresenceText).
  'regexp_replace',
  '+',
  '-',
  '*',
  '/',
  '%',
  '||',
  '&',
  '|',
  '~~',
  '!~~',
  // A record cast to STRING or joined with `||` (recordJson).
  ...RECORD_JSON_EMITS,
  // Casts: a DATE's text checked first (DATE_TEXT), a float rounded half away from zero.
  'regexp_extract',
  'round',
];

const castTypes: Readonly<Record<CastType, string>> = {
  string: 'VARCHAR',
  int64: 'BIGINT',
  float64: 'DOUBLE',
  numeric: 'DECIMAL(38, 9)',
  bool: 'BOOLEAN',
  timestamp: 'TIMESTAMP',
  datetime: 'TIMESTAMP',
  date: 'DATE',
  bytes: 'BLOB',
};

/** BigQuery's date text, `YYYY-[M]M-[D]D`, between spaces (RE2); DuckDB's cast then checks the day. */
const DATE_TEXT = '^\\s*[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}\\s*$';

export class DuckDbPrinter extends SqlPrinter {
  readonly capabilities: Capabilities = duckDbCapabilities;
  protected readonly functions: FunctionTable = duckDbFunctions;
  /** Where the records of `present` tests are stored; made from the outermost query. */
  #origins: RecordOrigins | undefined;

  /**
   * With `materialiseCtes`, every CTE is `AS MATERIALIZED`: computed whole (the saved query's
   * project and time filters applied) before anything that reads it runs. The runner's fence for
   * a caller expression that raised (runner.ts).
   */
  constructor(private readonly materialiseCtes = false) {
    super();
  }

  override query(q: RQuery): string {
    this.#origins ??= new RecordOrigins(q);
    return super.query(q);
  }

  protected override withClause(q: RQuery): string {
    if (!this.materialiseCtes) return super.withClause(q);
    const ctes = q.with.map((c) => `${this.quoteIdent(c.name)} AS MATERIALIZED (${this.query(c.query)})`);
    return ctes.length > 0 ? `WITH ${ctes.join(', ')} ` : '';
  }

  protected param(name: string): string {
    return `$${name}`;
  }

  protected castType(to: CastType): string {
    return castTypes[to];
  }

  protected override cast(x: Printed, to: CastType, safe: boolean): string {
    const c = safe ? 'TRY_CAST' : 'CAST';
    if (isScalar(x.type, 'string')) {
      if (to === 'timestamp') return stringToTimestamp(x.sql, safe);
      // DuckDB reads more as a DATE than BigQuery does (`2026-01-05 10:00:00`, `2026-01-05 garbage`):
      // the text is BigQuery's date text or '' (no match), which the cast refuses (SAFE_CAST: NULL).
      // One call, so `x` is computed once. (Not done for INT64, where DuckDB also reads `1e3` and
      // `1.5`: the check made Studio's per-row casts of JSON numbers 1.5 to 2 times slower.)
      if (to === 'date') return `${c}(regexp_extract(${x.sql}, ${this.stringLiteral(DATE_TEXT)}) AS DATE)`;
    }
    // BigQuery rounds a float to an integer half away from zero; DuckDB's cast goes to the even one.
    if (to === 'int64' && isScalar(x.type, 'float')) return `${c}(round(${x.sql}) AS BIGINT)`;
    // A record as text is its JSON without NULL members (recordJson), never DuckDB's STRUCT text.
    if (to === 'string' && holdsRecord(x.type)) return this.recordText(x);
    return `${c}(${x.sql} AS ${castTypes[to]})`;
  }

  protected override numberLiteral(text: string, type: VType): string {
    // DuckDB reads an integer literal beyond INTEGER as HUGEINT; BigQuery's is INT64.
    return isScalar(type, 'int') && BigInt(text) > 2147483647n ? `CAST(${text} AS BIGINT)` : text;
  }

  protected interval(n: string, unit: DatePart): string {
    switch (unit) {
      case 'microsecond':
        return `to_microseconds(CAST(${n} AS BIGINT))`;
      case 'millisecond':
        return `to_milliseconds(CAST(${n} AS BIGINT))`;
      case 'second':
        return `to_seconds(CAST(${n} AS BIGINT))`;
      case 'minute':
        return `to_minutes(CAST(${n} AS BIGINT))`;
      case 'hour':
        return `to_hours(CAST(${n} AS BIGINT))`;
      case 'day':
        return `to_days(CAST(${n} AS INTEGER))`;
      case 'week':
        return `to_weeks(CAST(${n} AS INTEGER))`;
      case 'month':
        return `to_months(CAST(${n} AS INTEGER))`;
      case 'quarter':
        return `to_months(CAST(${n} AS INTEGER) * 3)`;
      case 'year':
        return `to_years(CAST(${n} AS INTEGER))`;
      case 'dayofweek':
      case 'dayofyear':
        // The semantic pass refuses these units.
        throw new QuarryError('INVALID_QUERY', `INTERVAL does not support ${unit.toUpperCase()}`);
      default:
        return assertNever(unit);
    }
  }

  protected override datePart(part: DatePart): string {
    return duckPart(part);
  }

  protected override extract(part: DatePart, x: string): string {
    if (part === 'dayofweek') return `(dayofweek(${x}) + 1)`;
    if (part === 'week') return `CAST(floor((dayofyear(${x}) + 6 - dayofweek(${x})) / 7) AS BIGINT)`;
    return `extract(${duckPart(part)} FROM ${x})`;
  }

  override expr(e: RExpr): string {
    // `record || text` would be DuckDB's STRUCT text, NULL members and all: JSON as a cast gives.
    if (e.kind === 'binary' && e.op === '||' && (holdsRecord(e.left.type) || holdsRecord(e.right.type))) {
      return `(${this.recordText(this.printed(e.left))} || ${this.recordText(this.printed(e.right))})`;
    }
    if (e.kind === 'present') return this.present(e.value);
    if (recordTextCall(e)) return withoutPresenceText(super.expr(e));
    return super.expr(e);
  }

  /** A value as text (asText), records without their presence markers. */
  private recordText(x: Printed): string {
    const text = asText(x, (p) => this.quoteIdent(this.fresh(p)));
    return holdsRecord(x.type) ? withoutPresenceText(text) : text;
  }

  /**
   * The row carried the record `value`: true where every event carried it, its presence marker
   * where the record is a stored one (a narrow BOOLEAN column), else the record itself tested,
   * which reads every field.
   */
  private present(value: RExpr): string {
    if (value.kind === 'column' && this.#origins?.carried(value) === true) return 'TRUE';
    const stored = value.kind === 'column' ? this.#origins?.stored(value) : undefined;
    if (value.kind !== 'column' || stored === undefined) return `(${this.expr(value)} IS NOT NULL)`;
    const storage = columnStorage(stored);
    // A record partly in the overflow is built by the query when passed on; its typed part has the marker.
    if (storage === 'overflow' || (storage === 'mixed' && stored !== value)) return `(${this.expr(value)} IS NOT NULL)`;
    let sql = this.typedColumn(value);
    for (const f of value.fields) sql = this.fieldAccess(sql, f, true);
    return `(${this.fieldAccess(sql, PRESENCE_KEY, true)} IS NOT NULL)`;
  }

  protected override binary(op: BinaryOp, l: string, r: string): string {
    return op === '^' ? `xor(${l}, ${r})` : super.binary(op, l, r);
  }

  protected index(e: Extract<RExpr, { kind: 'index' }>, base: string, index: string): string {
    const t = e.expr.type;
    if (t.k === 'record' || t.k === 'missing') return `CASE WHEN ${index} = ${e.oneBased ? 1 : 0} THEN ${base} END`;
    const wrapped = e.expr.kind === 'column' || e.expr.kind === 'param' ? base : `(${base})`;
    const i = e.index;
    if (i.kind === 'literal' && i.value.type === 'number' && /^\d+$/.test(i.value.value)) {
      const n = Number(i.value.value);
      return `${wrapped}[${e.oneBased ? n : n + 1}]`;
    }
    const pos = e.oneBased ? index : `(${index} + 1)`;
    return `CASE WHEN ${pos} >= 1 THEN ${wrapped}[${pos}] END`;
  }

  protected inUnnest(x: string, array: string, negated: boolean): string {
    const sql = `list_contains(${array}, ${x})`;
    return negated ? `(NOT ${sql})` : sql;
  }

  protected struct(fields: readonly { name: string; sql: string }[]): string {
    return `struct_pack(${fields.map((f) => `${this.quoteIdent(f.name)} := ${f.sql}`).join(', ')})`;
  }

  protected override rowid(alias: string): string {
    return `${alias}."rowid"`;
  }

  /**
   * A field kept in the catch-all column (src/storage/overflow.ts), read from its JSON and cast
   * to the catalogued type with `json_transform` (a `string` field reads other JSON values as
   * their text, as the conflict rule stores them). A record partly typed and partly there is put
   * together field by field, NULL where neither part holds anything.
   */
  protected override overflowColumn(e: Extract<RExpr, { kind: 'column' }>, storage: 'overflow' | 'mixed'): string {
    const path = [e.column!, ...e.fields];
    const json = `json_extract(${this.quoteIdent(e.from.alias)}.${this.quoteIdent(OVERFLOW_COLUMN)}, ${this.stringLiteral(jsonPath(path))})`;
    if (storage === 'overflow') return `json_transform(${json}, ${this.stringLiteral(JSON.stringify(jsonStructureOf(e.type)))})`;
    if (e.type.k !== 'record') throw new QuarryError('INTERNAL', 'only a record is stored partly in the overflow');
    let typed = this.typedColumn(e);
    for (const f of e.fields) typed = this.fieldAccess(typed, f, true);
    const parts = Object.entries(e.type.fields).map(([name, type]) => ({
      name,
      sql: this.expr(freeze({ ...e, fields: freeze([...e.fields, name]), type })),
    }));
    return `CASE WHEN ${typed} IS NULL AND ${json} IS NULL THEN NULL ELSE ${this.struct(parts)} END`;
  }

  protected unnestElements(f: Extract<RFactor, { kind: 'unnestList' }>, array: string): string {
    return `unnest(${f.keepEmpty ? `CASE WHEN len(${array}) > 0 THEN ${array} ELSE [NULL] END` : array})`;
  }
}

/** A JSON path naming each key exactly (keys are sanitised names, but quoted all the same). */
function jsonPath(path: readonly string[]): string {
  return `$${path.map((p) => `."${p.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`).join('')}`;
}

/** `json_transform`'s structure argument for a value of type `t`. */
function jsonStructureOf(t: VType): unknown {
  switch (t.k) {
    case 'scalar':
      switch (t.t) {
        case 'int':
          return 'BIGINT';
        case 'float':
          return 'DOUBLE';
        case 'bool':
          return 'BOOLEAN';
        case 'timestamp':
          return 'TIMESTAMP';
        default:
          return 'VARCHAR';
      }
    case 'record': {
      const out = emptyFields<unknown>();
      for (const [name, f] of Object.entries(t.fields)) setOwn(out, name, jsonStructureOf(f));
      return out;
    }
    case 'list':
      return [jsonStructureOf(t.element)];
    case 'missing':
    case 'unknown':
      return 'JSON';
    default:
      return assertNever(t);
  }
}
