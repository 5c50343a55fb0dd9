/**
 * Typed endpoint parameters (CONTRACT §5): an endpoint may describe its `@name` parameters as
 * `params: [{name, type, default, required, description, values}]`. A described parameter is
 * checked against its type on every run (400 naming it and the type expected), takes its default
 * when absent, and is bound as a typed value, so the engine compares, adds and orders it with its
 * own type. Parameters the list does not describe, and every parameter of an endpoint without the
 * list, keep today's binding: a string, or NULL when absent.
 */
import type { ParamValue } from '../query/port.ts';
import { QuarryError } from '../errors.ts';
import { RESERVED_PARAMS, type RawParams, paramString } from './params.ts';

/** Every parameter type, with what a value must look like (the 400 message and the docs). */
export const PARAM_TYPES = {
  string: 'any text',
  int: 'a whole number from -2^63 to 2^63-1',
  float: 'a finite number',
  bool: 'true or false (also 1 or 0)',
  timestamp: 'an ISO-8601 date-time such as 2026-11-21T10:00:00Z (no offset: UTC) or a date such as 2026-11-21',
  date: 'a date such as 2026-11-21',
  enum: 'one of the listed values',
} as const satisfies Record<string, string>;

export type ParamType = keyof typeof PARAM_TYPES;

const TYPE_NAMES = Object.keys(PARAM_TYPES) as ParamType[];

export interface ParamSpec {
  name: string;
  type: ParamType;
  /** Used when the request does not send the parameter (must fit the type); absent or null: NULL. */
  default?: string | number | boolean | null;
  /** A request without it is a 400. Cannot be combined with a default. */
  required?: boolean;
  description?: string | null;
  /** enum only: the allowed values. */
  values?: string[];
}

/** Parameter names a spec may not take: the reserved ones, and LQL's own bound names. */
const LQL_PREFIX = '__lql_';
const NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;
const SPEC_KEYS = new Set(['name', 'type', 'default', 'required', 'description', 'values']);
const MAX_PARAMS = 100;
const MAX_ENUM_VALUES = 1000;

function isType(t: unknown): t is ParamType {
  return typeof t === 'string' && Object.hasOwn(PARAM_TYPES, t);
}

/**
 * Checks a `params` list against the saved query's declared parameters (undefined when the query
 * itself is invalid: then only the list's own rules are checked). Per-field messages, keyed
 * `params` or `params[i].<key>`; empty when valid.
 */
export function checkParamSpecs(specs: unknown, declared: readonly string[] | undefined): Record<string, string[]> {
  const fields: Record<string, string[]> = {};
  const add = (field: string, message: string) => {
    fields[field] ??= [];
    fields[field].push(message);
  };
  if (specs === null || specs === undefined) return fields;
  if (!Array.isArray(specs)) {
    add('params', 'must be a list of {name, type, default, required, description} objects, or null');
    return fields;
  }
  if (specs.length > MAX_PARAMS) add('params', `may describe at most ${MAX_PARAMS} parameters`);
  const seen = new Set<string>();
  specs.forEach((spec: unknown, i) => {
    const at = `params[${i}]`;
    if (spec === null || typeof spec !== 'object' || Array.isArray(spec)) {
      add(at, 'must be an object with a name and a type');
      return;
    }
    const s = spec as Record<string, unknown>;
    for (const key of Object.keys(s)) {
      if (!SPEC_KEYS.has(key)) add(`${at}.${key}`, 'is not a parameter setting (name, type, default, required, description, values)');
    }
    const name = s.name;
    if (typeof name !== 'string' || !NAME_PATTERN.test(name)) {
      add(`${at}.name`, 'must be a parameter name: letters, digits and underscores, not starting with a digit');
    } else if (RESERVED_PARAMS.has(name) || name.startsWith(LQL_PREFIX)) {
      add(`${at}.name`, `"${name}" is reserved`);
    } else if (seen.has(name)) {
      add(`${at}.name`, `"${name}" is described twice`);
    } else {
      seen.add(name);
      if (declared && !declared.includes(name)) {
        add(
          `${at}.name`,
          `the query does not use @${name} (it uses ${declared.length > 0 ? declared.map((p) => `@${p}`).join(', ') : 'no parameters'})`,
        );
      }
    }
    const type = s.type;
    if (!isType(type)) {
      add(`${at}.type`, `${type === undefined ? 'is required' : `unknown type ${JSON.stringify(type)}`}: use one of ${TYPE_NAMES.join(', ')}`);
    }
    if (s.required !== undefined && typeof s.required !== 'boolean') add(`${at}.required`, 'must be true or false');
    if (s.description !== undefined && s.description !== null && typeof s.description !== 'string') {
      add(`${at}.description`, 'must be text or null');
    }
    if (type === 'enum') {
      const values = s.values;
      if (!Array.isArray(values) || values.length === 0 || !values.every((v) => typeof v === 'string')) {
        add(`${at}.values`, 'an enum needs a non-empty list of allowed text values');
      } else if (values.length > MAX_ENUM_VALUES) {
        add(`${at}.values`, `may list at most ${MAX_ENUM_VALUES} values`);
      } else if (new Set(values).size !== values.length) {
        add(`${at}.values`, 'lists a value twice');
      }
    } else if (s.values !== undefined) {
      add(`${at}.values`, 'only an enum lists values');
    }
    if (s.default !== undefined && s.default !== null) {
      if (s.required === true) add(`${at}.default`, 'a required parameter takes no default');
      if (isType(type) && !fields[`${at}.values`]) {
        const problem = typeof s.default === 'object' ? 'must be text, a number or a boolean' : fitProblem(spec as ParamSpec, s.default);
        if (problem) add(`${at}.default`, `${JSON.stringify(s.default)} does not fit ${describeType(spec as ParamSpec)}`);
      }
    }
  });
  return fields;
}

