/**
 * The metadata store: sources, tokens and endpoints, served from an in-memory mirror of the
 * records (store-independent; records.ts is what an embedded or shared store implements).
 *
 * Writes go to the records first and reach the mirror only once stored. Writes and reloads run one
 * at a time, so a reload never undoes a write it did not see. When the records say another node
 * changed something, the mirror is reloaded and the differences are told to `onChange` listeners
 * (the server drops cached results of changed endpoints and creates or drops source tables).
 */
import { randomUUID } from 'node:crypto';
import { type Endpoint, endpointFields } from '../endpoints/model.ts';
import { QuarryError } from '../errors.ts';
import { serialQueue } from '../serial-queue.ts';
import { DEFAULT_KEY_RULE } from '../schemas/source.ts';
import { physicalTableName } from '../storage/sources.ts';
import type { EndpointRepository } from './endpoints.ts';
import type { MetadataRecords, MetadataSnapshot, MetadataWrite, StoredToken, WriteOutcome } from './records.ts';
import { type Source, type SourceRepository, validateSourceInput } from './sources.ts';
import { type AccessToken, type TokenRepository, hashToken, newTokenValue } from './tokens.ts';

/** What a reload found changed by another node. */
export interface MetadataChanges {
  readonly sourcesChanged: readonly Source[];
  readonly sourcesRemoved: readonly Source[];
  /** Ids of endpoints changed or removed. */
  readonly endpointsChanged: readonly string[];
  readonly tokensChanged: boolean;
}

export type StoreHealth = { readonly ok: true } | { readonly ok: false; readonly reason: string };

export interface MetadataStore {
  readonly kind: MetadataRecords['kind'];
  readonly sources: SourceRepository;
  readonly tokens: TokenRepository;
  readonly endpoints: EndpointRepository;
  /** Reloads, then runs `work` while no other node runs exclusive work (start-up seeding). */
  exclusive<T>(work: () => Promise<T>): Promise<T>;
  /**
   * Stores records made elsewhere (an older data directory's), keeping their ids; a record whose
   * id or name is already stored is skipped. Then reloads.
   */
  adopt(records: MetadataSnapshot): Promise<void>;
  /** Reloads from the records now; listeners hear of what changed. */
  refresh(): Promise<MetadataChanges>;
  onChange(listener: (changes: MetadataChanges) => void | Promise<void>): void;
  /** How long ago this node last knew its copy of the metadata was current, ms. */
  stalenessMs(): number;
  /** Claims the background refresh of one cached result (one node at a time); see records.ts. */
  claimWarming(key: string, holdMs: number): Promise<boolean>;
  health(): Promise<StoreHealth>;
  /**
   * Stops acting on other nodes' changes and waits for a reload (and its listeners) in progress:
   * the first step of shutdown, so no listener touches an engine being closed.
   */
  stopWatching(): Promise<void>;
  close(): Promise<void>;
}

interface Mirror {
  sources: Map<string, Source>;
  tokens: Map<string, StoredToken>;
  /** token hash → token */
  byHash: Map<string, AccessToken>;
  endpoints: Map<string, Endpoint>;
}

function mirrorOf(snapshot: MetadataSnapshot): Mirror {
  const m: Mirror = { sources: new Map(), tokens: new Map(), byHash: new Map(), endpoints: new Map() };
  for (const s of snapshot.sources) m.sources.set(s.id, s);
  for (const t of snapshot.tokens) {
    m.tokens.set(t.token.id, t);
    m.byHash.set(t.hash, t.token);
  }
  for (const e of snapshot.endpoints) m.endpoints.set(e.id, e);
  return m;
}

