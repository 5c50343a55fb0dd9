/**
 * The saved endpoints in the OpenAPI document (`/api/openapi.json`): one path per endpoint,
 * `/api/endpoints/query/<name>`, whose GET and POST list the parameters its query uses, with the
 * types, defaults, allowed values and descriptions of its typed parameters (untyped ones are
 * strings), `sql`/`lql` when it is sandboxable, and `format`.
 *
 * Endpoint names are not public (an anonymous query for an unknown name learns nothing), so the
 * document lists only the endpoints the caller could run: those without auth for everyone, and
 * the ones its token's scopes allow.
 */
import { allows } from '../auth/scopes.ts';
import type { Endpoint } from '../endpoints/model.ts';
import { RESERVED_PARAMS } from '../endpoints/params.ts';
import { PARAM_TYPES, type ParamSpec, describeType } from '../endpoints/typed-params.ts';
import { ErrorResponse } from './schemas.ts';

export interface OpenApiEndpointSources {
  endpoints(): readonly Endpoint[];
  /** The `@name` parameters of the endpoint's query; rejects when it no longer validates. */
  declaredParams(endpoint: Endpoint): Promise<readonly string[]>;
}

type JsonSchema = Record<string, unknown>;

/** JSON Schema of a parameter: its type's (src/schemas/typed-param.ts), an enum's values, its default. */
function schemaOf(spec: ParamSpec | undefined): JsonSchema {
  const schema: JsonSchema = { ...PARAM_TYPES[spec?.type ?? 'string'].jsonSchema };
  if (spec?.type === 'enum') schema.enum = [...(spec.values ?? [])];
  if (spec?.default !== undefined && spec.default !== null) schema.default = spec.default;
  return schema;
}

function parameter(name: string, spec: ParamSpec | undefined): JsonSchema {
  const what = spec ? `${describeType(spec)}: ${PARAM_TYPES[spec.type].accepts}.` : 'Bound as a string; absent: NULL.';
  const description = spec?.description ? `${spec.description} (${what})` : what;
  return { name, in: 'query', required: spec?.required === true, description, schema: schemaOf(spec) };
}

const reserved = {
  sql: { name: 'sql', in: 'query', required: false, description: "A BigQuery-dialect SELECT over the saved query's CTEs.", schema: { type: 'string' } },
  lql: { name: 'lql', in: 'query', required: false, description: "An LQL query over the saved query's CTEs.", schema: { type: 'string' } },
  format: {
    name: 'format',
    in: 'query',
    required: false,
    description: 'Response format (also from the Accept header).',
    schema: { type: 'string', enum: ['json', 'ndjson', 'csv'], default: 'json' },
  },
};

/** The shared error shape (src/http/schemas.ts), as plain JSON without its `$id`. */
const { $id: _id, ...errorSchema } = JSON.parse(JSON.stringify(ErrorResponse)) as JsonSchema;

const responses = {
  '200': {
    description: 'At most max_limit rows.',
    content: {
      'application/json': {
        schema: { type: 'object', properties: { result: { type: 'array', items: { type: 'object', additionalProperties: true } } } },
      },
      'application/x-ndjson': { schema: { type: 'string', description: 'One row object per line.' } },
      'text/csv': { schema: { type: 'string', description: 'RFC 4180 with a header row.' } },
    },
  },
  '400': { $ref: '#/components/responses/EndpointError' },
  '401': { $ref: '#/components/responses/EndpointError' },
  '403': { $ref: '#/components/responses/EndpointError' },
  '503': { $ref: '#/components/responses/EndpointError' },
  '504': { $ref: '#/components/responses/EndpointError' },
};

/** The paths (and the shared error response) for the endpoints `scopes` may run (undefined: anonymous). */
export async function endpointPaths(
  sources: OpenApiEndpointSources,
  scopes: readonly string[] | undefined,
): Promise<{ paths: Record<string, unknown>; responses: Record<string, unknown> }> {
  const paths: Record<string, unknown> = {};
  const visible = sources
    .endpoints()
    .filter((e) => !e.enable_auth || (scopes !== undefined && allows(scopes, { kind: 'query', endpointId: e.id })))
    .sort((a, b) => a.name.localeCompare(b.name));
  for (const e of visible) {
    let declared: readonly string[];
    try {
      declared = await sources.declaredParams(e);
    } catch {
      continue; // Its query no longer validates (a source it reads was deleted): it cannot run.
    }
    const specs = new Map((e.params ?? []).map((p) => [p.name, p]));
    const parameters = declared.filter((n) => !RESERVED_PARAMS.has(n)).map((n) => parameter(n, specs.get(n)));
    if (e.sandboxable) parameters.push(reserved.sql, reserved.lql);
    if (!declared.includes('format')) parameters.push(reserved.format);
    const operation = (method: 'GET' | 'POST') => ({
      tags: ['saved endpoints'],
      summary: `${method === 'GET' ? 'Run' : 'Run (parameters may also come as a JSON body)'} ${e.name}`,
      ...(e.description ? { description: e.description } : {}),
      operationId: `${method.toLowerCase()}_${e.name.replace(/[^A-Za-z0-9_]/g, '_')}`,
      parameters,
      responses,
      ...(e.enable_auth ? {} : { security: [] }),
    });
    paths[`/api/endpoints/query/${e.name}`] = { get: operation('GET'), post: operation('POST') };
  }
  return {
    paths,
    responses: {
      EndpointError: {
        description: 'The error shape of every failure.',
        content: { 'application/json': { schema: errorSchema } },
      },
    },
  };
}
