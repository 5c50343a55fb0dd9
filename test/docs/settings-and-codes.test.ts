/**
 * The docs and the code describe the same settings, error codes and endpoint vocabulary:
 * - every setting read anywhere in src/ is described (src/config.ts's registry or an engine's
 *   definition) and in README.md's Configuration tables, which are generated from the registry
 *   (test/docs/settings-table.ts) and may list nothing else; the import command's own settings
 *   are in docs/DEPLOY.md's "Importing from Logflare";
 * - docs/API.md §1 names exactly the settings the registry marks as part of the contract (and no
 *   setting that does not exist);
 * - docs/API.md §4's error table lists every code of src/errors.ts with its default status, and no
 *   other;
 * - docs/API.md §5's tables list the endpoint fields, typed-parameter settings and types of the
 *   vocabularies (src/schemas/).
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { allSettings, serviceSettings } from '../../src/config.ts';
import { errorCodes, statusOf } from '../../src/errors.ts';
import { EndpointSchema } from '../../src/schemas/endpoint.ts';
import { PARAM_TYPE_NAMES, ParamSpecSchema } from '../../src/schemas/typed-param.ts';
import { withoutComments } from '../architecture/imports.ts';
import { README, readmeSection, root, settingsSection } from './settings-table.ts';

const read = (file: string) => readFileSync(path.join(root, file), 'utf8');

/** The lines of the section headed `heading` (up to the next heading of that level or higher). */
function section(text: string, heading: string): string {
  const lines = text.split('\n');
  const start = lines.findIndex((l) => l.trim() === heading);
  assert.ok(start >= 0, `no heading "${heading}"`);
  const level = /^#+/.exec(heading)?.[0].length ?? 2;
  let end = lines.findIndex((l, i) => i > start && /^#+ /.test(l) && (/^#+/.exec(l)?.[0].length ?? 9) <= level);
  if (end < 0) end = lines.length;
  return lines.slice(start + 1, end).join('\n');
}

/** The rows (cells, trimmed) of the first table in `text` whose header row starts with `header`. */
function table(text: string, header: string): string[][] {
  const lines = text.split('\n');
  const start = lines.findIndex((l) => l.startsWith(header));
  assert.ok(start >= 0, `no table starting "${header}"`);
  const rows: string[][] = [];
  for (let i = start + 2; i < lines.length && (lines[i] as string).startsWith('|'); i++) {
    rows.push(
      (lines[i] as string)
        .replace(/^\||\|$/g, '')
        .split(/(?<!\\)\|/)
        .map((c) => c.trim()),
    );
  }
  return rows;
}

/** Backquoted spans of `text` that are a name in capitals (`PORT`, `QUERY_MAX_JOINS`). */
const capitalNames = (text: string) => [...text.matchAll(/`([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*)`/g)].map((m) => m[1] as string);

const SETTING_NAME = /^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*$/;

/** Every setting name code under src/ reads from an environment, with the files that read it. */
function settingsReadInSrc(): Map<string, Set<string>> {
  const found = new Map<string, Set<string>>();
  const files = readdirSync(path.join(root, 'src'), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => path.relative(root, path.join(e.parentPath, e.name)));
  const patterns = [
    /\b\w+\(\s*env\s*,\s*['"`]([A-Z][A-Z0-9_]*)['"`]/g, // optional(env, 'X'), wholeNumber(env, 'X', …), …
    /\benv\s*\.\s*([A-Z][A-Z0-9_]*)\b/g, // env.X, process.env.X
    /\benv\s*\[\s*['"`]([A-Z][A-Z0-9_]*)['"`]\s*\]/g, // env['X']
  ];
  for (const file of files) {
    const code = withoutComments(readFileSync(path.join(root, file), 'utf8'));
    const names = patterns.flatMap((p) => [...code.matchAll(p)].map((m) => m[1] as string));
    // An engine definition may choose which of its settings to read (an older name, …).
    if (/^src\/engines\/[^/]+\/definition\.ts$/.test(file)) {
      names.push(...[...code.matchAll(/['"`]([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)['"`]/g)].map((m) => m[1] as string));
    }
    for (const name of names) {
      if (!SETTING_NAME.test(name)) continue;
      if (!found.has(name)) found.set(name, new Set());
      found.get(name)?.add(file);
    }
  }
  return found;
}

describe('settings: code, registry and docs agree', () => {
  const described = new Map(allSettings().map((s) => [s.name, s]));
  const readme = readFileSync(README, 'utf8');
  const configuration = section(readme, '## Configuration');
  const readmeNames = [...table(configuration, '| variable | default | meaning |'), ...table(configuration, '| variable | engine | meaning |')].map((row) =>
    capitalNames(row[0] as string),
  );

  test("README's Configuration tables are the ones generated from the registry", () => {
    assert.equal(
      readmeSection(),
      settingsSection(),
      'README.md is out of date with src/config.ts or an engine definition: run `node --import tsx test/docs/settings-table.ts --write`',
    );
  });

  test('every setting read in src/ is described and documented', () => {
    const deploy = section(read('docs/DEPLOY.md'), '## Importing from Logflare');
    const inReadme = new Set(readmeNames.flat());
    const missing: string[] = [];
    for (const [name, files] of settingsReadInSrc()) {
      const where = [...files].join(', ');
      if (described.has(name)) {
        if (!inReadme.has(name)) missing.push(`${name} (read in ${where}) is not in README.md's Configuration tables`);
        continue;
      }
      // The import command (npm run import-logflare) has its own options, documented with it.
      if ([...files].every((f) => f.startsWith('src/import/'))) {
        const libpq = /^PG[A-Z]+$/.test(name) && /libpq/.test(deploy);
        if (!libpq && !deploy.includes(`\`${name}\``)) missing.push(`${name} (read in ${where}) is not in docs/DEPLOY.md, "Importing from Logflare"`);
        continue;
      }
      missing.push(`${name} (read in ${where}) is not in src/config.ts's serviceSettings nor in an engine's settings`);
    }
    assert.deepEqual(missing, []);
  });

  test('the scan finds what the service reads', () => {
    const found = settingsReadInSrc();
    for (const name of ['CLICKHOUSE_URL', 'DUCKDB_THREADS', 'POSTGRES_BACKEND_URL']) assert.ok(found.has(name), name);
  });

  test("README's tables list one setting per row, each one that exists, each once", () => {
    for (const names of readmeNames) assert.equal(names.length, 1, names.join(', '));
    const flat = readmeNames.flat();
    assert.deepEqual(
      flat.filter((n) => !described.has(n)),
      [],
      'README.md lists settings that nothing reads',
    );
    assert.deepEqual(
      flat.filter((n, i) => flat.indexOf(n) !== i),
      [],
      'listed twice',
    );
    assert.deepEqual(
      [...described.keys()].filter((n) => !flat.includes(n)),
      [],
      'settings missing from README.md',
    );
  });

  test('docs/API.md §1 names the contract settings, and only settings that exist', () => {
    const rows = table(section(read('docs/API.md'), '## 1. Running it'), '| What | Rule |');
    const codes = new Set<string>(errorCodes);
    const named = new Set(rows.flatMap((r) => capitalNames(r.join(' '))).filter((n) => !codes.has(n)));
    assert.deepEqual(
      [...named].filter((n) => !described.has(n)),
      [],
      'docs/API.md §1 names settings that do not exist',
    );
    const contract = Object.entries(serviceSettings)
      .filter(([, s]) => s.docs.includes('docs/API.md §1'))
      .map(([n]) => n);
    assert.deepEqual(
      contract.filter((n) => !named.has(n)),
      [],
      'settings src/config.ts marks as contract that docs/API.md §1 does not name',
    );
    assert.deepEqual(
      [...named].filter((n) => serviceSettings[n as keyof typeof serviceSettings] !== undefined && !contract.includes(n)),
      [],
      'settings docs/API.md §1 names that src/config.ts does not mark as contract (`contract: true`)',
    );
  });
});

describe('error codes: src/errors.ts and docs/API.md §4 agree', () => {
  const rows = table(section(read('docs/API.md'), '## 4. Running an endpoint'), '| Situation | Status | `code` |');
  const documented = new Map<string, Set<number>>();
  for (const row of rows) {
    const status = Number(/^\d{3}/.exec(row[1] ?? '')?.[0]);
    for (const code of capitalNames(row[2] ?? '')) {
      if (!documented.has(code)) documented.set(code, new Set());
      documented.get(code)?.add(status);
    }
  }

  test('every code is in the table, and the table has no other', () => {
    assert.deepEqual(
      errorCodes.filter((c) => !documented.has(c)),
      [],
      'codes of src/errors.ts missing from docs/API.md §4',
    );
    assert.deepEqual(
      [...documented.keys()].filter((c) => !(errorCodes as string[]).includes(c)),
      [],
      'docs/API.md §4 lists codes src/errors.ts does not have',
    );
  });

  test('each with its default status', () => {
    const wrong = errorCodes
      .filter((c) => documented.has(c) && ![...(documented.get(c) as Set<number>)].every((s) => s === statusOf(c)))
      .map((c) => `${c}: documented ${[...(documented.get(c) as Set<number>)].join('/')}, src/errors.ts ${statusOf(c)}`);
    assert.deepEqual(wrong, []);
  });
});

describe('the endpoint vocabulary and docs/API.md §5 agree', () => {
  const api = read('docs/API.md');
  const management = section(api, '## 5. Endpoint management');

  test('the field table lists every field of an endpoint', () => {
    const fields = table(management, '| Field | Rule |').flatMap((r) => [...(r[0] as string).matchAll(/`([a-z_]+)`/g)].map((m) => m[1]));
    assert.deepEqual(fields.sort(), Object.keys(EndpointSchema.properties).sort());
  });

  test('the typed-parameter tables list every setting and every type', () => {
    const typed = section(api, '### Typed parameters');
    const settings = table(typed, '| setting | rule |').map((r) => (r[0] as string).replaceAll('`', ''));
    assert.deepEqual(settings.sort(), Object.keys(ParamSpecSchema.properties).sort());
    const types = table(typed, '| type |').map((r) => (r[0] as string).replaceAll('`', ''));
    assert.deepEqual(types, PARAM_TYPE_NAMES);
  });
});
