/**
 * What an engine provides: the storage half (tables per source, growing schemas, durable appends),
 * the query half (run a prepared AST with bound parameters, a row cap and a time limit), the source
 * tables with their schema catalogue, and the lock-down that stops caller SQL from reaching anything
 * else; and how an engine is described to the rest of the service (`EngineDefinition`), listed once
 * in ./registry.ts. Adding an engine is a folder under src/engines/ and one line there
 * (docs/ARCHITECTURE.md, "Adding an engine").
 */
import type { EngineCapabilities } from '../capabilities.ts';
import type { MetadataSnapshot } from '../metadata/records.ts';
import type { QueryEngine } from '../query/port.ts';
import type { Env } from '../settings.ts';
import type { StorageEngine } from '../storage/port.ts';
import type { SourceTables } from '../storage/sources.ts';

export interface Engine {
  readonly name: string;
  readonly capabilities: EngineCapabilities;
  readonly storage: StorageEngine;
  readonly query: QueryEngine;
  /** Source → table, with the schema catalogue the SQL layer reads. */
  readonly sources: SourceTables;
  /**
   * From now on SQL cannot reach files, the network, extensions or settings (defence in depth
   * behind the validator). Called once start-up has done what needs them.
   */
  lockDown(): Promise<void>;
  /**
   * Why this node cannot use its engine right now (for `GET /health`), or undefined when it can.
   * An embedded engine has nothing to lose and need not say.
   */
  problem?(): Promise<string | undefined>;
  /**
   * Hands metadata an older build kept in the engine's own database to `adopt`, and drops it once
   * adopted; false when there was none. Called once at start-up, after the metadata store opened.
   */
  adoptLegacyMetadata?(adopt: (records: MetadataSnapshot) => Promise<void>): Promise<boolean>;
  /** Closes connections and flushes; the engine is unusable afterwards. */
  close(): Promise<void>;
}

export type { QueryEngine, StorageEngine };

/** A setting an engine reads from the environment (README's configuration table lists each). */
export interface EngineSetting {
  readonly name: string;
  /** What it sets and its default, in a sentence. */
  readonly description: string;
}

/** What every engine may derive its own settings from. */
export interface EngineContext {
  /** DATA_DIR, absolute. */
  readonly dataDir: string;
  /** MEMORY_BUDGET in bytes: an engine's share of it is its own to set. */
  readonly memoryBudgetBytes: number;
}

/** A folder besides DATA_DIR the engine keeps data in, claimed (locked) before the engine opens. */
export interface EngineFolder {
  readonly path: string;
  /** How a message names it ("the chDB folder"). */
  readonly what: string;
  /** Processes may not share it, but nodes of one process (tests) may. */
  readonly shared: boolean;
  /** What to use instead when another process holds it. */
  readonly instead: string;
}

/** An engine with its settings read: what start-up claims and opens. */
export interface ConfiguredEngine {
  readonly name: string;
  readonly folders: readonly EngineFolder[];
  /** Opens the engine on the settings read (the events' store, its catalogue, its query path). */
  open(): Promise<Engine>;
}

/** One engine, as the registry lists it. */
export interface EngineDefinition {
  /** QUARRY_ENGINE's value that chooses it. */
  readonly name: string;
  readonly title: string;
  readonly capabilities: EngineCapabilities;
  readonly settings: readonly EngineSetting[];
  /**
   * The settings that run it with nothing outside this package (tests, a trial), and whether that
   * is possible on this installation (embedded chDB is an optional package).
   */
  readonly selfContained: { readonly env: Env; available(): boolean };
  /** Reads the engine's settings; throws an Error whose message names the setting at fault. */
  configure(env: Env, context: EngineContext): ConfiguredEngine;
}
