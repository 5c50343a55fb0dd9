/**
 * Access tokens, stored as SHA-256 hashes. Token values are 256-bit random strings, so a fast hash
 * is enough: there is nothing to brute-force that a slow hash would protect.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { type SerialConnection, iso, optStr, str } from './connection.ts';

export interface AccessToken {
  id: string;
  description: string | null;
  scopes: string[];
  created_at: string;
}

export interface TokenRepository {
  list(): AccessToken[];
  /** The live token whose value hashes to this, if any. */
  findByValue(value: string): AccessToken | undefined;
  /** Creates a token; `value` defaults to a new random one. Returns the value once. */
  create(input: { description: string | null; scopes: string[]; value?: string }): Promise<{
    token: AccessToken;
    value: string;
  }>;
  revoke(id: string): Promise<boolean>;
}

export function hashToken(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

export function newTokenValue(): string {
  return randomBytes(32).toString('base64url');
}

export async function openTokenRepository(db: SerialConnection): Promise<TokenRepository> {
  await db.run(`CREATE TABLE IF NOT EXISTS _quarry_tokens (
    id VARCHAR PRIMARY KEY, token_hash VARCHAR NOT NULL, description VARCHAR, scopes VARCHAR NOT NULL,
    created_at TIMESTAMP NOT NULL, revoked_at TIMESTAMP)`);
  const live = new Map<string, AccessToken>();
  const byHash = new Map<string, AccessToken>();
  for (const r of await db.all('SELECT * FROM _quarry_tokens WHERE revoked_at IS NULL ORDER BY created_at')) {
    const t: AccessToken = {
      id: str(r.id),
      description: optStr(r.description),
      scopes: str(r.scopes).split(' ').filter(Boolean),
      created_at: iso(r.created_at),
    };
    live.set(t.id, t);
    byHash.set(str(r.token_hash), t);
  }
  return {
    list: () => [...live.values()],
    findByValue: (value) => byHash.get(hashToken(value)),
    async create({ description, scopes, value }) {
      const v = value ?? newTokenValue();
      const token: AccessToken = {
        id: randomUUID(),
        description,
        scopes: [...scopes],
        created_at: new Date().toISOString(),
      };
      const hash = hashToken(v);
      await db.run(
        'INSERT INTO _quarry_tokens VALUES ($id, $hash, $description, $scopes, $now::TIMESTAMP, NULL)',
        { id: token.id, hash, description, scopes: scopes.join(' '), now: token.created_at },
      );
      live.set(token.id, token);
      byHash.set(hash, token);
      return { token, value: v };
    },
    async revoke(id) {
      if (!live.has(id)) return false;
      await db.run('UPDATE _quarry_tokens SET revoked_at = now()::TIMESTAMP WHERE id = $id', { id });
      live.delete(id);
      for (const [h, t] of byHash) if (t.id === id) byHash.delete(h);
      return true;
    },
  };
}
