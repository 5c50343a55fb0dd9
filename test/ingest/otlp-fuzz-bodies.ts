/**
 * Random and mutated OTLP logs request bodies, for the fuzz tests (test/ingest/otlp-fuzz.test.ts on
 * the decoders, test/http/otlp-fuzz.test.ts over HTTP). Valid requests are built at random and
 * encoded by the library (otlp-messages.ts), then mutated; a seed makes every run repeatable.
 */
import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import type { OtlpEncoding } from '../../src/ingest/otlp/response.ts';
import { type RequestInit, encodeRequest, requestJson } from './otlp-messages.ts';

export interface FuzzBody {
  body: Uint8Array;
  encoding: OtlpEncoding;
  /** How it was made (for a failure's message). */
  label: string;
}

export function seedFromEnv(): number {
  const fromEnv = Number(process.env.OTLP_FUZZ_SEED);
  return Number.isInteger(fromEnv) && fromEnv > 0 ? fromEnv : Math.floor(Math.random() * 2 ** 31) + 1;
}

/** mulberry32: small, fast and good enough to pick mutations. */
export function randomSource(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Stands for the JSON number 1e400 (past a double's range), which JavaScript cannot hold. */
const HUGE_NUMBER = '<1e400>';

/** KeyValue.key = "k". */
const KEY_K = Uint8Array.from([0x0a, 0x01, 0x6b]);

class Fuzzer {
  constructor(readonly random: () => number) {}

  int(n: number): number {
    return Math.floor(this.random() * n);
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)] as T;
  }

  chance(p: number): boolean {
    return this.random() < p;
  }

  bytes(n: number): Uint8Array {
    return Uint8Array.from({ length: n }, () => this.int(256));
  }

  bigint64(): bigint {
    return (BigInt(this.int(2 ** 32)) << 32n) | BigInt(this.int(2 ** 32));
  }

  text(): string {
    return this.pick([
      '',
      'hello',
      'payment failed for order 42',
      'é 😀 中文',
      'nul\u0000inside',
      'lone \ud800 surrogate',
      'x'.repeat(300),
      '{"looks":"like json"}',
      'warning',
      'ERROR',
      'SEVERITY_NUMBER_INFO',
      String(this.int(1e9)),
    ]);
  }

  key(): string {
    return this.pick([
      'service.name',
      'k',
      '',
      '__proto__',
      'constructor',
      'a.b.c',
      'http-status',
      'Case',
      'case',
      '1st',
      'id',
      'timestamp',
      'event_message',
      'é',
      'k'.repeat(200),
    ]);
  }

  value(depth: number): Record<string, unknown> {
    const kinds = depth > 3 ? 6 : 8;
    switch (this.int(kinds)) {
      case 0:
        return { value: { case: 'stringValue', value: this.text() } };
      case 1:
        return { value: { case: 'boolValue', value: this.chance(0.5) } };
      case 2:
        return { value: { case: 'intValue', value: BigInt.asIntN(64, this.chance(0.5) ? BigInt(this.int(1000) - 500) : this.bigint64()) } };
      case 3:
        return { value: { case: 'doubleValue', value: this.pick([0.5, -0, 1e308, Number.NaN, Number.POSITIVE_INFINITY, this.random()]) } };
      case 4:
        return { value: { case: 'bytesValue', value: this.bytes(this.int(20)) } };
      case 5:
        return {};
      case 6:
        return { value: { case: 'arrayValue', value: { values: Array.from({ length: this.int(4) }, () => this.value(depth + 1)) } } };
      default:
        return { value: { case: 'kvlistValue', value: { values: this.attributes(depth + 1) } } };
    }
  }

  attributes(depth = 1): Record<string, unknown>[] {
    return Array.from({ length: this.int(4) }, () => ({ key: this.key(), value: this.value(depth) }));
  }

  /** An AnyValue `levels` deep (arrays and kvlists in turn). */
  deepValue(levels: number): Record<string, unknown> {
    let value: Record<string, unknown> = { value: { case: 'stringValue', value: 'leaf' } };
    for (let i = 1; i < levels; i++) {
      value =
        i % 2 === 0
          ? { value: { case: 'arrayValue', value: { values: [value] } } }
          : { value: { case: 'kvlistValue', value: { values: [{ key: 'k', value }] } } };
    }
    return value;
  }

  record(): Record<string, unknown> {
    const r: Record<string, unknown> = {};
    if (this.chance(0.7)) r.timeUnixNano = this.chance(0.8) ? 1_763_719_200_000_000_000n + BigInt(this.int(1e9)) : BigInt.asUintN(64, this.bigint64());
    if (this.chance(0.5)) r.observedTimeUnixNano = BigInt.asUintN(64, this.bigint64());
    if (this.chance(0.6)) r.severityNumber = this.int(30) - 2;
    if (this.chance(0.5)) r.severityText = this.text();
    if (this.chance(0.8)) r.body = this.chance(0.03) ? this.deepValue(120 + this.int(20)) : this.value(1);
    if (this.chance(0.6)) r.attributes = this.attributes();
    if (this.chance(0.5)) r.traceId = this.bytes(this.chance(0.9) ? 16 : this.int(20));
    if (this.chance(0.5)) r.spanId = this.bytes(this.chance(0.9) ? 8 : this.int(12));
    if (this.chance(0.3)) r.eventName = this.text();
    if (this.chance(0.2)) r.flags = this.int(2 ** 32);
    return r;
  }

  request(): RequestInit {
    return {
      resourceLogs: Array.from({ length: 1 + this.int(2) }, () => ({
        resource: { attributes: this.attributes() },
        scopeLogs: Array.from({ length: 1 + this.int(2) }, () => ({
          scope: { name: this.text(), version: this.chance(0.5) ? '1.0.0' : '', attributes: this.attributes() },
          logRecords: Array.from({ length: this.int(5) }, () => this.record()),
        })),
      })),
    } as RequestInit;
  }

  // Byte mutations.

  mutateBytes(b: Uint8Array, other: Uint8Array): [Uint8Array, string] {
    const copy = Uint8Array.from(b);
    const at = (n: number) => this.int(Math.max(1, n));
    switch (this.int(11)) {
      case 0:
        return [b.subarray(0, at(b.length)), 'truncated'];
      case 1:
        for (let k = 0; k < 1 + this.int(4) && copy.length > 0; k++) {
          const i = at(copy.length);
          copy[i] = (copy[i] as number) ^ (1 << this.int(8));
        }
        return [copy, 'bits flipped'];
      case 2:
        if (copy.length > 0) copy[at(copy.length)] = this.int(256);
        return [copy, 'a byte replaced'];
      case 3: {
        const p = at(b.length);
        return [concat(b.subarray(0, p), this.bytes(1 + this.int(8)), b.subarray(p)), 'bytes inserted'];
      }
      case 4: {
        const p = at(b.length);
        return [concat(b.subarray(0, p), b.subarray(Math.min(b.length, p + 1 + this.int(16)))), 'bytes deleted'];
      }
      case 5: {
        // After a byte that could be a length-delimited tag, a length of 4 GiB.
        const candidates = [...b.keys()].filter((i) => ((b[i] as number) & 7) === 2);
        const p = candidates.length > 0 ? this.pick(candidates) + 1 : at(b.length);
        return [concat(b.subarray(0, p), Uint8Array.from([0xff, 0xff, 0xff, 0xff, 0x0f]), b.subarray(p)), 'huge length'];
      }
      case 6:
        if (copy.length > 0) {
          const p = at(copy.length);
          copy[p] = ((copy[p] as number) & ~7) | this.int(8);
        }
        return [copy, 'wire type changed'];
      case 7: {
        const p = at(b.length);
        return [
          concat(b.subarray(0, p), this.pick([Uint8Array.from([0xff]), Uint8Array.from([0xc3]), Uint8Array.from([0xed, 0xa0, 0x80])]), b.subarray(p)),
          'invalid UTF-8',
        ];
      }
      case 8:
        return [concat(b.subarray(0, at(b.length)), other.subarray(at(other.length))), 'spliced'];
      case 9: {
        const from = at(b.length);
        const slice = b.subarray(from, from + this.int(64));
        const p = at(b.length);
        return [concat(b.subarray(0, p), slice, b.subarray(p)), 'slice repeated'];
      }
      default:
        return [this.bytes(this.int(512)), 'random bytes'];
    }
  }

  /** A request whose one record's body is `levels` AnyValues deep, built outside in (no copy per level). */
  deepProtobuf(levels: number): Uint8Array {
    const LEN = WireType.LengthDelimited;
    // A field's tag and length; BinaryWriter would do, but costs an allocation per level.
    const header = (no: number, size: number) => {
      const out = [(no << 3) | LEN];
      for (let n = size; ; n = Math.floor(n / 128)) {
        if (n < 128) {
          out.push(n);
          break;
        }
        out.push((n % 128) | 128);
      }
      return Uint8Array.from(out);
    };
    const leaf = new BinaryWriter().tag(1, LEN).string('leaf').finish();
    // Each level's prefix, outermost part first; the levels innermost first.
    const prefixes: Uint8Array[][] = [];
    let size = leaf.length;
    for (let i = 1; i < levels; i++) {
      if (i % 2 === 0) {
        // AnyValue{array_value: ArrayValue{values: inner}}
        const values = header(1, size);
        size += values.length;
        const array = header(5, size);
        size += array.length;
        prefixes.push([array, values]);
      } else {
        // AnyValue{kvlist_value: KeyValueList{values: KeyValue{key: "k", value: inner}}}
        const key = KEY_K;
        const value = header(2, size);
        size += key.length + value.length;
        const entry = header(1, size);
        size += entry.length;
        const kvlist = header(6, size);
        size += kvlist.length;
        prefixes.push([kvlist, entry, key, value]);
      }
    }
    const body = concat(...prefixes.reverse().flat(), leaf);
    const record = concat(header(5, body.length), body);
    const scope = concat(header(2, record.length), record);
    const resource = concat(header(2, scope.length), scope);
    return concat(header(1, resource.length), resource);
  }

  // JSON mutations.

  mutateJson(text: string): [string, string] {
    switch (this.int(7)) {
      case 0:
        return [text.slice(0, this.int(text.length)), 'truncated'];
      case 1: {
        const p = this.int(text.length);
        return [
          text.slice(0, p) + this.pick(['{', '}', '[', ']', '"', ':', ',', '0', 'x', '\\', 'null', '-', 'e9']) + text.slice(p + 1),
          'a character replaced',
        ];
      }
      case 2:
      case 3: {
        const root = JSON.parse(text) as unknown;
        const nodes: { parent: Record<string, unknown> | unknown[]; key: string | number }[] = [];
        walk(root, (parent, key) => nodes.push({ parent, key }));
        if (nodes.length === 0) return [text, 'unchanged'];
        const { parent, key } = this.pick(nodes);
        const replacement = this.pick<unknown>([
          null,
          0,
          -1,
          1.5,
          HUGE_NUMBER,
          '1e3',
          '-1',
          '18446744073709551616',
          'SEVERITY_NUMBER_LOUD',
          'zz',
          '',
          true,
          [],
          [1, 'a'],
          {},
          { stringValue: 'a', intValue: 1 },
          { arrayValue: { values: [7] } },
          'W47/95gDgQPSabYzgT/GDA==',
        ]);
        (parent as Record<string | number, unknown>)[key] = replacement;
        return [JSON.stringify(root).replaceAll(`"${HUGE_NUMBER}"`, '1e400'), 'a value of another type'];
      }
      case 4:
        return [text.replace(/"([a-z]+)([A-Z])([a-z]+)"/g, (_, a: string, b: string, c: string) => `"${a}_${b.toLowerCase()}${c}"`), 'snake_case names'];
      case 5: {
        const levels = this.pick([129, 1000, 20_000]);
        const chain = this.chance(0.5)
          ? `${'{"arrayValue":{"values":['.repeat(levels)}{"stringValue":"x"}${']}}'.repeat(levels)}`
          : `${'['.repeat(levels)}${']'.repeat(levels)}`;
        return [`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":${chain}}]}]}]}`, `nested ${levels} deep`];
      }
      default:
        return [JSON.stringify(this.pick<unknown>([[], 'text', 42, null, { resourceLogs: 'x' }, { resourceLogs: [[]] }])), 'not a request'];
    }
  }
}

