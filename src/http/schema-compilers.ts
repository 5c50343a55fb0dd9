/**
 * Fastify's own schema compilers (Ajv for requests, fast-json-stringify for responses), shared by
 * every app this process builds: a route schema compiled once is reused by the next app that
 * registers the same schema. The service builds one app, so it compiles exactly what it did; the
 * tests build hundreds of apps per process, and compiling the same route schemas again and again
 * was about a fifth of their CPU.
 *
 * The compiled functions keep no per-app state: Ajv's validators close over their schema and the
 * options (one Ajv per set of shared schemas and options, pooled by @fastify/ajv-compiler), and a
 * serializer over its schema.
 *
 * Each is compiled when a request first needs it, not when its route is registered: compiling every
 * route's schemas was a tenth of the service's start, and most routes see no request for a while.
 */
import { AjvCompiler } from '@fastify/ajv-compiler';
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import type { FastifyServerOptions } from 'fastify';

/** What Fastify hands a compiler for each route part (lib/validation.js, lib/route.js). */
interface RouteSchema {
  readonly schema: unknown;
  readonly httpPart?: string;
  readonly httpStatus?: string;
}
type Compile = (def: RouteSchema) => unknown;
/** A validator (Ajv: its `errors` describe the last call that failed) or a serializer. */
type Compiled = ((data: unknown) => unknown) & { errors?: unknown };

/** `compile(def)`, done at the first call; Fastify reads a validator's `errors` right after a call. */
function onFirstCall(compile: Compile, def: RouteSchema): Compiled {
  let fn: Compiled | undefined;
  const lazy: Compiled = (data) => {
    fn ??= compile(def) as Compiled;
    const result = fn(data);
    lazy.errors = fn.errors;
    return result;
  };
  return lazy;
}

const pooledValidators = AjvCompiler();
const serializers = SerializerSelector();

/** One wrapper per pooled compiler, so the cache lives as long as the Ajv it compiled with. */
const validatorCaches = new WeakMap<Compile, Compile>();
const serializerCaches = new Map<string, Compile>();

function cachedBy(compile: Compile, part: (def: RouteSchema) => string): Compile {
  const compiled = new Map<string, unknown>();
  return (def) => {
    const key = `${part(def)}\u0000${JSON.stringify(def.schema)}`;
    let fn = compiled.get(key);
    if (fn === undefined) {
      fn = onFirstCall(compile, def);
      compiled.set(key, fn);
    }
    return fn;
  };
}

function buildValidator(externalSchemas: Parameters<typeof pooledValidators>[0], options: Parameters<typeof pooledValidators>[1]): Compile {
  // Declared as taking the schema itself; Fastify passes the route definition, as here.
  const pooled = pooledValidators(externalSchemas, options) as unknown as Compile;
  let cached = validatorCaches.get(pooled);
  if (cached === undefined) {
    cached = cachedBy(pooled, (def) => def.httpPart ?? '');
    validatorCaches.set(pooled, cached);
  }
  return cached;
}

function buildSerializer(externalSchemas: unknown, options: Parameters<typeof serializers>[1]): Compile {
  const key = JSON.stringify([externalSchemas, options]);
  let cached = serializerCaches.get(key);
  if (cached === undefined) {
    cached = cachedBy(serializers(externalSchemas, options) as Compile, () => '');
    serializerCaches.set(key, cached);
  }
  return cached;
}

/** Fastify's `schemaController` option that shares the compilers. */
export const sharedSchemaCompilers = { compilersFactory: { buildValidator, buildSerializer } } as unknown as NonNullable<
  FastifyServerOptions['schemaController']
>;
