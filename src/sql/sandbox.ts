/**
 * The sandbox merge (docs/API.md §4): a caller's query replaces the saved query's final SELECT
 * (with its ORDER BY and LIMIT), keeps the saved query's CTEs, and may add CTEs of its own.
 */
import { QuarryError } from '../errors.ts';
import { freezeTree, type Query } from './ast.ts';

export function mergeSandboxed(saved: Query, caller: Query): Query {
  const savedNames = new Set(saved.with.map((c) => c.name.toLowerCase()));
  for (const c of caller.with) {
    if (savedNames.has(c.name.toLowerCase())) {
      throw new QuarryError('QUERY_NOT_ALLOWED', `CTE ${c.name} is already defined by the endpoint's query: choose another name`);
    }
  }
  return freezeTree({
    kind: 'query',
    with: [...saved.with, ...caller.with],
    body: caller.body,
    orderBy: caller.orderBy,
    ...(caller.limit ? { limit: caller.limit } : {}),
    ...(caller.offset ? { offset: caller.offset } : {}),
  });
}
