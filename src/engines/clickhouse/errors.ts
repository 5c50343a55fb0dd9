/**
 * ClickHouse errors → QuarryErrors with our own codes and messages (docs/API.md §4).
 *
 * A ClickHouse message can quote the whole statement (the saved query's CTEs included), internal
 * aliases and physical table names, settings, and values of the rows it was reading. So a message
 * is never passed on or cleaned: each error type ClickHouse reports has a message of ours, and
 * the only detail taken from ClickHouse's text is a name matched by a narrow pattern (a column the
 * caller wrote, a function, a type) that is a plain identifier and not one of ours. Anything a
 * caller's query can cause is a 4xx; only failures of the connection, of ClickHouse itself or of
 * our own statements are 500s.
 */
import { isQuarryError, QuarryError } from '../../errors.ts';
import { queryOutOfMemory, queryTimeout } from '../../query/run.ts';
import { isFunctionName } from '../../sql/functions.ts';

/** What the caller is told for one ClickHouse error type. */
type Mapping = (raw: string, e: unknown) => QuarryError;

const invalid =
  (message: string | ((raw: string) => string)): Mapping =>
  (raw, e) =>
    new QuarryError('INVALID_QUERY', `The query is not valid: ${typeof message === 'string' ? message : message(raw)}`, { cause: e });

const tooComplex =
  (what: string): Mapping =>
  (_raw, e) =>
    new QuarryError('QUERY_TOO_COMPLEX', `The query is too complex for the ClickHouse engine: ${what}. Simplify it.`, { cause: e });

const refused: Mapping = (_raw, e) => new QuarryError('QUERY_NOT_ALLOWED', 'The query tried to use something that is not allowed', { cause: e });

const internal: Mapping = (_raw, e) => new QuarryError('INTERNAL', 'The query failed', { cause: e });

/** A value could not be read as a type: the type when it is one of ours, never the value. */
const conversion = invalid((raw) => {
  const type = sqlType(/\b(?:to|as|into) (?:type )?([A-Za-z0-9]+)/.exec(raw)?.[1] ?? /\bparse (?:string |input )?as ([A-Za-z0-9]+)/.exec(raw)?.[1]);
  return type ? `a value could not be converted to ${type}` : 'a value could not be converted to the type the query needs';
});

/** A function given an argument of the wrong type. */
const argumentType = invalid((raw) => {
  const fn = functionName(raw);
  return fn ? `an argument of ${fn} has a type it does not take` : 'a function was given an argument of a type it does not take';
});

