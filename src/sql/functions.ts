/**
 * The function registry: every BigQuery function a query may call, once, with its signature.
 * Everything else about functions is derived from it: the allow-list (validate.ts), argument
 * checks and return types (resolve.ts), each engine's translation table (a
 * `Record<FunctionName, …>`, so a function an engine does not translate fails to compile there)
 * and, through that table, the DuckDB lock-down's list of functions a generated statement may
 * contain. A name not listed here is `Restricted function <name>` (QUERY_NOT_ALLOWED).
 */
import { QuarryError } from '../errors.ts';
import { listOf, scalar, unknownType, type VType } from './types.ts';

export type FunctionKind = 'scalar' | 'aggregate' | 'window';

/**
 * What an argument must be. `timestamp` also accepts a STRING or DATE, converted implicitly as
 * BigQuery does (`timestamp_trunc('2026-01-01 10:00:00', hour)`); `datepart` is a bare date part
 * word (`minute`); `interval` an `INTERVAL n unit` expression; `any` anything.
 */
export type ArgKind = 'any' | 'timestamp' | 'datepart' | 'interval';

/** The result type: fixed, or computed from the argument types. */
export type ReturnRule = VType | ((args: readonly VType[]) => VType);

export interface FunctionDef {
  readonly kind: FunctionKind;
  readonly min: number;
  readonly max: number;
  /** Argument kinds by position; positions past the end are `any`. */
  readonly args: readonly ArgKind[];
  readonly returns: ReturnRule;
  /** Gives a different value on each call (never folded, never moved across rows). */
  readonly volatile: boolean;
  /** BigQuery's family, for docs/SQL.md's table. */
  readonly family: Family;
  /** How large a value the function builds: bounded by QUERY_MAX_VALUE_BYTES (value-bounds.ts). */
  readonly builds?: BuildRule;
  /** How much larger than its arguments its value may be (value-growth.ts); `growth()` gives the default. */
  readonly grows?: GrowRule;
}

/**
 * How large a function's value may be, next to its arguments' (value-growth.ts):
 * - `sum`: at most its arguments together (CONCAT; the default for strings, arrays and aggregates);
 * - `scale`: at most `factor` times its arguments together (UPPER: 3, a case change can triple a
 *   character's bytes; TO_BASE64: 2; TO_JSON_STRING: 6, the longest escape);
 * - `fixed`: a small value whatever its arguments (numbers, times, booleans, digests);
 * - `either`: one of its arguments (COALESCE, IF);
 * - `replace`: the text with each match of the pattern replaced (REPLACE, REGEXP_REPLACE);
 * - `join`: an array's elements with the separator between them (ARRAY_TO_STRING);
 * - `rows`: an aggregate that collects every row's value (STRING_AGG, ARRAY_AGG), which the
 *   engines count against their memory while they build it.
 */
export type GrowRule =
  | { readonly kind: 'sum' }
  | { readonly kind: 'scale'; readonly factor: number }
  | { readonly kind: 'fixed' }
  | { readonly kind: 'either'; readonly from: number }
  | { readonly kind: 'replace'; readonly regexp: boolean }
  | { readonly kind: 'join' }
  | { readonly kind: 'rows' };

/**
 * What sizes the value a function builds, by argument position: `repeat` is the text's bytes times
 * the count; `length` is a length argument (LPAD/RPAD: characters); `format` the widths and
 * precisions of FORMAT's constant format string.
 */
export type BuildRule =
  | { readonly kind: 'repeat'; readonly text: number; readonly count: number }
  | { readonly kind: 'length'; readonly length: number }
  | { readonly kind: 'format' }
  /** GENERATE_ARRAY and its kin: elements of ELEMENT_BYTES each (value-bounds.ts). */
  | { readonly kind: 'elements' };

export type Family = 'string' | 'conditional' | 'math' | 'array' | 'date/time' | 'json' | 'net' | 'aggregate' | 'window' | 'struct';

const T = {
  string: scalar('string'),
  int: scalar('int'),
  float: scalar('float'),
  bool: scalar('bool'),
  timestamp: scalar('timestamp'),
  datetime: scalar('datetime'),
  date: scalar('date'),
  bytes: scalar('bytes'),
} as const;

const first = (args: readonly VType[]): VType => args[0] ?? unknownType;
/** The first argument whose type is known (COALESCE(NULL, x) is x's type). */
const firstKnown = (args: readonly VType[]): VType => args.find((a) => a.k !== 'unknown' && a.k !== 'missing') ?? first(args);
const intIfInt = (args: readonly VType[]): VType => (args.every((a) => a.k === 'scalar' && a.t === 'int') ? T.int : T.float);
const listOfFirst = (args: readonly VType[]): VType => listOf(first(args));
const elementOfFirst = (args: readonly VType[]): VType => {
  const a = first(args);
  return a.k === 'list' ? a.element : unknownType;
};
const intIfIntList = (args: readonly VType[]): VType => listOf(intIfInt(args));

