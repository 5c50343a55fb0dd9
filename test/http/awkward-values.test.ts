/**
 * Values JavaScript reads but a store may refuse, over HTTP on every engine: integers beyond
 * 64 bits, lone surrogates written as escapes (in the message, a field and an id), escaped pairs,
 * and a backslash followed by the text `ud800`. Each request is a 200 (never a 500), and what is
 * read back is the same on both engines: a wide integer as the float JavaScript holds, a lone
 * surrogate as U+FFFD, everything else as sent.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createEndpoint, createSource, postText as post, type Row, rows } from '../endpoints/http-support.ts';
import { engineEnv, engines } from '../support/engines.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const BODY = String.raw`[
  {"id":"w1","event_message":"a\ud800b","metadata":{"big":-9223372036854775809,"huger":18446744073709551616,"ok":5}},
  {"id":"w2","event_message":"pair \ud83d\ude00","metadata":{"text":"lone \udc00 and \\ud800 as text","big":9223372036854775808,"ok":6}},
  {"id":"w3\ud800","event_message":"plain","metadata":{"ok":7}}
]`;

/** Each engine's answer, to compare them at the end. */
const answers = new Map<string, Row[]>();

for (const engine of engines) {
  describe(`awkward values on ${engine}`, () => {
    let s: TestServer;
    before(async () => {
      s = await startTestServer(engineEnv(engine));
      await createSource(s, 'awkward');
      await createEndpoint(s, {
        name: 'awkward.read',
        query: 'select id, event_message, metadata from `awkward` order by event_message, id',
        cache_duration_seconds: 0,
      });
    });
    after(() => s.close());

    it('are stored (200), twice over: once new to the schema, once as it stands', async () => {
      for (const round of [1, 2]) {
        const r = await post(s, 'awkward', round === 1 ? BODY : BODY.replaceAll('"w', '"v'));
        assert.equal(r.status, 200, `round ${round}: ${JSON.stringify(r.body)}`);
      }
      const got = await rows(s, 'awkward.read', {});
      assert.equal(got.length, 6);
      const byId = new Map(got.map((row) => [row.id, row]));
      const w1 = byId.get('w1') as Row;
      assert.equal(w1.event_message, 'a\ufffdb');
      const meta1 = (w1.metadata as Record<string, unknown>[])[0] as Record<string, unknown>;
      assert.equal(meta1.big, -(2 ** 63));
      assert.equal(meta1.huger, 2 ** 64);
      assert.equal(meta1.ok, 5);
      const w2 = byId.get('w2') as Row;
      assert.equal(w2.event_message, 'pair 😀');
      const meta2 = (w2.metadata as Record<string, unknown>[])[0] as Record<string, unknown>;
      assert.equal(meta2.text, 'lone \ufffd and \\ud800 as text');
      assert.ok(byId.has('w3\ufffd'), `ids: ${[...byId.keys()].join(', ')}`);
      assert.deepEqual(byId.get('v1')?.metadata, w1.metadata);
      answers.set(engine, got);
    });
  });
}

describe('awkward values: the engines agree', () => {
  it('the same rows on every engine', { skip: engines.length < 2 }, () => {
    const [first, ...others] = [...answers.values()];
    for (const other of others) assert.deepEqual(other, first);
  });
});
