/**
 * Access tokens, stored as SHA-256 hashes. Token values are 256-bit random strings, so a fast hash
 * is enough: there is nothing to brute-force that a slow hash would protect.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { AccessToken } from '../schemas/token.ts';

export type { AccessToken };

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
