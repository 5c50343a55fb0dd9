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
  {
    name: "format('%.1000000000f', 1.5)",
    sql: "select format('%.1000000000f', 1.5) as f from edge_logs",
    code: 'INVALID_QUERY',
    message: /^FORMAT would build a value larger than 4096 bytes/,
  },
  {
    name: 'repeat(id, 40000000)',
    sql: 'select repeat(id, 40000000) as r from edge_logs',
    code: 'INVALID_QUERY',
    message: /^REPEAT would build a value larger than 4096 bytes/,
  },
  {
    name: 'lpad(id, 1000000000)',
    sql: 'select lpad(id, 1000000000) as r from edge_logs',
    code: 'INVALID_QUERY',
    message: /^LPAD would build a value larger than 4096 bytes/,
  },
  {
    name: "format('%1000000000d', 1)",
    sql: "select format('%1000000000d', 1) as f from edge_logs",
    code: 'INVALID_QUERY',
    message: /^FORMAT would build a value larger than 4096 bytes/,
  },
  {
    name: 'repeat(id, <not a constant>)',
    sql: 'select length(repeat(id, length(id) * 40000000)) as n from edge_logs',
    code: 'INVALID_QUERY',
    message: /REPEAT would build a value larger than 4096 bytes/,
  },
  {
    name: 'lpad(id, <not a constant>)',
    sql: 'select length(lpad(id, length(id) * 500000000)) as n from edge_logs',
    code: 'INVALID_QUERY',
    message: /LPAD would build a value larger than 4096 bytes/,
  },
];

/** `expr` doubled four times at each of `levels` nested subqueries: 4^levels copies of it. */
export function concatChain(levels: number, expr = 'event_message'): string {
  let inner = `select ${expr} as s from edge_logs`;
  for (let k = 1; k <= levels; k++) inner = `select concat(s, s, s, s) as s from (${inner})`;
  return `select length(s) as n from (${inner})`;
}

/** `fn` applied `depth` times to `arg`, over every row of edge_logs. */
export function nestedCalls(fn: string, depth: number, arg: string): string {
  let e = arg;
  for (let k = 0; k < depth; k++) e = `${fn}(${e})`;
  return `select length(${e}) as n from edge_logs`;
}

/**
 * Attacks on memory found after the bounds of issue 20's first list: values grown by ordinary
 * functions, and values within the one-call limit built for every row of a batch (DuckDB builds a
 * column 2,048 rows at a time, outside its memory accounting).
 */
export const growthBombs: readonly { name: string; sql: string; code: 'QUERY_TOO_COMPLEX' | 'INVALID_QUERY'; message: RegExp }[] = [
  {
    name: 'CONCAT(s, s, s, s) through 5 nested subqueries',
    sql: concatChain(5, "repeat('x', 1000)"),
    code: 'QUERY_TOO_COMPLEX',
    message: /QUERY_MAX_VALUE_GROWTH|QUERY_MAX_VALUE_BYTES/,
  },
  {
    name: 'TO_BASE64 nested 30 deep',
    sql: nestedCalls('to_base64', 30, 'cast(event_message as bytes)'),
    code: 'QUERY_TOO_COMPLEX',
    message: /QUERY_MAX_VALUE_GROWTH/,
  },
  {
    name: 'REPLACE each character by the row itself',
    sql: "select length(replace(repeat(event_message, 100), '', event_message)) as n from edge_logs",
    code: 'QUERY_TOO_COMPLEX',
    message: /without bound/,
  },
  {
    name: 'repeat(id, <within one call>) on every row',
    sql: 'select max(length(repeat(id, 120000))) as n from edge_logs',
    code: 'INVALID_QUERY',
    message: /REPEAT would build a value larger than 4096 bytes/,
  },
  {
    name: 'generate_array(1, <not a constant>) on every row',
    sql: 'select max(array_length(generate_array(1, length(id) * 12000))) as n from edge_logs',
    code: 'INVALID_QUERY',
    message: /the array would have more than 512 elements/,
  },
];
