/**
 * Small builders for the SQL AST, for code that writes queries by hand (the LQL compiler, tests).
 * Every node they return is frozen.
 *
 *   select({ columns: [col('timestamp'), [fn('count', []), 'n']], from: 'edge_logs',
 *            where: and(eq(col('m', 'project'), param('project'))), limit: 100 })
 */
import {
  type BinaryOp,
  type ColumnRef,
  type DatePart,
  type Expr,
  type From,
  type FuncCall,
  freezeTree,
  frozen,
  type Join,
  type Literal,
  type OrderItem,
  type Param,
  type Query,
  type SelectItem,
  type TableFactor,
} from './ast.ts';

export function col(...path: string[]): ColumnRef {
  return frozen({ kind: 'column', path: frozen([...path]) });
}

export function param(name: string): Param {
  return frozen({ kind: 'param', name });
}

export function lit(value: string | number | boolean | null): Literal {
  if (value === null) return frozen({ kind: 'literal', type: 'null' });
  if (typeof value === 'string') return frozen({ kind: 'literal', type: 'string', value });
  if (typeof value === 'boolean') return frozen({ kind: 'literal', type: 'bool', value });
  return frozen({ kind: 'literal', type: 'number', value: String(value) });
}

export function fn(name: string, args: Expr[], extra: Omit<Partial<FuncCall>, 'kind' | 'name' | 'args'> = {}): FuncCall {
  return freezeTree({ kind: 'func', name: name.toLowerCase(), args: [...args], ...extra });
}

/** `count(*)`. */
export function countStar(): FuncCall {
  return frozen({ kind: 'func', name: 'count', args: frozen([]), star: true });
}

export function datepart(part: DatePart): Expr {
  return frozen({ kind: 'datepart', part });
}

export function interval(value: number, unit: DatePart): Expr {
  return frozen({ kind: 'interval', value: lit(value), unit });
}

export function bin(op: BinaryOp, left: Expr, right: Expr): Expr {
  return frozen({ kind: 'binary', op, left, right });
}

export const eq = (l: Expr, r: Expr): Expr => bin('=', l, r);

/** AND of the given conditions (undefined entries skipped); undefined when none remain. */
export function and(...conds: (Expr | undefined)[]): Expr | undefined {
  const present = conds.filter((c): c is Expr => c !== undefined);
  if (present.length === 0) return undefined;
  return present.reduce((acc, c) => bin('and', acc, c));
}

export function or(...conds: Expr[]): Expr {
  if (conds.length === 0) throw new Error('or() needs at least one condition');
  return conds.reduce((acc, c) => bin('or', acc, c));
}

export function not(expr: Expr): Expr {
  return frozen({ kind: 'unary', op: 'not', expr });
}

export function table(name: string, alias?: string): TableFactor {
  return frozen(alias === undefined ? { kind: 'table', name } : { kind: 'table', name, alias });
}

export function unnest(expr: Expr, alias: string): TableFactor {
  return frozen({ kind: 'unnest', expr, alias });
}

export function order(expr: Expr, dir: 'asc' | 'desc' = 'asc'): OrderItem {
  return frozen({ expr, desc: dir === 'desc' });
}

export interface SelectSpec {
  /** An expression, or [expression, alias]. */
  columns: (Expr | [Expr, string])[];
  /** A table name, a factor, or a full FROM with joins. */
  from?: string | TableFactor | From;
  joins?: Join[];
  where?: Expr | undefined;
  groupBy?: Expr[];
  having?: Expr;
  orderBy?: OrderItem[];
  limit?: number | Expr;
  distinct?: boolean;
  with?: { name: string; query: Query }[];
}

export function select(spec: SelectSpec): Query {
  const columns: SelectItem[] = spec.columns.map((c) => (Array.isArray(c) ? { expr: c[0], alias: c[1] } : { expr: c }));
  let from: From | undefined;
  if (typeof spec.from === 'string') from = { first: table(spec.from), joins: spec.joins ?? [] };
  else if (spec.from && 'first' in spec.from) from = spec.from;
  else if (spec.from) from = { first: spec.from, joins: spec.joins ?? [] };
  const query: Query = {
    kind: 'query',
    with: spec.with ?? [],
    body: {
      kind: 'select',
      distinct: spec.distinct ?? false,
      columns,
      groupBy: spec.groupBy ?? [],
      ...(from ? { from } : {}),
      ...(spec.where ? { where: spec.where } : {}),
      ...(spec.having ? { having: spec.having } : {}),
    },
    orderBy: spec.orderBy ?? [],
    ...(spec.limit !== undefined ? { limit: typeof spec.limit === 'number' ? lit(spec.limit) : spec.limit } : {}),
  };
  return freezeTree(query);
}
