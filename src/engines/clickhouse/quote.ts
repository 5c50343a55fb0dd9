/** ClickHouse's quoting of names and string literals. */

/** Backquoted ClickHouse identifier. */
export function quoteIdent(name: string): string {
  if (name.includes('\u0000')) throw new Error('Names may not contain NUL characters');
  return `\`${name.replaceAll('\\', '\\\\').replaceAll('`', '\\`')}\``;
}

/** ClickHouse string literal (backslash is an escape character in ClickHouse strings). */
export function quoteString(text: string): string {
  return `'${text.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
}
