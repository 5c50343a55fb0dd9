/**
 * Response formats of an endpoint run (CONTRACT §4): `json` (default, `{"result": [...]}`),
 * `ndjson` (one row object per line) and `csv` (RFC 4180: a header row, CRLF line ends, fields
 * quoted when they hold a quote, comma, CR or LF; nested records and lists as JSON text; NULL as an
 * empty field). Chosen by `?format=` or else the `Accept` header. NDJSON and CSV are streamed from
 * the encoded rows in pieces of about 64 KiB, never built as one string.
 */
import { Readable } from 'node:stream';
import type { ResultRow } from '../endpoints/backend.ts';
import { type ResultBody, jsonText } from '../endpoints/result.ts';
import { QuarryError } from '../errors.ts';

export const FORMATS = ['json', 'ndjson', 'csv'] as const;
export type ResultFormat = (typeof FORMATS)[number];

export const CONTENT_TYPES: Record<ResultFormat, string> = {
  json: 'application/json; charset=utf-8',
  ndjson: 'application/x-ndjson; charset=utf-8',
  csv: 'text/csv; charset=utf-8; header=present',
};

/** Media types understood in `Accept`, by the format they ask for. */
const MEDIA_TYPES: Record<string, ResultFormat> = {
  'application/json': 'json',
  'application/*': 'json',
  '*/*': 'json',
  'application/x-ndjson': 'ndjson',
  'application/ndjson': 'ndjson',
  'application/jsonl': 'ndjson',
  'application/jsonlines': 'ndjson',
  'application/x-jsonlines': 'ndjson',
  'text/csv': 'csv',
};

/** The parameter that selects the format (unless the saved query declares `@format` itself). */
export const FORMAT_PARAM = 'format';

/**
 * The format a request asks for: `?format=` (or a JSON body's `format`) when given, else the
 * most preferred type of `Accept` that we serve, else JSON. An unknown `format` value is a 400;
 * an `Accept` naming nothing we serve falls back to JSON rather than refusing.
 */
export function chooseFormat(formatParam: unknown, accept: string | undefined): ResultFormat {
  if (formatParam !== undefined && formatParam !== null) {
    const raw = Array.isArray(formatParam) ? formatParam[formatParam.length - 1] : formatParam;
    const value = typeof raw === 'string' ? raw.trim().toLowerCase() : '';
    if ((FORMATS as readonly string[]).includes(value)) return value as ResultFormat;
    throw new QuarryError('BAD_REQUEST', `Unknown format ${JSON.stringify(raw)}: use one of ${FORMATS.join(', ')}.`);
  }
  return fromAccept(accept);
}

function fromAccept(accept: string | undefined): ResultFormat {
  if (!accept) return 'json';
  let best: { format: ResultFormat; q: number } | undefined;
  for (const part of accept.split(',')) {
    const [type, ...params] = part.split(';');
    const format = MEDIA_TYPES[(type ?? '').trim().toLowerCase()];
    if (!format) continue;
    let q = 1;
    for (const p of params) {
      const m = /^\s*q\s*=\s*([0-9.]+)\s*$/i.exec(p);
      if (m) q = Number(m[1]);
    }
    if (!(q > 0)) continue;
    // Equal preference: the first listed wins.
    if (!best || q > best.q) best = { format, q };
  }
  return best?.format ?? 'json';
}

/** The response body for `format`: the ready JSON string, or a stream of NDJSON / CSV pieces. */
export function formatBody(body: ResultBody, format: ResultFormat): string | Readable {
  switch (format) {
    case 'json':
      return body.json;
    case 'ndjson':
      return Readable.from(pieces(body.rows, undefined, ndjsonLine), { objectMode: false });
    case 'csv':
      return Readable.from(pieces(body.rows, csvHeader(body.columns), csvLine(uniqueColumns(body.columns))), {
        objectMode: false,
      });
  }
}

const PIECE_CHARS = 64 * 1024;

/** Lines of `rows` (after `first`), joined into pieces of about PIECE_CHARS characters. */
function* pieces(rows: readonly ResultRow[], first: string | undefined, line: (row: ResultRow) => string): Generator<string> {
  let piece = first ?? '';
  for (const row of rows) {
    piece += line(row);
    if (piece.length >= PIECE_CHARS) {
      yield piece;
      piece = '';
    }
  }
  if (piece !== '') yield piece;
}

function ndjsonLine(row: ResultRow): string {
  return `${jsonText(row)}\n`;
}

/** Result columns without repeats (a row object holds one value per name). */
function uniqueColumns(columns: readonly string[]): string[] {
  return [...new Set(columns)];
}

function csvHeader(columns: readonly string[]): string {
  return `${uniqueColumns(columns).map(csvField).join(',')}\r\n`;
}

function csvLine(columns: readonly string[]): (row: ResultRow) => string {
  return (row) => {
    let out = '';
    for (let i = 0; i < columns.length; i++) {
      if (i > 0) out += ',';
      out += csvValue(row[columns[i]!]);
    }
    return `${out}\r\n`;
  };
}

function csvValue(value: unknown): string {
  if (value === null || value === undefined) return '';
  switch (typeof value) {
    case 'string':
      return csvField(value);
    case 'number':
    case 'boolean':
    case 'bigint':
      return String(value);
    default:
      // Records (one-element arrays of objects) and lists: their JSON text.
      return csvField(jsonText(value));
  }
}

const NEEDS_QUOTES = /[",\r\n]/;

function csvField(text: string): string {
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}
