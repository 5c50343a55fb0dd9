/**
 * What a metadata store keeps and how it is written: the port each implementation provides (the
 * embedded DuckDB file, or a shared PostgreSQL). Validation, name rules and the in-memory mirror
 * live once, in store.ts; an implementation only loads and writes records.
 */
import { type Endpoint, endpointDefaults, endpointFields } from '../endpoints/model.ts';
import type { Source } from './sources.ts';
import type { AccessToken } from './tokens.ts';

export interface StoredToken {
  readonly token: AccessToken;
  /** SHA-256 of the value, hex. */
  readonly hash: string;
}

/** Everything live, read at one point in time. */
export interface MetadataSnapshot {
  readonly sources: readonly Source[];
  /** Live tokens only. */
  readonly tokens: readonly StoredToken[];
  readonly endpoints: readonly Endpoint[];
}

export type MetadataWrite =
  | { readonly kind: 'source.insert'; readonly source: Source }
  | { readonly kind: 'source.update'; readonly source: Source }
  | { readonly kind: 'source.delete'; readonly id: string }
  | { readonly kind: 'token.insert'; readonly token: StoredToken }
  | { readonly kind: 'token.revoke'; readonly id: string }
  | { readonly kind: 'endpoint.insert'; readonly endpoint: Endpoint }
  | { readonly kind: 'endpoint.update'; readonly endpoint: Endpoint }
  | { readonly kind: 'endpoint.delete'; readonly id: string };

/**
 * `missing`: an update, delete or revoke found no such record (another node removed it);
 * `name-taken`: the name or id is already stored (another node took it first).
 */
export type WriteOutcome = 'ok' | 'missing' | 'name-taken';

export interface MetadataRecords {
  readonly kind: 'embedded' | 'postgres';
  load(): Promise<MetadataSnapshot>;
  write(change: MetadataWrite): Promise<WriteOutcome>;
  /** Runs `work` while no other node runs exclusive work (start-up seeding). */
  exclusive<T>(work: () => Promise<T>): Promise<T>;
  /** `changed` is called whenever another node may have written; the embedded store never calls it. */
  watch(changed: () => void): void;
  /**
   * Claims the background refresh of one cached result for `holdMs`; false when another node
   * holds it. The embedded store always grants it.
   */
  claimWarming(key: string, holdMs: number): Promise<boolean>;
  /**
   * When this node last knew its copy was current (epoch ms): the start of its latest load, or of
   * a version check that found nothing new. The embedded store is always current.
   */
  confirmedAt(): number;
  /** Resolves when the store answers; rejects with a reason fit for an operator. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/**
 * An endpoint as stored: its fields as one JSON document (new fields need no schema change), with
 * the defaults of fields an older version did not write.
 */
export function endpointDocument(e: Endpoint): string {
  return JSON.stringify(endpointFields(e));
}

export function endpointFromDocument(doc: string): Endpoint {
  return endpointFields({ ...endpointDefaults, ...(JSON.parse(doc) as Endpoint) });
}
