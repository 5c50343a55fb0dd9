/**
 * What no response may carry about the machine it runs on (docs/API.md §4, "What errors say"): a
 * path of the repository or of the temporary folder the tests write in (which scripts/test.ts may
 * move off /tmp), a dependency's path, or a stack frame.
 */
import { tmpdir } from 'node:os';
import { repoRoot } from './repo.ts';

const escaped = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The folders whose paths must not appear, each with a trailing slash. */
const folders = [...new Set([repoRoot, tmpdir(), '/tmp', '/work'].map((f) => `${f.replace(/\/+$/, '')}/`))];

/** A path of this machine, or a stack frame (`at f (file:1:2)`, `file.ts:12`, `file.cpp`). */
export const PATH_OR_STACK = new RegExp(
  [...folders.map(escaped), 'node_modules', String.raw`\.ts:\d+`, String.raw`\.cpp\b`, String.raw`\bat .*\(.*:\d+:\d+\)`, String.raw`\n\s+at `].join('|'),
);
