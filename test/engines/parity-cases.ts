/**
 * The fixture and the cases of the engine-parity suite (test/engines/parity.test.ts): events sent
 * through the ingest API, endpoints made through the management API, and one request per
 * behaviour of docs/API.md §4 that a client can observe. Each case checks the documented answer on
 * every engine; the suite then compares the engines' answers with each other.
 */
import assert from 'node:assert/strict';
import { PATH_OR_STACK } from '../support/disclosure.ts';
import type { EngineName } from '../support/engines.ts';

export const SOURCE = 'parity.events';
/** A source that has received no field when its endpoint is saved (docs/SQL.md, top-level columns). */
export const LATE_SOURCE = 'parity.late';
/** Appears only in the saved queries: an error message that quotes a saved query shows it. */
export const SAVED_MARKER = 'zz-saved-query-marker';

export const T0 = Date.UTC(2026, 10, 21, 10, 0, 0);

/**
 * The events, as JSON text (so a 64-bit integer reaches the service as the client wrote it):
 * NULLs (fields an event did not carry), quotes, commas, CR/LF, tabs, unicode, nested records,
 * lists of scalars and of records, microsecond timestamps, large integers, floats, booleans.
 */
export const AWKWARD_EVENTS = `[
  {"id":"a1","timestamp":"2026-11-21T10:00:00.123456Z","event_message":"plain","n":1,"f":0.1,"ok":true,"big":9007199254740993,
   "metadata":{"request":{"method":"GET","path":"/a","headers":{"ip":"10.0.0.1"}},"response":{"status_code":200}},
   "tags":["x","y"],"items":[{"k":1,"v":"one"},{"k":2,"v":"two"}]},
  {"id":"a2","timestamp":"2026-11-21T10:00:01Z","event_message":"comma, and \\"quotes\\"","n":2,"f":-2.5,"ok":false,"big":-9223372036854775808,
   "metadata":{"request":{"path":"/b,\\"c\\""}},"tags":[]},
  {"id":"a3","timestamp":"2026-11-21T10:00:02Z","event_message":"two\\nlines\\r\\nand CR","n":-3,"f":1e300,"big":9223372036854775807,
   "metadata":{"response":{"status_code":500}}},
  {"id":"a4","timestamp":"2026-11-21T10:00:03.5Z","event_message":"ünïcødé ✓ 😀 日本語 \\u0000nul","tags":["only"]},
  {"id":"a5","timestamp":"2026-11-21T10:00:04Z","event_message":"tab\\there; semi","n":0,"f":0,"ok":true,
   "metadata":{"request":{"path":"/e","deep":{"a":{"b":"c"}}},"response":{"status_code":404}},"items":[{"k":3}]}
]`;

/** Plain rows for the caps: b00 … b19, a second apart, an hour after the awkward ones. */
export const BULK_EVENTS = Array.from({ length: 20 }, (_, i) => ({
  id: `b${String(i).padStart(2, '0')}`,
  timestamp: new Date(T0 + 3_600_000 + i * 1000).toISOString(),
  event_message: `bulk ${i}`,
  n: 100 + i,
}));

/** Events of the late source: they carry fields, but never `never_sent`. */
export const LATE_EVENTS = [{ id: 'l1', timestamp: new Date(T0).toISOString(), event_message: 'late', seen: 1 }];

/** Rows for the slow query: three of them cross joined make 125M combinations. */
export const MANY_SOURCE = 'parity.many';
export const MANY_EVENTS = Array.from({ length: 500 }, (_, i) => ({ event_message: `m${i}` }));

const EVENTS_CTE = `events as (
  select t.id, t.timestamp, t.event_message, t.n, t.f, t.ok, t.big, t.metadata, t.tags, t.items
  from \`${SOURCE}\` as t
  where t.id != '${SAVED_MARKER}'
)`;

/** The endpoints, as POST /api/endpoints bodies (`late` is saved before its source has any event). */
export const ENDPOINTS: Record<string, Record<string, unknown>> = {
  rows: {
    name: 'parity.rows',
    query: `with ${EVENTS_CTE}
select id, timestamp, event_message, n, f, ok, big, metadata, tags, items from events
where starts_with(id, coalesce(@prefix, '')) order by id`,
    sandboxable: true,
    max_limit: 1000,
  },
  capped: {
    name: 'parity.capped',
    query: `with ${EVENTS_CTE} select id, n from events order by id`,
    sandboxable: true,
    max_limit: 3,
  },
  big: {
    name: 'parity.big',
    query: `with ${EVENTS_CTE} select id from events`,
    sandboxable: true,
    max_limit: 10000,
  },
  slow: {
    name: 'parity.slow',
    query: `with many as (select t.id, t.event_message from \`${MANY_SOURCE}\` as t where t.id != '${SAVED_MARKER}') select id from many`,
    sandboxable: true,
  },
  plain: {
    name: 'parity.plain',
    query: `select t.id from \`${SOURCE}\` as t where t.id != '${SAVED_MARKER}' order by t.id`,
  },
  untyped: {
    name: 'parity.untyped',
    query: `select @a as a, @b as b, concat(coalesce(@a, 'none'), '|', coalesce(@b, 'none')) as joined,
  @a is null as a_missing, (select count(*) from \`${SOURCE}\` as t where t.id = @a) as matching
from (select 1)`,
  },
  typed: {
    name: 'parity.typed',
    query: `select @i + 1 as i_next, @i as i, @f * 2 as f_double, @b as b, @ts as ts, @d as d, @e as e, @s as s, @u as u,
  (select count(*) from \`${SOURCE}\` as t where t.n >= @i) as n_at_least
from (select 1)`,
    params: [
      { name: 'i', type: 'int', default: 5 },
      { name: 'f', type: 'float', default: 0.25 },
      { name: 'b', type: 'bool', default: true },
      { name: 'ts', type: 'timestamp', required: true },
      { name: 'd', type: 'date', default: '2026-11-21' },
      { name: 'e', type: 'enum', values: ['info', 'warn', 'error'], default: 'error' },
      { name: 's', type: 'string' },
    ],
  },
  late: {
    name: 'parity.late',
    query: `select t.id, t.never_sent from \`${LATE_SOURCE}\` as t where t.id != '${SAVED_MARKER}' order by t.id`,
  },
};

/** One request to an endpoint, as a client sends it. */
export interface ParityRequest {
  endpoint: string;
  method?: 'GET' | 'POST';
  /** Query string parameters. */
  params?: Record<string, string>;
  /** Raw query string, after `params` (a parameter given twice). */
  query?: string;
  /** POST: the JSON body. */
  body?: Record<string, unknown>;
  headers?: Record<string, string>;
}

/** What a client observes of the answer. */
export interface Answer {
  status: number;
  contentType: string | null;
  warnings: string | null;
  retryAfter: string | null;
  /** X-Cache. */
  cache: string | null;
  /** `chunked` (Transfer-Encoding), `length` (Content-Length) or `none`. */
  framing: string;
  text: string;
  /** The body parsed, when it is JSON (errors, format=json). */
  json?: unknown;
}

/**
 * What must be identical on every engine, besides status, Content-Type, framing,
 * X-Query-Warnings, X-Cache and Retry-After:
 * - `bytes`: the body's text;
 * - `canonical`: the body's text with the members of every JSON object in key order (records in
 *   JSON, NDJSON and CSV fields), for results whose record member order is checked on its own
 *   (case "record members keep the order the event sent them");
 * - `error`: the error's status and code (an engine's own message may word a value error its way);
 * - `error-loose`: status, code and the message with its figures left out (RESULT_TOO_LARGE names
 *   the bytes read, which depend on where the engine's block ended);
 * - `documented`: nothing: docs/SQL.md lists the difference, `check` asserts each engine's side.
 */
export type Sameness = 'bytes' | 'canonical' | 'error' | 'error-loose' | 'documented';

export interface ParityCase {
  name: string;
  request: ParityRequest;
  /** The documented answer, checked on each engine. */
  check(a: Answer, engine: EngineName): void;
  same: Sameness;
}

export const JSON_TYPE = 'application/json; charset=utf-8';
export const NDJSON_TYPE = 'application/x-ndjson; charset=utf-8';
export const CSV_TYPE = 'text/csv; charset=utf-8; header=present';

export type Row = Record<string, unknown>;

