/**
 * A reader for the small part of YAML that deploy/supabase/docker-compose.quarry.yml is written in,
 * so its test needs no YAML library: block mappings and block sequences by indentation, plain,
 * 'single'- and "double"-quoted scalars, literal block scalars (`|`, `|-`), empty flow collections
 * (`[]`, `{}`) and `#` comments. Every scalar is read as a string (as Compose's interpolation sees
 * it). Anything else (anchors, aliases, tags such as `!reset`, flow collections with content,
 * folded scalars, several documents) is refused with the line number, so the file cannot drift
 * into YAML this reader would misread.
 */

export type YamlValue = string | YamlValue[] | { [key: string]: YamlValue };

interface Line {
  /** 1-based, for messages. */
  number: number;
  indent: number;
  /** The line without its indentation and comment. */
  text: string;
  /** The raw line, for block scalars. */
  raw: string;
  /** Why `text` could not be made (reported only if the line is read as structure, not as block scalar content). */
  problem?: string;
}

export class YamlSubsetError extends Error {
  constructor(line: number, message: string) {
    super(`line ${line}: ${message}`);
    this.name = 'YamlSubsetError';
  }
}

/** The text before a `#` comment, quotes respected. */
function stripComment(text: string, lineNumber: number): string {
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote !== undefined) {
      if (c === '\\' && quote === '"') i++;
      else if (c === quote) quote = undefined;
      continue;
    }
    if ((c === '"' || c === "'") && (i === 0 || /[\s:[{,-]/.test(text[i - 1] ?? ''))) quote = c;
    else if (c === '#' && (i === 0 || /\s/.test(text[i - 1] ?? ''))) return text.slice(0, i).trimEnd();
  }
  if (quote !== undefined) throw new YamlSubsetError(lineNumber, 'unterminated quoted string (multi-line quotes are not supported)');
  return text.trimEnd();
}

function toLines(source: string): Line[] {
  const lines: Line[] = [];
  source.split('\n').forEach((raw, i) => {
    const number = i + 1;
    if (raw.includes('\t')) throw new YamlSubsetError(number, 'tab characters are not allowed');
    const indent = raw.length - raw.trimStart().length;
    const line: Line = { number, indent, text: raw.trim(), raw: raw.replace(/\r$/, '') };
    try {
      line.text = stripComment(raw.trimStart(), number);
    } catch (e) {
      line.problem = (e as Error).message;
    }
    lines.push(line);
  });
  return lines;
}