/** Key-order independent JSON, to compare records read back with records held. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1))) : v,
  );
}

function diff(before: Mirror, after: Mirror): MetadataChanges {
  const sourcesChanged: Source[] = [];
  const sourcesRemoved: Source[] = [];
  for (const [id, s] of after.sources) {
    const old = before.sources.get(id);
    if (!old || canonical(old) !== canonical(s)) sourcesChanged.push(s);
  }
  for (const [id, s] of before.sources) if (!after.sources.has(id)) sourcesRemoved.push(s);
  const endpointsChanged: string[] = [];
  for (const [id, e] of after.endpoints) {
    const old = before.endpoints.get(id);
    if (!old || canonical(endpointFields(old)) !== canonical(endpointFields(e))) endpointsChanged.push(id);
  }
  for (const id of before.endpoints.keys()) if (!after.endpoints.has(id)) endpointsChanged.push(id);
  const tokensChanged = before.byHash.size !== after.byHash.size || [...after.byHash.keys()].some((h) => !before.byHash.has(h));
  return { sourcesChanged, sourcesRemoved, endpointsChanged, tokensChanged };
}

function nothingChanged(c: MetadataChanges): boolean {
  return c.sourcesChanged.length === 0 && c.sourcesRemoved.length === 0 && c.endpointsChanged.length === 0 && !c.tokensChanged;
}

function nameTaken(what: 'source' | 'endpoint', name: string): QuarryError {
  return new QuarryError('VALIDATION_FAILED', `A${what === 'endpoint' ? 'n' : ''} ${what} named "${name}" already exists.`, {
    fields: { name: ['is already taken'] },
  });
}

export async function openMetadataStore(records: MetadataRecords): Promise<MetadataStore> {
  let mirror = mirrorOf(await records.load());
  const queue = serialQueue();
  const listeners: ((changes: MetadataChanges) => void | Promise<void>)[] = [];

  async function tell(changes: MetadataChanges): Promise<void> {
    if (nothingChanged(changes)) return;
    for (const l of listeners) await l(changes);
  }

  /** Reloads inside the queue; listeners are told outside it, so they may write. */
  async function refresh(): Promise<MetadataChanges> {
    const changes = await queue(async () => {
      const next = mirrorOf(await records.load());
      const found = diff(mirror, next);
      mirror = next;
      return found;
    });
    await tell(changes);
    return changes;
  }

  let pending: Promise<unknown> | undefined;
  let again = false;
  let watching = true;
  /** Coalesces bursts of notifications into at most one reload running and one waiting. */
  function scheduleRefresh(): void {
    if (!watching) return;
    if (pending) {
      again = true;
      return;
    }
    pending = refresh()
      .catch(() => undefined)
      .finally(() => {
        pending = undefined;
        if (again) {
          again = false;
          scheduleRefresh();
        }
      });
  }
  records.watch(scheduleRefresh);

  /**
   * One write. An outcome that says the mirror is behind schedules a reload (the caller fails as
   * told); a store that cannot be reached is a 503, not an internal error.
   */
  async function store(change: MetadataWrite): Promise<WriteOutcome> {
    let outcome: WriteOutcome;
    try {
      outcome = await records.write(change);
    } catch (e) {
      throw new QuarryError('UNAVAILABLE', 'The metadata store could not be reached; the change may not have been stored. Retry shortly.', {
        retryAfter: 2,
        cause: e,
      });
    }
    if (outcome !== 'ok') scheduleRefresh();
    return outcome;
  }

  const sourceByName = (name: string) => {
    for (const s of mirror.sources.values()) if (s.name === name) return s;
    return undefined;
  };
  function mustGetSource(id: string): Source {
    const s = mirror.sources.get(id);
    if (!s) throw new QuarryError('NOT_FOUND', `No source with id ${id}.`);
    return s;
  }
  function assertSourceNameFree(name: string, exceptId?: string) {
    const other = sourceByName(name);
    if (other && other.id !== exceptId) throw nameTaken('source', name);
  }

  const sources: SourceRepository = {
    list: () => [...mirror.sources.values()],
    get: (id) => mirror.sources.get(id),
    byName: sourceByName,
    create: (input) =>
      queue(async () => {
        validateSourceInput(input, false);
        assertSourceNameFree(input.name);
        const id = randomUUID();
        const now = new Date().toISOString();
        const s: Source = {
          id,
          name: input.name,
          table: physicalTableName(id),
          key_rule: DEFAULT_KEY_RULE,
          retention_days: input.retention_days ?? null,
          created_at: now,
          updated_at: now,
        };
        if ((await store({ kind: 'source.insert', source: s })) === 'name-taken') throw nameTaken('source', s.name);
        mirror.sources.set(id, s);
        return s;
      }),
    update: (id, patch) =>
      queue(async () => {
        const current = mustGetSource(id);
        validateSourceInput(patch, true);
        if (patch.name !== undefined) assertSourceNameFree(patch.name, id);
        const next: Source = {
          ...current,
          name: patch.name ?? current.name,
          retention_days: patch.retention_days === undefined ? current.retention_days : patch.retention_days,
          updated_at: new Date().toISOString(),
        };
        const outcome = await store({ kind: 'source.update', source: next });
        if (outcome === 'name-taken') throw nameTaken('source', next.name);
        if (outcome === 'missing') throw new QuarryError('NOT_FOUND', `No source with id ${id}.`);
        mirror.sources.set(id, next);
        return next;
      }),
    delete: (id) =>
      queue(async () => {
        const s = mustGetSource(id);
        const outcome = await store({ kind: 'source.delete', id });
        mirror.sources.delete(id);
        if (outcome === 'missing') throw new QuarryError('NOT_FOUND', `No source with id ${id}.`);
        return s;
      }),
  };

  const tokens: TokenRepository = {
    list: () => [...mirror.tokens.values()].map((t) => t.token),
    findByValue: (value) => mirror.byHash.get(hashToken(value)),
    create: ({ description, scopes, value }) =>
      queue(async () => {
        const v = value ?? newTokenValue();
        const token: AccessToken = {
          id: randomUUID(),
          description,
          scopes: [...scopes],
          created_at: new Date().toISOString(),
        };
        const stored: StoredToken = { token, hash: hashToken(v) };
        if ((await store({ kind: 'token.insert', token: stored })) !== 'ok') {
          throw new QuarryError('CONFLICT', 'The access token could not be stored; try again.');
        }
        mirror.tokens.set(token.id, stored);
        mirror.byHash.set(stored.hash, token);
        return { token, value: v };
      }),
    revoke: (id) =>
      queue(async () => {
        const t = mirror.tokens.get(id);
        if (!t) return false;
        const outcome = await store({ kind: 'token.revoke', id });
        mirror.tokens.delete(id);
        mirror.byHash.delete(t.hash);
        return outcome === 'ok';
      }),
  };

  const endpointByName = (name: string) => {
    for (const e of mirror.endpoints.values()) if (e.name === name) return e;
    return undefined;
  };
  function assertEndpointNameFree(name: string, exceptId: string) {
    const other = endpointByName(name);
    if (other && other.id !== exceptId) throw nameTaken('endpoint', name);
  }
  function mustGetEndpoint(id: string): Endpoint {
    const e = mirror.endpoints.get(id);
    if (!e) throw new QuarryError('NOT_FOUND', `No endpoint with id ${id}.`);
    return e;
  }

  const endpoints: EndpointRepository = {
    list: () => [...mirror.endpoints.values()],
    get: (id) => mirror.endpoints.get(id),
    byName: endpointByName,
    insert: (endpoint) =>
      queue(async () => {
        if (mirror.endpoints.has(endpoint.id)) {
          throw new QuarryError('CONFLICT', `An endpoint with id ${endpoint.id} already exists.`);
        }
        assertEndpointNameFree(endpoint.name, endpoint.id);
        const e = endpointFields(endpoint);
        if ((await store({ kind: 'endpoint.insert', endpoint: e })) === 'name-taken') throw nameTaken('endpoint', e.name);
        mirror.endpoints.set(e.id, e);
        return e;
      }),
    replace: (endpoint) =>
      queue(async () => {
        mustGetEndpoint(endpoint.id);
        assertEndpointNameFree(endpoint.name, endpoint.id);
        const e = endpointFields(endpoint);
        const outcome = await store({ kind: 'endpoint.update', endpoint: e });
        if (outcome === 'name-taken') throw nameTaken('endpoint', e.name);
        if (outcome === 'missing') throw new QuarryError('NOT_FOUND', `No endpoint with id ${e.id}.`);
        mirror.endpoints.set(e.id, e);
        return e;
      }),
    delete: (id) =>
      queue(async () => {
        const e = mustGetEndpoint(id);
        const outcome = await store({ kind: 'endpoint.delete', id });
        mirror.endpoints.delete(id);
        if (outcome === 'missing') throw new QuarryError('NOT_FOUND', `No endpoint with id ${id}.`);
        return e;
      }),
  };

  return {
    kind: records.kind,
    sources,
    tokens,
    endpoints,
    exclusive: (work) =>
      records.exclusive(async () => {
        await refresh();
        return work();
      }),
    async adopt(found) {
      const writes: MetadataWrite[] = [
        ...found.sources.map((source): MetadataWrite => ({ kind: 'source.insert', source })),
        ...found.tokens.map((token): MetadataWrite => ({ kind: 'token.insert', token })),
        ...found.endpoints.map((endpoint): MetadataWrite => ({ kind: 'endpoint.insert', endpoint: endpointFields(endpoint) })),
      ];
      await queue(async () => {
        for (const w of writes) await records.write(w);
      });
      await refresh();
    },
    refresh,
    onChange(listener) {
      listeners.push(listener);
    },
    claimWarming: (key, holdMs) => records.claimWarming(key, holdMs),
    stalenessMs: () => Math.max(0, Date.now() - records.confirmedAt()),
    async health() {
      try {
        await records.ping();
        return { ok: true };
      } catch (e) {
        return { ok: false, reason: e instanceof Error ? e.message : String(e) };
      }
    },
    async stopWatching() {
      watching = false;
      while (pending) await pending;
    },
    async close() {
      watching = false;
      while (pending) await pending;
      await queue(async () => undefined);
      await records.close();
    },
  };
}
