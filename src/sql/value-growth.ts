/**
 * Value growth (bounds.ts): how large a value any expression of a query can be, as a multiple of
 * the values it reads plus bytes it makes itself, measured on the AST before any engine sees it.
 *
 * REPEAT and its kin are bounded one call at a time (value-bounds.ts), but ordinary functions grow
 * values too: CONCAT(s, s, s, s) read through five nested subqueries makes 4^5 copies, nested
 * TO_BASE64s a third more each, REPLACE a copy per match. An engine builds such strings outside its
 * memory accounting (DuckDB) and for a whole batch of rows per call, so the sizes are bounded here:
 *
 * - `k`, the multiple of the largest value read from the rows (or a parameter), at most
 *   QUERY_MAX_VALUE_GROWTH;
 * - `c`, the bytes made from the query's own text and functions (literals, REPEAT, GENERATE_ARRAY),
 *   at most four times the value limit where the expression is computed (value-bounds.ts:
 *   `oneRow` once, `perRow` for every row), for one value (and eight times for a
 *   row's values together).
 *
 * A CTE or derived table is measured once; its columns' sizes are used wherever they are read, so
 * measuring stays linear in the text.
 */
import { QuarryError } from '../errors.ts';
import type { Expr, From, Query, Select, SetExpr, TableFactor } from './ast.ts';
import { functionDef, type GrowRule, growth, isFunctionName } from './functions.ts';
import { assertNever } from './types.ts';
import { builtBytes, type ValueLimits } from './value-bounds.ts';
import { children, readsColumns } from './walk.ts';

/** At most `k` × the largest value read + `c` bytes; for an array, each element at most `el` where known. */
interface Size {
  readonly k: number;
  readonly c: number;
  readonly el?: Size;
}

/** The sizes of a query's result columns: by position, with their names where they have one. */
interface Columns {
  readonly names: readonly (string | undefined)[];
  readonly sizes: readonly Size[];
  /** Any column not named here. */
  readonly rest: Size;
  /** Whether it may have columns not named here (a stored table, an UNNEST). */
  readonly open: boolean;
}

interface Item {
  readonly alias: string | undefined;
  readonly columns: Columns;
}

interface Scope {
  readonly ctes: ReadonlyMap<string, Columns>;
  readonly items: readonly Item[];
  readonly outer: Scope | undefined;
  /** The value limit where this scope's expressions are computed. */
  readonly limit: number;
}

export interface GrowthLimits extends ValueLimits {
  /** QUERY_MAX_VALUE_GROWTH. */
  readonly maxGrowth: number;
}

/** Built bytes may reach this many times the value limit: in one value (a CONCAT of a few built values), in one row. */
export const BUILT_SHARE = 4;
export const ROW_SHARE = 8;

const DATA: Size = { k: 1, c: 0 };
const SMALL: Size = { k: 0, c: 16 };
const storedTable: Columns = { names: [], sizes: [], rest: DATA, open: true };

const plus = (a: Size, b: Size): Size => ({ k: a.k + b.k, c: a.c + b.c, ...elements(a, b) });
const larger = (a: Size, b: Size): Size => ({ k: Math.max(a.k, b.k), c: Math.max(a.c, b.c), ...elements(a, b) });
/** The element size of two arrays' concatenation: known only where both are. */
function elements(a: Size, b: Size): { el?: Size } {
  if (a.el && b.el) return { el: larger(a.el, b.el) };
  if (a.el && b.k === 0 && b.c <= SMALL.c) return { el: a.el };
  if (b.el && a.k === 0 && a.c <= SMALL.c) return { el: b.el };
  return {};
}
const times = (a: Size, f: number): Size => ({ k: a.k * f, c: a.c * f });
const total = (sizes: readonly Size[]): Size => sizes.reduce(plus, { k: 0, c: 0 });

/** QUERY_TOO_COMPLEX when any expression of `query` could grow a value past `limits`. */
export function checkValueGrowth(query: Query, limits: GrowthLimits): void {
  measureQuery(query, { ctes: new Map(), items: [], outer: undefined, limit: limits.oneRow }, limits);
}

