/**
 * First start: the two endpoints self-hosted Supabase calls, configured as docs/API.md §1 says
 * (defined with their SQL in ./supabase/). An endpoint whose name already exists is
 * left exactly as it is, so restarting never duplicates nor overwrites them (an operator's edits
 * survive). One that was deleted comes back on the next start: Studio cannot work without it.
 */
import { randomUUID } from 'node:crypto';
import { newEndpoint } from './model.ts';
import type { EndpointRepository } from '../metadata/endpoints.ts';
import { type SeedEndpoint, supabaseEndpoints } from './supabase/index.ts';

/** Creates each seed endpoint that does not exist yet; returns the names it created. */
export async function seedSupabaseEndpoints(
  repository: EndpointRepository,
  now = new Date(),
  seeds: readonly SeedEndpoint[] = supabaseEndpoints,
): Promise<string[]> {
  const created: string[] = [];
  for (const seed of seeds) {
    if (repository.byName(seed.name)) continue;
    const endpoint = newEndpoint(
      randomUUID(),
      {
        name: seed.name,
        query: seed.query,
        sandboxable: seed.sandboxable,
        max_limit: seed.maxLimit,
        cache_duration_seconds: seed.cacheDurationSeconds,
        proactive_requerying_seconds: seed.proactiveRequeryingSeconds,
        redact_pii: seed.redactPii,
        enable_auth: true,
      },
      now.toISOString(),
    );
    await repository.insert(endpoint);
    created.push(seed.name);
  }
  return created;
}
