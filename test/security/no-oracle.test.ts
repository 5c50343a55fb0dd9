/**
 * No oracle for endpoint or source names and ids (issue 20, docs/API.md §2 and §4), over real HTTP
 * on loopback.
 *
 * For every probe (no token, a bad or revoked token, a token of another scope, a token limited to
 * another endpoint or source) an existing resource the caller may not use and one that does not
 * exist must answer byte for byte the same status and body; and no 401/403/404 body may carry an
 * id (UUID-like) or a physical table name (`src_…`), nor the name asked for.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { createEndpoint, createSource, createToken, type EndpointView, ingest, manage } from '../endpoints/http-support.ts';
import { PRIVATE_TOKEN, PUBLIC_TOKEN, startTestServer, type TestServer } from '../support/server.ts';

const SOURCE = 'oracle.events';
const OTHER_SOURCE = 'oracle.other-events';
const SQL = `select t.id, t.event_message from \`${SOURCE}\` as t`;

const UUID_LIKE = /[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}/i;
const TABLE_LIKE = /\bsrc_[0-9a-z_]+/i;

interface Answer {
  status: number;
  text: string;
  code: string | undefined;
  message: string;
}

async function send(s: TestServer, method: string, path: string, token: string | null, body?: unknown): Promise<Answer> {
  const init: RequestInit = { method };
  if (body !== undefined) {
    init.headers = { 'content-type': 'application/json' };
    init.body = JSON.stringify(body);
  }
  const r = await s.fetch(path, init, token);
  const text = await r.text();
  let parsed: { error?: { code?: string; message?: string } } = {};
  try {
    parsed = JSON.parse(text) as typeof parsed;
  } catch {
    // not JSON: the comparison below still sees the text
  }
  return { status: r.status, text, code: parsed.error?.code, message: parsed.error?.message ?? '' };
}

/** Nothing internal in a refusal: no id, no table name, none of the names asked for. */
function assertRevealsNothing(a: Answer, what: string, names: readonly string[]): void {
  assert.ok(a.status >= 400, `${what}: expected a refusal, got ${a.status} ${a.text.slice(0, 200)}`);
  assert.doesNotMatch(a.text, UUID_LIKE, `${what}: an id in ${a.text}`);
  assert.doesNotMatch(a.text, TABLE_LIKE, `${what}: a table name in ${a.text}`);
  for (const n of names) assert.ok(!a.text.includes(n), `${what}: "${n}" echoed in ${a.text}`);
}

/** Every target answers exactly as the first one; returns that answer. */
function assertSame(answers: readonly [string, Answer][], probe: string): Answer {
  const [firstWhat, first] = answers[0] as [string, Answer];
  for (const [what, a] of answers.slice(1)) {
    assert.equal(a.status, first.status, `${probe}: ${what} → ${a.status} but ${firstWhat} → ${first.status}`);
    assert.equal(a.text, first.text, `${probe}: ${what} and ${firstWhat} differ`);
  }
  return first;
}