interface Options {
  args?: readonly ArgKind[];
  volatile?: boolean;
  builds?: BuildRule;
  grows?: GrowRule;
}

function def(kind: FunctionKind, family: Family, min: number, max: number, returns: ReturnRule, o: Options = {}): FunctionDef {
  const base = { kind, family, min, max, returns, args: Object.freeze([...(o.args ?? [])]), volatile: o.volatile ?? false };
  return Object.freeze({ ...base, ...(o.builds ? { builds: Object.freeze(o.builds) } : {}), ...(o.grows ? { grows: Object.freeze(o.grows) } : {}) });
}
const str = (min: number, max: number, returns: ReturnRule, o?: Options) => def('scalar', 'string', min, max, returns, o);
const cond = (min: number, max: number, returns: ReturnRule, from = 0) => def('scalar', 'conditional', min, max, returns, { grows: { kind: 'either', from } });
const scale = (factor: number): Options => ({ grows: { kind: 'scale', factor } });
const fixed: Options = { grows: { kind: 'fixed' } };
const math = (min: number, max: number, returns: ReturnRule) => def('scalar', 'math', min, max, returns);
const time = (min: number, max: number, returns: ReturnRule, o?: Options) => def('scalar', 'date/time', min, max, returns, o);
const agg = (min: number, max: number, returns: ReturnRule) => def('aggregate', 'aggregate', min, max, returns);
const win = (min: number, max: number, returns: ReturnRule) => def('window', 'window', min, max, returns);

const ts: ArgKind = 'timestamp';
const part: ArgKind = 'datepart';
const interval: ArgKind = 'interval';

