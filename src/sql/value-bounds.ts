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
import type { Expr, FuncCall, Query } from './ast.ts';
import { freezeTree } from './ast.ts';
import { formatPadding } from './format.ts';
import { type BuildRule, type FunctionName, functionDef, functionNames } from './functions.ts';
import type { FunctionTable, Printed, Translation } from './generator.ts';
import type { RFunc } from './resolved.ts';

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
 * The query with every value-building call checked (constant sizes) or marked with the limit
 * (sizes known only when it runs). Unchanged parts keep their identity.
 */
export function boundValues(query: Query, maxValueBytes: number): Query {
  const out = visit(query, maxValueBytes) as Query;
  return out === query ? query : freezeTree(out);
}

// The AST is plain data (ast.ts), so one structural walk reaches every call at any depth.
function visit(node: unknown, limit: number): unknown {
  if (typeof node !== 'object' || node === null) return node;
  if (Array.isArray(node)) {
    const items = node.map((n) => visit(n, limit));
    return items.some((n, i) => n !== node[i]) ? items : node;
  }
  let changed = false;
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    const next = visit(value, limit);
    if (next !== value) changed = true;
    copy[key] = next;
  }
  const result = (changed ? copy : node) as { kind?: unknown };
  if (result.kind !== 'func') return result;
  const call = result as FuncCall;
  const rule = functionDef(call.name)?.builds;
  return rule ? boundCall(call, rule, limit) : call;
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
      return args;
    default:
      return assertRule(rule);
  }
}

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
