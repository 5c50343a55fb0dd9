/**
 * DuckDB errors → QuarryErrors whose messages carry no SQL text, internal alias, physical table
 * name or value another project's rows may hold (the run sequence, src/query/run.ts, does the rest).
 */
import { isQuarryError, QuarryError } from '../../errors.ts';
import { queryOutOfMemory } from '../../query/run.ts';
import { isOutOfMemory } from './out-of-memory.ts';

/** An error raised by evaluating a value (a cast, a parse, an overflow, error()), as DuckDB words it. */
export function isValueError(e: unknown): boolean {
  return e instanceof Error && /^(Conversion|Invalid Input|Out of Range) Error:/.test(e.message);
}

/** The messages of the guards our printed SQL raises with error(): ours, holding only limits. */
const OWN_GUARD =
  /^\w+ would build a value larger than \d+ bytes|^generate_\w+ would make more than \d+ elements$|^the array would have more than \d+ elements$/;

/** `STRUCT(a VARCHAR, b STRUCT(c INT))` (and MAP, UNION) → `STRUCT(…)`, innermost first. */
export function withoutRecordTypes(text: string): string {
  let out = text;
  for (let previous = ''; previous !== out; ) {
    previous = out;
    out = out.replace(/\b(STRUCT|MAP|UNION)\([^()]*\)/g, '$1\u27e8\u27e9');
  }
  return out.replace(/\u27e8\u27e9/g, '(…)');
}

/** DuckDB errors → QuarryErrors whose messages carry no SQL text. */
export function mapDuckDbError(e: unknown): QuarryError {
  if (isQuarryError(e)) return e;
  const raw = e instanceof Error ? e.message : String(e);
  const first = raw.split('\n')[0] ?? '';
  const m = /^(Binder|Conversion|Invalid Input|Out of Range|Parser|Catalog|Permission|Interrupt|Out of Memory|Not implemented) Error:\s*(.*)$/.exec(first);
  const kind = m?.[1];
  // Internal aliases and physical table names are not the caller's vocabulary.
  let detail = (m?.[2] ?? '')
    .replace(/"__[a-z]\d+"\./g, '')
    .replace(/"?src_[0-9a-f]{32}"?/g, 'the source')
    .trim();
  // A record's type lists every field any project's events added: it is named, not spelt out.
  detail = withoutRecordTypes(detail);
  // What a value error quotes is a value that was being read (another project's, possibly), and a
  // parser error may quote generated SQL: neither is repeated.
  if ((kind === 'Conversion' || kind === 'Out of Range' || kind === 'Invalid Input' || kind === 'Parser') && !OWN_GUARD.test(detail)) {
    detail = detail.replace(/'(?:[^']|'')*'|"(?:[^"]|"")*"/g, '…').replace(/-?\b\d+(?:\.\d+)?(?:e[+-]?\d+)?\b/gi, '…');
  }
  if (kind === 'Interrupt') return new QuarryError('QUERY_TIMEOUT', 'The query was stopped before it finished', { cause: e });
  if (kind === 'Out of Memory' || isOutOfMemory(e)) return queryOutOfMemory('DUCKDB_MEMORY_LIMIT', e);
  if (kind === 'Binder' || kind === 'Conversion' || kind === 'Invalid Input' || kind === 'Out of Range' || kind === 'Not implemented' || kind === 'Parser') {
    return new QuarryError('INVALID_QUERY', `The query is not valid: ${detail}`, { cause: e });
  }
  if (kind === 'Permission' || kind === 'Catalog')
    return new QuarryError('QUERY_NOT_ALLOWED', 'The query tried to use something that is not allowed', { cause: e });
  return new QuarryError('INTERNAL', 'The query failed', { cause: e });
}
