/**
 * The source vocabulary (docs/API.md §3, "Source management"): a source's fields, once, with their
 * rules and what a client is told when it breaks one. From it come the `Source` and `SourceInput`
 * types, the checks of a create or patch (the routes' request validation and the metadata store's
 * own check), and the OpenAPI document's `Source` and request bodies.
 */
import { type Static, Type } from 'typebox';

export const SOURCE_NAME_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$';
export const MAX_RETENTION_DAYS = 36_500;

const name = Type.String({
  pattern: SOURCE_NAME_PATTERN,
  description: 'Unique: letters, digits, `.`, `-`, `_`, at most 128, starting with a letter or digit.',
  errorMessage: 'must be 1 to 128 characters of letters, digits, dots, dashes or underscores, starting with a letter or digit',
});

const retentionDays = Type.Union([Type.Integer({ minimum: 1, maximum: MAX_RETENTION_DAYS }), Type.Null()], {
  description: 'Events older than this many days are deleted in the background; null keeps everything.',
  errorMessage: `must be a whole number of days from 1 to ${MAX_RETENTION_DAYS}, or null to keep everything`,
});

/** A source as the management API returns it. */
export const SourceSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name,
    retention_days: retentionDays,
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'Source' },
);

/** How ingest names a source's fields (src/ingest/keys.ts); a stored source without one: `legacy`. */
export type KeyRule = 'logflare' | 'legacy';

/** The rule of every source created from now on: Logflare's. */
export const DEFAULT_KEY_RULE: KeyRule = 'logflare';

/**
 * A source as the metadata store keeps it: the API's fields, its physical table in the engine, and
 * how ingest names its fields (src/ingest/keys.ts): `logflare` for sources created since Logflare's
 * rule was adopted, `legacy` for older ones (a stored record without the field), so their columns
 * keep receiving the same names.
 */
export const SourceRecord = Type.Object({
  ...SourceSchema.properties,
  table: Type.String({ description: 'Physical table in the engine; never shown to clients.' }),
  key_rule: Type.Union([Type.Literal('logflare'), Type.Literal('legacy')], { description: 'How ingest names fields; never shown to clients.' }),
});

export type Source = Static<typeof SourceRecord>;

const notAField = 'is not a source field (name, retention_days)';

/** The body of a create. */
export const SourceCreate = Type.Object(
  { name, retention_days: Type.Optional(retentionDays) },
  { additionalProperties: false, errorMessage: { additionalProperties: notAField } },
);

/** The body of a patch: rename, change the retention, or both. */
export const SourcePatch = Type.Object(
  { name: Type.Optional(name), retention_days: Type.Optional(retentionDays) },
  { additionalProperties: false, errorMessage: { additionalProperties: notAField } },
);

export type SourceInput = Static<typeof SourceCreate>;