export const functions = {
  // strings and regular expressions
  regexp_contains: str(2, 2, T.bool),
  regexp_extract: str(2, 2, T.string),
  regexp_replace: str(3, 3, T.string, { grows: { kind: 'replace', regexp: true } }),
  starts_with: str(2, 2, T.bool),
  ends_with: str(2, 2, T.bool),
  lower: str(1, 1, T.string, scale(3)),
  upper: str(1, 1, T.string, scale(3)),
  concat: str(1, 64, T.string),
  length: str(1, 1, T.int),
  strpos: str(2, 2, T.int),
  substr: str(2, 3, T.string),
  substring: str(2, 3, T.string),
  split: str(1, 2, listOf(T.string), scale(17)),
  trim: str(1, 2, T.string),
  ltrim: str(1, 2, T.string),
  rtrim: str(1, 2, T.string),
  replace: str(3, 3, T.string, { grows: { kind: 'replace', regexp: false } }),
  char_length: str(1, 1, T.int),
  character_length: str(1, 1, T.int),
  byte_length: str(1, 1, T.int),
  octet_length: str(1, 1, T.int),
  ascii: str(1, 1, T.int),
  unicode: str(1, 1, T.int),
  chr: str(1, 1, T.string),
  left: str(2, 2, T.string),
  right: str(2, 2, T.string),
  lpad: str(2, 3, T.string, { builds: { kind: 'length', length: 1 } }),
  rpad: str(2, 3, T.string, { builds: { kind: 'length', length: 1 } }),
  repeat: str(2, 2, T.string, { builds: { kind: 'repeat', text: 0, count: 1 } }),
  reverse: str(1, 1, T.string),
  translate: str(3, 3, T.string, scale(4)),
  regexp_extract_all: str(2, 2, listOf(T.string), scale(17)),
  regexp_substr: str(2, 2, T.string),
  to_base64: str(1, 1, T.string, scale(2)),
  from_base64: str(1, 1, T.bytes),
  to_hex: str(1, 1, T.string, scale(2)),
  from_hex: str(1, 1, T.bytes),
  md5: str(1, 1, T.bytes, fixed),
  sha1: str(1, 1, T.bytes, fixed),
  sha256: str(1, 1, T.bytes, fixed),
  initcap: str(1, 2, T.string, scale(3)),
  format: str(1, 64, T.string, { builds: { kind: 'format' } }),
  // net
  'net.host': def('scalar', 'net', 1, 1, T.string),
  // JSON (text in, text out: there is no JSON type)
  json_value: def('scalar', 'json', 1, 2, T.string),
  json_extract_scalar: def('scalar', 'json', 1, 2, T.string),
  json_query: def('scalar', 'json', 1, 2, T.string),
  json_extract: def('scalar', 'json', 1, 2, T.string),
  to_json_string: def('scalar', 'json', 1, 1, T.string, scale(6)),
  // null handling and conditionals
  ifnull: cond(2, 2, firstKnown),
  coalesce: cond(1, 64, firstKnown),
  nullif: cond(2, 2, first),
  if: cond(3, 3, (args) => firstKnown(args.slice(1)), 1),
  greatest: cond(1, 64, firstKnown),
  least: cond(1, 64, firstKnown),
  zeroifnull: cond(1, 1, first),
  nullifzero: cond(1, 1, first),
  // numbers
  abs: math(1, 1, first),
  round: math(1, 2, T.float),
  ceil: math(1, 1, T.float),
  floor: math(1, 1, T.float),
  mod: math(2, 2, T.int),
  div: math(2, 2, T.int),
  sqrt: math(1, 1, T.float),
  pow: math(2, 2, T.float),
  power: math(2, 2, T.float),
  safe_divide: math(2, 2, T.float),
  safe_add: math(2, 2, intIfInt),
  safe_subtract: math(2, 2, intIfInt),
  safe_multiply: math(2, 2, intIfInt),
  safe_negate: math(1, 1, first),
  ieee_divide: math(2, 2, T.float),
  sign: math(1, 1, first),
  is_inf: math(1, 1, T.bool),
  is_nan: math(1, 1, T.bool),
  exp: math(1, 1, T.float),
  ln: math(1, 1, T.float),
  log: math(1, 2, T.float),
  log10: math(1, 1, T.float),
  cbrt: math(1, 1, T.float),
  trunc: math(1, 2, T.float),
  ceiling: math(1, 1, T.float),
  cos: math(1, 1, T.float),
  sin: math(1, 1, T.float),
  tan: math(1, 1, T.float),
  acos: math(1, 1, T.float),
  asin: math(1, 1, T.float),
  atan: math(1, 1, T.float),
  atan2: math(2, 2, T.float),
  cosh: math(1, 1, T.float),
  sinh: math(1, 1, T.float),
  tanh: math(1, 1, T.float),
  acosh: math(1, 1, T.float),
  asinh: math(1, 1, T.float),
  atanh: math(1, 1, T.float),
  cot: math(1, 1, T.float),
  rand: def('scalar', 'math', 0, 0, T.float, { volatile: true }),
  // arrays
  array_length: def('scalar', 'array', 1, 1, T.int),
  generate_timestamp_array: def('scalar', 'array', 3, 3, listOf(T.timestamp), { args: [ts, ts, interval], builds: { kind: 'elements' } }),
  generate_date_array: def('scalar', 'array', 2, 3, listOf(T.date), { args: ['any', 'any', interval], builds: { kind: 'elements' } }),
  generate_array: def('scalar', 'array', 2, 3, intIfIntList, { builds: { kind: 'elements' } }),
  array_concat: def('scalar', 'array', 1, 64, first),
  array_reverse: def('scalar', 'array', 1, 1, first),
  array_to_string: def('scalar', 'array', 2, 2, T.string, { grows: { kind: 'join' } }),
  array_first: def('scalar', 'array', 1, 1, elementOfFirst),
  array_last: def('scalar', 'array', 1, 1, elementOfFirst),
  array_slice: def('scalar', 'array', 3, 3, first),
  // time
  // The statement's time: the same for every row, so not volatile.
  current_timestamp: time(0, 0, T.timestamp),
  current_datetime: time(0, 1, T.datetime),
  current_date: time(0, 1, T.date),
  timestamp_trunc: time(2, 3, T.timestamp, { args: [ts, part] }),
  datetime_trunc: time(2, 2, T.datetime, { args: ['any', part] }),
  date_trunc: time(2, 2, (args) => (first(args).k === 'scalar' && !isDate(first(args)) ? first(args) : T.date), { args: ['any', part] }),
  timestamp_sub: time(2, 2, T.timestamp, { args: [ts, interval] }),
  timestamp_add: time(2, 2, T.timestamp, { args: [ts, interval] }),
  datetime_sub: time(2, 2, T.datetime, { args: ['any', interval] }),
  datetime_add: time(2, 2, T.datetime, { args: ['any', interval] }),
  date_sub: time(2, 2, T.date, { args: ['any', interval] }),
  date_add: time(2, 2, T.date, { args: ['any', interval] }),
  timestamp_diff: time(3, 3, T.int, { args: [ts, ts, part] }),
  datetime_diff: time(3, 3, T.int, { args: ['any', 'any', part] }),
  date_diff: time(3, 3, T.int, { args: ['any', 'any', part] }),
  format_timestamp: time(2, 3, T.string, { args: ['any', ts], ...scale(16) }),
  datetime: time(1, 6, T.datetime),
  timestamp: time(1, 2, T.timestamp),
  date: time(1, 3, T.date),
  unix_date: time(1, 1, T.int),
  date_from_unix_date: time(1, 1, T.date),
  format_date: time(2, 2, T.string, scale(16)),
  format_datetime: time(2, 2, T.string, scale(16)),
  parse_timestamp: time(2, 3, T.timestamp),
  parse_datetime: time(2, 2, T.datetime),
  parse_date: time(2, 2, T.date),
  last_day: time(1, 1, T.date),
  unix_micros: time(1, 1, T.int, { args: [ts] }),
  unix_millis: time(1, 1, T.int, { args: [ts] }),
  unix_seconds: time(1, 1, T.int, { args: [ts] }),
  timestamp_micros: time(1, 1, T.timestamp),
  timestamp_millis: time(1, 1, T.timestamp),
  timestamp_seconds: time(1, 1, T.timestamp),
  // aggregates
  count: agg(0, 1, T.int),
  countif: agg(1, 1, T.int),
  sum: agg(1, 1, intIfInt),
  avg: agg(1, 1, T.float),
  min: agg(1, 1, first),
  max: agg(1, 1, first),
  any_value: agg(1, 1, first),
  logical_or: agg(1, 1, T.bool),
  logical_and: agg(1, 1, T.bool),
  string_agg: def('aggregate', 'aggregate', 1, 2, T.string, { grows: { kind: 'rows' } }),
  array_agg: def('aggregate', 'aggregate', 1, 1, listOfFirst, { grows: { kind: 'rows' } }),
  approx_quantiles: agg(2, 2, listOfFirst),
  approx_count_distinct: agg(1, 1, T.int),
  stddev: agg(1, 1, T.float),
  variance: agg(1, 1, T.float),
  stddev_samp: agg(1, 1, T.float),
  stddev_pop: agg(1, 1, T.float),
  var_samp: agg(1, 1, T.float),
  var_pop: agg(1, 1, T.float),
  corr: agg(2, 2, T.float),
  covar_pop: agg(2, 2, T.float),
  covar_samp: agg(2, 2, T.float),
  bit_and: agg(1, 1, T.int),
  bit_or: agg(1, 1, T.int),
  bit_xor: agg(1, 1, T.int),
  max_by: agg(2, 2, first),
  min_by: agg(2, 2, first),
  // window-only
  row_number: win(0, 0, T.int),
  rank: win(0, 0, T.int),
  dense_rank: win(0, 0, T.int),
  percent_rank: win(0, 0, T.float),
  cume_dist: win(0, 0, T.float),
  ntile: win(1, 1, T.int),
  lag: win(1, 3, first),
  lead: win(1, 3, first),
  first_value: win(1, 1, first),
  last_value: win(1, 1, first),
  nth_value: win(2, 2, first),
  percentile_cont: win(2, 2, T.float),
  percentile_disc: win(2, 2, first),
} as const satisfies Record<string, FunctionDef>;

