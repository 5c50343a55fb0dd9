/**
 * Sources management (private scope): `GET/POST /api/sources`, `GET/PATCH/DELETE /api/sources/:id`,
 * and `GET /api/sources/:id/schema` (the source's fields from the schema catalogue).
 */
import { type FastifyPluginAsyncTypebox, Type } from '@fastify/type-provider-typebox';
import type { Auth } from '../auth/auth.ts';
import { QuarryError } from '../errors.ts';
import type { Source, SourceInput } from '../metadata/sources.ts';
import { SourceCreate, SourcePatch, SourceSchema } from '../schemas/source.ts';
import { onlyProperties } from '../schemas/validate.ts';
import { allColumns } from '../storage/overflow.ts';
import type { FieldType, TableSchema } from '../storage/schema.ts';
import { ErrorResponse, authErrors, vocabularyValidator } from './schemas.ts';

/** Sources as the management API changes them: the repository plus the engine's tables. */
export interface SourceAdmin {
  list(): Source[];
  get(id: string): Source | undefined;
  create(input: SourceInput): Promise<Source>;
  update(id: string, patch: Partial<SourceInput>): Promise<Source>;
  delete(id: string): Promise<void>;
  /** The source's current schema from the catalogue (undefined until its table exists). */
  schema(id: string): TableSchema | undefined;
}

export interface SourceRoutesOptions {
  auth: Auth;
  sources: SourceAdmin;
}

const IdParams = Type.Object({ id: Type.String() });

/** The catalogue's field type, as JSON: a recursive schema, so written by hand and shared by $id. */
const FieldTypeSchema = {
  $id: 'FieldType',
  description:
    'A scalar (`string`, `int`, `float`, `bool`, `timestamp`), a record (an object of the event: `fields` in the order first seen; queries reach it with UNNEST) or a list (a JSON array of `element`).',
  oneOf: [
    {
      type: 'object',
      properties: {
        kind: { const: 'scalar' },
        type: { type: 'string', enum: ['string', 'int', 'float', 'bool', 'timestamp'] },
      },
      required: ['kind', 'type'],
    },
    {
      type: 'object',
      properties: { kind: { const: 'record' }, fields: { type: 'object', additionalProperties: { $ref: 'FieldType#' } } },
      required: ['kind', 'fields'],
    },
    {
      type: 'object',
      properties: { kind: { const: 'list' }, element: { $ref: 'FieldType#' } },
      required: ['kind', 'element'],
    },
  ],
};

const SourceSchemaView = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    columns: Type.Record(Type.String(), Type.Unsafe<FieldType>({ $ref: 'FieldType#' }), {
      description: 'Top-level columns in creation order; always id, timestamp and event_message.',
    }),
  },
  { $id: 'SourceSchema' },
);

/** A source as clients see it: the vocabulary's fields only (never its physical table). */
function view(s: Source) {
  return onlyProperties(SourceSchema, s);
}

export const sourceRoutes: FastifyPluginAsyncTypebox<SourceRoutesOptions> = async (app, { auth, sources }) => {
  app.addHook('onRequest', async (req) => {
    auth.require(req, { kind: 'manage' });
  });
  app.addSchema(FieldTypeSchema);
  app.setValidatorCompiler(vocabularyValidator('source'));
  const tags = ['sources'];
  const mustGet = (id: string) => {
    const s = sources.get(id);
    if (!s) throw new QuarryError('NOT_FOUND', `No source with id ${id}.`);
    return s;
  };

  app.get('/api/sources', { schema: { tags, summary: 'List sources', response: { 200: Type.Array(SourceSchema), ...authErrors } } }, async () =>
    sources.list().map(view),
  );
  app.post(
    '/api/sources',
    {
      schema: {
        tags,
        summary: 'Create a source',
        body: SourceCreate,
        response: { 201: SourceSchema, 400: ErrorResponse, 422: ErrorResponse, ...authErrors },
      },
    },
    async (req, reply) => reply.code(201).send(view(await sources.create(req.body))),
  );
  app.get(
    '/api/sources/:id',
    {
      schema: {
        tags,
        summary: 'Get a source',
        params: IdParams,
        response: { 200: SourceSchema, 404: ErrorResponse, ...authErrors },
      },
    },
    async (req) => view(mustGet(req.params.id)),
  );
  app.patch(
    '/api/sources/:id',
    {
      schema: {
        tags,
        summary: 'Rename a source or change its retention',
        params: IdParams,
        body: SourcePatch,
        response: { 200: SourceSchema, 404: ErrorResponse, 422: ErrorResponse, ...authErrors },
      },
    },
    async (req) => {
      mustGet(req.params.id);
      return view(await sources.update(req.params.id, req.body));
    },
  );
  app.delete(
    '/api/sources/:id',
    {
      schema: {
        tags,
        summary: 'Delete a source and all its events',
        params: IdParams,
        response: { 204: Type.Null(), 404: ErrorResponse, ...authErrors },
      },
    },
    async (req, reply) => {
      mustGet(req.params.id);
      await sources.delete(req.params.id);
      return reply.code(204).send(null);
    },
  );
  app.get(
    '/api/sources/:id/schema',
    {
      schema: {
        tags,
        summary: "A source's fields and their types (the schema catalogue)",
        params: IdParams,
        response: { 200: SourceSchemaView, 404: ErrorResponse, ...authErrors },
      },
    },
    async (req) => {
      const source = mustGet(req.params.id);
      const schema = sources.schema(source.id);
      if (!schema) throw new QuarryError('NOT_FOUND', `Source ${source.id} has no table yet.`);
      return { id: source.id, name: source.name, columns: allColumns(schema) };
    },
  );
};
