/**
 * Value-size bounds (bounds.ts): no call of a function that builds a value (the registry's
 * `builds` rule: REPEAT, LPAD/RPAD, FORMAT) may make one larger than QUERY_MAX_VALUE_BYTES.
 * Engines build such strings outside their memory accounting and in one call no interrupt stops,
 * so the size is checked before the value exists:
 *
 * - where the arguments that size it are constants, here, before any engine sees the query
 *   (`boundValues`: INVALID_QUERY naming the function and the limit);
 * - where they are not, the call is marked with the limit (`FuncCall.maxBytes`) and each engine's
 *   function table, wrapped once by `withValueGuards`, prints a guard that raises before the
 *   function runs.
 */
import { QuarryError } from '../errors.ts';
import type { Expr, From, FuncCall, Query, Select } from './ast.ts';
import { AstTransformer, mapSame, withChanges } from './ast-transform.ts';
import { freezeTree } from './ast.ts';
import { formatPadding } from './format.ts';
import { type BuildRule, type FunctionName, functionDef, functionNames } from './functions.ts';
import type { FunctionTable, Printed, Translation } from './generator.ts';
import type { RFunc } from './resolved.ts';
import { readsColumns } from './walk.ts';

/**
 * The error for a value past the limit; the engines' guards raise the same text (no parenthesised
 * upper-case word: the ClickHouse error mapping reads those as ClickHouse's error type).
 */
export function valueTooLarge(name: string, limit: number): string {
  return `${name.toUpperCase()} would build a value larger than ${limit} bytes, the limit QUERY_MAX_VALUE_BYTES sets`;
}

function refuse(call: FuncCall, limit: number, reached: number): QuarryError {
  return new QuarryError('INVALID_QUERY', `${valueTooLarge(call.name, limit)}: it asks for ${reached}`);
}

/** A whole-number constant (`5`, `-5`, `CAST(5 AS INT64)`), else undefined. */
function constantNumber(e: Expr | undefined): number | undefined {
  if (e === undefined) return undefined;
  if (e.kind === 'literal' && e.type === 'number') {
    const n = Number(e.value);
    return Number.isFinite(n) ? n : undefined;
  }
  if (e.kind === 'unary' && e.op === '-') {
    const n = constantNumber(e.expr);
    return n === undefined ? undefined : -n;
  }
  if (e.kind === 'cast') return constantNumber(e.expr);
  return undefined;
}

function constantText(e: Expr | undefined): string | undefined {
  return e?.kind === 'literal' && e.type === 'string' ? e.value : undefined;
}

/** Checks a call whose size is known now; marks one whose size is known only when it runs. */
function boundCall(call: FuncCall, rule: BuildRule, limit: number): FuncCall {
  switch (rule.kind) {
    case 'repeat': {
      const count = constantNumber(call.args[rule.count]);
      const text = constantText(call.args[rule.text]);
      if (count !== undefined && text !== undefined) {
        const size = Buffer.byteLength(text) * Math.max(0, count);
        if (size > limit) throw refuse(call, limit, size);
        return call;
      }
      // Each repetition is at least a byte, unless the text is empty.
      if (count !== undefined && count > limit) throw refuse(call, limit, count);
      return { ...call, maxBytes: limit };
    }
    case 'length': {
      const length = constantNumber(call.args[rule.length]);
      if (length === undefined) return { ...call, maxBytes: limit };
      if (length > limit) throw refuse(call, limit, length);
      return call;
    }
    case 'elements': {
      // Each engine's generator guards the element count when it runs (`elementLimit`).
      const marked = { ...call, maxBytes: limit };
      const bytes = constantElements(call);
      const max = elementLimit(marked);
      if (bytes !== undefined && bytes / ELEMENT_BYTES > max) throw new QuarryError('INVALID_QUERY', `the array would have more than ${max} elements`);
      return marked;
    }
    case 'format': {
      // The format string is always a constant (format.ts refuses any other).
      const format = constantText(call.args[0]);
      const padding = format === undefined ? 0 : formatPadding(format);
      if (padding > limit) throw refuse(call, limit, padding);
      return call;
    }
    default:
      return assertRule(rule);
  }
}

