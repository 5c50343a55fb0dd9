/**
 * Where endpoints are kept: the `_quarry_endpoints` table of the shared database, mirrored in
 * memory so that resolving an endpoint on every query request costs no database round trip.
 * Writes go to the table first and reach the mirror only once durable.
 */
import { QuarryError } from '../errors.ts';
import { type Row, type SerialConnection, iso, optStr, str } from '../metadata/connection.ts';
import { type Endpoint, ENDPOINT_FIELDS, endpointFields } from './model.ts';

export interface EndpointRepository {
  list(): Endpoint[];
  get(id: string): Endpoint | undefined;
  byName(name: string): Endpoint | undefined;
  /** Stores a complete endpoint; VALIDATION_FAILED (422) when the name is taken. */
  insert(endpoint: Endpoint): Promise<Endpoint>;
  /** Replaces the stored endpoint with the same id; NOT_FOUND / VALIDATION_FAILED as above. */
  replace(endpoint: Endpoint): Promise<Endpoint>;
  /** Removes and returns the endpoint; NOT_FOUND when there is none. */
  delete(id: string): Promise<Endpoint>;
}

const COLUMNS = ENDPOINT_FIELDS;

const INSERT_SQL = `INSERT INTO _quarry_endpoints (${COLUMNS.join(', ')}) VALUES (${COLUMNS.map((c) =>
  c === 'created_at' || c === 'updated_at' ? `$${c}::TIMESTAMP` : `$${c}`,
).join(', ')})`;

export async function openEndpointRepository(db: SerialConnection): Promise<EndpointRepository> {
  await db.run(`CREATE TABLE IF NOT EXISTS _quarry_endpoints (
    id VARCHAR PRIMARY KEY,
    name VARCHAR NOT NULL UNIQUE,
    description VARCHAR,
    query VARCHAR NOT NULL,
    language VARCHAR NOT NULL,
    sandboxable BOOLEAN NOT NULL,
    max_limit INTEGER NOT NULL,
    cache_duration_seconds INTEGER NOT NULL,
    proactive_requerying_seconds INTEGER NOT NULL,
    enable_auth BOOLEAN NOT NULL,
    redact_pii BOOLEAN NOT NULL,
    labels VARCHAR,
    created_at TIMESTAMP NOT NULL,
    updated_at TIMESTAMP NOT NULL)`);
  // Typed parameters, as JSON text (added after the first release).
  await db.run('ALTER TABLE _quarry_endpoints ADD COLUMN IF NOT EXISTS params VARCHAR');

  const byId = new Map<string, Endpoint>();
  for (const r of await db.all('SELECT * FROM _quarry_endpoints ORDER BY created_at, name')) {
    const e = fromRow(r);
    byId.set(e.id, e);
  }
  const byName = (name: string) => {
    for (const e of byId.values()) if (e.name === name) return e;
    return undefined;
  };

  function assertNameFree(name: string, exceptId: string) {
    const other = byName(name);
    if (other && other.id !== exceptId) {
      throw new QuarryError('VALIDATION_FAILED', `An endpoint named "${name}" already exists.`, {
        fields: { name: ['is already taken'] },
      });
    }
  }

  function mustGet(id: string): Endpoint {
    const e = byId.get(id);
    if (!e) throw new QuarryError('NOT_FOUND', `No endpoint with id ${id}.`);
    return e;
  }

  return {
    list: () => [...byId.values()],
    get: (id) => byId.get(id),
    byName,
    async insert(endpoint) {
      if (byId.has(endpoint.id)) throw new QuarryError('CONFLICT', `An endpoint with id ${endpoint.id} already exists.`);
      assertNameFree(endpoint.name, endpoint.id);
      // The mirror is updated before the await so that a concurrent save sees the name as taken.
      byId.set(endpoint.id, endpoint);
      try {
        await db.run(INSERT_SQL, toValues(endpoint));
      } catch (e) {
        byId.delete(endpoint.id);
        throw e;
      }
      return endpoint;
    },
    async replace(endpoint) {
      const previous = mustGet(endpoint.id);
      assertNameFree(endpoint.name, endpoint.id);
      const sets = COLUMNS.filter((c) => c !== 'id' && c !== 'created_at')
        .map((c) => (c === 'updated_at' ? `${c} = $${c}::TIMESTAMP` : `${c} = $${c}`))
        .join(', ');
      const { created_at: _unchanged, ...values } = toValues(endpoint);
      byId.set(endpoint.id, endpoint);
      try {
        await db.run(`UPDATE _quarry_endpoints SET ${sets} WHERE id = $id`, values);
      } catch (e) {
        byId.set(endpoint.id, previous);
        throw e;
      }
      return endpoint;
    },
    async delete(id) {
      const e = mustGet(id);
      await db.run('DELETE FROM _quarry_endpoints WHERE id = $id', { id });
      byId.delete(id);
      return e;
    },
  };
}

function toValues(e: Endpoint): Record<string, string | number | boolean | null> {
  const fields = endpointFields(e);
  return { ...fields, params: fields.params === null ? null : JSON.stringify(fields.params) };
}

function fromRow(r: Row): Endpoint {
  return {
    id: str(r.id),
    name: str(r.name),
    description: optStr(r.description),
    query: str(r.query),
    language: 'bq_sql',
    sandboxable: r.sandboxable === true,
    max_limit: Number(r.max_limit),
    cache_duration_seconds: Number(r.cache_duration_seconds),
    proactive_requerying_seconds: Number(r.proactive_requerying_seconds),
    enable_auth: r.enable_auth === true,
    redact_pii: r.redact_pii === true,
    labels: optStr(r.labels),
    params: r.params === null || r.params === undefined ? null : (JSON.parse(str(r.params)) as Endpoint['params']),
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  };
}
