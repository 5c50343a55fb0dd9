/** Schemas shared by several route plugins, and how the management routes check requests. */
import type { FastifySchemaCompiler } from 'fastify';
import { type TSchema, Type } from 'typebox';
import { errorCodes } from '../errors.ts';
import { schemaCheck, validationFailed } from '../schemas/validate.ts';

export const ErrorResponse = Type.Object(
  {
    error: Type.Object({
      message: Type.String(),
      code: Type.Enum(errorCodes, { description: 'A stable code (docs/API.md §4).' }),
      status: Type.Integer(),
      fields: Type.Optional(Type.Record(Type.String(), Type.Array(Type.String()))),
    }),
  },
  { $id: 'ErrorResponse', description: 'Every error response has this shape.' },
);

/** Where an ingest route is told its source (and, for clients that cannot send headers, its key). */
export const IngestQuery = Type.Object({
  source_name: Type.Optional(Type.String()),
  source: Type.Optional(Type.String()),
  api_key: Type.Optional(Type.String()),
});

/** The answers of an ingest route that replies in JSON. */
export const ingestResponses = {
  200: Type.Object({ message: Type.String() }),
  400: ErrorResponse,
  401: ErrorResponse,
  403: ErrorResponse,
  404: ErrorResponse,
  413: ErrorResponse,
  415: ErrorResponse,
  503: ErrorResponse,
} as const;

/** Responses every authenticated route can give. */
export const authErrors = {
  401: ErrorResponse,
  403: ErrorResponse,
} as const;

/**
 * Request validation for a plugin whose route schemas are vocabularies (src/schemas/*.ts): each
 * part of a request is checked with TypeBox's compiled checker rather than Fastify's ajv, so a body
 * that breaks the schema is a 422 VALIDATION_FAILED whose `fields` say what is wrong in the
 * schema's own words (`{"retention_days": ["must be a whole number of days from 1 to 36500, …"]}`),
 * not ajv's. `subject` names what the body describes ("source").
 */
export function vocabularyValidator(subject: string): FastifySchemaCompiler<TSchema> {
  return ({ schema }) => {
    const check = schemaCheck(schema);
    return (value: unknown) => {
      if (check.check(value)) return { value };
      return { error: validationFailed(subject, check.errors(value)) };
    };
  };
}
