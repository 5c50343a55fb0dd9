/**
 * Several nodes share one engine (ClickHouse) and its schema catalogue, so another node's ingest
 * may just have added a field, or widened one's type, that this node's copy does not show yet.
 * Before a query is prepared the catalogue learns of every change finished before the query
 * arrived (one cheap version check, shared by the queries that arrive while it runs), so a query
 * never fails, or reads a field as NULL, for want of a schema another node already stored.
 */
import type { QueryBackend } from './backend.ts';

/** Reloads the catalogue if another node changed it, seeing every change finished before `notBefore` (epoch ms). */
export type CatalogRefresh = (notBefore: number) => Promise<unknown>;

export function withCatalogRefresh(backend: QueryBackend, refresh: CatalogRefresh): QueryBackend {
  // A catalogue that cannot be checked leaves this node's copy standing; the engine's own errors
  // say what is wrong with the query or the engine.
  const current = () => refresh(Date.now()).catch(() => undefined);
  return {
    async inspect(saved) {
      await current();
      return backend.inspect(saved);
    },
    async validate(saved) {
      await current();
      return backend.validate(saved);
    },
    async execute(request) {
      await current();
      return backend.execute(request);
    },
  };
}