function scalar(text: string, lineNumber: number): YamlValue {
  if (text === '[]') return [];
  if (text === '{}') return {};
  if (text.startsWith('"')) {
    if (!text.endsWith('"') || text.length < 2) throw new YamlSubsetError(lineNumber, `bad double-quoted string: ${text}`);
    try {
      return JSON.parse(text) as string;
    } catch {
      throw new YamlSubsetError(lineNumber, `double-quoted string with an escape outside JSON's: ${text}`);
    }
  }
  if (text.startsWith("'")) {
    if (!text.endsWith("'") || text.length < 2) throw new YamlSubsetError(lineNumber, `bad single-quoted string: ${text}`);
    const inner = text.slice(1, -1);
    if (/'(?!')/.test(inner.replaceAll("''", ''))) throw new YamlSubsetError(lineNumber, `bad single-quoted string: ${text}`);
    return inner.replaceAll("''", "'");
  }
  if (/^[[{&*!|>%@`]/.test(text)) throw new YamlSubsetError(lineNumber, `not in the supported YAML subset: ${text}`);
  if (/:\s/.test(text) || text.endsWith(':')) throw new YamlSubsetError(lineNumber, `a plain scalar may not hold ": " (quote it): ${text}`);
  return text;
}

/** Splits `key: rest` (key plain or quoted); undefined when the text is not a mapping entry. */
function splitKey(text: string, lineNumber: number): { key: string; rest: string } | undefined {
  if (text.startsWith('"') || text.startsWith("'")) {
    const q = text[0] as string;
    let end = 1;
    while (end < text.length) {
      if (q === '"' && text[end] === '\\') end += 2;
      else if (text[end] === q && q === "'" && text[end + 1] === "'") end += 2;
      else if (text[end] === q) break;
      else end++;
    }
    const after = text.slice(end + 1);
    if (!after.startsWith(':')) return undefined;
    return { key: scalar(text.slice(0, end + 1), lineNumber) as string, rest: after.slice(1).trim() };
  }
  const m = /^([^\s"'#][^:]*?)\s*:(?:\s+(.*))?$/.exec(text);
  if (!m) return undefined;
  return { key: m[1] as string, rest: (m[2] ?? '').trim() };
}

class Reader {
  private i = 0;

  constructor(private readonly lines: Line[]) {}

  /** Skips blank and comment-only lines; returns the next meaningful line. */
  private peek(): Line | undefined {
    while (this.i < this.lines.length && (this.lines[this.i] as Line).text === '') this.i++;
    const line = this.lines[this.i];
    if (line?.problem !== undefined) throw new Error(line.problem);
    return line;
  }

  document(): YamlValue {
    const first = this.peek();
    if (first === undefined) return {};
    if (first.text === '---' || first.text === '...') throw new YamlSubsetError(first.number, 'document markers are not supported');
    const value = this.block(first.indent);
    const extra = this.peek();
    if (extra !== undefined) throw new YamlSubsetError(extra.number, 'unexpected indentation');
    return value;
  }

  /** A mapping or a sequence whose entries start at column `indent`. */
  private block(indent: number): YamlValue {
    const first = this.peek() as Line;
    return first.text === '-' || first.text.startsWith('- ') ? this.sequence(indent) : this.mapping(indent);
  }

  private sequence(indent: number): YamlValue[] {
    const items: YamlValue[] = [];
    for (let line = this.peek(); line !== undefined && line.indent === indent; line = this.peek()) {
      if (!(line.text === '-' || line.text.startsWith('- '))) break;
      const rest = line.text.slice(1).trimStart();
      this.i++;
      if (rest === '') {
        items.push(this.nested(indent, line.number));
        continue;
      }
      if (rest === '|' || rest === '|-') {
        items.push(this.literal(indent, rest === '|-'));
        continue;
      }
      // `- key: value` opens a mapping whose entries sit where `key` starts.
      const entry = splitKey(rest, line.number);
      if (entry !== undefined) {
        const inner = indent + (line.text.length - rest.length);
        this.i--;
        this.lines[this.i] = { ...line, indent: inner, text: rest };
        items.push(this.mapping(inner));
        continue;
      }
      items.push(scalar(rest, line.number));
    }
    return items;
  }

  private mapping(indent: number): { [key: string]: YamlValue } {
    const map: { [key: string]: YamlValue } = {};
    for (let line = this.peek(); line !== undefined && line.indent === indent; line = this.peek()) {
      if (line.text === '-' || line.text.startsWith('- ')) break;
      const entry = splitKey(line.text, line.number);
      if (entry === undefined) throw new YamlSubsetError(line.number, `expected "key: value", got: ${line.text}`);
      if (entry.key === '<<') throw new YamlSubsetError(line.number, 'merge keys are not supported');
      if (Object.hasOwn(map, entry.key)) throw new YamlSubsetError(line.number, `duplicate key "${entry.key}"`);
      this.i++;
      if (entry.rest === '') {
        // Compose files often put a sequence at the key's own indentation.
        const next = this.peek();
        const sameIndentSequence = next !== undefined && next.indent === indent && (next.text === '-' || next.text.startsWith('- '));
        map[entry.key] = sameIndentSequence ? this.sequence(indent) : this.nested(indent, line.number);
      } else if (entry.rest === '|' || entry.rest === '|-') {
        map[entry.key] = this.literal(indent, entry.rest === '|-');
      } else {
        map[entry.key] = scalar(entry.rest, line.number);
      }
    }
    return map;
  }

  /** The block under a key or a bare `-`, indented deeper than `parent`; an empty string when there is none. */
  private nested(parent: number, lineNumber: number): YamlValue {
    const next = this.peek();
    if (next === undefined || next.indent <= parent) {
      throw new YamlSubsetError(lineNumber, 'empty value (write "" or [] or {} explicitly)');
    }
    return this.block(next.indent);
  }

  /** A literal block scalar (`|` keeps the final newline, `|-` drops it). */
  private literal(parent: number, strip: boolean): string {
    const body: string[] = [];
    let indent: number | undefined;
    while (this.i < this.lines.length) {
      const line = this.lines[this.i] as Line;
      const blank = line.raw.trim() === '';
      if (!blank && line.indent <= parent) break;
      if (!blank && indent === undefined) indent = line.indent;
      body.push(blank ? '' : line.raw.slice(indent));
      this.i++;
    }
    while (body.length > 0 && body[body.length - 1] === '') body.pop();
    const text = body.join('\n');
    return strip ? text : `${text}\n`;
  }
}

/** Parses `source`, which must stay within the subset described above. */
export function parseYamlSubset(source: string): YamlValue {
  return new Reader(toLines(source)).document();
}

export function isMap(v: YamlValue | undefined): v is { [key: string]: YamlValue } {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Compose's interpolation of one value against `vars` (the .env file and the shell): `${VAR}`,
 * `${VAR:-default}`, `${VAR-default}`, `${VAR:?message}`, `${VAR?message}` and `$$` for a `$`. A
 * `$` that starts none of these is refused, as Compose refuses it.
 */
export function composeInterpolate(text: string, vars: Record<string, string | undefined>): string {
  return text.replace(/\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}|\$/g, (all, name?: string, op?: string, arg?: string) => {
    if (all === '$$') return '$';
    if (name === undefined) throw new Error(`a "$" that Compose cannot interpolate (write $$ for a literal $): ${text}`);
    const v = vars[name];
    const missing = op?.startsWith(':') === true ? v === undefined || v === '' : v === undefined;
    if (op === ':-' || op === '-') return missing ? (arg ?? '') : (v as string);
    if (op === ':?' || op === '?') {
      if (missing) throw new Error(`${name}: ${arg ?? 'required'}`);
      return v as string;
    }
    return v ?? '';
  });
}