const byType: Readonly<Record<string, Mapping>> = {
  // The caller's query refers to something that is not there, or is not allowed.
  UNKNOWN_IDENTIFIER: invalid((raw) => {
    const name = callerName(/(?:identifier|Unknown expression identifier|column) [`']([^`']+)[`']/i.exec(raw)?.[1]);
    return name ? `Unrecognized name: ${name}` : 'the query names a column that does not exist';
  }),
  UNKNOWN_FUNCTION: refused,
  UNKNOWN_TABLE: refused,
  UNKNOWN_DATABASE: refused,
  ACCESS_DENIED: refused,
  READONLY: refused,
  FUNCTION_NOT_ALLOWED: refused,
  SUPPORT_IS_DISABLED: refused,
  UNKNOWN_AGGREGATE_FUNCTION: refused,
  // Grouping and aggregation.
  NOT_AN_AGGREGATE: invalid((raw) => {
    const name = callerName(/Column [`']([^`']+)[`'] is not under aggregate function/.exec(raw)?.[1]);
    return `${name ? `the SELECT list references column ${name}, which` : 'the SELECT list references a column that'} is neither grouped nor aggregated`;
  }),
  ILLEGAL_AGGREGATION: invalid('an aggregate function is used where it is not allowed (inside another aggregate, in WHERE, or in GROUP BY)'),
  TOO_MANY_ARGUMENTS_FOR_FUNCTION: invalid((raw) => `${functionName(raw) ?? 'a function'} was given too many arguments`),
  TOO_FEW_ARGUMENTS_FOR_FUNCTION: invalid((raw) => `${functionName(raw) ?? 'a function'} was given too few arguments`),
  NUMBER_OF_ARGUMENTS_DOESNT_MATCH: invalid((raw) => `${functionName(raw) ?? 'a function'} was given the wrong number of arguments`),
  // Types.
  ILLEGAL_TYPE_OF_ARGUMENT: argumentType,
  ILLEGAL_COLUMN: argumentType,
  NO_COMMON_TYPE: invalid('values that must share a type (UNION ALL columns, CASE or IF branches, IN lists, comparisons) have none in common'),
  TYPE_MISMATCH: conversion,
  CANNOT_CONVERT_TYPE: conversion,
  CANNOT_PARSE_TEXT: conversion,
  CANNOT_PARSE_NUMBER: conversion,
  CANNOT_PARSE_DATE: conversion,
  CANNOT_PARSE_DATETIME: conversion,
  CANNOT_PARSE_INPUT_ASSERTION_FAILED: conversion,
  CANNOT_PARSE_BOOL: conversion,
  CANNOT_PARSE_UUID: conversion,
  CANNOT_READ_ARRAY_FROM_TEXT: conversion,
  CANNOT_PARSE_ESCAPE_SEQUENCE: conversion,
  INVALID_LIMIT_EXPRESSION: invalid('LIMIT and OFFSET take a whole number that is not negative or NULL'),
  INDEX_OF_POSITIONAL_ARGUMENT_IS_OUT_OF_RANGE: invalid((raw) => `an argument${inFunction(raw)} is out of range`),
  ILLEGAL_TYPE_OF_COLUMN_FOR_FILTER: invalid('a WHERE, HAVING, QUALIFY or JOIN condition is not a BOOL'),
  INVALID_JOIN_ON_EXPRESSION: invalid('a JOIN … ON condition must compare columns of the joined tables'),
  // Values out of range, raised while rows are read (never with the value).
  ILLEGAL_DIVISION: invalid('division by zero'),
  ARGUMENT_OUT_OF_BOUND: invalid((raw) => `an argument${inFunction(raw)} is out of range`),
  VALUE_IS_OUT_OF_RANGE_OF_DATA_TYPE: invalid('a value is out of the range of its type'),
  DECIMAL_OVERFLOW: invalid('a value is out of the range of its type'),
  TOO_LARGE_STRING_SIZE: invalid((raw) => `a value${inFunction(raw)} would be too large`),
  TOO_LARGE_ARRAY_SIZE: invalid((raw) => `an array${inFunction(raw)} would be too large`),
  BAD_ARGUMENTS: invalid((raw) => {
    const position = /Positional argument number (\d{1,6}) is out of bounds/.exec(raw)?.[1];
    return position ? `position ${position} in GROUP BY or ORDER BY is past the SELECT list` : `an argument${inFunction(raw)} is not valid`;
  }),
  INCORRECT_DATA: invalid((raw) => `a value${inFunction(raw)} is not valid`),
  CANNOT_COMPILE_REGEXP: invalid('a regular expression is not valid (RE2 syntax)'),
  SIZES_OF_ARRAYS_DONT_MATCH: invalid('arrays that must have the same length do not'),
  CANNOT_FORMAT_DATETIME: invalid('a date or time format is not valid'),
  BAD_QUERY_PARAMETER: invalid('a parameter value does not fit the type the query uses it as'),
  // Too large to parse or plan (max_query_size, max_ast_elements, max_parser_depth, …).
  TOO_DEEP_AST: tooComplex('it nests too deeply'),
  TOO_DEEP_RECURSION: tooComplex('it nests too deeply'),
  TOO_BIG_AST: tooComplex('it has too many elements'),
  TOO_DEEP_SUBQUERIES: tooComplex('it nests too many subqueries'),
  TOO_MANY_COLUMNS: tooComplex('it has too many columns'),
  TOO_MANY_TEMPORARY_COLUMNS: tooComplex('it computes too many values at once'),
  TOO_LARGE_DISTRIBUTED_DEPTH: tooComplex('it nests too deeply'),
  // Ours, or ClickHouse's: the caller cannot do anything about these.
  NETWORK_ERROR: internal,
  SOCKET_TIMEOUT: internal,
  UNKNOWN_SETTING: internal,
  LOGICAL_ERROR: internal,
};

/**
 * ClickHouse errors → QuarryErrors whose messages carry no SQL text, internal names or row values
 * (`timeoutMs`: the time limit a TIMEOUT_EXCEEDED names; the run sequence words its own).
 */