function measureQuery(q: Query, parent: Scope, limits: GrowthLimits): Columns {
  const ctes = new Map(parent.ctes);
  for (const cte of q.with) {
    // A CTE is computed on its own, once, whatever reads it.
    ctes.set(cte.name.toLowerCase(), measureQuery(cte.query, { ctes, items: [], outer: undefined, limit: limits.oneRow }, limits));
  }
  const scope: Scope = { ...parent, ctes };
  const columns = measureSetExpr(q.body, scope, limits);
  const inBody: Scope = { ...scope, items: [{ alias: undefined, columns }] };
  for (const e of [...q.orderBy.map((o) => o.expr), q.limit, q.offset]) if (e) measure(e, inBody, limits);
  return columns;
}

function measureSetExpr(body: SetExpr, scope: Scope, limits: GrowthLimits): Columns {
  switch (body.kind) {
    case 'nested':
      return measureQuery(body.query, scope, limits);
    case 'setop': {
      const left = measureSetExpr(body.left, scope, limits);
      const right = measureSetExpr(body.right, scope, limits);
      const sizes = left.sizes.map((s, i) => larger(s, right.sizes[i] ?? s));
      return { names: left.names, sizes, rest: larger(left.rest, right.rest), open: false };
    }
    case 'select':
      return measureSelect(body, scope, limits);
    default:
      return assertNever(body);
  }
}

function measureSelect(select: Select, parent: Scope, limits: GrowthLimits): Columns {
  const scope = select.from ? measureFrom(select.from, parent, limits) : { ...parent, items: [], outer: parent };
  const sizes = select.columns.map((c) => measure(c.expr, scope, limits));
  for (const e of [select.where, ...select.groupBy, select.having, select.qualify]) if (e) measure(e, scope, limits);
  // A row's columns are built together, a batch of rows at a time: their bytes count together.
  const made = select.columns.reduce((sum, c, i) => (isHeld(c.expr) ? sum : sum + (sizes[i]?.c ?? 0)), 0);
  checkBuilt(made, scope, limits, 'a row of values', ROW_SHARE);
  const names = select.columns.map((c) => (c.alias ?? (c.expr.kind === 'column' ? c.expr.path.at(-1) : undefined))?.toLowerCase());
  return { names, sizes, rest: DATA, open: false };
}

/** The FROM's items; the first is computed as often as the enclosing query, the rest for every row. */
function measureFrom(from: From, parent: Scope, limits: GrowthLimits): Scope {
  const items: Item[] = [];
  const perRow: Scope = { ctes: parent.ctes, items, outer: parent, limit: Math.min(parent.limit, limits.perRow) };
  const add = (f: TableFactor, scope: Scope): void => {
    if (f.kind !== 'nested') {
      items.push(measureFactor(f, scope, limits));
      return;
    }
    // A parenthesised join's items are joined for every row of what is left of it.
    add(f.from.first, scope);
    for (const j of f.from.joins) {
      add(j.table, perRow);
      if (j.on) measure(j.on, perRow, limits);
    }
  };
  add(from.first, { ...parent, items: [], outer: parent });
  for (const j of from.joins) {
    // An UNNEST that reads no column is computed once, as the first item is.
    const once = j.table.kind === 'unnest' && !readsColumns(j.table.expr);
    add(j.table, once ? { ...parent, items: [], outer: parent } : perRow);
    if (j.on) measure(j.on, perRow, limits);
  }
  return perRow;
}

function measureFactor(f: TableFactor, scope: Scope, limits: GrowthLimits): Item {
  switch (f.kind) {
    case 'table': {
      const name = f.name.toLowerCase();
      const alias = (f.alias ?? f.name.split('.').at(-1) ?? f.name).toLowerCase();
      return { alias, columns: scope.ctes.get(name) ?? storedTable };
    }
    case 'derived':
      return { alias: f.alias?.toLowerCase(), columns: measureQuery(f.query, { ...scope, outer: scope }, limits) };
    case 'unnest':
      return { alias: f.alias?.toLowerCase(), columns: { names: [], sizes: [], rest: elementOf(measure(f.expr, scope, limits)), open: true } };
    case 'nested':
      throw new Error('measureFrom adds the items of a parenthesised join one by one');
    default:
      return assertNever(f);
  }
}

