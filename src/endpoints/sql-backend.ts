/**
 * QueryBackend over the real query side: the SQL layer validates and merges, the LQL compiler
 * turns `lql` into the same AST, and the engine runs the result.
 */
import { type ParamValue, type QueryEngine, paramText } from '../query/port.ts';
import { QuarryError } from '../errors.ts';
import { compileLql, LQL_PARAM_PREFIX } from '../lql/index.ts';
import {
  type CallerQuery as SqlCaller,
  checkSavedQuery,
  defaultQueryBounds,
  prepareEndpointQuery,
  type QueryBounds,
  savedCteFieldTypes,
  specialiseForValues,
} from '../sql/index.ts';
import type { Catalog } from '../storage/schema.ts';
import type { ExecuteRequest, ExecuteResult, QueryBackend, SavedQueryInfo } from './backend.ts';

export interface SqlBackendOptions {
  catalog: Catalog;
  engine: QueryEngine;
  /** Cost and value-size bounds of every query run or saved (config.queryBounds; default: defaultQueryBounds). */
  bounds?: QueryBounds;
}

export function createSqlBackend({ catalog, engine, bounds = defaultQueryBounds }: SqlBackendOptions): QueryBackend {
  return {
    async inspect(saved: string): Promise<SavedQueryInfo> {
      return checkSavedQuery(saved, catalog);
    },

    async validate(saved: string): Promise<SavedQueryInfo> {
      const info = checkSavedQuery(saved, catalog);
      // LQL binds its filter values under these names; a saved query may not declare them.
      const reserved = info.params.find((p) => p.startsWith(LQL_PARAM_PREFIX));
      if (reserved) {
        throw new QuarryError('QUERY_NOT_ALLOWED', `Parameter names starting with ${LQL_PARAM_PREFIX} are reserved: @${reserved}`);
      }
      await engine.check(prepareEndpointQuery({ saved, catalog, sandboxable: false, bounds }));
      return info;
    },

    async execute(request: ExecuteRequest): Promise<ExecuteResult> {
      const params: Record<string, ParamValue | null> = {};
      for (const [name, value] of Object.entries(request.params)) {
        params[name] = value === null || typeof value === 'string' || engine.capabilities.typedParams ? value : paramText(value);
      }
      let caller: SqlCaller | undefined;
      if (request.caller?.kind === 'sql') {
        caller = { sql: request.caller.text };
      } else if (request.caller?.kind === 'lql') {
        // Filter values are read as the stored type of the field they compare with.
        const compiled = compileLql(request.caller.text, { ctes: [...request.info.ctes], fieldType: savedCteFieldTypes(request.saved, catalog) });
        caller = { ast: compiled.ast };
        Object.assign(params, compiled.params);
      }
      // Tests of a parameter alone (`@p IS NULL`, `@p = ''`) are decided by this run's values.
      const prepared = specialiseForValues(
        prepareEndpointQuery({
          saved: request.saved,
          catalog,
          sandboxable: request.sandboxable,
          bounds,
          ...(caller ? { caller } : {}),
        }),
        params,
      );
      const result = await engine.run(prepared, params, {
        timeoutMs: request.timeoutMs,
        maxRows: request.maxRows,
        ...(request.maxBytes !== undefined ? { maxBytes: request.maxBytes } : {}),
        ...(request.memory !== undefined ? { memory: request.memory } : {}),
      });
      return result.columns ? { rows: result.rows, columns: result.columns, warnings: result.warnings } : { rows: result.rows, warnings: result.warnings };
    },
  };
}
