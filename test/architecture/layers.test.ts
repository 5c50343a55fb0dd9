/**
 * The shape of src/ (docs/ARCHITECTURE.md, "Layers"): engines are reached through the registry, no
 * engine folder reaches into another, lower layers never import engines/, an engine's client library
 * is imported only where that engine lives, and no module imports itself through others.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { engineNames } from '../../src/engines/registry.ts';
import { importCycles, sourceModules } from './imports.ts';

const modules = sourceModules();
const engineFolder = (file: string): string | undefined => /^src\/engines\/([^/]+)\//.exec(file)?.[1];

/** The composition root: the only modules outside engines/ that may import it, and only these two files. */
const COMPOSITION = new Set(['src/config.ts', 'src/server.ts', 'src/main.ts', 'src/migrate/copy-events.ts']);
const ENGINE_ENTRY = new Set(['src/engines/registry.ts', 'src/engines/engine.ts']);

/** Client libraries, and where each may be imported: its engine's folder, and the embedded database layer DuckDB also serves. */
const LIBRARIES: readonly { readonly name: RegExp; readonly allowed: RegExp }[] = [
  { name: /^@duckdb\/node-api$/, allowed: /^src\/(engines\/duckdb|embedded-db|metadata\/embedded)\// },
  { name: /^(@clickhouse\/client|chdb)(\/|$)/, allowed: /^src\/engines\/clickhouse\// },
];

describe('layers of src/', () => {
  test('the import graph was read', () => {
    assert.ok(modules.length > 100, `${modules.length} modules`);
    assert.ok(modules.some((m) => m.imports.some((i) => i.target === 'src/engines/registry.ts')));
  });

  test('outside engines/, only the composition root imports it, and only the registry and the engine interface', () => {
    const wrong = modules.flatMap((m) =>
      m.file.startsWith('src/engines/')
        ? []
        : m.imports
            .filter((i) => i.target.startsWith('src/engines/') && (!COMPOSITION.has(m.file) || !ENGINE_ENTRY.has(i.target)))
            .map((i) => `${m.file} → ${i.target}`),
    );
    assert.deepEqual(wrong, []);
  });

  test('no engine folder imports another', () => {
    const wrong = modules.flatMap((m) => {
      const own = engineFolder(m.file);
      return own === undefined
        ? []
        : m.imports.filter((i) => engineFolder(i.target) !== undefined && engineFolder(i.target) !== own).map((i) => `${m.file} → ${i.target}`);
    });
    assert.deepEqual(wrong, []);
  });

  test('every engine of the registry has its folder, and the folders are the registry', () => {
    const folders = new Set(modules.map((m) => engineFolder(m.file)).filter((f) => f !== undefined));
    assert.deepEqual([...folders].sort(), [...engineNames].sort());
  });

  test("an engine's client library is imported only where that engine lives", () => {
    const wrong: string[] = [];
    for (const m of modules) {
      for (const spec of m.code.matchAll(/\sfrom\s+['"]([^'".][^'"]*)['"]|import\(\s*['"]([^'".][^'"]*)['"]\s*\)/g)) {
        const name = (spec[1] ?? spec[2]) as string;
        const rule = LIBRARIES.find((l) => l.name.test(name));
        if (rule && !rule.allowed.test(m.file)) wrong.push(`${m.file} imports ${name}`);
      }
    }
    assert.deepEqual(wrong, []);
  });

  test("outside an engine's folder and the registry, code names no engine", () => {
    const names = new RegExp(`['"\`]\\s*(${engineNames.join('|')})\\s*['"\`]`, 'i');
    const wrong = modules
      .filter((m) => engineFolder(m.file) === undefined && m.file !== 'src/engines/registry.ts')
      .filter((m) => names.test(m.code))
      .map((m) => m.file);
    assert.deepEqual(wrong, []);
  });

  test('no import cycle', () => {
    assert.deepEqual(importCycles(modules), []);
  });

  test('a cycle is found when there is one', () => {
    const fake = [
      { file: 'a.ts', code: '', imports: [{ target: 'b.ts', dynamic: false }] },
      { file: 'b.ts', code: '', imports: [{ target: 'a.ts', dynamic: false }] },
      { file: 'c.ts', code: '', imports: [{ target: 'a.ts', dynamic: true }] },
    ];
    assert.deepEqual(importCycles(fake), [['a.ts', 'b.ts']]);
  });
});
