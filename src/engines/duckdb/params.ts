/**
 * Parameter values → DuckDB bound values with their types. Strings (every parameter of an untyped
 * endpoint) bind as VARCHAR, as always; typed values bind with their own type, so DuckDB compares
 * and computes with them as such. Absent → NULL.
 */
import { BIGINT, BOOLEAN, DATE, DOUBLE, type DuckDBType, DuckDBDateValue, DuckDBTimestampValue, type DuckDBValue, TIMESTAMP, VARCHAR } from '@duckdb/node-api';
import type { ParamValue } from '../../query/port.ts';

export interface BoundParams {
  values: Record<string, DuckDBValue>;
  types: Record<string, DuckDBType>;
}

export function bindValues(names: readonly string[], params: Readonly<Record<string, ParamValue | null | undefined>>): BoundParams {
  const values: Record<string, DuckDBValue> = {};
  const types: Record<string, DuckDBType> = {};
  for (const name of names) {
    const v = params[name];
    if (v === null || v === undefined) {
      values[name] = null;
      types[name] = VARCHAR;
    } else if (typeof v === 'string') {
      values[name] = v;
      types[name] = VARCHAR;
    } else {
      switch (v.type) {
        case 'int':
          values[name] = v.value;
          types[name] = BIGINT;
          break;
        case 'float':
          values[name] = v.value;
          types[name] = DOUBLE;
          break;
        case 'bool':
          values[name] = v.value;
          types[name] = BOOLEAN;
          break;
        case 'timestamp':
          values[name] = new DuckDBTimestampValue(v.micros);
          types[name] = TIMESTAMP;
          break;
        case 'date':
          values[name] = new DuckDBDateValue(v.days);
          types[name] = DATE;
          break;
      }
    }
  }
  return { values, types };
}