describe('no oracle for endpoint and source names or ids', () => {
  let s: TestServer;
  let secret: EndpointView;
  let other: EndpointView;
  let open: EndpointView;
  let sourceId: string;
  let otherSourceId: string;
  const tokens: Record<string, string | null> = {};
  let revokedTokenId = '';

  before(async () => {
    s = await startTestServer();
    sourceId = await createSource(s, SOURCE);
    otherSourceId = await createSource(s, OTHER_SOURCE);
    await ingest(s, SOURCE, [{ id: 'e1', event_message: 'one' }]);
    secret = await createEndpoint(s, { name: 'oracle.secret', query: SQL });
    other = await createEndpoint(s, { name: 'oracle.other', query: SQL });
    open = await createEndpoint(s, { name: 'oracle.open', query: SQL, enable_auth: false });

    tokens.none = null;
    tokens.bad = 'not-a-token-0123456789';
    const revoked = await manage(s, 'POST', '/api/access-tokens', { scopes: ['query'] });
    const r = revoked.body as { id: string; token: string };
    revokedTokenId = r.id;
    tokens.revoked = r.token;
    assert.equal((await manage(s, 'DELETE', `/api/access-tokens/${r.id}`)).status, 204);
    tokens.public = PUBLIC_TOKEN;
    tokens.ingest = await createToken(s, ['ingest']);
    tokens.ingestOneSource = await createToken(s, [`ingest:source:${sourceId}`]);
    tokens.otherEndpoint = await createToken(s, [`query:endpoint:${other.id}`]);
    tokens.query = await createToken(s, ['query']);
    tokens.private = PRIVATE_TOKEN;
  });
  after(() => s.close());

  /** What each probe gets for any endpoint it may not run, existing or not: status, code. */
  const queryRule: [string, number, string][] = [
    ['none', 401, 'UNAUTHORIZED'],
    ['bad', 401, 'UNAUTHORIZED'],
    ['revoked', 401, 'UNAUTHORIZED'],
    ['public', 403, 'FORBIDDEN'],
    ['ingest', 403, 'FORBIDDEN'],
    ['ingestOneSource', 403, 'FORBIDDEN'],
    ['otherEndpoint', 404, 'NOT_FOUND'],
  ];

  for (const [probe, status, code] of queryRule) {
    test(`running an endpoint, probe "${probe}": existing and unknown answer the same ${status} ${code}`, async () => {
      const token = tokens[probe] ?? null;
      const targets: [string, string, 'GET' | 'POST'][] = [
        ['existing name', `/api/endpoints/query/${secret.name}`, 'GET'],
        ['existing id', `/api/endpoints/query/${secret.id}`, 'GET'],
        ['existing id, no hyphens', `/api/endpoints/query/${secret.id.replaceAll('-', '')}`, 'GET'],
        ['existing name, POST', `/api/endpoints/query/${secret.name}`, 'POST'],
        ['existing name, legacy path', `/endpoints/query/${secret.name}`, 'GET'],
        ['seeded logs.all', '/api/endpoints/query/logs.all?project=x', 'GET'],
        ['unknown name', '/api/endpoints/query/oracle.nope', 'GET'],
        ['unknown id', `/api/endpoints/query/${randomUUID()}`, 'GET'],
        ['unknown name, POST', '/api/endpoints/query/oracle.nope', 'POST'],
        ['unknown name, legacy path', '/endpoints/query/oracle.nope', 'GET'],
      ];
      const answers: [string, Answer][] = [];
      for (const [what, path, method] of targets) {
        const a = await send(s, method, path, token, method === 'POST' ? { project: 'x' } : undefined);
        assertRevealsNothing(a, `${probe} on ${what}`, [secret.name, 'oracle.nope', 'logs.all']);
        answers.push([what, a]);
      }
      const first = assertSame(answers, probe);
      assert.equal(first.status, status, first.text);
      assert.equal(first.code, code, first.text);
    });
  }

  test('the token in any transport gets the same answers (Bearer, X-API-KEY, api_key)', async () => {
    const token = tokens.otherEndpoint as string;
    const answers: [string, Answer][] = [];
    for (const name of [secret.name, 'oracle.nope']) {
      const viaBearer = await s.fetch(`/api/endpoints/query/${name}`, { headers: { authorization: `Bearer ${token}` } }, null);
      answers.push([`${name} Bearer`, { status: viaBearer.status, text: await viaBearer.text(), code: undefined, message: '' }]);
      const viaQuery = await s.fetch(`/api/endpoints/query/${name}?api_key=${token}`, {}, null);
      answers.push([`${name} api_key`, { status: viaQuery.status, text: await viaQuery.text(), code: undefined, message: '' }]);
    }
    assert.equal(assertSame(answers, 'transports').status, 404);
  });

  test('a token that may see every endpoint gets the same 404 for an unknown name as a scoped token', async () => {
    const scoped = await send(s, 'GET', '/api/endpoints/query/oracle.nope', tokens.otherEndpoint ?? null);
    for (const probe of ['query', 'private']) {
      const a = await send(s, 'GET', '/api/endpoints/query/oracle.nope', tokens[probe] ?? null);
      assert.equal(a.status, 404);
      assert.equal(a.text, scoped.text);
      assert.equal((await send(s, 'GET', `/api/endpoints/query/${secret.name}`, tokens[probe] ?? null)).status, 200);
    }
    assert.equal((await send(s, 'GET', `/api/endpoints/query/${other.name}`, tokens.otherEndpoint ?? null)).status, 200);
  });

  test('enable_auth false: runs for anyone; an unknown name without a token is the 401 of any endpoint', async () => {
    for (const probe of ['none', 'bad', 'revoked', 'public', 'otherEndpoint']) {
      const a = await send(s, 'GET', `/api/endpoints/query/${open.name}`, tokens[probe] ?? null);
      assert.equal(a.status, 200, `${probe}: ${a.text}`);
    }
    for (const probe of ['none', 'bad']) {
      const unknown = await send(s, 'GET', '/api/endpoints/query/oracle.nope', tokens[probe] ?? null);
      const guarded = await send(s, 'GET', `/api/endpoints/query/${secret.name}`, tokens[probe] ?? null);
      assert.equal(unknown.status, 401);
      assert.equal(unknown.text, guarded.text);
    }
  });

  test('the 401 messages say what to send and depend only on the token', async () => {
    const none = await send(s, 'GET', '/api/endpoints/query/oracle.nope', null);
    assert.match(none.message, /X-API-KEY/);
    const bad = await send(s, 'GET', '/api/endpoints/query/oracle.nope', tokens.bad ?? null);
    assert.match(bad.message, /unknown or has been revoked/);
    // The same message as on the management API.
    assert.equal((await send(s, 'GET', '/api/sources', null)).text, none.text);
    assert.equal((await send(s, 'GET', '/api/sources', tokens.bad ?? null)).text, bad.text);
  });

  test('403 messages name the scope needed', async () => {
    const q = await send(s, 'GET', `/api/endpoints/query/${secret.name}`, PUBLIC_TOKEN);
    assert.match(q.message, /"query" or "query:endpoint:<endpoint id>"/);
    const i = await send(s, 'POST', `/api/logs?source_name=${SOURCE}`, tokens.query ?? null, { a: 1 });
    assert.equal(i.status, 403);
    assert.match(i.message, /"ingest", "public" or "ingest:source:<source id>"/);
    const m = await send(s, 'GET', '/api/sources', PUBLIC_TOKEN);
    assert.match(m.message, /"private"/);
  });

  describe('management routes: private only, refused before any lookup', () => {
    const targets = (): [string, string, string][] => {
      const unknown = randomUUID();
      return [
        ['endpoint', 'GET', `/api/endpoints/${secret.id}`],
        ['unknown endpoint', 'GET', `/api/endpoints/${unknown}`],
        ['endpoint stats', 'GET', `/api/endpoints/${secret.id}/stats`],
        ['unknown endpoint stats', 'GET', `/api/endpoints/${unknown}/stats`],
        ['delete endpoint', 'DELETE', `/api/endpoints/${secret.id}`],
        ['delete unknown endpoint', 'DELETE', `/api/endpoints/${unknown}`],
        ['source', 'GET', `/api/sources/${sourceId}`],
        ['unknown source', 'GET', `/api/sources/${unknown}`],
        ['source schema', 'GET', `/api/sources/${sourceId}/schema`],
        ['unknown source schema', 'GET', `/api/sources/${unknown}/schema`],
        ['revoke token', 'DELETE', `/api/access-tokens/${revokedTokenId}`],
        ['revoke unknown token', 'DELETE', `/api/access-tokens/${unknown}`],
      ];
    };
    const rule: [string, number, string][] = [
      ['none', 401, 'UNAUTHORIZED'],
      ['bad', 401, 'UNAUTHORIZED'],
      ['revoked', 401, 'UNAUTHORIZED'],
      ['public', 403, 'FORBIDDEN'],
      ['ingestOneSource', 403, 'FORBIDDEN'],
      ['query', 403, 'FORBIDDEN'],
      ['otherEndpoint', 403, 'FORBIDDEN'],
    ];
    for (const [probe, status, code] of rule) {
      test(`probe "${probe}": every id answers the same ${status} ${code}`, async () => {
        const answers: [string, Answer][] = [];
        for (const [what, method, path] of targets()) {
          const a = await send(s, method, path, tokens[probe] ?? null);
          assertRevealsNothing(a, `${probe} on ${what}`, [SOURCE, secret.name]);
          answers.push([what, a]);
        }
        const first = assertSame(answers, probe);
        assert.equal(first.status, status, first.text);
        assert.equal(first.code, code, first.text);
      });
    }
    test('nothing was deleted by the probes', async () => {
      assert.equal((await manage(s, 'GET', `/api/endpoints/${secret.id}`)).status, 200);
    });
  });

  describe('ingest', () => {
    const targets = (): [string, string][] => [
      ['other source by name', `/api/logs?source_name=${OTHER_SOURCE}`],
      ['other source by id', `/api/logs?source=${otherSourceId}`],
      ['unknown source by name', '/api/logs?source_name=oracle.nope'],
      ['unknown source by id', `/api/logs?source=${randomUUID()}`],
    ];
    const rule: [string, number, string][] = [
      ['none', 401, 'UNAUTHORIZED'],
      ['bad', 401, 'UNAUTHORIZED'],
      ['revoked', 401, 'UNAUTHORIZED'],
      ['query', 403, 'FORBIDDEN'],
      ['otherEndpoint', 403, 'FORBIDDEN'],
      ['ingestOneSource', 403, 'FORBIDDEN'],
    ];
    for (const [probe, status, code] of rule) {
      test(`probe "${probe}": a source it may not use and an unknown one answer the same ${status} ${code}`, async () => {
        const answers: [string, Answer][] = [];
        for (const [what, path] of targets()) {
          const a = await send(s, 'POST', path, tokens[probe] ?? null, { event_message: 'probe' });
          assertRevealsNothing(a, `${probe} on ${what}`, [OTHER_SOURCE, 'oracle.nope']);
          answers.push([what, a]);
        }
        const first = assertSame(answers, probe);
        assert.equal(first.status, status, first.text);
        assert.equal(first.code, code, first.text);
      });
    }

    test('a token that may ingest anywhere: its own source 200, an unknown one 404 (contract §3)', async () => {
      for (const probe of ['public', 'ingest']) {
        assert.equal((await send(s, 'POST', `/api/logs?source_name=${OTHER_SOURCE}`, tokens[probe] ?? null, { a: 1 })).status, 200);
        const unknown = await send(s, 'POST', '/api/logs?source_name=oracle.nope', tokens[probe] ?? null, { a: 1 });
        assert.equal(unknown.status, 404);
        assert.equal(unknown.code, 'NOT_FOUND');
      }
      const mine = await send(s, 'POST', `/api/logs?source=${sourceId}`, tokens.ingestOneSource ?? null, { a: 1 });
      assert.equal(mine.status, 200, mine.text);
    });
  });
});
