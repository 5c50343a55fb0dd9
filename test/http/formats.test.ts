import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createEndpoint, createSource, ingest } from '../endpoints/http-support.ts';
import { type TestServer, startTestServer } from '../support/server.ts';

const SOURCE = 'formats.events';

type Row = Record<string, unknown>;

/** A strict RFC 4180 reader: CRLF records, quoted fields with doubled quotes. */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let i = 0;
  let quoted = false;
  while (i < text.length) {
    const c = text[i]!;
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
  assert.equal(field, '', 'the last record ends with CRLF');
  assert.equal(record.length, 0);
  return records;
}

/** What a JSON result value looks like as a CSV field. */
function csvOf(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v);
}

describe('response formats', () => {
  let s: TestServer;

  before(async () => {
    s = await startTestServer();
    await createSource(s, SOURCE);
    await ingest(s, SOURCE, [
      { id: 'r1', timestamp: '2026-11-21T10:00:01Z', event_message: 'plain', n: 1, ok: true, metadata: { path: '/a', deep: { x: 1 } } },
      { id: 'r2', timestamp: '2026-11-21T10:00:02Z', event_message: 'comma, and "quotes"', n: 2.5, ok: false, metadata: { path: '/b' } },
      { id: 'r3', timestamp: '2026-11-21T10:00:03Z', event_message: 'two\nlines\r\nand CR', n: -3, metadata: { path: '/c,"d"' } },
      { id: 'r4', timestamp: '2026-11-21T10:00:04Z', event_message: 'ünïcødé ✓ from 10.1.2.3', tags: ['x', 'y'] },
      ...Array.from({ length: 26 }, (_, i) => ({
        id: `bulk${String(i).padStart(2, '0')}`,
        timestamp: new Date(Date.UTC(2026, 10, 21, 11, 0, i)).toISOString(),
        event_message: `bulk ${i}`,
      })),
    ]);
    const query = `select id, timestamp, event_message, n, ok, metadata, tags, date(timestamp) as day from \`${SOURCE}\` where id like @prefix order by id`;
    await createEndpoint(s, { name: 'formats.rows', query, sandboxable: true });
    await createEndpoint(s, { name: 'formats.capped', query, max_limit: 5 });
    await createEndpoint(s, { name: 'formats.cached', query, cache_duration_seconds: 600, redact_pii: true });
    await createEndpoint(s, {
      name: 'formats.own',
      query: `select @format as format, count(*) as n from \`${SOURCE}\``,
    });
  });
  after(() => s.close());

  async function get(path: string, headers: Record<string, string> = {}) {
    const r = await s.fetch(path, { headers });
    return { status: r.status, headers: r.headers, text: await r.text() };
  }

  async function jsonRows(name: string, prefix: string): Promise<Row[]> {
    const r = await get(`/api/endpoints/query/${name}?prefix=${encodeURIComponent(prefix)}`);
    assert.equal(r.status, 200, r.text);
    return (JSON.parse(r.text) as { result: Row[] }).result;
  }

  test('NDJSON: one row object per line, the same rows as JSON', async () => {
    const expected = await jsonRows('formats.rows', 'r%');
    assert.equal(expected.length, 4);
    for (const [path, headers] of [
      ['/api/endpoints/query/formats.rows?prefix=r%25&format=ndjson', {}],
      ['/api/endpoints/query/formats.rows?prefix=r%25&format=NDJSON', {}],
      ['/api/endpoints/query/formats.rows?prefix=r%25', { accept: 'application/x-ndjson' }],
      ['/api/endpoints/query/formats.rows?prefix=r%25', { accept: 'text/csv;q=0.5, application/x-ndjson;q=0.9' }],
    ] as const) {
      const r = await get(path, headers);
      assert.equal(r.status, 200, r.text);
      assert.equal(r.headers.get('content-type'), 'application/x-ndjson; charset=utf-8');
      assert.ok(r.text.endsWith('\n'));
      assert.deepEqual(
        r.text
          .slice(0, -1)
          .split('\n')
          .map((l) => JSON.parse(l)),
        expected,
      );
    }
  });

  test('CSV: RFC 4180 with a header row; nested values as JSON text, NULL empty', async () => {
    const expected = await jsonRows('formats.rows', 'r%');
    for (const [path, headers] of [
      ['/api/endpoints/query/formats.rows?prefix=r%25&format=csv', {}],
      ['/api/endpoints/query/formats.rows?prefix=r%25', { accept: 'text/csv' }],
      ['/api/endpoints/query/formats.rows?prefix=r%25&format=csv', { accept: 'application/json' }],
    ] as const) {
      const r = await get(path, headers);
      assert.equal(r.status, 200, r.text);
      assert.equal(r.headers.get('content-type'), 'text/csv; charset=utf-8; header=present');
      const [header, ...records] = parseCsv(r.text);
      assert.deepEqual(header, ['id', 'timestamp', 'event_message', 'n', 'ok', 'metadata', 'tags', 'day']);
      assert.deepEqual(
        records,
        expected.map((row) => header!.map((c) => csvOf(row[c]))),
      );
    }
    const csv = (await get('/api/endpoints/query/formats.rows?prefix=r%25&format=csv')).text;
    assert.ok(csv.includes('"comma, and ""quotes"""'), 'quotes doubled inside a quoted field');
    assert.ok(csv.includes('"two\nlines\r\nand CR"'), 'line breaks kept inside quotes');
    assert.ok(csv.includes(`"[{""deep"":[{""x"":1}],""path"":""/a""}]"`) || csv.includes(`"[{""path"":""/a"",""deep"":[{""x"":1}]}]"`), csv);
    assert.ok(csv.includes('2026-11-21'), 'a DATE as its ISO text');
    assert.ok(csv.includes(`\r\nr1,${Date.UTC(2026, 10, 21, 10, 0, 1) * 1000},plain,1,true,`), 'a TIMESTAMP as unix microseconds, as in JSON');
  });

  test('an empty result: CSV is the header alone, NDJSON is empty', async () => {
    const csv = await get('/api/endpoints/query/formats.rows?prefix=none%25&format=csv');
    assert.equal(csv.status, 200);
    assert.equal(csv.text, 'id,timestamp,event_message,n,ok,metadata,tags,day\r\n');
    const nd = await get('/api/endpoints/query/formats.rows?prefix=none%25&format=ndjson');
    assert.equal(nd.status, 200);
    assert.equal(nd.text, '');
  });

  test('JSON stays the default, also for browsers and unknown media types', async () => {
    for (const accept of [undefined, '*/*', 'application/json', 'text/html,application/xhtml+xml,*/*;q=0.8', 'image/png']) {
      const r = await get('/api/endpoints/query/formats.rows?prefix=r1', accept ? { accept } : {});
      assert.equal(r.status, 200);
      assert.equal(r.headers.get('content-type'), 'application/json; charset=utf-8', String(accept));
      assert.equal((JSON.parse(r.text) as { result: Row[] }).result.length, 1);
    }
    const post = await s.fetch('/api/endpoints/query/formats.rows', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ prefix: 'r%', format: 'csv' }),
    });
    assert.equal(post.headers.get('content-type'), 'text/csv; charset=utf-8; header=present', 'format in a POST body');
    assert.equal(parseCsv(await post.text()).length, 5);
  });

  test('an unknown format is a 400 naming the formats; errors stay JSON in every format', async () => {
    const bad = await get('/api/endpoints/query/formats.rows?prefix=r%25&format=xml');
    assert.equal(bad.status, 400);
    assert.equal(bad.headers.get('content-type'), 'application/json; charset=utf-8');
    const err = (JSON.parse(bad.text) as { error: { code: string; message: string } }).error;
    assert.equal(err.code, 'BAD_REQUEST');
    assert.match(err.message, /json, ndjson, csv/);
    for (const format of ['csv', 'ndjson']) {
      const r = await get(`/api/endpoints/query/formats.rows?prefix=r%25&format=${format}&sql=${encodeURIComponent('select nope from')}`);
      assert.equal(r.status, 400);
      assert.equal(r.headers.get('content-type'), 'application/json; charset=utf-8');
      assert.equal((JSON.parse(r.text) as { error: { code: string } }).error.code, 'PARSE_ERROR');
      const missing = await get(`/api/endpoints/query/formats.nope?format=${format}`, { accept: 'text/csv' });
      assert.equal(missing.status, 404);
      assert.equal(missing.headers.get('content-type'), 'application/json; charset=utf-8');
    }
  });

  test('the row cap holds in every format', async () => {
    assert.equal((await jsonRows('formats.capped', '%')).length, 5);
    const nd = await get('/api/endpoints/query/formats.capped?prefix=%25&format=ndjson');
    assert.equal(nd.text.trimEnd().split('\n').length, 5);
    const csv = await get('/api/endpoints/query/formats.capped?prefix=%25&format=csv');
    assert.equal(parseCsv(csv.text).length, 1 + 5);
  });

  test('one cached result serves every format; redaction applies to all', async () => {
    const first = await get('/api/endpoints/query/formats.cached?prefix=r%25&format=csv');
    assert.equal(first.headers.get('x-cache'), 'MISS');
    assert.ok(first.text.includes('from REDACTED'), first.text);
    assert.ok(!first.text.includes('10.1.2.3'));
    const json = await get('/api/endpoints/query/formats.cached?prefix=r%25');
    assert.equal(json.headers.get('x-cache'), 'HIT');
    const rows = (JSON.parse(json.text) as { result: Row[] }).result;
    assert.equal(rows.length, 4);
    const nd = await get('/api/endpoints/query/formats.cached?prefix=r%25', { accept: 'application/x-ndjson' });
    assert.equal(nd.headers.get('x-cache'), 'HIT');
    assert.deepEqual(
      nd.text
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l)),
      rows,
    );
    const csv = await get('/api/endpoints/query/formats.cached?prefix=r%25&format=csv');
    assert.equal(csv.headers.get('x-cache'), 'HIT');
    assert.equal(csv.text, first.text);
  });

  test('a saved query that declares @format binds it; the format then comes from Accept', async () => {
    const r = await get('/api/endpoints/query/formats.own?format=csv');
    assert.equal(r.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.deepEqual((JSON.parse(r.text) as { result: Row[] }).result, [{ format: 'csv', n: 30 }]);
    const csv = await get('/api/endpoints/query/formats.own?format=xml', { accept: 'text/csv' });
    assert.equal(csv.status, 200);
    assert.equal(csv.text, 'format,n\r\nxml,30\r\n');
  });
});

