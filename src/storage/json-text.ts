/**
 * JSON text of any parsed JSON value, however deep. `JSON.stringify` recurses and throws a
 * RangeError past a few thousand levels, while `JSON.parse` accepts any depth, so a body of
 * `[[[[…]]]]` could be read but not written back; this falls back to an explicit stack then.
 */
import type { JsonValue } from './event.ts';

/**
 * Text with each lone surrogate (JSON allows `\ud800` alone) as U+FFFD, as UTF-8 encoding has it:
 * neither engine stores a lone surrogate as it is.
 */
export function wellFormed(text: string): string {
  return text.isWellFormed() ? text : text.toWellFormed();
}

export function jsonText(value: unknown): string {
  try {
    return JSON.stringify(value) ?? 'null';
  } catch (e) {
    if (!(e instanceof RangeError)) throw e;
  }
  return deepJsonText(value);
}

type Frame = { array: JsonValue[]; i: number } | { object: { [key: string]: JsonValue }; keys: string[]; i: number };

function deepJsonText(root: unknown): string {
  const out: string[] = [];
  const stack: Frame[] = [];
  let next: unknown = root;
  let pending = true;
  for (;;) {
    if (pending) {
      pending = false;
      if (Array.isArray(next)) {
        out.push('[');
        stack.push({ array: next as JsonValue[], i: 0 });
      } else if (typeof next === 'object' && next !== null) {
        out.push('{');
        const object = next as { [key: string]: JsonValue };
        stack.push({ object, keys: Object.keys(object).filter((k) => object[k] !== undefined), i: 0 });
      } else {
        out.push(JSON.stringify(next) ?? 'null');
      }
    }
    const top = stack[stack.length - 1];
    if (top === undefined) return out.join('');
    if ('array' in top) {
      if (top.i >= top.array.length) {
        out.push(']');
        stack.pop();
        continue;
      }
      if (top.i > 0) out.push(',');
      next = top.array[top.i++];
    } else {
      if (top.i >= top.keys.length) {
        out.push('}');
        stack.pop();
        continue;
      }
      const key = top.keys[top.i++] as string;
      out.push(top.i > 1 ? ',' : '', JSON.stringify(key), ':');
      next = top.object[key];
    }
    pending = true;
  }
}