export function mapClickHouseError(e: unknown, timeoutMs = 0): QuarryError {
  if (isQuarryError(e)) return e;
  const type = (e as { type?: string }).type ?? '';
  const raw = e instanceof Error ? e.message : String(e);
  if (type === 'TIMEOUT_EXCEEDED') return queryTimeout(timeoutMs);
  if (type === 'MEMORY_LIMIT_EXCEEDED') return queryOutOfMemory('CLICKHOUSE_MAX_MEMORY_USAGE', e);
  if (type === 'SYNTAX_ERROR' && /max query size exceeded/i.test(raw)) return statementTooLarge(e);
  if (type === 'FUNCTION_THROW_IF_VALUE_IS_NON_ZERO') return guardFailed(raw, e);
  const mapping = byType[type];
  if (mapping) return mapping(raw, e);
  // Not ClickHouse speaking (no type): the connection or the client.
  if (type === '') return internal(raw, e);
  // Any other error ClickHouse raises while running a caller's query: its type, nothing of its text.
  return new QuarryError('INVALID_QUERY', `The query is not valid: ClickHouse could not run it (${type})`, { cause: e });
}

/** The size a statement may have once translated (`max_query_size` of the statements Quarry checks and runs). */
export const MAX_STATEMENT_BYTES = 4 * 1024 * 1024;

export function statementTooLarge(cause?: unknown): QuarryError {
  return new QuarryError(
    'QUERY_TOO_COMPLEX',
    `The query is too large for the ClickHouse engine: translated, it is over ${MAX_STATEMENT_BYTES / 1024 / 1024} MiB. Send a shorter query (fewer or shorter literals and expressions).`,
    cause === undefined ? undefined : { cause },
  );
}

/**
 * A `throwIf` guard the printer wrote (generate_array's size, value bounds): its message is our
 * own text, kept when it reads as such.
 */
function guardFailed(raw: string, e: unknown): QuarryError {
  const text = (raw.split(/: while executing|\. \(|\n/)[0] ?? '').replace(/^Value passed to 'throwIf' function is non-zero:?\s*/, '').trim();
  const ours = /^[A-Za-z0-9 _,.()'/-]{1,200}$/.test(text) && !/__|src_|SELECT|FROM/.test(text);
  return new QuarryError('INVALID_QUERY', `The query is not valid: ${ours ? text : 'a value is out of range'}`, { cause: e });
}

/** The column a name in a message stands for, when it is the caller's: its last part, a plain identifier, not an internal alias. */
function callerName(quoted: string | undefined): string | undefined {
  if (quoted === undefined) return undefined;
  const last = quoted.split('.').pop() ?? '';
  return plainName(last) ? last : undefined;
}

function plainName(name: string): boolean {
  return /^[A-Za-z][A-Za-z0-9_]{0,127}$/.test(name) && !/^src_[0-9a-f]/.test(name) && !name.includes('__');
}

/**
 * The function a message names (`function abs`, `function 'dateDiff'`), when the caller could have
 * written it: ClickHouse names the function the printer emitted (`upperUTF8` for UPPER, `plus` for
 * `+`), which is not the caller's vocabulary and is left out.
 */
function functionName(raw: string): string | undefined {
  const name = /\bfunction [`']?([A-Za-z][A-Za-z0-9_]*)[`']?/.exec(raw)?.[1];
  return name !== undefined && plainName(name) && isFunctionName(name) ? `function ${name}` : undefined;
}

function inFunction(raw: string): string {
  const fn = functionName(raw);
  return fn ? ` of ${fn}` : '';
}

/** ClickHouse's type names → the SQL types callers write. */
function sqlType(clickhouse: string | undefined): string | undefined {
  if (clickhouse === undefined) return undefined;
  if (/^U?Int(8|16|32|64|128|256)$/.test(clickhouse)) return 'INT64';
  if (/^Float(32|64)$/.test(clickhouse)) return 'FLOAT64';
  if (/^Decimal/.test(clickhouse)) return 'NUMERIC';
  if (/^Date(32)?$/.test(clickhouse)) return 'DATE';
  if (/^DateTime(64)?$/.test(clickhouse)) return 'TIMESTAMP';
  if (/^(Bool|UInt8)$/.test(clickhouse)) return 'BOOL';
  if (clickhouse === 'String') return 'STRING';
  return undefined;
}
