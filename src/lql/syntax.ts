/**
 * LQL text → raw clauses, with the peggy grammar in grammar.peggy.
 *
 * The grammar is compiled with peggy when a query is first parsed (a fraction of a second, once per
 * process) rather than committed as a generated parser: there is then no generated file that can
 * drift from the grammar and no build step to forget, and peggy is a runtime dependency anyway.
 */
import { readFileSync } from 'node:fs';
import peggy from 'peggy';
import { QuarryError } from '../errors.ts';
import { sourceFile } from '../source-files.ts';
import { Lru } from '../sql/lru.ts';

/** Where a clause sits in the LQL text, for error messages. Line and column are 1-based. */
export interface ClauseSource {
  text: string;
  line: number;
  column: number;
}

/** One `{07..09}` or `07` component of a date or time; a plain number has from === to. */
export interface RawPart {
  from: string;
  to: string;
  braced: boolean;
}

export interface RawTimeOfDay {
  hour: RawPart;
  minute: RawPart;
  second: RawPart;
  fraction: RawPart | null;
  offset: string | null;
}

export type RawTimestampPoint = { type: 'unix'; digits: string } | { type: 'template'; year: RawPart; month: RawPart; day: RawPart; time: RawTimeOfDay | null };

export type RawTimestampValue =
  | { type: 'shorthand'; name: 'now' | 'today' | 'yesterday' }
  | { type: 'this'; unit: string }
  | { type: 'last'; amount: string; unit: string }
  | { type: 'point'; point: RawTimestampPoint }
  | { type: 'range'; from: RawTimestampPoint; to: RawTimestampPoint }
  | { type: 'invalid'; text: string };

export type RawRangeEnd =
  | { type: 'datetime'; text: string }
  | { type: 'date'; text: string }
  | { type: 'number'; text: string }
  | { type: 'word'; value: string };

export type RawFieldValue =
  | RawRangeEnd
  | { type: 'quoted'; value: string }
  | { type: 'regex'; value: string }
  | { type: 'null' }
  | { type: 'bool'; value: boolean }
  | { type: 'range'; from: RawRangeEnd; to: RawRangeEnd }
  | { type: 'invalid'; text: string };

export type RawFieldOperator = '' | '>' | '>=' | '<' | '<=' | '~' | '@>' | '@>~';
export type RawTimestampOperator = '' | '>' | '>=' | '<' | '<=';

export type RawClauseBody =
  | { kind: 'from'; table: string | null; invalid?: string }
  | { kind: 'select'; wildcard: boolean; path: string | null; alias: string | null; invalid?: string }
  | { kind: 'chart_group_by'; period: string }
  | { kind: 'chart_aggregate'; aggregate: string; path: string }
  | { kind: 'chart_path'; path: string }
  | { kind: 'chart_invalid'; invalid: string }
  | { kind: 'timestamp'; operator: RawTimestampOperator; value: RawTimestampValue }
  | { kind: 'field'; path: string; operator: RawFieldOperator; value: RawFieldValue }
  | { kind: 'message'; operator: 'contains' | '~'; value: string; quoted: boolean };

export type RawClause = RawClauseBody & ClauseSource & { negate: boolean };

let parser: peggy.Parser | undefined;

function grammarParser(): peggy.Parser {
  if (!parser) {
    const grammar = readFileSync(sourceFile('lql', 'grammar.peggy'), 'utf8');
    parser = peggy.generate(grammar, { output: 'parser', grammarSource: 'grammar.peggy' });
  }
  return parser;
}

/** Builds the PARSE_ERROR for a clause whose shape parsed but whose meaning did not. */
export function clauseError(clause: ClauseSource, message: string): QuarryError {
  return new QuarryError('PARSE_ERROR', `${message} (in LQL clause \`${clause.text}\` at line ${clause.line}, column ${clause.column})`);
}

/** Clauses by text: the same LQL is asked again and again (a dashboard's refresh), and the clauses do not depend on the clock. */
const parsedByText = new Lru<string, readonly RawClause[]>(256);

/** Parses LQL text into raw clauses; throws PARSE_ERROR naming the line and column on bad input. The result is shared: read-only. */
export function parseSyntax(lql: string): readonly RawClause[] {
  const known = parsedByText.get(lql);
  if (known) return known;
  const generated = grammarParser();
  try {
    // The grammar's actions build exactly the RawClause shapes declared above.
    const clauses = Object.freeze(generated.parse(lql) as RawClause[]);
    parsedByText.set(lql, clauses);
    return clauses;
  } catch (e) {
    if (e instanceof generated.SyntaxError) throw syntaxError(lql, e);
    throw e;
  }
}

function syntaxError(lql: string, e: peggy.parser.SyntaxError): QuarryError {
  const open = unclosedQuote(lql);
  if (open !== undefined) {
    const { line, column } = position(lql, open);
    const snippet = lql.slice(open).split(/[\r\n]/)[0] ?? '';
    return new QuarryError('PARSE_ERROR', `Could not parse LQL: the quoted string at line ${line}, column ${column} (\`${snippet}\`) is never closed with "`, {
      cause: e,
    });
  }
  const { line, column, offset } = e.location.start;
  const lineStart = lql.lastIndexOf('\n', offset - 1) + 1;
  // The clause is the whitespace-delimited run of text around the failure.
  const before =
    lql
      .slice(lineStart, offset)
      .split(/[ \t\r]/)
      .pop() ?? '';
  const after = lql.slice(offset).split(/[ \t\r\n]/)[0] ?? '';
  const clause = `${before}${after}`;
  const found = e.found === null ? 'end of query' : `character ${JSON.stringify(e.found)}`;
  const where = clause === '' ? '' : ` in clause \`${clause}\``;
  return new QuarryError('PARSE_ERROR', `Could not parse LQL at line ${line}, column ${column}${where}: unexpected ${found}`, {
    cause: e,
  });
}

/** Offset of a `"` that opens a string never closed (`\"` does not close), if any. */
function unclosedQuote(lql: string): number | undefined {
  let open: number | undefined;
  for (let i = 0; i < lql.length; i++) {
    const c = lql[i];
    if (c === '\\' && open !== undefined) i++;
    else if (c === '\\' && lql[i + 1] === '"') i++;
    else if (c === '"') open = open === undefined ? i : undefined;
  }
  return open;
}

function position(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset).split('\n');
  return { line: before.length, column: (before.at(-1)?.length ?? 0) + 1 };
}