export function rowsOf(a: Answer): Row[] {
  assert.equal(a.status, 200, a.text.slice(0, 500));
  assert.equal(a.contentType, JSON_TYPE);
  const body = a.json as { result?: Row[] };
  assert.deepEqual(Object.keys(body), ['result']);
  assert.ok(Array.isArray(body.result));
  return body.result;
}

/** The lines of an NDJSON body, parsed. */
export function ndjsonRows(a: Answer): Row[] {
  assert.equal(a.status, 200, a.text.slice(0, 500));
  assert.equal(a.contentType, NDJSON_TYPE);
  if (a.text === '') return [];
  assert.ok(a.text.endsWith('\n'), 'each line ends in \\n');
  return a.text
    .slice(0, -1)
    .split('\n')
    .map((l) => JSON.parse(l) as Row);
}

/** A strict RFC 4180 reader: CRLF records, quoted fields with doubled quotes. */
export function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let quoted = false;
  let i = 0;
  while (i < text.length) {
    const c = text[i] as string;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i += 2;
      } else if (c === '"') {
        quoted = false;
        i++;
        assert.ok(i === text.length || text[i] === ',' || text[i] === '\r', `a closing quote ends the field at ${i}`);
      } else {
        field += c;
        i++;
      }
    } else if (c === '"') {
      assert.equal(field, '', `a quote opens a field at ${i}`);
      quoted = true;
      i++;
    } else if (c === ',') {
      record.push(field);
      field = '';
      i++;
    } else if (c === '\r') {
      assert.equal(text[i + 1], '\n', `CR is followed by LF at ${i}`);
      record.push(field);
      records.push(record);
      record = [];
      field = '';
      i += 2;
    } else {
      assert.notEqual(c, '\n', `a bare LF outside quotes at ${i}`);
      field += c;
      i++;
    }
  }
  assert.equal(quoted, false, 'every quoted field is closed');
  assert.equal(field, '', 'the last record ends with CRLF');
  assert.equal(record.length, 0);
  return records;
}

export function csvRecords(a: Answer): string[][] {
  assert.equal(a.status, 200, a.text.slice(0, 500));
  assert.equal(a.contentType, CSV_TYPE);
  return parseCsv(a.text);
}

/** What a JSON result value looks like as a CSV field (docs/API.md §4, response formats). */
export function csvOf(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v);
}

/** `v` with the members of every object in key order. */
function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v !== null && typeof v === 'object') {
    return Object.fromEntries(
      Object.entries(v as Row)
        .sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0))
        .map(([k, x]) => [k, sortKeys(x)]),
    );
  }
  return v;
}

