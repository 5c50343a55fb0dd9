/** Schemas shared by several route plugins. */
import { Type } from '@fastify/type-provider-typebox';

export const ErrorResponse = Type.Object(
  {
    error: Type.Object({
      message: Type.String(),
      code: Type.String(),
      status: Type.Integer(),
      fields: Type.Optional(Type.Record(Type.String(), Type.Array(Type.String()))),
    }),
  },
  { $id: 'ErrorResponse', description: 'Every error response has this shape.' },
);

/** Responses every authenticated route can give. */
export const authErrors = {
  401: ErrorResponse,
  403: ErrorResponse,
} as const;
