/**
 * Issue 20's cost and value-size attacks, as caller SQL over `logs.all`'s CTEs: each a few hundred
 * bytes that, before the bounds of src/sql/bounds.ts, kept an engine busy for minutes or built
 * gigabytes of strings outside its memory accounting.
 */

/** A chain of CTEs, each joining the previous one to itself twice: 3^levels table references. */
export function joinChain(levels: number): string {
  const ctes: string[] = [];
  let prev = 'edge_logs';
  for (let k = 1; k <= levels; k++) {
    ctes.push(`a${k} as (select x.id, x.timestamp from ${prev} x join ${prev} y on x.id = y.id join ${prev} z on x.id = z.id)`);
    prev = `a${k}`;
  }
  return `with ${ctes.join(', ')} select count(*) as n from ${prev}`;
}

/** A chain of CTEs, each the UNION ALL of the previous one with itself: 2^levels references. */
export function unionChain(levels: number): string {
  const ctes: string[] = [];
  let prev = 'edge_logs';
  for (let k = 1; k <= levels; k++) {
    ctes.push(`u${k} as (select id from ${prev} union all select id from ${prev})`);
    prev = `u${k}`;
  }
  return `with ${ctes.join(', ')} select count(*) as n from ${prev}`;
}

/** Each attack with the error it must now get. */
export const queryBombs: readonly { name: string; sql: string; code: 'QUERY_TOO_COMPLEX' | 'INVALID_QUERY'; message: RegExp }[] = [
  { name: 'self-join CTE chain', sql: joinChain(6), code: 'QUERY_TOO_COMPLEX', message: /QUERY_MAX_TABLE_REFERENCES/ },
  { name: 'UNION ALL doubling chain', sql: unionChain(12), code: 'QUERY_TOO_COMPLEX', message: /QUERY_MAX_TABLE_REFERENCES/ },
  { name: "format('%.1000000000f', 1.5)", sql: "select format('%.1000000000f', 1.5) as f from edge_logs", code: 'INVALID_QUERY', message: /^FORMAT would build a value larger than 1048576 bytes/ },
  { name: 'repeat(id, 40000000)', sql: 'select repeat(id, 40000000) as r from edge_logs', code: 'INVALID_QUERY', message: /^REPEAT would build a value larger than 1048576 bytes/ },
  { name: 'lpad(id, 1000000000)', sql: 'select lpad(id, 1000000000) as r from edge_logs', code: 'INVALID_QUERY', message: /^LPAD would build a value larger than 1048576 bytes/ },
  { name: "format('%1000000000d', 1)", sql: "select format('%1000000000d', 1) as f from edge_logs", code: 'INVALID_QUERY', message: /^FORMAT would build a value larger than 1048576 bytes/ },
  {
    name: 'repeat(id, <not a constant>)',
    sql: 'select length(repeat(id, length(id) * 40000000)) as n from edge_logs',
    code: 'INVALID_QUERY',
    message: /REPEAT would build a value larger than 1048576 bytes/,
  },
  {
    name: 'lpad(id, <not a constant>)',
    sql: 'select length(lpad(id, length(id) * 500000000)) as n from edge_logs',
    code: 'INVALID_QUERY',
    message: /LPAD would build a value larger than 1048576 bytes/,
  },
];