function assertRule(rule: never): never {
  throw new QuarryError('INTERNAL', `unknown build rule ${JSON.stringify(rule)}`);
}

/**
 * The largest value one call may build: `oneRow` where the expression is computed once (a SELECT
 * without FROM, the first item of a FROM), `perRow` where it is computed for every row. An engine
 * computes a column for a batch of rows at a time (DuckDB: 2,048), so what one value may take is
 * multiplied by the batch before any interrupt is looked at.
 */
export interface ValueLimits {
  readonly oneRow: number;
  readonly perRow: number;
}

/**
 * The limits for a QUERY_MAX_VALUE_BYTES: per row a 256th of it (4 KiB of the default 1 MiB), so
 * one call over a batch of 2,048 rows builds at most 8 MiB.
 */
export function valueLimits(maxValueBytes: number): ValueLimits {
  return { oneRow: maxValueBytes, perRow: Math.max(1, Math.floor(maxValueBytes / PER_ROW_SHARE)) };
}

/** QUERY_MAX_VALUE_BYTES / PER_ROW_SHARE is the limit for a value computed on every row. */
export const PER_ROW_SHARE = 256;

/**
 * The query with every value-building call checked (constant sizes) or marked with the limit
 * (sizes known only when it runs). Unchanged parts keep their identity.
 */
export function boundValues(query: Query, limits: ValueLimits): Query {
  const out = new Bounder(limits).at(limits.oneRow).query(query);
  return out === query ? query : freezeTree(out);
}

/**
 * The AST's transform (ast-transform.ts) that bounds every call; only a SELECT with a FROM changes
 * the limit: its first FROM item is computed once (as its enclosing query is), everything else
 * once per row.
 */
class Bounder {
  readonly #byLimit = new Map<number, AstTransformer>();

  constructor(private readonly limits: ValueLimits) {}

  /** The transformer for expressions computed under `limit`. */
  at(limit: number): AstTransformer {
    let t = this.#byLimit.get(limit);
    if (t === undefined) {
      t = new AstTransformer({
        expr: (e, recurse) => {
          const out = recurse(e);
          const rule = out.kind === 'func' ? functionDef(out.name)?.builds : undefined;
          return rule ? boundCall(out as FuncCall, rule, limit) : out;
        },
        select: (s, recurse) => (s.from ? this.select(s, s.from, limit) : recurse(s)),
      });
      this.#byLimit.set(limit, t);
    }
    return t;
  }

  private select(s: Select, from: From, limit: number): Select {
    const once = this.at(limit);
    const perRow = this.at(this.limits.perRow);
    // A parenthesised join holds items joined for every row: all of it is held to the per-row limit.
    const first = (from.first.kind === 'nested' ? perRow : once).factor(from.first);
    // An UNNEST that reads no column is computed once, wherever it is joined.
    const joins = mapSame(from.joins, (j) => (j.table.kind === 'unnest' && !readsColumns(j.table.expr) ? once : perRow).join(j));
    return withChanges(s, {
      from: withChanges(from, { first, joins }),
      columns: mapSame(s.columns, (c) => perRow.selectItem(c)),
      where: s.where && perRow.condition(s.where),
      groupBy: mapSame(s.groupBy, (g) => perRow.expr(g)),
      having: s.having && perRow.condition(s.having),
      qualify: s.qualify && perRow.condition(s.qualify),
    });
  }
}

/** How an engine spells the guard of a marked call. */
export interface GuardSpelling {
  /** A string's (or bytes') length in bytes, as a floating-point number (no overflow when multiplied). */
  byteLength(x: Printed): string;
  /** `value`, unless `tooLarge` (a boolean; NULL counts as false) holds: then an error with `message`. */
  guard(value: string, tooLarge: string, message: string): string;
  /** The engine's functions and operators the guard emits (added to each guarded entry's `emits`). */
  readonly emits: readonly string[];
}

