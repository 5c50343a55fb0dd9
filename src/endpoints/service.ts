/**
 * Endpoint management (docs/API.md §5): field and query validation at save time, unique names, and
 * cache invalidation on every change.
 */
import { randomUUID } from 'node:crypto';
import { QuarryError, isQuarryError } from '../errors.ts';
import type { QueryBackend } from './backend.ts';
import { type Endpoint, type EndpointInput, applyPatch, checkEndpointFields, endpointDefaults, newEndpoint, throwIfInvalid } from './model.ts';
import type { EndpointRepository } from '../metadata/endpoints.ts';
import { checkParamSpecs, normaliseParamSpecs } from './typed-params.ts';

export interface EndpointServiceOptions {
  repository: EndpointRepository;
  backend: Pick<QueryBackend, 'validate' | 'inspect'>;
  /** Called after an endpoint changed or was deleted, before the call returns. */
  invalidate: (endpointId: string) => void;
  now?: () => Date;
}

export class EndpointService {
  readonly #repo: EndpointRepository;
  readonly #backend: Pick<QueryBackend, 'validate' | 'inspect'>;
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
    input = await this.#validate(input, false);
    const endpoint = newEndpoint(randomUUID(), input as EndpointInput & { name: string; query: string }, this.#stamp());
    return this.#repo.insert(endpoint);
  }

  /** PUT: the endpoint becomes exactly `input`; settings left out return to their defaults. */
  async replace(id: string, input: EndpointInput): Promise<Endpoint> {
    const current = this.get(id);
    input = await this.#validate(input, false);
    const next = applyPatch({ ...current, ...endpointDefaults }, input, this.#stamp());
    return this.#save(next);
  }

  /** PATCH: only the fields given change. */
  async update(id: string, patch: EndpointInput): Promise<Endpoint> {
    const current = this.get(id);
    patch = await this.#validate(patch, true, current);
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

  /**
   * Field rules, the query (parsed, validated, checked by the engine) and the typed parameters
   * against the parameters the query uses (on a patch, the stored query and parameters stand in
   * for those not given). Returns the input with its parameter list in stored form.
   */
  async #validate(input: EndpointInput, partial: boolean, current?: Endpoint): Promise<EndpointInput> {
    const fields = checkEndpointFields(input, partial);
    let declared: readonly string[] | undefined;
    if (!fields.query && typeof input.query === 'string') {
      try {
        declared = (await this.#backend.validate(input.query)).params;
      } catch (e) {
        if (!isQuarryError(e) || e.code === 'INTERNAL') throw e;
        fields.query = [e.message];
      }
    } else if (input.query === undefined && current) {
      // The stored query may no longer validate (a source it reads was deleted): then only the
      // parameter list's own rules are checked.
      declared = await this.#backend.inspect(current.query).then(
        (info) => info.params,
        () => undefined,
      );
    }
    const params = input.params !== undefined ? input.params : current?.params;
    Object.assign(fields, checkParamSpecs(params, declared));
    throwIfInvalid(fields);
    if (!input.params) return input;
    return { ...input, params: normaliseParamSpecs(input.params) };
  }

  #stamp(): string {
    return this.#now().toISOString();
  }
}
