/**
 * `GET /api/sources/:id/schema`: a source's fields from the schema catalogue (record / list /
 * scalar), private scope, growing as events with new fields arrive.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { PUBLIC_TOKEN, type TestServer, startTestServer } from '../support/server.ts';

interface SourceView {
  id: string;
  name: string;
}
const json = { 'content-type': 'application/json' };

describe('source schema route', () => {
  let s: TestServer;
  let source: SourceView;
  before(async () => {
    s = await startTestServer();
    const r = await s.fetch('/api/sources', { method: 'POST', headers: json, body: JSON.stringify({ name: 'schema.app' }) });
    source = (await r.json()) as SourceView;
  });
  after(() => s.close());

  const schema = async () => {
    const r = await s.fetch(`/api/sources/${source.id}/schema`);
    assert.equal(r.status, 200);
    return (await r.json()) as { id: string; name: string; columns: Record<string, unknown> };
  };

  test('a new source has the base columns only', async () => {
    const body = await schema();
    assert.equal(body.id, source.id);
    assert.equal(body.name, 'schema.app');
    assert.deepEqual(body.columns, {
      id: { kind: 'scalar', type: 'string' },
      timestamp: { kind: 'scalar', type: 'timestamp' },
      event_message: { kind: 'scalar', type: 'string' },
    });
  });

  test('ingested fields appear with their types, records and lists nested, in first-seen order', async () => {
    const ingest = await s.fetch('/api/logs?source_name=schema.app', {
      method: 'POST',
      headers: json,
      body: JSON.stringify([
        { message: 'a', level: 'info', metadata: { status: 200, ok: true, tags: ['x'], user: { id: 'u1', score: 1.5 } } },
        { message: 'b', items: [{ sku: 'k', qty: 2 }] },
      ]),
    });
    assert.equal(ingest.status, 200, await ingest.text());
    const { columns } = await schema();
    assert.deepEqual(Object.keys(columns), ['id', 'timestamp', 'event_message', 'level', 'metadata', 'items']);
    assert.deepEqual(columns.metadata, {
      kind: 'record',
      fields: {
        status: { kind: 'scalar', type: 'int' },
        ok: { kind: 'scalar', type: 'bool' },
        tags: { kind: 'list', element: { kind: 'scalar', type: 'string' } },
        user: {
          kind: 'record',
          fields: { id: { kind: 'scalar', type: 'string' }, score: { kind: 'scalar', type: 'float' } },
        },
      },
    });
    const items = columns.items as { kind: string; element: { kind: string; fields: Record<string, unknown> } };
    assert.equal(items.kind, 'list');
    assert.equal(items.element.kind, 'record');
    assert.deepEqual(Object.keys(items.element.fields).sort(), ['qty', 'sku']);
  });

  test('private scope only; unknown ids are 404', async () => {
    assert.equal((await s.fetch(`/api/sources/${source.id}/schema`, {}, null)).status, 401);
    assert.equal((await s.fetch(`/api/sources/${source.id}/schema`, {}, PUBLIC_TOKEN)).status, 403);
    const missing = await s.fetch('/api/sources/00000000-0000-4000-8000-000000000000/schema');
    assert.equal(missing.status, 404);
    assert.equal(((await missing.json()) as { error: { code: string } }).error.code, 'NOT_FOUND');
    assert.equal((await s.fetch('/api/sources/not-a-uuid/schema')).status, 404);
  });
});
