/**
 * LQL filter values read as the stored type of the field they compare with (from the semantic
 * pass's types of the saved query's CTEs), over HTTP: a numeric-looking value on a string field
 * is a string, `@>` converts to the list's element type, and a value the type cannot hold is a 400
 * naming the field, the type and the value.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ingest, query, type Row, rows } from '../endpoints/http-support.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const P = 'typedproj';
const now = Date.now();
const ago = (m: number) => new Date(now - m * 60_000).toISOString();

function edge(id: string, minutes: number, metadata: Row): Row {
  return { id, timestamp: ago(minutes), project: P, event_message: `event ${id}`, metadata };
}

describe('LQL values typed by the stored field', () => {
  let s: TestServer;
  const lql = (q: string) => rows(s, 'logs.all', { project: P, lql: `f:edge_logs s:id ${q}` });
  const ids = async (q: string) => (await lql(q)).map((r) => r.id);

  before(async () => {
    s = await startTestServer();
    await ingest(s, 'cloudflare.logs.prod', [
      edge('a', 1, { user_id: '12345', tags: ['500', 'prod'], codes: [200, 404], flag: true, status: 200, ratio: 0.5 }),
      edge('b', 2, { user_id: 'abc', tags: ['x'], codes: [500], flag: false, status: 500, ratio: 1.5 }),
      edge('c', 3, { user_id: '012345', tags: [], codes: [], flag: true, status: 404, ratio: 2, config: { region: 'eu' } }),
    ]);
  });
  after(() => s.close());

  test('a number-looking value on a string field compares as a string', async () => {
    assert.deepEqual(await ids('m.user_id:12345'), ['a']);
    assert.deepEqual(await ids('m.user_id:012345'), ['c']);
  });

  test('@> converts the value to the list element type', async () => {
    assert.deepEqual(await ids('m.tags:@>500'), ['a']);
    assert.deepEqual(await ids('m.codes:@>500'), ['b']);
    assert.deepEqual(await ids('m.codes:@>"404"'), ['a']);
  });

  test('numbers, booleans and ranges on typed fields', async () => {
    assert.deepEqual(await ids('m.status:>=404'), ['b', 'c']);
    assert.deepEqual(await ids('m.flag:true'), ['a', 'c']);
    assert.deepEqual(await ids('m.ratio:1..2'), ['b', 'c']);
    assert.deepEqual(await ids('m.status:"500"'), ['b']);
  });

  for (const [clause, field, type, value] of [
    ['m.flag:maybe', 'metadata.flag', 'BOOL', 'maybe'],
    ['m.status:abc', 'metadata.status', 'INT64', 'abc'],
    ['m.status:1.5', 'metadata.status', 'INT64', '1.5'],
    ['m.ratio:fast', 'metadata.ratio', 'FLOAT64', 'fast'],
    ['m.codes:@>abc', 'metadata.codes', 'INT64', 'abc'],
  ] as const) {
    test(`${clause}: 400 naming the field, the type and the value`, async () => {
      const r = await query(s, 'logs.all', { project: P, lql: `f:edge_logs ${clause}` });
      assert.equal(r.status, 400, JSON.stringify(r.error));
      assert.equal(r.error?.code, 'INVALID_QUERY');
      const message = r.error?.message ?? '';
      assert.ok(message.includes(`\`${field}\``) && message.includes(type) && message.includes(`\`${value}\``), message);
    });
  }

  for (const clause of ['m.config:eu', 'm.config:~eu', '-m.config:eu', 'm.config:>1']) {
    test(`${clause}: a record compared with a value is a 400 saying so, as Logflare`, async () => {
      const r = await query(s, 'logs.all', { project: P, lql: `f:edge_logs ${clause}` });
      assert.equal(r.status, 400, JSON.stringify(r.rows));
      assert.equal(r.error?.code, 'INVALID_QUERY');
      assert.match(r.error?.message ?? '', /Field `metadata\.config` is a record \(a map of fields\).*`metadata\.config\.region`/);
    });
  }

  test('its fields filter as usual, and NULL tests the record itself', async () => {
    assert.deepEqual(await ids('m.config.region:eu'), ['c']);
    assert.deepEqual(await ids('m.config:NULL'), ['a', 'b']);
  });
});
