/**
 * README.md's Configuration tables, generated from the settings registry: the service's settings
 * (src/config.ts, `serviceSettings`) and each engine's (its definition's `settings`, through
 * src/engines/registry.ts). test/docs/settings-and-codes.test.ts fails when README's copy differs;
 * `node --import tsx test/docs/settings-table.ts --write` rewrites it.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { serviceSettings } from '../../src/config.ts';
import { engineDefinitions } from '../../src/engines/registry.ts';
import { repoRoot } from '../support/repo.ts';

export const root = repoRoot;
export const README = path.join(root, 'README.md');

export const BEGIN = '<!-- settings: generated from src/config.ts and the engine definitions by `node --import tsx test/docs/settings-table.ts --write` -->';
export const END = '<!-- settings: end -->';

/** A table cell: no raw pipes or line breaks. */
const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ');

export function settingsSection(): string {
  const lines = ['| variable | default | meaning |', '|---|---|---|'];
  for (const [name, s] of Object.entries(serviceSettings)) lines.push(`| \`${name}\` | ${cell(s.shown)} | ${cell(s.description)} |`);
  lines.push('', 'Each engine reads its own settings when `QUARRY_ENGINE` chooses it:', '', '| variable | engine | meaning |', '|---|---|---|');
  for (const d of engineDefinitions) {
    for (const s of d.settings) lines.push(`| \`${s.name}\` | \`${d.name}\` | ${cell(s.description)} |`);
  }
  return [BEGIN, ...lines, END].join('\n');
}

/** README's generated section as it stands (undefined when the markers are missing). */
export function readmeSection(text = readFileSync(README, 'utf8')): string | undefined {
  const start = text.indexOf(BEGIN);
  const end = text.indexOf(END, start);
  return start < 0 || end < 0 ? undefined : text.slice(start, end + END.length);
}

if (process.argv.includes('--write')) {
  const text = readFileSync(README, 'utf8');
  const current = readmeSection(text);
  if (current === undefined) throw new Error(`README.md has no ${BEGIN} … ${END} block to replace`);
  writeFileSync(README, text.replace(current, settingsSection()));
  console.log('README.md: settings tables rewritten');
}
