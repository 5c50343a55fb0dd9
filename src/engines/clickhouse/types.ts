/** Quarry's value types (VType) as ClickHouse types, and lists as ClickHouse arrays. */
import type { VType } from '../../sql/types.ts';

const scalarTypes = {
  string: 'String',
  int: 'Int64',
  float: 'Float64',
  numeric: 'Decimal(38, 9)',
  bool: 'Bool',
  timestamp: "DateTime64(6, 'UTC')",
  datetime: "DateTime64(6, 'UTC')",
  date: 'Date32',
  interval: 'Int64',
  bytes: 'String',
} as const;

/** The ClickHouse type a value of `t` reads as (scalars Nullable: an absent field is NULL). */
export function clickHouseType(t: VType): string {
  switch (t.k) {
    case 'scalar':
      return `Nullable(${scalarTypes[t.t]})`;
    case 'list':
      return `Array(${clickHouseType(t.element)})`;
    case 'record':
      return 'JSON';
    case 'missing':
    case 'unknown':
      return 'Nullable(String)';
  }
}

/**
 * A list as a ClickHouse array of its element type. A list read from the JSON column is a dynamic
 * value (NULL when absent) until cast; casting an array to its own type changes nothing.
 */
export function arrayOf(sql: string, type: VType): string {
  if (type.k !== 'list') return sql;
  return `CAST(${sql} AS ${clickHouseType(type)})`;
}
