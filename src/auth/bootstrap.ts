/**
 * Start-up tokens (docs/API.md §1): the tokens named by the environment, and a generated private
 * token on first start when none is configured.
 */
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { type Config, generatedTokenPath } from '../config.ts';
import type { TokenRepository } from '../metadata/tokens.ts';

interface EnvToken {
  env: string;
  value: string | undefined;
  scopes: string[];
}

export interface BootstrapResult {
  /** Set when this start generated the private token (to be shown once). */
  generatedPrivateToken?: string;
}

export async function bootstrapTokens(config: Config, tokens: TokenRepository): Promise<BootstrapResult> {
  const wanted: EnvToken[] = [
    { env: 'LOGFLARE_PRIVATE_ACCESS_TOKEN', value: config.privateAccessToken, scopes: ['private'] },
    { env: 'LOGFLARE_PUBLIC_ACCESS_TOKEN', value: config.publicAccessToken, scopes: ['public'] },
    { env: 'LOGFLARE_API_KEY', value: config.legacyApiKey, scopes: ['ingest', 'query'] },
  ];
  for (const w of wanted) {
    if (w.value === undefined) continue;
    const description = `from ${w.env}`;
    const current = tokens.findByValue(w.value);
    if (current && current.description === description) continue;
    // The environment value changed: the old value stops working, as on Logflare.
    for (const t of tokens.list()) if (t.description === description) await tokens.revoke(t.id);
    await tokens.create({ description, scopes: w.scopes, value: w.value });
  }
  if (config.privateAccessToken !== undefined) return {};

  const file = generatedTokenPath(config);
  const existing = await readFile(file, 'utf8').then(
    (s) => s.trim(),
    () => undefined,
  );
  if (existing && tokens.findByValue(existing)) return {};
  const { value } = await tokens.create({ description: 'generated on first start', scopes: ['private'] });
  await writeFile(file, `${value}\n`, { mode: 0o600 });
  await chmod(file, 0o600);
  return { generatedPrivateToken: value };
}
