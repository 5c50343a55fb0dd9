/**
 * The function allow-list: every BigQuery function a query may call, with its arity. Anything not
 * listed is rejected (QUERY_NOT_ALLOWED, "Restricted function <name>"), so a new engine function
 * can never be reached by accident. Each engine generator must translate every name listed here.
 */

export type FunctionKind = 'scalar' | 'aggregate' | 'window';

export interface FunctionSpec {
  kind: FunctionKind;
  min: number;
  max: number;
}

const s = (min: number, max = min): FunctionSpec => ({ kind: 'scalar', min, max });
const a = (min: number, max = min): FunctionSpec => ({ kind: 'aggregate', min, max });
const w = (min: number, max = min): FunctionSpec => ({ kind: 'window', min, max });

export const allowedFunctions: Readonly<Record<string, FunctionSpec>> = {
  // strings and regular expressions
  regexp_contains: s(2),
  regexp_extract: s(2),
  regexp_replace: s(3),
  starts_with: s(2),
  ends_with: s(2),
  lower: s(1),
  upper: s(1),
  concat: s(1, 64),
  length: s(1),
  strpos: s(2),
  substr: s(2, 3),
  substring: s(2, 3),
  split: s(1, 2),
  trim: s(1, 2),
  ltrim: s(1, 2),
  rtrim: s(1, 2),
  replace: s(3),
  json_value: s(2),
  json_extract_scalar: s(2),
  // null handling and conditionals
  ifnull: s(2),
  coalesce: s(1, 64),
  nullif: s(2),
  if: s(3),
  greatest: s(1, 64),
  least: s(1, 64),
  // numbers
  abs: s(1),
  round: s(1, 2),
  ceil: s(1),
  floor: s(1),
  mod: s(2),
  div: s(2),
  sqrt: s(1),
  pow: s(2),
  power: s(2),
  safe_divide: s(2),
  // arrays
  array_length: s(1),
  generate_timestamp_array: s(3),
  // time
  current_timestamp: s(0),
  current_datetime: s(0, 1),
  current_date: s(0, 1),
  timestamp_trunc: s(2, 3),
  datetime_trunc: s(2),
  date_trunc: s(2),
  timestamp_sub: s(2),
  timestamp_add: s(2),
  datetime_sub: s(2),
  datetime_add: s(2),
  date_sub: s(2),
  date_add: s(2),
  timestamp_diff: s(3),
  datetime_diff: s(3),
  date_diff: s(3),
  format_timestamp: s(2, 3),
  datetime: s(1, 2),
  timestamp: s(1, 2),
  date: s(1, 2),
  unix_micros: s(1),
  unix_millis: s(1),
  unix_seconds: s(1),
  timestamp_micros: s(1),
  timestamp_millis: s(1),
  timestamp_seconds: s(1),
  // aggregates
  count: a(0, 1),
  countif: a(1),
  sum: a(1),
  avg: a(1),
  min: a(1),
  max: a(1),
  any_value: a(1),
  logical_or: a(1),
  logical_and: a(1),
  string_agg: a(1, 2),
  array_agg: a(1),
  approx_quantiles: a(2),
  approx_count_distinct: a(1),
  stddev: a(1),
  variance: a(1),
  // window-only
  row_number: w(0),
  rank: w(0),
  dense_rank: w(0),
  percent_rank: w(0),
  cume_dist: w(0),
  ntile: w(1),
  lag: w(1, 3),
  lead: w(1, 3),
  first_value: w(1),
  last_value: w(1),
};

export function functionSpec(name: string): FunctionSpec | undefined {
  return Object.hasOwn(allowedFunctions, name) ? allowedFunctions[name] : undefined;
}

export function isAggregate(name: string): boolean {
  return functionSpec(name)?.kind === 'aggregate';
}