function elementOf(array: Size): Size {
  return array.el ?? { k: array.k, c: array.c };
}

function lookup(path: readonly string[], scope: Scope | undefined): Size {
  if (!scope) return DATA;
  const [head, next] = path.map((p) => p.toLowerCase());
  const byAlias = head === undefined ? undefined : scope.items.find((i) => i.alias === head);
  if (byAlias) return next === undefined ? total([...byAlias.columns.sizes, byAlias.columns.rest]) : columnOf(byAlias.columns, next);
  const named = scope.items.filter((i) => i.columns.names.includes(head));
  if (named.length > 0) return named.map((i) => columnOf(i.columns, head)).reduce(larger);
  const open = scope.items.filter((i) => i.columns.open);
  if (open.length > 0) return open.map((i) => i.columns.rest).reduce(larger);
  return lookup(path, scope.outer);
}

function columnOf(columns: Columns, name: string | undefined): Size {
  const at = columns.names.indexOf(name);
  return at < 0 ? columns.rest : (columns.sizes[at] ?? columns.rest);
}

/** The size of `e`'s values, refusing the query where any part of it is past the limits. */
function measure(e: Expr, scope: Scope, limits: GrowthLimits): Size {
  const size = sizeOf(e, scope, limits);
  // A constant, a parameter or a column read is held once, not made for each row.
  if (isHeld(e)) return size;
  if (size.k > limits.maxGrowth) {
    const reached = Number.isFinite(size.k) ? `${Math.ceil(size.k)} times` : 'without bound';
    throw new QuarryError(
      'QUERY_TOO_COMPLEX',
      `The query is too complex: it could make values ${reached} the size of the values it reads (through functions such as CONCAT, REPLACE or TO_BASE64, nested or repeated), more than the limit of ${limits.maxGrowth} (QUERY_MAX_VALUE_GROWTH)`,
    );
  }
  checkBuilt(size.c, scope, limits, 'a value', BUILT_SHARE);
  return size;
}

function isHeld(e: Expr): boolean {
  return e.kind === 'literal' || e.kind === 'param' || e.kind === 'column';
}

function checkBuilt(bytes: number, scope: Scope, limits: GrowthLimits, what: string, share: number): void {
  const builtLimit = share * scope.limit;
  if (bytes <= builtLimit) return;
  const where = scope.limit < limits.oneRow ? 'computed for every row' : 'computed once';
  throw new QuarryError(
    'QUERY_TOO_COMPLEX',
    `The query is too complex: it could make ${what} of ${Math.ceil(bytes)} bytes from its own text and functions (REPEAT, LPAD, GENERATE_ARRAY, literals), more than the limit of ${builtLimit} bytes for ${what} ${where} (set by QUERY_MAX_VALUE_BYTES)`,
  );
}