describe('large results stream', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
    await createSource(s, SOURCE);
    const events = Array.from({ length: 10_000 }, (_, i) => ({
      event_message: `event ${i}, "quoted" ${'x'.repeat(i % 40)}`,
      metadata: { i, path: `/p/${i % 13}` },
    }));
    for (let i = 0; i < events.length; i += 2500) await ingest(s, SOURCE, events.slice(i, i + 2500));
    await createEndpoint(s, {
      name: 'formats.big',
      query: `select event_message, metadata from \`${SOURCE}\` order by event_message`,
      max_limit: 10_000,
    });
  });
  after(() => s.close());

  test('10,000 rows arrive in pieces (chunked, no Content-Length) and complete in CSV and NDJSON', async () => {
    for (const format of ['csv', 'ndjson']) {
      const r = await s.fetch(`/api/endpoints/query/formats.big?format=${format}`);
      assert.equal(r.status, 200);
      assert.equal(r.headers.get('content-length'), null, 'streamed, not sent as one sized body');
      assert.equal(r.headers.get('transfer-encoding'), 'chunked');
      let pieces = 0;
      let text = '';
      const decoder = new TextDecoder();
      for await (const chunk of r.body as unknown as AsyncIterable<Uint8Array>) {
        pieces++;
        text += decoder.decode(chunk, { stream: true });
      }
      assert.ok(pieces > 1, `${format}: ${pieces} pieces`);
      if (format === 'csv') assert.equal(parseCsv(text).length, 10_001);
      else assert.equal(text.trimEnd().split('\n').length, 10_000);
    }
  });
});
