/**
 * Small builders for the SQL AST, for code that writes queries by hand (the LQL compiler, tests).
 *
 *   select({ columns: [col('timestamp'), [fn('count', []), 'n']], from: 'edge_logs',
 *            where: and(eq(col('m', 'project'), param('project'))), limit: 100 })
 */
import type {
  BinaryOp,
  ColumnRef,
  DatePart,
  Expr,
  From,
  FuncCall,
  Join,
  Literal,
  OrderItem,
  Param,
  Query,
  Select,
  SelectItem,
  TableFactor,
} from './ast.ts';

export function col(...path: string[]): ColumnRef {
  return { kind: 'column', path };
}

export function param(name: string): Param {
  return { kind: 'param', name };
}

export function lit(value: string | number | boolean | null): Literal {
  if (value === null) return { kind: 'literal', type: 'null' };
  if (typeof value === 'string') return { kind: 'literal', type: 'string', value };
  if (typeof value === 'boolean') return { kind: 'literal', type: 'bool', value };
  return { kind: 'literal', type: 'number', value: String(value) };
}

export function fn(name: string, args: Expr[], extra: Omit<Partial<FuncCall>, 'kind' | 'name' | 'args'> = {}): FuncCall {
  return { kind: 'func', name: name.toLowerCase(), args, ...extra };
}

/** `count(*)`. */
export function countStar(): FuncCall {
  return { kind: 'func', name: 'count', args: [], star: true };
}

export function datepart(part: DatePart): Expr {
  return { kind: 'datepart', part };
}

export function interval(value: number, unit: DatePart): Expr {
  return { kind: 'interval', value: lit(value), unit };
}

export function bin(op: BinaryOp, left: Expr, right: Expr): Expr {
  return { kind: 'binary', op, left, right };
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
  return { kind: 'unary', op: 'not', expr };
}

export function table(name: string, alias?: string): TableFactor {
  return alias === undefined ? { kind: 'table', name } : { kind: 'table', name, alias };
}

export function unnest(expr: Expr, alias: string): TableFactor {
  return { kind: 'unnest', expr, alias };
}

export function order(expr: Expr, dir: 'asc' | 'desc' = 'asc'): OrderItem {
  return { expr, desc: dir === 'desc' };
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
  const body: Select = { kind: 'select', distinct: spec.distinct ?? false, columns, groupBy: spec.groupBy ?? [] };
  if (from) body.from = from;
  if (spec.where) body.where = spec.where;
  if (spec.having) body.having = spec.having;
  const query: Query = { kind: 'query', with: spec.with ?? [], body, orderBy: spec.orderBy ?? [] };
  if (spec.limit !== undefined) query.limit = typeof spec.limit === 'number' ? lit(spec.limit) : spec.limit;
  return query;
}
