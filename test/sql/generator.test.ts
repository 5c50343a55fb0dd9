/**
 * The base generator without an engine: a second dialect written as a handful of overrides
 * (a stand-in for what engines/<engine>/ does) prints the same resolved tree its own way.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { logsAllSql } from '../../src/endpoints/supabase/index.ts';
import { isQuarryError } from '../../src/errors.ts';
import type { CastType, DatePart } from '../../src/sql/ast.ts';
import { functionNames, functions } from '../../src/sql/functions.ts';
import { type Capabilities, type FromState, type FunctionTable, generateSql, SqlPrinter, type Translation } from '../../src/sql/generator.ts';
import { prepareEndpointQuery } from '../../src/sql/index.ts';
import type { RExpr, RFactor } from '../../src/sql/resolved.ts';
import { supabaseSources } from './fixtures.ts';
import { makeCatalog } from './support.ts';

const catalog = makeCatalog(supabaseSources);

/** Every function printed as `name(args)`, except one marked unsupported. */
const table = Object.fromEntries(
  functionNames.map((n): [string, Translation] => [
    n,
    n === 'rand'
      ? { unsupported: 'no random numbers here' }
      : { emits: [n], print: (_c, args, ctx) => `${n.toUpperCase()}(${args.map((a) => a.sql).join(', ')})${ctx.over(_c)}` },
  ]),
) as unknown as FunctionTable;

class ToyPrinter extends SqlPrinter {
  readonly capabilities: Capabilities = {};
  protected readonly functions = table;
  override quoteIdent(name: string): string {
    return `\`${name}\``;
  }
  protected param(name: string): string {
    return `{${name}:String}`;
  }
  protected castType(to: CastType): string {
    return to.toUpperCase();
  }
  protected interval(n: string, unit: DatePart): string {
    return `INTERVAL ${n} ${unit.toUpperCase()}`;
  }
  protected index(e: Extract<RExpr, { kind: 'index' }>, base: string, index: string): string {
    return `${base}[${e.oneBased ? index : `${index} + 1`}]`;
  }
  protected inUnnest(x: string, array: string, negated: boolean): string {
    return `${negated ? 'NOT ' : ''}has(${array}, ${x})`;
  }
  protected unnestElements(_f: Extract<RFactor, { kind: 'unnestList' }>, array: string): string {
    return `arrayJoin(${array})`;
  }
  /** Not the base's derived table: this dialect has ARRAY JOIN. */
  protected override unnestList(state: FromState, f: Extract<RFactor, { kind: 'unnestList' }>, array: string): string {
    const alias = this.quoteIdent(f.range.alias);
    state.sql += ` ${f.keepEmpty ? 'LEFT ' : ''}ARRAY JOIN ${array} AS ${alias}`;
    return alias;
  }
  protected struct(fields: readonly { name: string; sql: string }[]): string {
    return `tuple(${fields.map((f) => f.sql).join(', ')})`;
  }
}

function toy(callerSql: string) {
  const p = prepareEndpointQuery({ saved: logsAllSql, caller: { sql: callerSql }, catalog, sandboxable: true });
  return generateSql(p.ast, { catalog, maxRows: 100 }, new ToyPrinter());
}

describe('a second dialect over the base generator', () => {
  test("quoting, parameters and functions are the dialect's", () => {
    const g = toy("select id, regexp_contains(event_message, 'x') as m from edge_logs");
    assert.match(g.sql, /`t`\.`project` = \{project:String\}/);
    assert.match(g.sql, /REGEXP_CONTAINS\(`edge_logs`\.`event_message`, 'x'\) AS `m`/);
    assert.doesNotMatch(g.sql, /rowid/, 'no late materialisation without the capability');
  });

  test("a list UNNEST is the dialect's ARRAY JOIN; a record UNNEST is field access", () => {
    const g = toy(
      'select c.host, path from storage_logs cross join unnest(metadata) as m cross join unnest(m.context) as c, edge_logs e cross join unnest(e.metadata) as em cross join unnest(em.request) as r',
    );
    assert.match(g.sql, /FROM `storage_logs` AS `storage_logs` ARRAY JOIN `storage_logs`\.`metadata`\.`context` AS `c`/);
    assert.match(g.sql, /SELECT `c`\.`host` AS `host`, `e`\.`metadata`\.`request`\.`path` AS `path`/);
  });

  test("a scalar subquery whose FROM is only record UNNESTs is its value, under the records' presence", () => {
    const g = toy('select id, (select m.request.method from unnest(e.metadata) as m) as v from edge_logs e');
    assert.match(g.sql, /\(CASE WHEN \(`e`\.`metadata` IS NOT NULL\) THEN `e`\.`metadata`\.`request`\.`method` END\) AS `v`/);
  });

  test('a function the dialect marks unsupported is QUERY_NOT_ALLOWED there', () => {
    assert.throws(
      () => toy('select rand() as r'),
      (e: unknown) => isQuarryError(e) && e.code === 'QUERY_NOT_ALLOWED' && /RAND is not supported by this engine: no random numbers here/.test(e.message),
    );
  });
});

describe('the registry', () => {
  test('every function has a consistent signature', () => {
    for (const name of functionNames) {
      const f = functions[name];
      assert.ok(f.min <= f.max, name);
      assert.ok(f.args.length <= f.max, name);
      assert.ok(Object.isFrozen(f), name);
    }
  });
});
