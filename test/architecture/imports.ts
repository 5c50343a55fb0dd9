/**
 * The import graph of src/: every static `import … from` / `export … from` and dynamic `import()`
 * of a relative module, read from the source text (comments removed first).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../support/repo.ts';

export interface ModuleImports {
  /** Path relative to the repository root, e.g. src/sql/parse.ts. */
  readonly file: string;
  readonly code: string;
  readonly imports: readonly { readonly target: string; readonly dynamic: boolean }[];
}

const root = repoRoot;

/** The text with comments blanked (strings kept), so names in comments are not counted. */
export function withoutComments(text: string): string {
  return text.replace(
    /\/\*[\s\S]*?\*\/|(^|[^:'"`\\])\/\/.*$|('(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`(?:[^`\\]|\\.)*`)/gm,
    (m, lead: string | undefined, str: string | undefined) => {
      if (str !== undefined) return str;
      return lead !== undefined ? lead + m.slice(lead.length).replace(/[^\n]/g, ' ') : m.replace(/[^\n]/g, ' ');
    },
  );
}

function filesUnder(dir: string): string[] {
  return readdirSync(path.join(root, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => path.relative(root, path.join(e.parentPath, e.name)))
    .sort();
}

export function sourceModules(dir = 'src'): ModuleImports[] {
  return filesUnder(dir).map((file) => {
    const code = withoutComments(readFileSync(path.join(root, file), 'utf8'));
    const imports: { target: string; dynamic: boolean }[] = [];
    for (const m of code.matchAll(/(?:^|\s)(?:import|export)\s[^;]*?\sfrom\s+['"](\.{1,2}\/[^'"]+)['"]|import\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g)) {
      const spec = (m[1] ?? m[2]) as string;
      imports.push({ target: path.relative(root, path.resolve(root, path.dirname(file), spec)), dynamic: m[2] !== undefined });
    }
    return { file, code, imports };
  });
}

/** Each cycle of static imports, as the files along it (one per strongly connected group). */
export function importCycles(modules: readonly ModuleImports[]): string[][] {
  const edges = new Map(modules.map((m) => [m.file, m.imports.filter((i) => !i.dynamic).map((i) => i.target)]));
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  let next = 0;
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!edges.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
    }
    if (low.get(v) === index.get(v)) {
      const group: string[] = [];
      for (;;) {
        const w = stack.pop() as string;
        onStack.delete(w);
        group.push(w);
        if (w === v) break;
      }
      if (group.length > 1 || (edges.get(v) ?? []).includes(v)) cycles.push(group.sort());
    }
  };
  for (const v of edges.keys()) if (!index.has(v)) visit(v);
  return cycles;
}
