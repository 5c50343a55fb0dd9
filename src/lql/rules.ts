/**
 * The typed rules an LQL query parses into (the model Logflare uses: filter, select, chart and
 * from rules). parse.ts produces them; compile.ts turns them into the SQL AST.
 */
import type { ClauseSource } from './syntax.ts';

/**
 * A value a filter compares against.
 * - `number` keeps its text, so `999999999999999999999` is not rounded.
 * - `timestamp` is UTC with microseconds, `2020-01-01 13:14:15.000500` (offsets already applied).
 * - `date` is a calendar day, `2020-01-01`; on `timestamp` it means that whole UTC day.
 */
export type FilterValue =
  | { type: 'string'; value: string }
  | { type: 'number'; text: string; integer: boolean }
  | { type: 'bool'; value: boolean }
  | { type: 'null' }
  | { type: 'timestamp'; value: string }
  | { type: 'date'; value: string };

export type ComparisonOperator = '=' | '>' | '>=' | '<' | '<=';

interface FilterBase {
  /** `event_message`, `timestamp`, `metadata.response.status_code`, `project`. */
  path: string;
  /** `-clause`. */
  negate: boolean;
  /** The value was written in double quotes. */
  quoted: boolean;
  source: ClauseSource;
}

export type FilterRule = FilterBase &
  (
    | { operator: ComparisonOperator; value: FilterValue }
    /** Both ends inclusive. */
    | { operator: 'range'; from: FilterValue; to: FilterValue }
    /** A level range (`m.level:info..error`) expands to the levels between the ends. */
    | { operator: 'in'; values: FilterValue[] }
    /** Case-sensitive substring (free text). */
    | { operator: 'string_contains'; value: string }
    /** RE2 regular expression, matched anywhere in the value. */
    | { operator: '~'; value: string }
    /** The array field holds an element equal to the value. */
    | { operator: 'list_includes'; value: FilterValue }
    /** The array field holds an element matching the regex. */
    | { operator: 'list_includes_regexp'; value: string }
  );

export type FilterOperator = FilterRule['operator'];

export interface SelectRule {
  path: string;
  /** `s:path@alias`; otherwise the output column is the path with dots replaced by `_`. */
  alias?: string;
  source: ClauseSource;
}

export type ChartAggregate = 'count' | 'countd' | 'avg' | 'sum' | 'max' | 'p50' | 'p95' | 'p99';
export type ChartPeriod = 'second' | 'minute' | 'hour' | 'day';

/** All `c:` clauses of a query merge into one chart rule. */
export interface ChartRule {
  /** Default `count`. */
  aggregate: ChartAggregate;
  /** The aggregated field; `timestamp` for `count(*)` and by default. */
  path: string;
  /** Default `minute`. */
  period: ChartPeriod;
  source: ClauseSource;
}

export interface FromRule {
  table: string;
  source: ClauseSource;
}

export interface LqlRules {
  filters: FilterRule[];
  /** Empty when the query has no `s:` clause, or only `s:*`. */
  selects: SelectRule[];
  chart?: ChartRule;
  from?: FromRule;
}

/** Most clauses an LQL query may have. */
export const MAX_CLAUSES = 100;

/** Syslog levels in order, for `m.level:debug..error`. */
export const LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'] as const;
