/** Where endpoints are kept, mirrored in memory so resolving one on every request costs no round trip. */
import type { Endpoint } from '../endpoints/model.ts';

export interface EndpointRepository {
  list(): Endpoint[];
  get(id: string): Endpoint | undefined;
  byName(name: string): Endpoint | undefined;
  /** Stores a complete endpoint; VALIDATION_FAILED (422) when the name is taken. */
  insert(endpoint: Endpoint): Promise<Endpoint>;
  /** Replaces the stored endpoint with the same id; NOT_FOUND / VALIDATION_FAILED as above. */
  replace(endpoint: Endpoint): Promise<Endpoint>;
  /** Removes and returns the endpoint; NOT_FOUND when there is none. */
  delete(id: string): Promise<Endpoint>;
}