/** The stored form of a valid list: only the known settings, in a fixed order. */
export function normaliseParamSpecs(specs: readonly ParamSpec[]): ParamSpec[] {
  return specs.map((s) => {
    const out: ParamSpec = { name: s.name, type: s.type };
    if (s.default !== undefined && s.default !== null) out.default = s.default;
    if (s.required === true) out.required = true;
    if (s.description !== undefined && s.description !== null) out.description = s.description;
    if (s.type === 'enum' && s.values) out.values = [...s.values];
    return out;
  });
}

/** `int`, or `enum (one of "a", "b")`. */
export function describeType(spec: Pick<ParamSpec, 'type' | 'values'>): string {
  if (spec.type === 'enum') return `enum (one of ${(spec.values ?? []).map((v) => JSON.stringify(v)).join(', ')})`;
  return spec.type;
}

/**
 * Binds every declared parameter: described ones as typed values (their default when absent;
 * BAD_REQUEST when the value does not fit or a required one is missing), the rest as strings.
 */
export function bindTyped(specs: readonly ParamSpec[], declared: readonly string[], raw: RawParams): Record<string, ParamValue | null> {
  const byName = new Map(specs.map((s) => [s.name, s]));
  const bound: Record<string, ParamValue | null> = {};
  for (const name of declared) {
    if (RESERVED_PARAMS.has(name)) continue;
    const spec = byName.get(name);
    const given = Object.hasOwn(raw, name) ? raw[name] : undefined;
    if (!spec) {
      bound[name] = given === undefined ? null : paramString(given);
      continue;
    }
    if (given === undefined || given === null) {
      if (spec.required) {
        throw new QuarryError('BAD_REQUEST', `Parameter "${name}" is required (${describeType(spec)}).`);
      }
      bound[name] = spec.default === undefined || spec.default === null ? null : toValue(spec, spec.default);
      continue;
    }
    bound[name] = toValue(spec, given);
  }
  return bound;
}

function toValue(spec: ParamSpec, raw: unknown): ParamValue {
  const value = parseValue(spec, raw);
  if (value === undefined) {
    const shown = typeof raw === 'string' ? JSON.stringify(raw.length > 100 ? `${raw.slice(0, 100)}…` : raw) : 'the value given';
    throw new QuarryError(
      'BAD_REQUEST',
      `Parameter "${spec.name}" must be ${describeType(spec)}: ${PARAM_TYPES[spec.type]}; got ${shown}.`,
    );
  }
  return value;
}

