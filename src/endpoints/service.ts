/**
 * Endpoint management (docs/API.md §5): field and query validation at save time, unique names, and
 * cache invalidation on every change.
 */
import { randomUUID } from 'node:crypto';
import { QuarryError, isQuarryError } from '../errors.ts';
import type { QueryBackend } from './backend.ts';
import {
  type Endpoint,
  type EndpointInput,
  applyPatch,
  checkEndpointFields,
  endpointDefaults,
  newEndpoint,
  throwIfInvalid,
} from './model.ts';
import type { EndpointRepository } from '../metadata/endpoints.ts';

export interface EndpointServiceOptions {
  repository: EndpointRepository;
  backend: Pick<QueryBackend, 'validate'>;
  /** Called after an endpoint changed or was deleted, before the call returns. */
  invalidate: (endpointId: string) => void;
  now?: () => Date;
}

export class EndpointService {
  readonly #repo: EndpointRepository;
  readonly #backend: Pick<QueryBackend, 'validate'>;
  readonly #invalidate: (endpointId: string) => void;
  readonly #now: () => Date;

  constructor(options: EndpointServiceOptions) {
    this.#repo = options.repository;
    this.#backend = options.backend;
    this.#invalidate = options.invalidate;
    this.#now = options.now ?? (() => new Date());
  }

  list(): Endpoint[] {
    return this.#repo.list();
  }

  get(id: string): Endpoint {
    const e = this.#repo.get(id.toLowerCase());
    if (!e) throw new QuarryError('NOT_FOUND', `No endpoint with id ${id}.`);
    return e;
  }

  async create(input: EndpointInput): Promise<Endpoint> {
    await this.#validate(input, false);
    const endpoint = newEndpoint(randomUUID(), input as EndpointInput & { name: string; query: string }, this.#stamp());
    return this.#repo.insert(endpoint);
  }

  /** PUT: the endpoint becomes exactly `input`; settings left out return to their defaults. */
  async replace(id: string, input: EndpointInput): Promise<Endpoint> {
    const current = this.get(id);
    await this.#validate(input, false);
    const next = applyPatch({ ...current, ...endpointDefaults }, input, this.#stamp());
    return this.#save(next);
  }

  /** PATCH: only the fields given change. */
  async update(id: string, patch: EndpointInput): Promise<Endpoint> {
    const current = this.get(id);
    await this.#validate(patch, true);
    return this.#save(applyPatch(current, patch, this.#stamp()));
  }

  async delete(id: string): Promise<Endpoint> {
    const current = this.get(id);
    const removed = await this.#repo.delete(current.id);
    this.#invalidate(removed.id);
    return removed;
  }

  async #save(next: Endpoint): Promise<Endpoint> {
    const saved = await this.#repo.replace(next);
    this.#invalidate(saved.id);
    return saved;
  }

  async #validate(input: EndpointInput, partial: boolean): Promise<void> {
    const fields = checkEndpointFields(input, partial);
    if (!fields.query && typeof input.query === 'string') {
      try {
        await this.#backend.validate(input.query);
      } catch (e) {
        if (!isQuarryError(e) || e.code === 'INTERNAL') throw e;
        fields.query = [e.message];
      }
    }
    throwIfInvalid(fields);
  }

  #stamp(): string {
    return this.#now().toISOString();
  }
}
