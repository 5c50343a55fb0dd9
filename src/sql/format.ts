/**
 * BigQuery's FORMAT(format_string, value, ...): the format string is read here, once, into text
 * pieces and one conversion per value, and checked against the values' types; each engine's
 * function table prints the pieces (engines/<engine>/…-functions.ts). The format must be a
 * constant. Supported conversions:
 *
 *   %d %i   INT64, with the flags - + space 0 and a width
 *   %f %F   FLOAT64, NUMERIC or INT64, with the flags - + space 0, a width and a precision
 *   %s      STRING, as it is
 *   %t      STRING, INT64, BOOL or DATE as text (as CAST to STRING does); NULL gives 'NULL'
 *   %%      a percent sign
 *
 * Anything else (%x %o %e %g %T, %'d, * widths, a width on %s or %t) is refused, naming it. As in
 * BigQuery, a NULL value gives NULL except under %t.
 */
import { QuarryError } from '../errors.ts';
import type { RExpr } from './resolved.ts';
import type { VType } from './types.ts';

export type FormatConversion = 'd' | 'f' | 'F' | 's' | 't';

export type FormatPiece =
  | { readonly kind: 'text'; readonly text: string }
  /** `printf` is the C printf directive for the value (`%05d`, `%.2f`); `arg` indexes the values. */
  | { readonly kind: 'value'; readonly conversion: FormatConversion; readonly printf: string; readonly arg: number; readonly plain: boolean };

/** A directive: flags, width, precision, conversion. */
const DIRECTIVE = /%([-+ 0#']*)(\*|\d+)?(?:\.(\*|\d*))?([a-zA-Z%]?)/y;

const TYPES: Readonly<Record<FormatConversion, readonly string[]>> = {
  d: ['int'],
  f: ['float', 'numeric', 'int'],
  F: ['float', 'numeric', 'int'],
  s: ['string'],
  t: ['string', 'int', 'bool', 'date'],
};

function notSupported(what: string): QuarryError {
  return new QuarryError('QUERY_NOT_ALLOWED', `FORMAT does not support ${what}`);
}

/** Reads FORMAT's format string (the call's first argument) against its values. */
export function parseFormat(args: readonly RExpr[]): FormatPiece[] {
  const f = args[0];
  if (f?.kind !== 'literal' || f.value.type !== 'string') throw notSupported('a format string that is not a constant string');
  const format = f.value.value;
  const values = args.slice(1);
  const pieces: FormatPiece[] = [];
  let text = '';
  let next = 0;
  for (let i = 0; i < format.length; ) {
    if (format[i] !== '%') {
      text += format[i];
      i += 1;
      continue;
    }
    DIRECTIVE.lastIndex = i;
    const m = DIRECTIVE.exec(format)!;
    const [whole, flags = '', width, precision, letter = ''] = m;
    i += whole.length;
    if (letter === '%' && whole === '%%') {
      text += '%';
      continue;
    }
    if (letter === '') throw new QuarryError('INVALID_QUERY', `FORMAT has an invalid directive ${whole || '%'}`);
    const conversion: FormatConversion | undefined =
      letter === 'i' || letter === 'd' ? 'd' : letter === 'f' || letter === 'F' || letter === 's' || letter === 't' ? letter : undefined;
    if (!conversion) throw notSupported(`the directive ${whole} (supported: %d %i %f %F %s %t %%)`);
    if (width === '*' || precision === '*') throw notSupported(`* widths or precisions (${whole})`);
    if (flags.includes("'") || flags.includes('#')) throw notSupported(`the flags ' and # (${whole})`);
    if ((conversion === 's' || conversion === 't') && whole.length > 2) throw notSupported(`flags, widths or precisions with %${letter} (${whole})`);
    if (conversion === 'd' && precision !== undefined) throw notSupported(`a precision with %${letter} (${whole})`);
    const value = values[next];
    if (!value) throw new QuarryError('INVALID_QUERY', `FORMAT has more directives than values (${whole} has no value)`);
    checkType(value.type, conversion, whole, next + 2);
    if (text) pieces.push({ kind: 'text', text });
    text = '';
    const printf = conversion === 'd' ? `${whole.slice(0, -1)}d` : whole;
    pieces.push({ kind: 'value', conversion, printf, arg: next + 1, plain: whole.length === 2 });
    next += 1;
  }
  if (text) pieces.push({ kind: 'text', text });
  if (next < values.length) throw new QuarryError('INVALID_QUERY', `FORMAT has ${values.length} values but only ${next} directives`);
  return pieces;
}

/**
 * The widths and precisions a format string asks for, summed: how much FORMAT pads and how many
 * digits it writes beyond the values' own text (the size bound of value-bounds.ts).
 */
export function formatPadding(format: string): number {
  let total = 0;
  const directive = new RegExp(DIRECTIVE.source, 'g');
  for (const m of format.matchAll(directive)) {
    const [, , width, precision] = m;
    if (width !== undefined && width !== '*') total += Number(width);
    if (precision !== undefined && precision !== '*') total += Number(precision || '0');
  }
  return total;
}

/** How an engine spells FORMAT's pieces. */
export interface FormatSpelling {
  text(text: string): string;
  /** One value under its directive (`p.printf`); NULL gives NULL except for %t. */
  value: Readonly<Record<FormatConversion, (sql: string, p: Extract<FormatPiece, { kind: 'value' }>) => string>>;
}

/** FORMAT's pieces spelt for an engine, in order; `printed` holds the printed arguments. */
export function formatParts(args: readonly RExpr[], printed: readonly string[], spelling: FormatSpelling): string[] {
  return parseFormat(args).map((p) => (p.kind === 'text' ? spelling.text(p.text) : spelling.value[p.conversion](printed[p.arg]!, p)));
}

function checkType(t: VType, conversion: FormatConversion, directive: string, position: number): void {
  // NULL and parameters (strings until bound) are taken as they come.
  if (t.k === 'unknown' || t.k === 'missing') return;
  const name = t.k === 'scalar' ? t.t : t.k;
  if (t.k === 'scalar' && TYPES[conversion].includes(t.t)) return;
  throw new QuarryError('INVALID_QUERY', `FORMAT ${directive} cannot format argument ${position}, a ${name.toUpperCase()} value`);
}