/** The body with every JSON object's members in key order (see `Sameness`). */
export function canonicalBody(a: Answer): string {
  if (a.status !== 200) return a.text;
  if (a.contentType === JSON_TYPE) return JSON.stringify(sortKeys(JSON.parse(a.text)));
  if (a.contentType === NDJSON_TYPE)
    return ndjsonRows(a)
      .map((r) => JSON.stringify(sortKeys(r)))
      .join('\n');
  if (a.contentType === CSV_TYPE) {
    const records = parseCsv(a.text).map((fields) => fields.map((f) => (/^[[{]/.test(f) ? JSON.stringify(sortKeys(JSON.parse(f))) : f)));
    return JSON.stringify(records);
  }
  return a.text;
}

/**
 * The contract's error shape, `{"error": {"message", "code", "status"}}` with a real status, JSON in
 * every format, and a message that quotes no saved query, generated SQL, physical table, engine
 * internals or file path. Returns the message.
 */
export function errorOf(a: Answer, status: number, code: string, message?: RegExp): string {
  assert.equal(a.status, status, `expected ${status} ${code}, got ${a.status}: ${a.text.slice(0, 500)}`);
  assert.equal(a.contentType, JSON_TYPE, 'errors are JSON in every format');
  const body = a.json as { error?: { message?: unknown; code?: unknown; status?: unknown } };
  assert.ok(body && typeof body === 'object' && body.error, `error envelope: ${a.text.slice(0, 500)}`);
  assert.deepEqual(Object.keys(body), ['error']);
  assert.deepEqual(Object.keys(body.error).sort(), ['code', 'message', 'status']);
  assert.equal(body.error.code, code, a.text.slice(0, 500));
  assert.equal(body.error.status, status);
  const msg = body.error.message;
  assert.equal(typeof msg, 'string');
  assert.ok((msg as string).length > 0);
  if (message) assert.match(msg as string, message);
  assertNoDisclosure(a.text);
  return msg as string;
}

/** Fragments an error must never carry (docs/API.md §4, "What errors say"). */
export function assertNoDisclosure(text: string): void {
  const forbidden: [RegExp, string][] = [
    [new RegExp(SAVED_MARKER), 'the saved query'],
    [/\bsrc_[0-9a-f]{8,}/i, 'a physical table name'],
    [PATH_OR_STACK, 'a file path or stack'],
    [/DB::Exception|\bCode: \d+|max_execution_time|readonly|log_comment|SETTINGS|json_serialize_sql|Binder Error|Conversion Error/i, 'engine internals'],
    [/\b(?:SELECT|select)\b[^"]*\b(?:FROM|from)\b/, 'SQL text'],
    [/quarry_\w+|__lql_|__\w+__/, 'an internal name'],
  ];
  for (const [re, what] of forbidden) assert.doesNotMatch(text, re, `${what} in: ${text.slice(0, 500)}`);
}

// ---------------------------------------------------------------------------------------------
// The cases.

const ROW_COLUMNS = ['id', 'timestamp', 'event_message', 'n', 'f', 'ok', 'big', 'metadata', 'tags', 'items'];

/** a1's timestamp, 2026-11-21T10:00:00.123456Z, in unix microseconds. */
const A1_US = T0 * 1000 + 123_456;

/**
 * The five awkward rows as docs/API.md §4 encodes them. INT64 is a JSON number: integers past 2^53
 * come back as the nearest double, on both engines (ingest reads JSON numbers as JavaScript does).
 */
function checkAwkwardRows(rows: Row[]): void {
  assert.deepEqual(
    rows.map((r) => r.id),
    ['a1', 'a2', 'a3', 'a4', 'a5'],
  );
  const [a1, a2, a3, a4, a5] = rows as [Row, Row, Row, Row, Row];
  for (const r of rows) assert.deepEqual(Object.keys(r), ROW_COLUMNS);
  assert.equal(a1.timestamp, A1_US, 'TIMESTAMP: unix microseconds, to the microsecond');
  assert.equal(a4.timestamp, (T0 + 3500) * 1000);
  assert.equal(a1.event_message, 'plain');
  assert.equal(a2.event_message, 'comma, and "quotes"');
  assert.equal(a3.event_message, 'two\nlines\r\nand CR');
  assert.equal(a4.event_message, 'ünïcødé ✓ 😀 日本語 \u0000nul');
  assert.equal(a5.event_message, 'tab\there; semi');
  assert.deepEqual(
    rows.map((r) => r.n),
    [1, 2, -3, null, 0],
  );
  assert.deepEqual(
    rows.map((r) => r.f),
    [0.1, -2.5, 1e300, null, 0],
  );
  assert.deepEqual(
    rows.map((r) => r.ok),
    [true, false, null, null, true],
  );
  assert.deepEqual(
    rows.map((r) => r.big),
    [2 ** 53, -(2 ** 63), 2 ** 63, null, null],
  );
  assert.deepEqual(a1.metadata, [{ request: [{ method: 'GET', path: '/a', headers: [{ ip: '10.0.0.1' }] }], response: [{ status_code: 200 }] }]);
  assert.deepEqual(a2.metadata, [{ request: [{ path: '/b,"c"' }] }], 'members a row never carried are left out');
  assert.deepEqual(a3.metadata, [{ response: [{ status_code: 500 }] }]);
  assert.equal(a4.metadata, null, 'a record the event did not carry is NULL');
  assert.deepEqual(a5.metadata, [{ request: [{ path: '/e', deep: [{ a: [{ b: 'c' }] }] }], response: [{ status_code: 404 }] }]);
  assert.deepEqual(
    rows.map((r) => r.tags),
    [['x', 'y'], [], null, ['only'], null],
  );
  assert.deepEqual(
    rows.map((r) => r.items),
    [
      [
        { k: 1, v: 'one' },
        { k: 2, v: 'two' },
      ],
      null,
      null,
      null,
      [{ k: 3 }],
    ],
  );
}

const rowsReq = (params: Record<string, string>, headers?: Record<string, string>): ParityRequest => ({
  endpoint: 'parity.rows',
  params,
  ...(headers ? { headers } : {}),
});
const sqlReq = (endpoint: string, sql: string, params: Record<string, string> = {}): ParityRequest => ({
  endpoint,
  method: 'POST',
  body: { sql, ...params },
});

/** The rows of `parity.rows` as the JSON answer gave them on each engine (for the other formats). */
const jsonRowsByEngine = new Map<EngineName, Row[]>();

/** A value error at run time: every engine must refuse the query, never answer NULL or a wrong value. */
const valueError = (name: string, sql: string): ParityCase => ({
  name,
  request: sqlReq('parity.rows', sql),
  check(a) {
    errorOf(a, 400, 'INVALID_QUERY', /^The query is not valid: /);
  },
  same: 'error',
});

export const CASES: ParityCase[] = [
  // ----- response formats -----
  {
    name: 'format: JSON by default, every awkward value encoded as documented',
    request: rowsReq({ prefix: 'a' }),
    check(a, engine) {
      const rows = rowsOf(a);
      checkAwkwardRows(rows);
      assert.equal(a.framing, 'length', 'JSON is one body with a Content-Length');
      assert.equal(a.cache, 'MISS');
      jsonRowsByEngine.set(engine, rows);
    },
    same: 'canonical',
  },
  {
    name: 'format: format=json',
    request: rowsReq({ prefix: 'a', format: 'json' }),
    check(a) {
      checkAwkwardRows(rowsOf(a));
    },
    same: 'canonical',
  },
  {
    name: 'format: format=ndjson, one row object per line, the same rows as JSON',
    request: rowsReq({ prefix: 'a', format: 'ndjson' }),
    check(a, engine) {
      const rows = ndjsonRows(a);
      checkAwkwardRows(rows);
      assert.deepEqual(rows, jsonRowsByEngine.get(engine));
      assert.equal(a.framing, 'chunked', 'NDJSON is streamed');
    },
    same: 'canonical',
  },
  {
    name: 'format: format=csv, RFC 4180, nested values as JSON text, NULL empty',
    request: rowsReq({ prefix: 'a', format: 'csv' }),
    check(a, engine) {
      const [header, ...records] = csvRecords(a);
      assert.deepEqual(header, ROW_COLUMNS);
      const rows = jsonRowsByEngine.get(engine) ?? [];
      assert.deepEqual(
        records,
        rows.map((r) => ROW_COLUMNS.map((c) => csvOf(r[c]))),
      );
      assert.ok(a.text.includes('"comma, and ""quotes"""'), 'quotes doubled inside a quoted field');
      assert.ok(a.text.includes('"two\nlines\r\nand CR"'), 'line breaks kept inside quotes');
      assert.ok(a.text.startsWith(`${ROW_COLUMNS.join(',')}\r\na1,${A1_US},plain,1,0.1,true,`), a.text.slice(0, 200));
      assert.ok(a.text.includes(',[],'), 'an empty list is [] and needs no quotes');
      assert.equal(a.framing, 'chunked', 'CSV is streamed');
    },
    same: 'canonical',
  },
  {
    name: 'format: Accept text/csv',
    request: rowsReq({ prefix: 'a' }, { accept: 'text/csv' }),
    check(a) {
      assert.equal(csvRecords(a).length, 6);
    },
    same: 'canonical',
  },
  {
    name: 'format: Accept with q values picks NDJSON',
    request: rowsReq({ prefix: 'a' }, { accept: 'text/csv;q=0.5, application/x-ndjson;q=0.9' }),
    check(a) {
      assert.equal(ndjsonRows(a).length, 5);
    },
    same: 'canonical',
  },
  {
    name: 'format: Accept naming nothing served gets JSON',
    request: rowsReq({ prefix: 'a' }, { accept: 'text/html' }),
    check(a) {
      checkAwkwardRows(rowsOf(a));
    },
    same: 'canonical',
  },
  {
    name: 'format: format wins over Accept',
    request: rowsReq({ prefix: 'a', format: 'csv' }, { accept: 'application/x-ndjson' }),
    check(a) {
      assert.equal(csvRecords(a).length, 6);
    },
    same: 'canonical',
  },
  {
    name: 'format: in a POST body',
    request: { endpoint: 'parity.rows', method: 'POST', body: { prefix: 'a', format: 'ndjson' } },
    check(a) {
      assert.equal(ndjsonRows(a).length, 5);
    },
    same: 'canonical',
  },
  {
    name: 'format: an empty result in JSON',
    request: rowsReq({ prefix: 'none-such' }),
    check(a) {
      assert.deepEqual(rowsOf(a), []);
      assert.equal(a.text, '{"result":[]}');
    },
    same: 'bytes',
  },
  {
    name: 'format: an empty result in NDJSON is an empty body',
    request: rowsReq({ prefix: 'none-such', format: 'ndjson' }),
    check(a) {
      assert.deepEqual(ndjsonRows(a), []);
      assert.equal(a.text, '');
    },
    same: 'bytes',
  },
  {
    name: 'format: an empty result in CSV is the header line alone',
    request: rowsReq({ prefix: 'none-such', format: 'csv' }),
    check(a) {
      assert.equal(csvRecords(a).length, 1);
      assert.equal(a.text, `${ROW_COLUMNS.join(',')}\r\n`);
    },
    same: 'bytes',
  },
  {
    name: 'format: an empty grouped result of a caller query in CSV keeps its header',
    request: sqlReq('parity.rows', 'select id, count(*) as c, max(timestamp) as last from events where id = @prefix group by id', {
      prefix: 'none-such',
      format: 'csv',
    }),
    check(a) {
      assert.equal(a.contentType, CSV_TYPE);
      assert.equal(a.text, 'id,c,last\r\n');
    },
    same: 'bytes',
  },
  {
    name: 'format: an unknown format is 400 BAD_REQUEST naming the formats',
    request: rowsReq({ prefix: 'a', format: 'xml' }),
    check(a) {
      errorOf(a, 400, 'BAD_REQUEST', /json.*ndjson.*csv/);
    },
    same: 'bytes',
  },
  {
    name: 'format: an error asked as CSV is JSON',
    request: sqlReq('parity.rows', 'select nope from events', { format: 'csv' }),
    check(a) {
      errorOf(a, 400, 'INVALID_QUERY', /nope/);
    },
    same: 'bytes',
  },
  // ----- value encoding -----
  {
    name: 'encoding: record members keep the order the event sent them',
    request: rowsReq({ prefix: 'a', format: 'ndjson' }),
    check(a) {
      const rows = ndjsonRows(a);
      const request = (r: Row | undefined) => {
        const metadata = (r?.metadata ?? []) as Row[];
        return ((metadata[0]?.request ?? []) as Row[])[0] ?? {};
      };
      // a1 sent {"method","path","headers"}, a5 {"path","deep"} (docs/API.md §4: "so it looks as the event did").
      assert.deepEqual(Object.keys(request(rows[0])), ['method', 'path', 'headers']);
      assert.deepEqual(Object.keys(request(rows[4])), ['path', 'deep']);
    },
    same: 'bytes',
  },
  {
    name: 'encoding: scalar types of every kind, built by the query',
    request: sqlReq(
      'parity.rows',
      `select timestamp '2026-11-21 10:00:00.000001' as ts, date '2026-11-21' as d,
  datetime '2026-11-21 10:00:00.5' as dt, datetime '2026-11-21 10:00:00' as dt0,
  cast('9223372036854775807' as int64) as imax, cast('-9223372036854775808' as int64) as imin,
  0.1 as f, 1e300 as fbig, -0.5 as fneg, 3.0 as fwhole, cast('nan' as float64) as nan,
  ieee_divide(1, 0) as inf, ieee_divide(-1, 0) as ninf, 7 / 2 as div, true as t, false as fa,
  cast(null as string) as nul, 'a "q", b\\nc ✓' as s, '' as empty,
  struct(1 as a, 'x' as b) as st, [1, 2, 3] as arr, [struct(1 as k), struct(2 as k)] as arr_st,
  cast('1.25' as numeric) as num, ['a', 'b'] as sarr`,
    ),
    check(a) {
      assert.deepEqual(rowsOf(a), [
        {
          ts: T0 * 1000 + 1,
          d: '2026-11-21',
          dt: '2026-11-21T10:00:00.500000',
          dt0: '2026-11-21T10:00:00',
          imax: 2 ** 63,
          imin: -(2 ** 63),
          f: 0.1,
          fbig: 1e300,
          fneg: -0.5,
          fwhole: 3,
          nan: 'NaN',
          inf: 'Infinity',
          ninf: '-Infinity',
          div: 3.5,
          t: true,
          fa: false,
          nul: null,
          s: 'a "q", b\nc ✓',
          empty: '',
          st: { a: 1, b: 'x' },
          arr: [1, 2, 3],
          arr_st: [{ k: 1 }, { k: 2 }],
          num: 1.25,
          sarr: ['a', 'b'],
        },
      ]);
    },
    same: 'bytes',
  },
  {
    name: 'encoding: the same types in CSV',
    request: sqlReq(
      'parity.rows',
      `select timestamp '2026-11-21 10:00:00.000001' as ts, date '2026-11-21' as d, datetime '2026-11-21 10:00:00.5' as dt,
  cast('123456789012' as int64) as i, 0.1 as f, cast('nan' as float64) as nan, true as t,
  cast(null as string) as nul, 'a "q", b\\nc' as s, '' as empty, [1, 2] as arr, [struct(1 as k)] as arr_st, struct('x' as b) as st`,
      { format: 'csv' },
    ),
    check(a) {
      const [header, record] = csvRecords(a);
      assert.deepEqual(header, ['ts', 'd', 'dt', 'i', 'f', 'nan', 't', 'nul', 's', 'empty', 'arr', 'arr_st', 'st']);
      assert.deepEqual(record, [
        String(T0 * 1000 + 1),
        '2026-11-21',
        '2026-11-21T10:00:00.500000',
        '123456789012',
        '0.1',
        'NaN',
        'true',
        '',
        'a "q", b\nc',
        '',
        '[1,2]',
        '[{"k":1}]',
        '{"b":"x"}',
      ]);
    },
    same: 'bytes',
  },
  {
    name: 'encoding: records reached by UNNEST (a missing record drops the row, LEFT JOIN keeps it)',
    request: sqlReq(
      'parity.rows',
      `select e.id, r.method, r.path, h.ip from events as e cross join unnest(e.metadata) as m cross join unnest(m.request) as r
  left join unnest(r.headers) as h order by e.id`,
    ),
    check(a) {
      assert.deepEqual(rowsOf(a), [
        { id: 'a1', method: 'GET', path: '/a', ip: '10.0.0.1' },
        { id: 'a2', method: null, path: '/b,"c"', ip: null },
        { id: 'a5', method: null, path: '/e', ip: null },
      ]);
    },
    same: 'bytes',
  },
  {
    name: 'encoding: dotted paths into records, NULL where the event has no such record',
    request: sqlReq(
      'parity.rows',
      `select id, metadata.response.status_code as status, metadata.request.deep.a.b as deep, metadata.request as req
from events where starts_with(id, 'a') order by id`,
    ),
    check(a) {
      assert.deepEqual(rowsOf(a), [
        { id: 'a1', status: 200, deep: null, req: [{ method: 'GET', path: '/a', headers: [{ ip: '10.0.0.1' }] }] },
        { id: 'a2', status: null, deep: null, req: [{ path: '/b,"c"' }] },
        { id: 'a3', status: 500, deep: null, req: null },
        { id: 'a4', status: null, deep: null, req: null },
        { id: 'a5', status: 404, deep: 'c', req: [{ path: '/e', deep: [{ a: [{ b: 'c' }] }] }] },
      ]);
    },
    same: 'canonical',
  },
  {
    name: 'encoding: a repeated record unnested, one row per element',
    request: sqlReq('parity.rows', 'select e.id, i.k, i.v from events as e cross join unnest(e.items) as i order by e.id, i.k'),
    check(a) {
      assert.deepEqual(rowsOf(a), [
        { id: 'a1', k: 1, v: 'one' },
        { id: 'a1', k: 2, v: 'two' },
        { id: 'a5', k: 3, v: null },
      ]);
    },
    same: 'bytes',
  },
  {
    name: 'encoding: a list of scalars unnested, LEFT JOIN keeps empty and absent lists',
    request: sqlReq(
      'parity.rows',
      `select e.id, tag, array_length(e.tags) as len from events as e left join unnest(e.tags) as tag on true
where starts_with(e.id, 'a') order by e.id, tag`,
    ),
    check(a) {
      assert.deepEqual(rowsOf(a), [
        { id: 'a1', tag: 'x', len: 2 },
        { id: 'a1', tag: 'y', len: 2 },
        { id: 'a2', tag: null, len: 0 },
        { id: 'a3', tag: null, len: null },
        { id: 'a4', tag: 'only', len: 1 },
        { id: 'a5', tag: null, len: null },
      ]);
    },
    same: 'bytes',
  },
  {
    name: 'encoding: NULLs sort first ascending, last descending, in ARRAY_AGG and STRING_AGG too',
    request: sqlReq(
      'parity.rows',
      `select array_agg(id order by n) as up, string_agg(id, ',' order by n) as up_text,
  array_agg(id order by n desc) as down, string_agg(id, ',' order by ok desc) as down_text
from events where id in ('a1', 'a4')`,
    ),
    check(a) {
      // docs/SQL.md: "ORDER BY puts NULLs first ascending and last descending, as BigQuery does."
      assert.deepEqual(rowsOf(a), [{ up: ['a4', 'a1'], up_text: 'a4,a1', down: ['a1', 'a4'], down_text: 'a1,a4' }]);
    },
    same: 'bytes',
  },
  {
    name: 'encoding: NULLS FIRST / NULLS LAST written inside ARRAY_AGG and STRING_AGG',
    request: sqlReq(
      'parity.rows',
      `select array_agg(n order by n nulls last) as a, array_agg(n order by n desc nulls first) as b, string_agg(id, ',' order by n, id) as c
from events where starts_with(id, 'a')`,
    ),
    check(a) {
      assert.deepEqual(rowsOf(a), [{ a: [-3, 0, 1, 2, null], b: [null, 2, 1, 0, -3], c: 'a4,a3,a5,a1,a2' }]);
    },
    same: 'bytes',
  },
  {
    name: 'encoding: NULLs first in an ORDER BY of the result, last descending',
    request: sqlReq('parity.rows', `select id, n from events where starts_with(id, 'a') order by n desc, id desc`),
    check(a) {
      assert.deepEqual(
        rowsOf(a).map((r) => r.id),
        ['a2', 'a1', 'a5', 'a3', 'a4'],
      );
    },
    same: 'bytes',
  },
  {
    name: 'encoding: ARRAY_AGG ordered both ascending and descending (documented difference)',
    request: sqlReq('parity.rows', `select array_agg(id order by n desc, id) as ids from events where starts_with(id, 'a')`),
    check(a, engine) {
      // docs/SQL.md: mixed directions inside STRING_AGG / ARRAY_AGG are QUERY_NOT_ALLOWED on ClickHouse.
      if (engine === 'clickhouse') errorOf(a, 400, 'QUERY_NOT_ALLOWED', /ARRAY_AGG/);
      else assert.deepEqual(rowsOf(a), [{ ids: ['a2', 'a1', 'a5', 'a3', 'a4'] }]);
    },
    same: 'documented',
  },
  {
    name: 'encoding: TIMESTAMP, DATE and DATETIME functions',
    request: sqlReq(
      'parity.rows',
      `select id, timestamp_trunc(timestamp, second) as sec, unix_micros(timestamp) as us, unix_millis(timestamp) as ms,
  format_timestamp('%Y-%m-%dT%H:%M:%E6S%Ez', timestamp) as txt, date(timestamp) as d, datetime(timestamp) as dt,
  extract(dayofweek from timestamp) as dow, timestamp_add(timestamp, interval 1 day) as tomorrow
from events where starts_with(id, 'a') order by id limit 2`,
    ),
    check(a) {
      assert.deepEqual(rowsOf(a), [
        {
          id: 'a1',
          sec: T0 * 1000,
          us: A1_US,
          ms: T0 + 123,
          txt: '2026-11-21T10:00:00.123456+00:00',
          d: '2026-11-21',
          dt: '2026-11-21T10:00:00.123456',
          dow: 7,
          tomorrow: A1_US + 86_400_000_000,
        },
        {
          id: 'a2',
          sec: (T0 + 1000) * 1000,
          us: (T0 + 1000) * 1000,
          ms: T0 + 1000,
          txt: '2026-11-21T10:00:01.000000+00:00',
          d: '2026-11-21',
          dt: '2026-11-21T10:00:01',
          dow: 7,
          tomorrow: (T0 + 1000) * 1000 + 86_400_000_000,
        },
      ]);
    },
    same: 'bytes',
  },
  {
    name: 'encoding: aggregates over NULLs, floats and booleans',
    request: sqlReq(
      'parity.rows',
      `select count(*) as c, count(n) as cn, sum(n) as s, avg(n) as av, min(f) as mn, max(f) as mx, countif(ok) as k,
  logical_and(ok) as all_ok, string_agg(id, ',' order by id) as ids, array_agg(n ignore nulls order by n) as ns
from events where starts_with(id, 'a')`,
    ),
    check(a) {
      assert.deepEqual(rowsOf(a), [{ c: 5, cn: 4, s: 0, av: 0, mn: -2.5, mx: 1e300, k: 2, all_ok: false, ids: 'a1,a2,a3,a4,a5', ns: [-3, 0, 1, 2] }]);
    },
    same: 'bytes',
  },
  {
    name: 'encoding: TO_JSON_STRING of records and lists',
    request: sqlReq(
      'parity.rows',
      `select id, to_json_string(metadata.response) as r, to_json_string(items) as i, to_json_string(tags) as t
from events where id in ('a1', 'a3') order by id`,
    ),
    check(a) {
      assert.deepEqual(rowsOf(a), [
        { id: 'a1', r: '{"status_code":200}', i: '[{"k":1,"v":"one"},{"k":2,"v":"two"}]', t: '["x","y"]' },
        { id: 'a3', r: '{"status_code":500}', i: null, t: null },
      ]);
    },
    same: 'bytes',
  },
  {
    name: 'encoding: TO_JSON_STRING writes "/" as it is (as BigQuery does)',
    request: sqlReq('parity.rows', `select to_json_string('/a') as s, to_json_string(metadata.request.path) as p from events where id = 'a1'`),
    check(a) {
      assert.deepEqual(rowsOf(a), [{ s: '"/a"', p: '"/a"' }]);
    },
    same: 'bytes',
  },
  {
    name: 'encoding: TO_JSON_STRING and CAST AS STRING of a record the event did not carry are NULL',
    request: sqlReq('parity.rows', `select id, to_json_string(metadata) as j, cast(metadata as string) as s from events where id = 'a4'`),
    check(a) {
      assert.deepEqual(rowsOf(a), [{ id: 'a4', j: null, s: null }]);
    },
    same: 'bytes',
  },
  {
    name: 'encoding: CONCAT and || of a record the event did not carry are NULL; a record joined with || keeps "/"',
    request: sqlReq(
      'parity.rows',
      `select id, concat('x', metadata.request) as c, metadata.request || '' as p, json_query(metadata, '$.request') as q
from events where id in ('a2', 'a3', 'a4') order by id`,
    ),
    check(a) {
      const text = '{"path":"/b,\\"c\\""}';
      assert.deepEqual(rowsOf(a), [
        { id: 'a2', c: `x${text}`, p: text, q: text },
        { id: 'a3', c: null, p: null, q: null },
        { id: 'a4', c: null, p: null, q: null },
      ]);
    },
    same: 'bytes',
  },
  {
    name: "encoding: a record's JSON text lists its members by name on ClickHouse (documented difference)",
    request: sqlReq('parity.rows', `select to_json_string(metadata.request) as j from events where id = 'a1'`),
    check(a, engine) {
      // docs/SQL.md: ClickHouse's JSON type keeps a record's members sorted by name; results keep the events' order.
      const j =
        engine === 'clickhouse' ? '{"headers":{"ip":"10.0.0.1"},"method":"GET","path":"/a"}' : '{"method":"GET","path":"/a","headers":{"ip":"10.0.0.1"}}';
      assert.deepEqual(rowsOf(a), [{ j }]);
    },
    same: 'documented',
  },
  {
    name: 'encoding: a date outside 1900-2299 cast from text (documented difference)',
    request: sqlReq('parity.rows', `select safe_cast('1850-01-01' as date) as d`),
    check(a, engine) {
      // docs/SQL.md: outside ClickHouse's Date32 a CAST fails, SAFE_CAST gives NULL; DuckDB takes the date.
      assert.deepEqual(rowsOf(a), [{ d: engine === 'clickhouse' ? null : '1850-01-01' }]);
    },
    same: 'documented',
  },
  {
    name: "encoding: TO_JSON_STRING of a built STRUCT's NULL member (documented difference)",
    request: sqlReq('parity.rows', 'select to_json_string(struct(1 as a, cast(null as int64) as n)) as j'),
    check(a, engine) {
      // docs/SQL.md: "DuckDB also [leaves out NULL members] of STRUCTs the query builds; ClickHouse
      // prints a built STRUCT's own NULL members".
      assert.deepEqual(rowsOf(a), [{ j: engine === 'clickhouse' ? '{"a":1,"n":null}' : '{"a":1}' }]);
    },
    same: 'documented',
  },
  {
    name: 'encoding: SAFE_CAST of text that is not a number is NULL',
    request: sqlReq(
      'parity.rows',
      `select id, safe_cast(event_message as int64) as x, safe_cast('12' as int64) as twelve, safe_cast('x' as date) as d
from events where starts_with(id, 'a') order by id limit 2`,
    ),
    check(a) {
      assert.deepEqual(rowsOf(a), [
        { id: 'a1', x: null, twelve: 12, d: null },
        { id: 'a2', x: null, twelve: 12, d: null },
      ]);
    },
    same: 'bytes',
  },
  {
    name: 'encoding: CAST of text reads what BigQuery reads: spaces around a number, a one-digit month or day',
    request: sqlReq(
      'parity.rows',
      `select cast(' 12 ' as int64) as i, cast('-0042' as int64) as lead, cast('9223372036854775807' as int64) as imax,
  cast(' 1.5' as float64) as f, cast('2.50' as numeric) as num, cast('2026-1-5' as date) as d, cast(' 2026-02-28 ' as date) as d2,
  safe_cast('99999999999999999999' as int64) as past, safe_cast('2026-02-30' as date) as feb30,
  safe_cast('2026-01-05 10:00:00' as date) as withtime, safe_cast('1850-01-01x' as date) as junk, safe_cast('x' as float64) as nf`,
    ),
    check(a) {
      assert.deepEqual(rowsOf(a), [
        { i: 12, lead: -42, imax: 2 ** 63, f: 1.5, num: 2.5, d: '2026-01-05', d2: '2026-02-28', past: null, feb30: null, withtime: null, junk: null, nf: null },
      ]);
    },
    same: 'bytes',
  },
  {
    name: 'encoding: text in exponent or fraction form as INT64 (documented difference)',
    request: sqlReq('parity.rows', `select safe_cast('1e3' as int64) as e, safe_cast('1.5' as int64) as dec, safe_cast('1_000' as int64) as u`),
    check(a, engine) {
      // docs/SQL.md: DuckDB reads such text as an INT64 (a fraction rounded); ClickHouse refuses it, as BigQuery does.
      assert.deepEqual(rowsOf(a), [engine === 'clickhouse' ? { e: null, dec: null, u: null } : { e: 1000, dec: 2, u: 1000 }]);
    },
    same: 'documented',
  },
  {
    name: 'encoding: CAST of a FLOAT64 to INT64 rounds half away from zero',
    request: sqlReq(
      'parity.rows',
      `select id, cast(f as int64) as i, cast(f * 5 as int64) as i5, safe_cast(f as int64) as s from events where id in ('a1', 'a2', 'a4', 'a5') order by id`,
    ),
    check(a) {
      assert.deepEqual(rowsOf(a), [
        { id: 'a1', i: 0, i5: 1, s: 0 },
        { id: 'a2', i: -3, i5: -13, s: -3 },
        { id: 'a4', i: null, i5: null, s: null },
        { id: 'a5', i: 0, i5: 0, s: 0 },
      ]);
    },
    same: 'bytes',
  },
  {
    name: 'encoding: SAFE_CAST of a FLOAT64 past INT64 is NULL',
    request: sqlReq('parity.rows', `select id, safe_cast(f as int64) as i from events where id = 'a3'`),
    check(a) {
      assert.deepEqual(rowsOf(a), [{ id: 'a3', i: null }]);
    },
    same: 'bytes',
  },
  {
    name: 'encoding: LF-ENDPOINT-REDACT-PII replaces IP addresses at any depth',
    request: rowsReq({ prefix: 'a1' }, { 'lf-endpoint-redact-pii': 'true' }),
    check(a) {
      const [r] = rowsOf(a) as [Row];
      assert.deepEqual(r.metadata, [{ request: [{ method: 'GET', path: '/a', headers: [{ ip: 'REDACTED' }] }], response: [{ status_code: 200 }] }]);
    },
    same: 'canonical',
  },
  // ----- parameter binding -----
  {
    name: 'params: typed values bind with their types',
    request: {
      endpoint: 'parity.typed',
      params: { i: '41', f: '1.5', b: 'FALSE', ts: '2026-11-21T10:00:00.5+01:00', d: '2026-11-20', e: 'warn', s: '007', u: 'x' },
    },
    check(a) {
      assert.deepEqual(rowsOf(a), [
        { i_next: 42, i: 41, f_double: 3, b: false, ts: (T0 - 3_600_000 + 500) * 1000, d: '2026-11-20', e: 'warn', s: '007', u: 'x', n_at_least: 20 },
      ]);
    },
    same: 'bytes',
  },
  {
    name: 'params: typed defaults; an absent untyped one is NULL; a date as a timestamp is midnight UTC',
    request: { endpoint: 'parity.typed', params: { ts: '2026-11-21' } },
    check(a) {
      assert.deepEqual(rowsOf(a), [
        { i_next: 6, i: 5, f_double: 0.5, b: true, ts: T0 * 1000 - 36_000_000_000, d: '2026-11-21', e: 'error', s: null, u: null, n_at_least: 20 },
      ]);
    },
    same: 'bytes',
  },
  {
    name: 'params: typed values in a JSON body (numbers and booleans); the body wins over the query string',
    request: {
      endpoint: 'parity.typed',
      method: 'POST',
      params: { i: '1000', ts: '2000-01-01' },
      body: { i: 1, f: 2, b: true, ts: '2026-11-21T10:00:00Z', s: 12 },
    },
    check(a) {
      assert.deepEqual(rowsOf(a), [{ i_next: 2, i: 1, f_double: 4, b: true, ts: T0 * 1000, d: '2026-11-21', e: 'error', s: '12', u: null, n_at_least: 22 }]);
    },
    same: 'bytes',
  },
  {
    name: 'params: an int past 2^53 binds exactly (compared in the query) and comes back as a JSON number',
    request: { endpoint: 'parity.typed', params: { i: '9223372036854775806', ts: '2026-11-21' } },
    check(a) {
      const [r] = rowsOf(a) as [Row];
      assert.equal(r.i, 2 ** 63);
      assert.equal(r.i_next, 2 ** 63);
      assert.equal(r.n_at_least, 0);
    },
    same: 'bytes',
  },
  {
    name: 'params: a value that does not fit its type is 400 BAD_REQUEST naming it and the type',
    request: { endpoint: 'parity.typed', params: { i: 'abc', ts: '2026-11-21' } },
    check(a) {
      errorOf(a, 400, 'BAD_REQUEST', /\bi\b[\s\S]*\bint\b/);
    },
    same: 'bytes',
  },
  {
    name: 'params: an enum value outside its values is 400 BAD_REQUEST',
    request: { endpoint: 'parity.typed', params: { e: 'debug', ts: '2026-11-21' } },
    check(a) {
      errorOf(a, 400, 'BAD_REQUEST', /\be\b/);
    },
    same: 'bytes',
  },
  {
    name: 'params: a timestamp that does not parse is 400 BAD_REQUEST',
    request: { endpoint: 'parity.typed', params: { ts: 'yesterday' } },
    check(a) {
      errorOf(a, 400, 'BAD_REQUEST', /\bts\b/);
    },
    same: 'bytes',
  },
  {
    name: 'params: a date that is not a calendar date is 400 BAD_REQUEST',
    request: { endpoint: 'parity.typed', params: { ts: '2026-11-21', d: '2026-02-30' } },
    check(a) {
      errorOf(a, 400, 'BAD_REQUEST', /\bd\b/);
    },
    same: 'bytes',
  },
  {
    name: 'params: a missing required parameter is 400 BAD_REQUEST',
    request: { endpoint: 'parity.typed', params: { i: '1' } },
    check(a) {
      errorOf(a, 400, 'BAD_REQUEST', /\bts\b/);
    },
    same: 'bytes',
  },
  {
    name: 'params: untyped parameters bind as strings',
    request: { endpoint: 'parity.untyped', params: { a: 'a1', b: '0042' } },
    check(a) {
      assert.deepEqual(rowsOf(a), [{ a: 'a1', b: '0042', joined: 'a1|0042', a_missing: false, matching: 1 }]);
    },
    same: 'bytes',
  },
  {
    name: 'params: untyped parameters not given are NULL; undeclared ones are ignored',
    request: { endpoint: 'parity.untyped', params: { zzz: '1' } },
    check(a) {
      assert.deepEqual(rowsOf(a), [{ a: null, b: null, joined: 'none|none', a_missing: true, matching: 0 }]);
    },
    same: 'bytes',
  },
  {
    name: 'params: a query-string parameter given twice binds its last value',
    request: { endpoint: 'parity.untyped', query: 'a=first&a=a2&b=one&b=two' },
    check(a) {
      assert.deepEqual(rowsOf(a), [{ a: 'a2', b: 'two', joined: 'a2|two', a_missing: false, matching: 1 }]);
    },
    same: 'bytes',
  },
  {
    name: 'params: a bound value never becomes SQL text',
    request: { endpoint: 'parity.untyped', params: { a: "x' or '1'='1", b: '\\ ✓ "q"' } },
    check(a) {
      assert.deepEqual(rowsOf(a), [{ a: "x' or '1'='1", b: '\\ ✓ "q"', joined: `x' or '1'='1|\\ ✓ "q"`, a_missing: false, matching: 0 }]);
    },
    same: 'bytes',
  },
  {
    name: 'params: the JSON body wins over the query string',
    request: { endpoint: 'parity.untyped', method: 'POST', params: { a: 'q', b: 'q' }, body: { a: 'body' } },
    check(a) {
      assert.deepEqual(rowsOf(a), [{ a: 'body', b: 'q', joined: 'body|q', a_missing: false, matching: 0 }]);
    },
    same: 'bytes',
  },
  {
    name: "params: a caller query may use the saved query's parameters",
    request: sqlReq('parity.rows', 'select id from events where starts_with(id, @prefix) order by id desc', { prefix: 'a' }),
    check(a) {
      assert.deepEqual(
        rowsOf(a).map((r) => r.id),
        ['a5', 'a4', 'a3', 'a2', 'a1'],
      );
    },
    same: 'bytes',
  },
  {
    name: 'params: a caller query reading an unknown parameter is 400 INVALID_QUERY',
    request: sqlReq('parity.rows', 'select id, @nope as x from events'),
    check(a) {
      errorOf(a, 400, 'INVALID_QUERY', /nope/);
    },
    same: 'bytes',
  },
  // ----- row cap -----
  {
    name: 'cap: max_limit caps the saved query (JSON)',
    request: { endpoint: 'parity.capped' },
    check(a) {
      assert.deepEqual(rowsOf(a), [
        { id: 'a1', n: 1 },
        { id: 'a2', n: 2 },
        { id: 'a3', n: -3 },
      ]);
    },
    same: 'bytes',
  },
  {
    name: 'cap: max_limit caps NDJSON',
    request: { endpoint: 'parity.capped', params: { format: 'ndjson' } },
    check(a) {
      assert.equal(a.text, '{"id":"a1","n":1}\n{"id":"a2","n":2}\n{"id":"a3","n":-3}\n');
    },
    same: 'bytes',
  },
  {
    name: 'cap: max_limit caps CSV',
    request: { endpoint: 'parity.capped', params: { format: 'csv' } },
    check(a) {
      assert.equal(a.text, 'id,n\r\na1,1\r\na2,2\r\na3,-3\r\n');
    },
    same: 'bytes',
  },
  {
    name: 'cap: a caller query with a larger LIMIT gets max_limit rows',
    request: sqlReq('parity.capped', 'select id from events order by id desc limit 50'),
    check(a) {
      assert.deepEqual(rowsOf(a), [{ id: 'b19' }, { id: 'b18' }, { id: 'b17' }]);
    },
    same: 'bytes',
  },
  {
    name: 'cap: a caller query without LIMIT gets max_limit rows (CSV)',
    request: sqlReq('parity.capped', 'select n from unnest(generate_array(1, 1000)) as n order by n', { format: 'csv' }),
    check(a) {
      assert.equal(a.text, 'n\r\n1\r\n2\r\n3\r\n');
    },
    same: 'bytes',
  },
  {
    name: 'cap: a caller query with a smaller LIMIT and an OFFSET keeps them',
    request: sqlReq('parity.capped', 'select id from events order by id limit 2 offset 1'),
    check(a) {
      assert.deepEqual(rowsOf(a), [{ id: 'a2' }, { id: 'a3' }]);
    },
    same: 'bytes',
  },
  {
    name: 'cap: an LQL query gets max_limit rows, newest first',
    request: { endpoint: 'parity.capped', params: { lql: 'bulk s:id s:n' } },
    check(a) {
      assert.deepEqual(rowsOf(a), [
        { id: 'b19', n: 119 },
        { id: 'b18', n: 118 },
        { id: 'b17', n: 117 },
      ]);
    },
    same: 'bytes',
  },
  // ----- response byte cap -----
  {
    name: 'cap: a result under QUERY_MAX_RESPONSE_BYTES is answered whole',
    request: sqlReq('parity.big', "select n, repeat('x', 1000) as s from unnest(generate_array(1, 40)) as n order by n"),
    check(a) {
      assert.equal(rowsOf(a).length, 40);
    },
    same: 'bytes',
  },
  ...(['json', 'ndjson', 'csv'] as const).map(
    (format): ParityCase => ({
      name: `cap: a result past QUERY_MAX_RESPONSE_BYTES is 400 RESULT_TOO_LARGE (${format})`,
      request: sqlReq('parity.big', "select n, repeat('x', 1000) as s from unnest(generate_array(1, 5000)) as n", { format }),
      check(a) {
        errorOf(a, 400, 'RESULT_TOO_LARGE', /QUERY_MAX_RESPONSE_BYTES/);
      },
      same: 'error-loose',
    }),
  ),
  {
    name: 'cap: stored rows past QUERY_MAX_RESPONSE_BYTES are 400 RESULT_TOO_LARGE',
    request: sqlReq('parity.big', 'select e.id, repeat(e.event_message, 100) as s from events as e cross join unnest(generate_array(1, 30)) as k'),
    check(a) {
      errorOf(a, 400, 'RESULT_TOO_LARGE', /QUERY_MAX_RESPONSE_BYTES/);
    },
    same: 'error-loose',
  },
  // ----- errors the service finds before any engine runs -----
  {
    name: 'error: SQL that does not parse is 400 PARSE_ERROR naming line and column',
    request: sqlReq('parity.rows', 'select id,\n  from events where (n >'),
    check(a) {
      errorOf(a, 400, 'PARSE_ERROR', /[Ll]ine:? ?\d+.*[Cc]olumn:? ?\d+/);
    },
    same: 'bytes',
  },
  {
    name: 'error: an unknown column is 400 INVALID_QUERY naming it',
    request: sqlReq('parity.rows', 'select nope from events'),
    check(a) {
      errorOf(a, 400, 'INVALID_QUERY', /nope/);
    },
    same: 'bytes',
  },
  {
    name: 'error: a field access on a non-record is 400 INVALID_QUERY',
    request: sqlReq('parity.rows', 'select n.x as y from events'),
    check(a) {
      errorOf(a, 400, 'INVALID_QUERY');
    },
    same: 'bytes',
  },
  {
    name: 'error: a wrong argument count is 400 INVALID_QUERY',
    request: sqlReq('parity.rows', 'select abs(n, n) as x from events'),
    check(a) {
      errorOf(a, 400, 'INVALID_QUERY', /abs/i);
    },
    same: 'bytes',
  },
  {
    name: 'error: a function outside the allow-list is 400 QUERY_NOT_ALLOWED',
    request: sqlReq('parity.rows', 'select generate_uuid() as u from events'),
    check(a) {
      errorOf(a, 400, 'QUERY_NOT_ALLOWED', /generate_uuid/i);
    },
    same: 'bytes',
  },
  {
    name: 'error: a source table in a caller query is 400 QUERY_NOT_ALLOWED (sandbox)',
    request: sqlReq('parity.rows', `select id from \`${SOURCE}\``),
    check(a) {
      errorOf(a, 400, 'QUERY_NOT_ALLOWED', /Table not found in CTE/);
    },
    same: 'bytes',
  },
  {
    name: 'error: a disallowed table in a subquery is 400 QUERY_NOT_ALLOWED (sandbox)',
    request: sqlReq('parity.rows', 'select id from events where id in (select id from `cloudflare.logs.prod`)'),
    check(a) {
      errorOf(a, 400, 'QUERY_NOT_ALLOWED', /Table not found in CTE/);
    },
    same: 'bytes',
  },
  {
    name: 'error: a wildcard is 400 QUERY_NOT_ALLOWED',
    request: sqlReq('parity.rows', 'select * from events'),
    check(a) {
      errorOf(a, 400, 'QUERY_NOT_ALLOWED');
    },
    same: 'bytes',
  },
  {
    name: 'error: DML is 400 QUERY_NOT_ALLOWED',
    request: sqlReq('parity.rows', 'delete from events where true'),
    check(a) {
      errorOf(a, 400, 'QUERY_NOT_ALLOWED');
    },
    same: 'bytes',
  },
  {
    name: 'error: sql on an endpoint that is not sandboxable is a 400',
    request: sqlReq('parity.plain', 'select id from events'),
    check(a) {
      // docs/API.md §4 says "a 400"; docs/SQL.md's table says BAD_REQUEST, the service (and its
      // own tests) answer QUERY_NOT_ALLOWED on every engine.
      assert.equal(a.status, 400, a.text);
      const code = (a.json as { error?: { code?: string } }).error?.code ?? '';
      errorOf(a, 400, code, /sandbox/);
    },
    same: 'bytes',
  },
  {
    name: 'error: an unknown endpoint is 404 NOT_FOUND',
    request: { endpoint: 'parity.none-such' },
    check(a) {
      errorOf(a, 404, 'NOT_FOUND');
    },
    same: 'bytes',
  },
  // ----- errors from the engine -----
  {
    name: 'error: a type error is 400 INVALID_QUERY',
    request: sqlReq('parity.rows', 'select n + event_message as x from events'),
    check(a) {
      errorOf(a, 400, 'INVALID_QUERY', /^The query is not valid: /);
    },
    same: 'error',
  },
  {
    name: "error: a type error names the caller's function, not the engine's",
    request: sqlReq('parity.rows', 'select upper(n) as x from events'),
    check(a) {
      const message = errorOf(a, 400, 'INVALID_QUERY');
      // docs/API.md §4: an error names "a column or function the caller wrote", never the generated SQL.
      assert.doesNotMatch(message, /UTF8|\bplus\b|\bupper[A-Z]/, message);
    },
    same: 'error',
  },
  valueError(
    'error: a CAST of a text column that is not a number is 400 INVALID_QUERY at run time',
    'select id, cast(event_message as int64) as x from events',
  ),
  valueError(
    'error: a CAST of a text column to FLOAT64 that is not a number is 400 INVALID_QUERY',
    'select id, cast(event_message as float64) as x from events',
  ),
  valueError('error: a CAST of a non-NULL text column that is not a number is 400 INVALID_QUERY', 'select cast(id as int64) as x from events'),
  {
    name: 'error: a CAST of text in exponent form to INT64 is 400 INVALID_QUERY on ClickHouse (as in BigQuery), 1000 on DuckDB (documented difference)',
    request: sqlReq('parity.rows', "select cast('1e3' as int64) as x"),
    check(a, engine) {
      if (engine === 'clickhouse') errorOf(a, 400, 'INVALID_QUERY', /^The query is not valid: /);
      else assert.deepEqual(rowsOf(a), [{ x: 1000 }]);
    },
    same: 'documented',
  },
  valueError('error: a CAST of text that is not a timestamp is 400 INVALID_QUERY', 'select id, cast(event_message as timestamp) as x from events'),
  valueError('error: a CAST of text that is not a calendar date is 400 INVALID_QUERY', "select cast('2026-13-45' as date) as x"),
  valueError('error: a CAST of a day a month does not have is 400 INVALID_QUERY', "select cast('2026-02-29' as date) as x"),
  valueError('error: a CAST of text with a time to DATE is 400 INVALID_QUERY (as in BigQuery)', "select cast('2026-01-05 10:00:00' as date) as x"),
  valueError('error: a CAST of a text column that is not a date is 400 INVALID_QUERY', 'select id, cast(event_message as date) as x from events'),
  valueError(
    'error: a CAST of a text column to NUMERIC that is not a number is 400 INVALID_QUERY',
    'select id, cast(event_message as numeric) as x from events',
  ),
  valueError('error: a CAST of text past INT64 is 400 INVALID_QUERY', "select cast('9223372036854775808' as int64) as x"),
  valueError('error: a CAST of a number alone to TIMESTAMP is 400 INVALID_QUERY', "select cast('12' as timestamp) as x"),
  valueError('error: a CAST of an hour past 23 to TIMESTAMP is 400 INVALID_QUERY', "select cast('2026-01-05 25:00:00' as timestamp) as x"),
  valueError('error: a CAST of a minute past 59 to DATETIME is 400 INVALID_QUERY', "select cast('2026-01-05 10:61:00' as datetime) as x"),
  {
    name: 'encoding: SAFE_CAST of text that is not a timestamp is NULL; the usual forms are read alike',
    request: sqlReq(
      'parity.rows',
      `select safe_cast('12' as timestamp) as a, safe_cast('2026-01-05 25:00:00' as timestamp) as b, safe_cast('2026-02-30 10:00:00' as timestamp) as c,
  cast('2026-1-5 1:2:3' as timestamp) as d, cast('2026-01-05T10:00:00.5+02' as timestamp) as e, cast('2026-01-05 10:00:00 UTC' as timestamp) as f,
  cast('2026-01-05 10:00' as timestamp) as g, cast('2026-01-05T10:00:00.123456789Z' as timestamp) as h, cast('2026-01-05 10:00:00' as datetime) as i`,
    ),
    check(a) {
      const t = Date.UTC(2026, 0, 5, 10) * 1000;
      assert.deepEqual(rowsOf(a), [
        {
          a: null,
          b: null,
          c: null,
          d: Date.UTC(2026, 0, 5, 1, 2, 3) * 1000,
          e: t - 7_200_000_000 + 500_000,
          f: t,
          g: t,
          h: t + 123_456,
          i: '2026-01-05T10:00:00',
        },
      ]);
    },
    same: 'bytes',
  },
  {
    name: 'error: a CAST BigQuery does not have (BOOL to DATE) is 400 INVALID_QUERY before the query runs',
    request: sqlReq('parity.rows', 'select id, cast(ok as date) as x from events'),
    check(a) {
      errorOf(a, 400, 'INVALID_QUERY', /^Invalid cast from BOOL to DATE$/);
    },
    same: 'bytes',
  },
  {
    name: 'error: SAFE_CAST of TIMESTAMP to INT64 is refused too (BigQuery has no such cast)',
    request: sqlReq('parity.rows', 'select id, safe_cast(timestamp as int64) as x from events'),
    check(a) {
      errorOf(a, 400, 'INVALID_QUERY', /^Invalid cast from TIMESTAMP to INT64$/);
    },
    same: 'bytes',
  },
  valueError('error: a CAST of a FLOAT64 past INT64 is 400 INVALID_QUERY', "select id, cast(f as int64) as x from events where id = 'a3'"),
  {
    name: 'error: an INT64 overflow is 400 INVALID_QUERY on DuckDB, wraps around on ClickHouse (documented difference)',
    request: sqlReq('parity.rows', "select id, cast('9223372036854775807' as int64) + n as x from events where id = 'a1'"),
    check(a, engine) {
      // docs/SQL.md: INT64 arithmetic past its range wraps around on ClickHouse.
      if (engine === 'clickhouse') assert.deepEqual(rowsOf(a), [{ id: 'a1', x: -(2 ** 63) }]);
      else errorOf(a, 400, 'INVALID_QUERY', /^The query is not valid: /);
    },
    same: 'documented',
  },
  valueError('error: DIV by zero is 400 INVALID_QUERY', 'select id, div(n, 0) as x from events'),
  {
    name: 'error: PARSE_TIMESTAMP of text it cannot read is 400 INVALID_QUERY',
    request: sqlReq('parity.rows', "select id, parse_timestamp('%Y-%m-%d %H:%M:%S', event_message) as x from events"),
    check(a) {
      errorOf(a, 400, 'INVALID_QUERY', /PARSE_TIMESTAMP could not read a value with its format/);
    },
    same: 'bytes',
  },
  {
    name: 'error: PARSE_DATE of a day that does not exist is 400 INVALID_QUERY',
    request: sqlReq('parity.rows', "select parse_date('%Y-%m-%d', '2026-02-30') as x"),
    check(a) {
      errorOf(a, 400, 'INVALID_QUERY', /PARSE_DATE could not read a value with its format/);
    },
    same: 'bytes',
  },
  // ----- X-Query-Warnings -----
  {
    name: 'warnings: a nested path no event carried reads as NULL, named in X-Query-Warnings',
    request: sqlReq(
      'parity.rows',
      'select e.id, r.search as search from events as e cross join unnest(e.metadata) as m cross join unnest(m.request) as r order by e.id',
    ),
    check(a) {
      assert.deepEqual(rowsOf(a), [
        { id: 'a1', search: null },
        { id: 'a2', search: null },
        { id: 'a5', search: null },
      ]);
      assert.match(a.warnings ?? '', /\br\.search\b|metadata\.request\.search/);
    },
    same: 'bytes',
  },
  {
    name: 'warnings: two dotted paths no event carried',
    request: sqlReq('parity.rows', `select id, metadata.response.size as size, metadata.request.deep.z as z from events where id = 'a5'`),
    check(a) {
      assert.deepEqual(rowsOf(a), [{ id: 'a5', size: null, z: null }]);
      assert.match(a.warnings ?? '', /metadata\.response\.size/);
      assert.match(a.warnings ?? '', /metadata\.request\.deep\.z/);
    },
    same: 'bytes',
  },
  {
    name: 'warnings: none for paths some event carried',
    request: sqlReq('parity.rows', `select id, metadata.response.status_code as s from events where id = 'a4'`),
    check(a) {
      assert.deepEqual(rowsOf(a), [{ id: 'a4', s: null }]);
      assert.equal(a.warnings, null);
    },
    same: 'bytes',
  },
  {
    name: 'warnings: a top-level column its source never received, in a saved query',
    request: { endpoint: 'parity.late' },
    check(a) {
      assert.deepEqual(rowsOf(a), [{ id: 'l1', never_sent: null }]);
      assert.match(a.warnings ?? '', /never_sent/);
    },
    same: 'bytes',
  },
  {
    name: 'warnings: in CSV too',
    request: sqlReq('parity.rows', `select id, metadata.response.size as size from events where id = 'a5'`, { format: 'csv' }),
    check(a) {
      assert.equal(a.text, 'id,size\r\na5,\r\n');
      assert.match(a.warnings ?? '', /metadata\.response\.size/);
    },
    same: 'bytes',
  },
  // ----- time limit (last: the engine may still be stopping the query) -----
  {
    name: 'error: a query past QUERY_TIMEOUT_MS is 504 QUERY_TIMEOUT',
    request: sqlReq(
      'parity.slow',
      "select count(a.id) as c from many as a cross join many as b cross join many as c where a.event_message || b.event_message || c.event_message = 'never'",
    ),
    check(a) {
      errorOf(a, 504, 'QUERY_TIMEOUT', /time limit/);
    },
    same: 'bytes',
  },
];
