/**
 * The typed-parameter vocabulary (docs/API.md §5, "Typed parameters"): an endpoint's
 * `params: [{name, type, default, required, description, values}]`. This schema is the one
 * description of a parameter declaration: the `ParamSpec` type, the structural checks of a saved
 * list and their messages (src/endpoints/typed-params.ts adds the rules that need the query or
 * another setting), the Endpoint schema's `params` in the OpenAPI document, and, per type, what a
 * value must look like and its JSON Schema in each saved endpoint's own operation
 * (src/http/openapi-endpoints.ts).
 */
import { type Static, Type } from 'typebox';

/**
 * Every parameter type: what a value must look like (the 400 message and the docs) and the JSON
 * Schema of a value in a saved endpoint's OpenAPI operation (query strings carry text: the format
 * says how to read it; an enum's allowed values are added per parameter).
 */
export const PARAM_TYPES = {
  string: { accepts: 'any text', jsonSchema: { type: 'string' } },
  int: { accepts: 'a whole number from -2^63 to 2^63-1', jsonSchema: { type: 'integer', format: 'int64' } },
  float: { accepts: 'a finite number', jsonSchema: { type: 'number', format: 'double' } },
  bool: { accepts: 'true or false (also 1 or 0)', jsonSchema: { type: 'boolean' } },
  timestamp: {
    accepts: 'an ISO-8601 date-time such as 2026-11-21T10:00:00Z (no offset: UTC) or a date such as 2026-11-21',
    jsonSchema: { type: 'string', format: 'date-time' },
  },
  date: { accepts: 'a date such as 2026-11-21', jsonSchema: { type: 'string', format: 'date' } },
  enum: { accepts: 'one of the listed values', jsonSchema: { type: 'string' } },
} as const satisfies Record<string, { accepts: string; jsonSchema: Readonly<Record<string, string>> }>;

export type ParamType = keyof typeof PARAM_TYPES;

export const PARAM_TYPE_NAMES = Object.keys(PARAM_TYPES) as ParamType[];

/** A list describes at most this many parameters; an enum lists at most this many values. */
export const MAX_PARAMS = 100;
export const MAX_ENUM_VALUES = 1000;

/** What a parameter name looks like (as `@name` in the query). */
export const PARAM_NAME_PATTERN = '^[A-Za-z_][A-Za-z0-9_]*$';

const useOneOf = `use one of ${PARAM_TYPE_NAMES.join(', ')}`;
const settingNames = 'name, type, default, required, description, values';

/** One typed parameter, as saved, stored and returned. */
export const ParamSpecSchema = Type.Object(
  {
    name: Type.String({
      pattern: PARAM_NAME_PATTERN,
      description: 'A parameter the query uses, without the `@`; not `sql`, `lql` or `__lql_…`; once per list.',
      errorMessage: {
        default: 'must be a parameter name: letters, digits and underscores, not starting with a digit',
        required: 'must be a parameter name: letters, digits and underscores, not starting with a digit',
      },
    }),
    type: Type.Enum(PARAM_TYPE_NAMES, {
      description: PARAM_TYPE_NAMES.map((t) => `\`${t}\`: ${PARAM_TYPES[t].accepts}`).join('; '),
      errorMessage: { enum: `unknown type {value}: ${useOneOf}`, required: `is required: ${useOneOf}` },
    }),
    default: Type.Optional(
      Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()], {
        description: 'Bound when the request leaves the parameter out (absent or null: NULL); must fit the type.',
        errorMessage: 'must be text, a number or a boolean',
      }),
    ),
    required: Type.Optional(
      Type.Boolean({
        description: 'A request without it is a 400; cannot be combined with a default.',
        errorMessage: 'must be true or false',
      }),
    ),
    description: Type.Optional(
      Type.Union([Type.String(), Type.Null()], { description: 'Shown in the OpenAPI document.', errorMessage: 'must be text or null' }),
    ),
    values: Type.Optional(
      Type.Array(Type.String(), {
        minItems: 1,
        maxItems: MAX_ENUM_VALUES,
        uniqueItems: true,
        description: '`enum` only, required there: the allowed values.',
        errorMessage: {
          default: 'an enum needs a non-empty list of allowed text values',
          maxItems: `may list at most ${MAX_ENUM_VALUES} values`,
          uniqueItems: 'lists a value twice',
        },
      }),
    ),
  },
  {
    additionalProperties: false,
    errorMessage: {
      type: 'must be an object with a name and a type',
      additionalProperties: `is not a parameter setting (${settingNames})`,
    },
  },
);

export type ParamSpec = Static<typeof ParamSpecSchema>;

/** A saved list of typed parameters (null, the endpoint's `params` when untyped, is not a list). */
export const ParamSpecList = Type.Array(ParamSpecSchema, {
  maxItems: MAX_PARAMS,
  errorMessage: {
    type: 'must be a list of {name, type, default, required, description} objects, or null',
    maxItems: `may describe at most ${MAX_PARAMS} parameters`,
  },
});

/** An endpoint's `params`: a list, or null (the default: every parameter binds as a string). */
export const EndpointParams = Type.Union([ParamSpecList, Type.Null()], {
  default: null,
  description:
    'Typed parameters: each `@name` described here is checked against its type (400 naming it when a value does not fit), ' +
    'takes its default when absent and is bound with its type. Parameters not described (and every parameter when null) bind as strings.',
  errorMessage: 'must be a list of {name, type, default, required, description} objects, or null',
});