function isDate(t: VType): boolean {
  return t.k === 'scalar' && t.t === 'date';
}

export type FunctionName = keyof typeof functions;

export const functionNames: readonly FunctionName[] = Object.freeze(Object.keys(functions) as FunctionName[]);

export function isFunctionName(name: string): name is FunctionName {
  return Object.hasOwn(functions, name);
}

export function functionDef(name: string): FunctionDef | undefined {
  return isFunctionName(name) ? functions[name] : undefined;
}

/** BigQuery functions that are refused for a reason worth telling the caller. */
const refusedFunctions: Readonly<Record<string, string>> = {
  'net.reg_domain': 'it needs the Public Suffix List, which the engines do not have',
  'net.public_suffix': 'it needs the Public Suffix List, which the engines do not have',
};

/** The error for calling a function the registry does not list (QUERY_NOT_ALLOWED). */
export function restrictedFunction(name: string): QuarryError {
  const why = Object.hasOwn(refusedFunctions, name) ? refusedFunctions[name] : undefined;
  return new QuarryError('QUERY_NOT_ALLOWED', why ? `${name.toUpperCase()} is not supported: ${why}` : `Restricted function ${name}`);
}

/** A function's growth rule: its own, else `fixed` for numbers, times and window ranks, else `sum`. */
export function growth(name: FunctionName): GrowRule {
  const f: FunctionDef = functions[name];
  if (f.grows) return f.grows;
  return f.family === 'math' || f.family === 'date/time' || (f.family === 'window' && f.min === 0) ? { kind: 'fixed' } : { kind: 'sum' };
}

export function isAggregate(name: string): boolean {
  return functionDef(name)?.kind === 'aggregate';
}

/** The result type of a call with these argument types. */
export function returnType(name: FunctionName, args: readonly VType[]): VType {
  const r = functions[name].returns;
  return typeof r === 'function' ? r(args) : r;
}