/** The argument that sizes the value, guarded, in place of the printed one. */
function guardedArgs(call: RFunc, args: readonly Printed[], rule: BuildRule, spelling: GuardSpelling): readonly Printed[] {
  const limit = call.maxBytes;
  if (limit === undefined) return args;
  const message = valueTooLarge(call.name, limit);
  const replace = (i: number, sql: string) => args.map((a, j) => (j === i ? { ...a, sql } : a));
  switch (rule.kind) {
    case 'repeat': {
      const count = args[rule.count];
      const text = args[rule.text];
      if (!count || !text) return args;
      return replace(rule.count, spelling.guard(count.sql, `${spelling.byteLength(text)} * ${count.sql} > ${limit}`, message));
    }
    case 'length': {
      const length = args[rule.length];
      return length ? replace(rule.length, spelling.guard(length.sql, `${length.sql} > ${limit}`, message)) : args;
    }
    case 'format':
    case 'elements':
      return args;
    default:
      return assertRule(rule);
  }
}

/**
 * The most bytes a value-building call of a bounded query makes: its marked limit, or the size
 * its constant arguments give; undefined for any other call.
 */
export function builtBytes(call: FuncCall): number | undefined {
  const rule = functionDef(call.name)?.builds;
  if (rule?.kind === 'elements') return constantElements(call) ?? call.maxBytes ?? MAX_GENERATED_ELEMENTS * ELEMENT_BYTES;
  if (call.maxBytes !== undefined) return call.maxBytes;
  if (!rule) return undefined;
  switch (rule.kind) {
    case 'repeat':
      return Buffer.byteLength(constantText(call.args[rule.text]) ?? '') * Math.max(0, constantNumber(call.args[rule.count]) ?? 0);
    case 'length':
      return Math.max(0, constantNumber(call.args[rule.length]) ?? 0);
    case 'format':
      return formatPadding(constantText(call.args[0]) ?? '');
    default:
      return assertRule(rule);
  }
}

/** GENERATE_ARRAY(start, end[, step]) with constant numbers: its elements' bytes. */
function constantElements(call: FuncCall): number | undefined {
  if (call.name.toLowerCase() !== 'generate_array') return undefined;
  const [start, end, step = 1] = [constantNumber(call.args[0]), constantNumber(call.args[1]), call.args[2] ? constantNumber(call.args[2]) : 1];
  if (start === undefined || end === undefined || step === undefined || step === 0) return undefined;
  return Math.max(0, Math.floor((end - start) / step) + 1) * ELEMENT_BYTES;
}

/** The most elements GENERATE_ARRAY and its kin may make: 100,000, and 8 bytes each within a marked call's limit. */
export function elementLimit(call: { readonly maxBytes: number | undefined }): number {
  return call.maxBytes === undefined ? MAX_GENERATED_ELEMENTS : Math.max(1, Math.min(MAX_GENERATED_ELEMENTS, Math.floor(call.maxBytes / ELEMENT_BYTES)));
}

export const MAX_GENERATED_ELEMENTS = 100_000;
/** What one generated element is counted as (a 64-bit number or timestamp). */
export const ELEMENT_BYTES = 8;

/** An engine's function table with the size guard printed around every marked call's sizing argument. */
export function withValueGuards(table: FunctionTable, spelling: GuardSpelling): FunctionTable {
  const entries = functionNames.map((name): [FunctionName, Translation] => {
    const t = table[name];
    const rule = functionDef(name)?.builds;
    if (!rule || !('print' in t)) return [name, t];
    return [name, { emits: [...t.emits, ...spelling.emits], print: (call, args, ctx) => t.print(call, guardedArgs(call, args, rule, spelling), ctx) }];
  });
  return Object.fromEntries(entries) as Record<FunctionName, Translation>;
}
