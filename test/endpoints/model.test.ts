import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ENDPOINT_FIELDS,
  applyPatch,
  checkEndpointFields,
  endpointDefaults,
  endpointFields,
  looksLikeUuid,
  newEndpoint,
  normaliseUuid,
} from '../../src/endpoints/model.ts';

describe('endpoint model', () => {
  it('tells UUID path segments from names', () => {
    assert.equal(looksLikeUuid('0b6b7c2e-1f3a-4e5b-9c8d-7a6f5e4d3c2b'), true);
    assert.equal(looksLikeUuid('0B6B7C2E1F3A4E5B9C8D7A6F5E4D3C2B'), true);
    for (const name of ['logs.all', 'logs.all.staging', 'logs-all-staging', 'usage.api-counts', '0b6b7c2e']) {
      assert.equal(looksLikeUuid(name), false, name);
    }
    assert.equal(normaliseUuid('0B6B7C2E1F3A4E5B9C8D7A6F5E4D3C2B'), '0b6b7c2e-1f3a-4e5b-9c8d-7a6f5e4d3c2b');
  });

  it('applies the contract defaults to a new endpoint', () => {
    const e = newEndpoint('id', { name: 'n', query: 'q' }, 'now');
    assert.equal(e.max_limit, 1000);
    assert.equal(e.cache_duration_seconds, 0);
    assert.equal(e.enable_auth, true);
    assert.equal(e.redact_pii, false);
    assert.equal(e.language, 'bq_sql');
    assert.equal(e.labels, null);
  });

  it('reports every invalid field with its own message', () => {
    const fields = checkEndpointFields(
      {
        name: 'has space',
        query: ' ',
        max_limit: 10_001,
        cache_duration_seconds: -1,
        proactive_requerying_seconds: 1.5,
      },
      false,
    );
    assert.deepEqual(Object.keys(fields).sort(), ['cache_duration_seconds', 'max_limit', 'name', 'proactive_requerying_seconds', 'query']);
    assert.deepEqual(checkEndpointFields({ max_limit: 0 }, true), { max_limit: ['must be a whole number from 1 to 10000'] });
    assert.deepEqual(checkEndpointFields({ max_limit: 10_000 }, true), {});
    assert.deepEqual(checkEndpointFields({}, false), { name: ['is required'], query: ['is required'] });
    assert.ok(checkEndpointFields({ name: '0b6b7c2e-1f3a-4e5b-9c8d-7a6f5e4d3c2b' }, true).name);
  });

  it('takes its defaults and field list from the vocabulary', () => {
    assert.deepEqual(endpointDefaults, {
      description: null,
      language: 'bq_sql',
      sandboxable: false,
      max_limit: 1000,
      cache_duration_seconds: 0,
      proactive_requerying_seconds: 1800,
      enable_auth: true,
      redact_pii: false,
      labels: null,
      params: null,
    });
    assert.deepEqual(ENDPOINT_FIELDS, [
      'id',
      'name',
      'description',
      'query',
      'language',
      'sandboxable',
      'max_limit',
      'cache_duration_seconds',
      'proactive_requerying_seconds',
      'enable_auth',
      'redact_pii',
      'labels',
      'params',
      'created_at',
      'updated_at',
    ]);
    const e = newEndpoint('id', { name: 'n', query: 'q' }, 'now');
    assert.deepEqual(Object.keys(endpointFields({ ...e, extra: 1 } as never)), ENDPOINT_FIELDS);
  });

  it("words each broken rule as the vocabulary says, whatever the value's type", () => {
    assert.deepEqual(
      checkEndpointFields(
        { name: 7, query: 3, description: 5, language: 'sql', sandboxable: 'yes', enable_auth: null, redact_pii: 1, labels: [], max_limit: '10' },
        false,
      ),
      {
        name: ['is required'],
        query: ['is required'],
        description: ['must be text or null'],
        language: ['must be bq_sql'],
        sandboxable: ['must be true or false'],
        enable_auth: ['must be true or false'],
        redact_pii: ['must be true or false'],
        labels: ['must be text or null'],
        max_limit: ['must be a whole number from 1 to 10000'],
      },
    );
    assert.deepEqual(checkEndpointFields({ name: '0b6b7c2e1f3a4e5b9c8d7a6f5e4d3c2b' }, true), {
      name: ['must not look like a UUID (it would be read as an id)'],
    });
    assert.deepEqual(checkEndpointFields({ id: 'x', created_at: 'y', params: 'checked elsewhere' }, true), {}, 'unknown fields are ignored');
    assert.deepEqual(checkEndpointFields([], true), { body: ['must be a JSON object of endpoint settings'] });
  });

  it('patches only the given fields and never the id or creation time', () => {
    const e = newEndpoint('id', { name: 'n', query: 'q' }, 't0');
    const patched = applyPatch(e, { max_limit: 7, id: 'other', created_at: 'x' } as never, 't1');
    assert.equal(patched.max_limit, 7);
    assert.equal(patched.id, 'id');
    assert.equal(patched.created_at, 't0');
    assert.equal(patched.updated_at, 't1');
    assert.equal(patched.name, 'n');
  });
});