function walk(value: unknown, visit: (parent: Record<string, unknown> | unknown[], key: string | number) => void): void {
  if (Array.isArray(value)) {
    value.forEach((v, i) => {
      visit(value, i);
      walk(v, visit);
    });
  } else if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      visit(value as Record<string, unknown>, k);
      walk(v, visit);
    }
  }
}

function concat(...parts: Uint8Array[]): Uint8Array {
  return new Uint8Array(Buffer.concat(parts));
}

/** `count` bodies, half protobuf and half JSON: a few valid, most mutated. */
export function* fuzzBodies(seed: number, count: number): Generator<FuzzBody> {
  const f = new Fuzzer(randomSource(seed));
  let previous = encodeRequest(f.request());
  for (let i = 0; i < count; i++) {
    const init = f.request();
    if (i % 2 === 0) {
      const valid = encodeRequest(init);
      if (f.chance(0.03)) {
        const levels = f.pick([129, 1000, 20_000]);
        const deep = f.deepProtobuf(levels);
        yield { body: f.chance(0.5) ? deep : deep.subarray(0, f.int(deep.length)), encoding: 'protobuf', label: `#${i} protobuf nested ${levels} deep` };
      } else if (f.chance(0.15)) {
        yield { body: valid, encoding: 'protobuf', label: `#${i} protobuf as encoded` };
      } else {
        let body = valid;
        const steps: string[] = [];
        for (let k = 0; k < 1 + f.int(3); k++) {
          const [next, what] = f.mutateBytes(body, previous);
          body = next;
          steps.push(what);
        }
        yield { body, encoding: 'protobuf', label: `#${i} protobuf ${steps.join(', ')}` };
      }
      previous = valid;
    } else {
      const text = requestJson(init);
      if (f.chance(0.15)) {
        yield { body: Buffer.from(text), encoding: 'json', label: `#${i} json as encoded` };
      } else if (f.chance(0.1)) {
        const [mutated] = f.mutateBytes(Buffer.from(text), Buffer.from(text));
        yield { body: mutated, encoding: 'json', label: `#${i} json bytes mutated` };
      } else {
        const [mutated, what] = f.mutateJson(text);
        yield { body: Buffer.from(mutated), encoding: 'json', label: `#${i} json ${what}` };
      }
    }
  }
}
