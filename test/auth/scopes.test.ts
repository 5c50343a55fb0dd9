import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { extractToken } from '../../src/auth/auth.ts';
import { allows, isValidScope } from '../../src/auth/scopes.ts';
import { loadConfig } from '../../src/config.ts';

const E = '11111111-2222-3333-4444-555555555555';
const S = '66666666-7777-8888-9999-000000000000';

test('scope matrix (docs/API.md §2)', () => {
  const manage = { kind: 'manage' } as const;
  const query = { kind: 'query', endpointId: E } as const;
  const ingest = { kind: 'ingest', sourceId: S } as const;
  const cases: [string[], boolean, boolean, boolean][] = [
    [['private'], true, true, true],
    [['query'], false, true, false],
    [[`query:endpoint:${E}`], false, true, false],
    [[`query:endpoint:${S}`], false, false, false],
    [['ingest'], false, false, true],
    [['public'], false, false, true],
    [[`ingest:source:${S}`], false, false, true],
    [[`ingest:source:${E}`], false, false, false],
    [[], false, false, false],
  ];
  for (const [scopes, m, q, i] of cases) {
    assert.deepEqual([allows(scopes, manage), allows(scopes, query), allows(scopes, ingest)], [m, q, i], `scopes ${JSON.stringify(scopes)}`);
  }
});

test('scope syntax', () => {
  assert.ok(isValidScope(`query:endpoint:${E}`));
  assert.ok(!isValidScope('query:endpoint:nope'));
  assert.ok(!isValidScope('admin'));
});

test('token transports in order: Bearer, X-API-KEY, api_key', () => {
  assert.equal(extractToken({ headers: { authorization: 'Bearer a', 'x-api-key': 'b' }, query: { api_key: 'c' } }), 'a');
  assert.equal(extractToken({ headers: { 'x-api-key': 'b' }, query: { api_key: 'c' } }), 'b');
  assert.equal(extractToken({ headers: {}, query: { api_key: 'c' } }), 'c');
  assert.equal(extractToken({ headers: { authorization: 'Basic x' }, query: {} }), undefined);
});

describe('start-up tokens', () => {
  test('the private token may not equal the public one or the legacy key: the service refuses to start, naming both', () => {
    assert.throws(
      () => loadConfig({ LOGFLARE_PRIVATE_ACCESS_TOKEN: 'same-value-123', LOGFLARE_PUBLIC_ACCESS_TOKEN: 'same-value-123' }),
      /LOGFLARE_PRIVATE_ACCESS_TOKEN and LOGFLARE_PUBLIC_ACCESS_TOKEN must differ/,
    );
    assert.throws(() => loadConfig({ LOGFLARE_PRIVATE_ACCESS_TOKEN: 'same-value-123', LOGFLARE_API_KEY: 'same-value-123' }), /LOGFLARE_API_KEY must differ/);
    assert.doesNotThrow(() => loadConfig({ LOGFLARE_PRIVATE_ACCESS_TOKEN: 'private-123', LOGFLARE_PUBLIC_ACCESS_TOKEN: 'public-123' }));
  });
});
