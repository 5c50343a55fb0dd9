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
import { PARAM_TYPES, type ParamSpec, ParamSpecList, type ParamType } from '../schemas/typed-param.ts';
import { type FieldErrors, addError, schemaCheck } from '../schemas/validate.ts';
import { RESERVED_PARAMS, type RawParams, paramString } from './params.ts';
import { parseDate, parseTimestamp } from '../time.ts';

export { PARAM_TYPES, type ParamSpec, type ParamType };

/** LQL binds its filter values as `__lql_0`, …: a saved list may not describe them. */
const LQL_PREFIX = '__lql_';

const listCheck = schemaCheck(ParamSpecList);

/**
 * Checks a `params` list: its shape against the typed-parameter vocabulary
 * (src/schemas/typed-param.ts), then the rules that need more than one setting or the saved
 * query's declared parameters (undefined when the query itself is invalid: then those are not
 * checked against it). Per-field messages, keyed `params` or `params[i].<key>`; empty when valid.
 */
export function checkParamSpecs(specs: unknown, declared: readonly string[] | undefined): FieldErrors {
  if (specs === null || specs === undefined) return {};
  const fields = listCheck.errors(specs, 'params');
  if (!Array.isArray(specs)) return fields;
  const seen = new Set<string>();
  specs.forEach((spec: unknown, i) => {
    const at = `params[${i}]`;
    if (spec === null || typeof spec !== 'object' || Array.isArray(spec)) return;
    const s = spec as Record<string, unknown>;
    const fits = (key: string) => fields[`${at}.${key}`] === undefined;
    const name = s.name;
    if (typeof name === 'string' && fits('name')) {
      if (RESERVED_PARAMS.has(name) || name.startsWith(LQL_PREFIX)) {
        addError(fields, `${at}.name`, `"${name}" is reserved`);
      } else if (seen.has(name)) {
        addError(fields, `${at}.name`, `"${name}" is described twice`);
      } else {
        seen.add(name);
        if (declared && !declared.includes(name)) {
          const uses = declared.length > 0 ? declared.map((p) => `@${p}`).join(', ') : 'no parameters';
          addError(fields, `${at}.name`, `the query does not use @${name} (it uses ${uses})`);
        }
      }
    }
    const type = fits('type') ? (s.type as ParamType) : undefined;
    if (type === 'enum' && s.values === undefined) {
      addError(fields, `${at}.values`, 'an enum needs a non-empty list of allowed text values');
    } else if (type !== undefined && type !== 'enum' && s.values !== undefined) {
      fields[`${at}.values`] = ['only an enum lists values'];
    }
    if (s.default !== undefined && s.default !== null) {
      const checkFit = type !== undefined && fits('values') && fits('default');
      if (s.required === true) addError(fields, `${at}.default`, 'a required parameter takes no default');
      if (checkFit && parseValue(s as ParamSpec, s.default) === undefined) {
        addError(fields, `${at}.default`, `${JSON.stringify(s.default)} does not fit ${describeType(s as ParamSpec)}`);
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
    throw new QuarryError('BAD_REQUEST', `Parameter "${spec.name}" must be ${describeType(spec)}: ${PARAM_TYPES[spec.type].accepts}; got ${shown}.`);
  }
  return value;
}

const INT = /^[+-]?\d+$/;
const FLOAT = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
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
      const days = typeof value === 'string' ? parseDate(value.trim()) : undefined;
      return days === undefined ? undefined : { type: 'date', days };
    }
    case 'timestamp': {
      const micros = typeof value === 'string' ? parseTimestamp(value.trim()) : undefined;
      return micros === undefined ? undefined : { type: 'timestamp', micros };
    }
  }
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
