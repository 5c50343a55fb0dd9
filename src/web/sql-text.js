// @ts-check
/**
 * Just enough reading of BigQuery SQL text for the explorer: the `@name` parameters a query
 * declares, and the split of `WITH a AS (...), b AS (...) <final select>` into the CTE list and the
 * final SELECT, so that "save as endpoint" can put the caller's SELECT after the endpoint's CTEs
 * (the same merge the sandbox does on the server; the server validates the result when saving).
 * It understands strings, quoted identifiers, comments and parentheses, nothing more.
 */

/**
 * @typedef {{ kind: 'word' | 'param' | 'punct' | 'other', text: string, start: number, end: number }} Token
 */

/**
 * The significant tokens of `sql` (comments, strings and whitespace are skipped; a quoted
 * identifier is a word).
 * @param {string} sql
 * @returns {Token[]}
 */
export function tokens(sql) {
  /** @type {Token[]} */
  const out = [];
  let i = 0;
  const n = sql.length;
  while (i < n) {
    const c = sql[i];
    const next = sql[i + 1];
    if (/\s/.test(c ?? '')) {
      i++;
    } else if ((c === '-' && next === '-') || c === '#') {
      while (i < n && sql[i] !== '\n') i++;
    } else if (c === '/' && next === '*') {
      const close = sql.indexOf('*/', i + 2);
      i = close < 0 ? n : close + 2;
    } else if (c === "'" || c === '"') {
      const start = i;
      const triple = sql.startsWith(c.repeat(3), i);
      i += triple ? 3 : 1;
      while (i < n) {
        if (sql[i] === '\\') i += 2;
        else if (triple ? sql.startsWith(c.repeat(3), i) : sql[i] === c) {
          i += triple ? 3 : 1;
          break;
        } else i++;
      }
      out.push({ kind: 'other', text: sql.slice(start, i), start, end: i });
    } else if (c === '`') {
      const start = i;
      const close = sql.indexOf('`', i + 1);
      i = close < 0 ? n : close + 1;
      out.push({ kind: 'word', text: sql.slice(start, i), start, end: i });
    } else if (c === '@' && next === '@') {
      const start = i;
      i += 2;
      while (i < n && /[\w.]/.test(sql[i] ?? '')) i++;
      out.push({ kind: 'other', text: sql.slice(start, i), start, end: i });
    } else if (c === '@' && /[A-Za-z_]/.test(next ?? '')) {
      const start = i;
      i++;
      while (i < n && /\w/.test(sql[i] ?? '')) i++;
      out.push({ kind: 'param', text: sql.slice(start + 1, i), start, end: i });
    } else if (/[A-Za-z_]/.test(c ?? '')) {
      const start = i;
      while (i < n && /\w/.test(sql[i] ?? '')) i++;
      out.push({ kind: 'word', text: sql.slice(start, i), start, end: i });
    } else if (c === '(' || c === ')' || c === ',') {
      out.push({ kind: 'punct', text: c, start: i, end: i + 1 });
      i++;
    } else {
      out.push({ kind: 'other', text: c ?? '', start: i, end: i + 1 });
      i++;
    }
  }
  return out;
}

/** Names the API reserves for the caller's own query: never endpoint parameters. */
const RESERVED = new Set(['sql', 'lql']);

/**
 * The distinct `@name` parameters of `sql`, in order of first use.
 * @param {string} sql
 * @returns {string[]}
 */
export function declaredParams(sql) {
  const seen = new Set();
  for (const t of tokens(sql)) if (t.kind === 'param' && !RESERVED.has(t.text)) seen.add(t.text);
  return [...seen];
}

/**
 * `WITH <ctes> <final>`: the CTE list's text (without WITH) and the final statement's text.
 * Undefined when the query does not start with WITH or its CTE list cannot be followed.
 * @param {string} sql
 * @returns {{ ctes: string, final: string } | undefined}
 */
export function splitWith(sql) {
  const ts = tokens(sql);
  let k = 0;
  const word = (/** @type {number} */ at, /** @type {string} */ w) => ts[at]?.kind === 'word' && ts[at]?.text.toLowerCase() === w;
  if (!word(k, 'with')) return undefined;
  k++;
  if (word(k, 'recursive')) k++;
  const ctesStart = ts[k]?.start;
  if (ctesStart === undefined) return undefined;
  for (;;) {
    if (ts[k]?.kind !== 'word') return undefined;
    k++;
    if (ts[k]?.text === '(') k = closeParen(ts, k) + 1; // a column list
    if (!word(k, 'as')) return undefined;
    k++;
    if (ts[k]?.text !== '(') return undefined;
    k = closeParen(ts, k);
    const close = ts[k];
    if (close === undefined) return undefined;
    k++;
    if (ts[k]?.text === ',') {
      k++;
      continue;
    }
    const rest = ts[k];
    if (rest === undefined) return undefined;
    return { ctes: sql.slice(ctesStart, close.end), final: sql.slice(rest.start) };
  }
}

/**
 * The index of the `)` that closes the `(` at `open` (past the end when unbalanced).
 * @param {Token[]} ts
 * @param {number} open
 */
function closeParen(ts, open) {
  let depth = 0;
  for (let k = open; k < ts.length; k++) {
    const t = ts[k]?.text;
    if (t === '(') depth++;
    else if (t === ')' && --depth === 0) return k;
  }
  return ts.length;
}

/**
 * The final SELECT of a saved query (what a sandboxed caller replaces); the whole text when the
 * query has no CTEs.
 * @param {string} saved
 */
export function finalSelect(saved) {
  return (splitWith(saved)?.final ?? saved).trim();
}

/**
 * A complete query for a new endpoint: the saved query's CTEs followed by the caller's query
 * (whose own CTEs, if any, come after the saved ones, as in the sandbox).
 * @param {string} saved
 * @param {string} caller
 * @returns {string}
 */
export function mergeForSave(saved, caller) {
  const base = splitWith(saved);
  if (!base) return caller.trim();
  const own = splitWith(caller);
  const ctes = own ? `${base.ctes},\n${own.ctes}` : base.ctes;
  return `with\n${ctes}\n${(own ? own.final : caller).trim()}\n`;
}

/**
 * The names of a query's CTEs, in order; empty when it has none (or they cannot be followed).
 * @param {string} sql
 * @returns {string[]}
 */
export function cteNames(sql) {
  const split = splitWith(sql);
  if (!split) return [];
  const ts = tokens(split.ctes);
  /** @type {string[]} */
  const names = [];
  let k = 0;
  while (ts[k]?.kind === 'word') {
    names.push(/** @type {Token} */ (ts[k]).text.replace(/^`|`$/g, ''));
    k++;
    if (ts[k]?.text === '(') k = closeParen(ts, k) + 1;
    k++; // AS
    k = closeParen(ts, k) + 1;
    if (ts[k]?.text !== ',') break;
    k++;
  }
  return names;
}
