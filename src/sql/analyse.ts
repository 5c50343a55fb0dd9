/** What a query is made of: its CTEs, the tables it reads, its parameters, functions and columns. */
import type { Query } from './ast.ts';
import { walkQuery } from './walk.ts';

export interface TableRef {
  name: string;
  /** True when the name resolves to a CTE visible where it is used. */
  cte: boolean;
}

export interface Analysis {
  /** Top-level CTE names, in order. */
  ctes: string[];
  /** Every table reference at any depth (CTE references included, flagged). */
  tables: TableRef[];
  /** Declared `@parameters`, unique, in order of first appearance. */
  params: string[];
  /** Every function called, lower-case, unique. */
  functions: string[];
  /** Every column path referenced, dotted (`m.request.path`), unique. */
  columns: string[];
}

export function analyse(query: Query): Analysis {
  const tables: TableRef[] = [];
  const params = new Set<string>();
  const functions = new Set<string>();
  const columns = new Set<string>();
  walkQuery(query, {
    table(t, cte) {
      tables.push({ name: t.name, cte });
    },
    expr(e) {
      if (e.kind === 'param') params.add(e.name);
      else if (e.kind === 'func') functions.add(e.name);
      else if (e.kind === 'column') columns.add(e.path.join('.'));
    },
  });
  return {
    ctes: query.with.map((c) => c.name),
    tables,
    params: [...params],
    functions: [...functions],
    columns: [...columns],
  };
}
