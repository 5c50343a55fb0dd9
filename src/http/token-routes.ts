/** Access-token management (private scope): `GET/POST /api/access-tokens`, `DELETE /api/access-tokens/:id`. */
import { type FastifyPluginAsyncTypebox, Type } from '@fastify/type-provider-typebox';
import type { Auth } from '../auth/auth.ts';
import { isValidScope } from '../auth/scopes.ts';
import { QuarryError } from '../errors.ts';
import type { TokenRepository } from '../metadata/tokens.ts';
import { AccessTokenSchema, TokenCreate } from '../schemas/token.ts';
import { validationFailed } from '../schemas/validate.ts';
import { ErrorResponse, authErrors, vocabularyValidator } from './schemas.ts';

export interface TokenRoutesOptions {
  auth: Auth;
  tokens: TokenRepository;
}

export const tokenRoutes: FastifyPluginAsyncTypebox<TokenRoutesOptions> = async (app, { auth, tokens }) => {
  app.addHook('onRequest', async (req) => {
    auth.require(req, { kind: 'manage' });
  });
  app.setValidatorCompiler(vocabularyValidator('access token'));
  const tags = ['access tokens'];

  app.get(
    '/api/access-tokens',
    {
      schema: {
        tags,
        summary: 'List live access tokens (values are never shown again)',
        response: { 200: Type.Array(AccessTokenSchema), ...authErrors },
      },
    },
    async () => tokens.list(),
  );
  app.post(
    '/api/access-tokens',
    {
      schema: {
        tags,
        summary: 'Create an access token; its value is in this response only',
        body: TokenCreate,
        response: {
          201: Type.Object({ ...AccessTokenSchema.properties, token: Type.String({ description: 'The value: shown in this response only.' }) }),
          400: ErrorResponse,
          422: ErrorResponse,
          ...authErrors,
        },
      },
    },
    async (req, reply) => {
      const bad = req.body.scopes.filter((s) => !isValidScope(s));
      if (bad.length > 0) throw validationFailed('access token', { scopes: bad.map((s) => `"${s}" is not a scope`) });
      const { token, value } = await tokens.create({
        description: req.body.description ?? null,
        scopes: req.body.scopes,
      });
      return reply.code(201).send({ ...token, token: value });
    },
  );
  app.delete(
    '/api/access-tokens/:id',
    {
      schema: {
        tags,
        summary: 'Revoke an access token',
        params: Type.Object({ id: Type.String() }),
        response: { 204: Type.Null(), 404: ErrorResponse, ...authErrors },
      },
    },
    async (req, reply) => {
      if (!(await tokens.revoke(req.params.id))) {
        throw new QuarryError('NOT_FOUND', `No live access token with id ${req.params.id}.`);
      }
      return reply.code(204).send(null);
    },
  );
};
