/** Helpers of the several-nodes tests: waiting for a change to reach another node, JSON bodies. */
import assert from 'node:assert/strict';
import pg from 'pg';
import type { TestServer } from './server.ts';

/** METADATA_POLL_MS for the nodes of these tests; the documented bound is this plus one reload. */
export const POLL_MS = 500;
/** Generous: the machine is shared and loaded; the measured delays are printed. */
export const BOUND_MS = 5000;

/** Polls `check` until it holds; returns how long that took, or fails past BOUND_MS. */
export async function eventually(what: string, check: () => Promise<boolean>): Promise<number> {
  const start = Date.now();
  for (;;) {
    if (await check()) return Date.now() - start;
    if (Date.now() - start > BOUND_MS) throw new Error(`${what}: not within ${BOUND_MS} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export const jsonPost = (body: unknown): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

/** A token created on `a` works on `b`, then is revoked on `a`: ms until `b` refuses it. */
export async function revocationReaches(a: TestServer, b: TestServer): Promise<number> {
  const created = await a.fetch('/api/access-tokens', jsonPost({ scopes: ['query'], description: 'revoked soon' }));
  const token = (await created.json()) as { id: string; token: string };
  const status = async () => (await b.fetch('/api/endpoints/query/logs.all?project=x', {}, token.token)).status;
  await eventually('token created on A accepted by B', async () => (await status()) === 200);
  assert.equal((await a.fetch(`/api/access-tokens/${token.id}`, { method: 'DELETE' })).status, 204);
  return eventually('revoked on A, refused by B', async () => (await status()) === 401);
}

/** The metadata database holds exactly one copy of the nine seeded sources and the two endpoints. */
export async function assertSeededOnce(databaseUrl: string): Promise<void> {
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    const sources = await c.query('SELECT name FROM quarry_sources');
    const endpoints = await c.query<{ name: string }>('SELECT name FROM quarry_endpoints ORDER BY name');
    assert.equal(sources.rowCount, 9);
    assert.deepEqual(
      endpoints.rows.map((r) => r.name),
      ['logs.all', 'usage.api-counts'],
    );
  } finally {
    await c.end();
  }
}
