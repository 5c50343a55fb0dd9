/**
 * The access-token vocabulary (docs/API.md §2): a token as listed and the body that creates one.
 * Which scopes exist is src/auth/scopes.ts's rule, checked by the route after this schema.
 */
import { type Static, Type } from 'typebox';

export const MAX_TOKEN_DESCRIPTION = 500;

/** A live token as the management API lists it (its value is shown once, when created). */
export const AccessTokenSchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  description: Type.Union([Type.String(), Type.Null()]),
  scopes: Type.Array(Type.String()),
  created_at: Type.String({ format: 'date-time' }),
});

export type AccessToken = Static<typeof AccessTokenSchema>;

/** The body of a create. */
export const TokenCreate = Type.Object(
  {
    description: Type.Optional(
      Type.String({
        maxLength: MAX_TOKEN_DESCRIPTION,
        description: 'What the token is for.',
        errorMessage: `must be text of at most ${MAX_TOKEN_DESCRIPTION} characters`,
      }),
    ),
    scopes: Type.Array(Type.String(), {
      minItems: 1,
      description: 'private | query | query:endpoint:<id> | ingest | public | ingest:source:<id>',
      errorMessage: 'must be a non-empty list of scopes',
    }),
  },
  { additionalProperties: false, errorMessage: { additionalProperties: 'is not an access token field (description, scopes)' } },
);

export type TokenInput = Static<typeof TokenCreate>;