function sizeOf(e: Expr, scope: Scope, limits: GrowthLimits): Size {
  const [exprs, queries] = children(e);
  // Subqueries are measured (and checked) whatever the expression does with them.
  const subqueries = queries.map((q) => measureQuery(q, { ...scope, outer: scope }, limits));
  switch (e.kind) {
    case 'column':
      return lookup(e.path, scope);
    case 'param':
      return DATA;
    case 'literal':
      return e.type === 'string' ? { k: 0, c: Buffer.byteLength(e.value) } : SMALL;
    case 'subquery':
      return subqueries[0]?.sizes[0] ?? DATA;
    case 'binary': {
      const [l, r] = [measure(e.left, scope, limits), measure(e.right, scope, limits)];
      return e.op === '||' ? plus(l, r) : SMALL;
    }
    case 'cast':
      return plus(measure(e.expr, scope, limits), SMALL);
    case 'case': {
      for (const w of e.whens) measure(w.when, scope, limits);
      if (e.operand) measure(e.operand, scope, limits);
      const results = [...e.whens.map((w) => w.result), ...(e.else ? [e.else] : [])].map((x) => measure(x, scope, limits));
      return results.reduce(larger, SMALL);
    }
    case 'index':
      measureAll(exprs, scope, limits);
      return elementOf(measure(e.expr, scope, limits));
    case 'field':
      return measure(e.expr, scope, limits);
    case 'array': {
      const items = measureAll(exprs, scope, limits);
      return { ...total(items), el: items.reduce(larger, SMALL) };
    }
    case 'struct':
      return total(measureAll(exprs, scope, limits));
    case 'func':
      return funcSize(e, scope, limits);
    case 'interval':
    case 'datepart':
    case 'unary':
    case 'isNull':
    case 'isBool':
    case 'distinctFrom':
    case 'inList':
    case 'inUnnest':
    case 'inQuery':
    case 'between':
    case 'like':
    case 'exists':
    case 'extract':
      measureAll(exprs, scope, limits);
      return SMALL;
    default:
      return assertNever(e);
  }
}

function measureAll(exprs: readonly Expr[], scope: Scope, limits: GrowthLimits): Size[] {
  return exprs.map((x) => measure(x, scope, limits));
}

function funcSize(call: Extract<Expr, { kind: 'func' }>, scope: Scope, limits: GrowthLimits): Size {
  const extras = [...(call.orderBy ?? []).map((o) => o.expr), ...(call.limit ? [call.limit] : [])];
  if (call.over) extras.push(...call.over.partitionBy, ...call.over.orderBy.map((o) => o.expr));
  measureAll(extras, scope, limits);
  const args = measureAll(call.args, scope, limits);
  const name = call.name.toLowerCase();
  if (!isFunctionName(name)) return total(args);
  const built = builtBytes(call);
  if (built !== undefined) {
    const size = plus(total(args), { k: 0, c: built });
    return functionDef(name)?.builds?.kind === 'elements' ? { ...size, el: SMALL } : size;
  }
  return grow(growth(name), args, call);
}

function grow(rule: GrowRule, args: readonly Size[], call: Extract<Expr, { kind: 'func' }>): Size {
  switch (rule.kind) {
    case 'sum':
      return total(args);
    case 'scale':
      // SPLIT and REGEXP_EXTRACT_ALL: each element is part of the text.
      return { ...times(total(args), rule.factor), el: total(args) };
    case 'fixed':
      return SMALL;
    case 'either':
      return args.slice(rule.from).reduce(larger, SMALL);
    case 'replace': {
      const [text = DATA, , replacement = SMALL] = args;
      if (replacement.k > 0) return { k: Number.POSITIVE_INFINITY, c: 0 };
      // Each match is at least a byte, or none for a regular expression (which can match between
      // every two characters); a match may be replaced by `replacement`'s bytes.
      const pattern = call.args[1];
      const matchBytes = !rule.regexp && pattern?.kind === 'literal' && pattern.type === 'string' ? Math.max(1, Buffer.byteLength(pattern.value)) : 1;
      const factor = Math.max(1, Math.ceil(replacement.c / matchBytes)) + (rule.regexp ? 1 : 0);
      return plus(times(text, factor), { k: 0, c: replacement.c });
    }
    case 'join': {
      const [array = DATA, separator = SMALL] = args;
      if (separator.k > 0) return { k: Number.POSITIVE_INFINITY, c: 0 };
      // An element prints in at most three times the bytes it is counted as (a number's digits).
      return times(array, 3 + separator.c);
    }
    case 'rows':
      // The aggregate itself is counted by the engine; what it returns is as large as the rows read.
      return { k: 1 + (args[0]?.k ?? 0), c: 0, ...(args[0] ? { el: args[0] } : {}) };
    default:
      return assertNever(rule);
  }
}
