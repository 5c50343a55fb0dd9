/**
 * Every engine, once: configuration, start-up, the migration tool and the tests find engines here
 * and nowhere else. The first is the default. Adding an engine is its folder and one line below.
 */
import { clickHouse } from './clickhouse/definition.ts';
import { duckDb } from './duckdb/definition.ts';
import type { EngineDefinition } from './engine.ts';

export const engineDefinitions: readonly EngineDefinition[] = [duckDb, clickHouse];

export const engineNames: readonly string[] = engineDefinitions.map((d) => d.name);

export function engineDefinition(name: string): EngineDefinition | undefined {
  return engineDefinitions.find((d) => d.name === name);
}