function fitProblem(spec: ParamSpec, raw: unknown): boolean {
  return parseValue(spec, raw) === undefined;
}

const INT = /^[+-]?\d+$/;
const FLOAT = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})?$/i;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** The typed value of `raw`, or undefined when it does not fit. Query-string repeats: the last. */
function parseValue(spec: ParamSpec, raw: unknown): ParamValue | undefined {
  const value = Array.isArray(raw) ? raw[raw.length - 1] : raw;
  switch (spec.type) {
    case 'string':
      return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? String(value) : undefined;
    case 'enum':
      return typeof value === 'string' && (spec.values ?? []).includes(value) ? value : undefined;
    case 'int': {
      const text = typeof value === 'number' && Number.isSafeInteger(value) ? String(value) : typeof value === 'string' ? value.trim() : '';
      if (!INT.test(text)) return undefined;
      const n = BigInt(text);
      return n < INT64_MIN || n > INT64_MAX ? undefined : { type: 'int', value: n };
    }
    case 'float': {
      const n = typeof value === 'number' ? value : typeof value === 'string' && FLOAT.test(value.trim()) ? Number(value.trim()) : Number.NaN;
      return Number.isFinite(n) ? { type: 'float', value: n } : undefined;
    }
    case 'bool': {
      if (typeof value === 'boolean') return { type: 'bool', value };
      const text = typeof value === 'string' ? value.trim().toLowerCase() : typeof value === 'number' ? String(value) : '';
      if (text === 'true' || text === '1') return { type: 'bool', value: true };
      if (text === 'false' || text === '0') return { type: 'bool', value: false };
      return undefined;
    }
    case 'date': {
      const days = typeof value === 'string' ? dateDays(value.trim()) : undefined;
      return days === undefined ? undefined : { type: 'date', days };
    }
    case 'timestamp': {
      const micros = typeof value === 'string' ? timestampMicros(value.trim()) : undefined;
      return micros === undefined ? undefined : { type: 'timestamp', micros };
    }
  }
}

/** Days since 1970-01-01 of a valid calendar date. */
function dateDays(text: string): number | undefined {
  const m = DATE.exec(text);
  if (!m) return undefined;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const ms = Date.UTC(y, mo - 1, d);
  const back = new Date(ms);
  if (back.getUTCFullYear() !== y || back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d) return undefined;
  return ms / 86_400_000;
}

/** Unix microseconds of an ISO-8601 date-time (offset optional, UTC when absent) or a date. */
function timestampMicros(text: string): bigint | undefined {
  const days = dateDays(text);
  if (days !== undefined) return BigInt(days) * 86_400_000_000n;
  const m = DATE_TIME.exec(text);
  if (!m) return undefined;
  const day = dateDays(`${m[1]}-${m[2]}-${m[3]}`);
  const [h, mi, s] = [Number(m[4]), Number(m[5]), Number(m[6] ?? 0)];
  if (day === undefined || h > 23 || mi > 59 || s > 59) return undefined;
  let offsetMinutes = 0;
  const zone = m[8];
  if (zone && zone.toUpperCase() !== 'Z') {
    const digits = zone.slice(1).replace(':', '');
    const oh = Number(digits.slice(0, 2));
    const om = Number(digits.slice(2));
    if (oh > 23 || om > 59) return undefined;
    offsetMinutes = (zone[0] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const fraction = BigInt((m[7] ?? '').padEnd(6, '0').slice(0, 6) || '0');
  const seconds = BigInt(day) * 86_400n + BigInt(h * 3600 + mi * 60 + s) - BigInt(offsetMinutes * 60);
  return seconds * 1_000_000n + fraction;
}

/** A bound value as a cache-key string: typed values spelt with their type so `05` and `5` share. */
export function paramKey(value: ParamValue | null): string | null {
  if (value === null || typeof value === 'string') return value;
  switch (value.type) {
    case 'int':
      return `int:${value.value}`;
    case 'float':
      return `float:${value.value}`;
    case 'bool':
      return `bool:${value.value}`;
    case 'timestamp':
      return `timestamp:${value.micros}`;
    case 'date':
      return `date:${value.days}`;
  }
}
