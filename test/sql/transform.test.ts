/**
 * The one typed transform (and visitor) of each tree: src/sql/ast-transform.ts over the AST,
 * src/sql/resolved-transform.ts over the resolved tree. What every rewrite relies on: a transform
 * that changes nothing returns the tree itself, a replacement reaches every position (CTEs, derived
 * tables, subqueries, windows, UNNEST, JOIN ... ON), unchanged subtrees are shared, rebuilt nodes
 * are frozen and shaped as the parser or the semantic pass shapes them.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Query, Select } from '../../src/sql/ast.ts';
import { exprChildren, transformQuery, visitQuery, withChanges } from '../../src/sql/ast-transform.ts';
import { parseSql } from '../../src/sql/parse.ts';
import { resolveQuery } from '../../src/sql/resolve.ts';
import type { RQuery, RSelect } from '../../src/sql/resolved.ts';
import { resolvedChildren, transformResolved, visitResolved } from '../../src/sql/resolved-transform.ts';
import { walkQuery } from '../../src/sql/walk.ts';
import { supabaseSources } from './fixtures.ts';
import { makeCatalog } from './support.ts';

const catalog = makeCatalog(supabaseSources);
const edge = '`cloudflare.logs.prod`';

/** A query with a parameter in every kind of position. */
const EVERYWHERE = `with c as (select id, @a as a from ${edge} where id = @b)
select c.id, (select max(@c) from c as x) as s, sum(length(@d)) over (partition by @e order by @f rows between 1 preceding and current row) as w,
  case @g when 'x' then @h else @i end as k, struct(@j as j) as st, [@k] as arr
from c left join (select id from ${edge} where id != @l) as d on d.id = @m
cross join unnest([@n]) as u
where exists (select 1 from c where c.id = @o) and @p in unnest([@q]) and @r between @s and @t
group by 1, 4 having count(*) > @u qualify row_number() over (order by @v) = 1
order by 1 limit 10`;

const paramsOf = (q: Query): string[] => {
  const names: string[] = [];
  visitQuery(q, {
    expr(e) {
      if (e.kind === 'param') names.push(e.name);
    },
  });
  return names;
};

function deepFrozen(node: unknown, seen = new Set<unknown>()): boolean {
  if (typeof node !== 'object' || node === null || seen.has(node)) return true;
  seen.add(node);
  return Object.isFrozen(node) && Object.values(node).every((v) => deepFrozen(v, seen));
}

describe('the AST transform', () => {
  const q = parseSql(EVERYWHERE);

  test('visits every position, in the order the query is written', () => {
    // The CTE (its columns, then its WHERE), the FROM (a derived table, its ON, an UNNEST), the
    // columns, WHERE, HAVING, QUALIFY.
    assert.deepEqual(paramsOf(q), 'ablmncdefghijkopqrstuv'.split(''));
  });

  test('a transform that changes nothing returns the tree itself', () => {
    assert.equal(transformQuery(q, {}), q);
    assert.equal(
      transformQuery(q, {
        expr: (e, recurse) => recurse(e),
        select: (s, recurse) => recurse(s),
        factor: (f, recurse) => recurse(f),
        query: (x, recurse) => recurse(x),
      }),
      q,
    );
  });

  test('a replacement reaches every position; the result is frozen, shaped as parsed, unchanged parts shared', () => {
    const renamed = transformQuery(q, { expr: (e, recurse) => (e.kind === 'param' ? { kind: 'param', name: `${e.name}2` } : recurse(e)) });
    assert.deepEqual(
      paramsOf(renamed),
      paramsOf(q).map((n) => `${n}2`),
    );
    assert.deepEqual(renamed, parseSql(EVERYWHERE.replace(/@(\w)/g, '@$12')));
    assert.ok(deepFrozen(renamed));
    // The ORDER BY and LIMIT hold no parameter: the very same nodes.
    assert.equal(renamed.orderBy, q.orderBy);
    assert.equal(renamed.limit, q.limit);
  });

  test('a hook that drops an optional child leaves the key out, as the parser would', () => {
    const out = transformQuery(parseSql(`select id from ${edge} where id = 'x'`), { select: (s, recurse) => withChanges(recurse(s), { where: undefined }) });
    assert.deepEqual(out, parseSql(`select id from ${edge}`));
  });

  test('condition positions (WHERE, HAVING, QUALIFY, JOIN ... ON) have their own hook', () => {
    const seen: string[] = [];
    transformQuery(q, {
      condition(e, recurse) {
        seen.push(e.kind === 'binary' ? e.op : e.kind);
        return recurse(e);
      },
    });
    assert.deepEqual(seen, ['=', '!=', '=', 'and', '=', '>', '=']);
  });

  test('walkQuery sees each CTE where it is visible, and the direct children are the ones written', () => {
    const refs: string[] = [];
    walkQuery(parseSql('with a as (select 1 as x), b as (select x from a) select x from b, (select x from c) as d'), {
      table: (t, cte) => refs.push(`${t.name}:${cte}`),
    });
    assert.deepEqual(refs, ['a:true', 'b:true', 'c:false']);
    const e = (parseSql('select f(a, b order by c limit 1) over (partition by d order by e) as v from t').body as Select).columns[0]!.expr;
    assert.deepEqual(
      exprChildren(e)[0].map((x) => (x.kind === 'column' ? x.path.join('.') : x.kind)),
      ['a', 'b', 'c', 'literal', 'd', 'e'],
    );
  });
});

describe('the resolved transform', () => {
  const resolved = (sql: string): RQuery => resolveQuery(parseSql(sql), { catalog }).query;
  const q = resolved(EVERYWHERE);

  const resolvedParams = (x: RQuery): string[] => {
    const names: string[] = [];
    visitResolved(x, {
      expr(e) {
        if (e.kind === 'param') names.push(e.name);
      },
    });
    return names;
  };

  test('visits every parameter, wherever it is', () => {
    assert.deepEqual([...resolvedParams(q)].sort(), 'abcdefghijklmnopqrstuv'.split(''));
  });

  test('a transform that changes nothing returns the tree itself', () => {
    assert.equal(transformResolved(q, {}), q);
    assert.equal(transformResolved(q, { expr: (e, recurse) => recurse(e), query: (x, recurse) => recurse(x), factor: (f, recurse) => recurse(f) }), q);
  });

  test('a replacement reaches every position; range variables and types are shared, nodes frozen, keys kept', () => {
    const out = transformResolved(q, { expr: (e, recurse) => (e.kind === 'param' ? Object.freeze({ ...e, name: `${e.name}2` }) : recurse(e)) });
    assert.deepEqual(
      [...resolvedParams(out)].sort(),
      'abcdefghijklmnopqrstuv'.split('').map((n) => `${n}2`),
    );
    assert.ok(deepFrozen(out));
    const body = out.body;
    const before = q.body;
    assert.ok(body.kind === 'select' && before.kind === 'select' && body.from && before.from);
    const first = body.from.first;
    const firstBefore = before.from.first;
    assert.ok(first.kind === 'range' && firstBefore.kind === 'range');
    assert.equal(first.range, firstBefore.range);
    assert.ok(Object.hasOwn(out, 'offset') && out.offset === undefined);
    assert.equal(out.columns, q.columns);
  });

  test('the direct children of a call: arguments, its ORDER BY and LIMIT, then its window', () => {
    const r = resolved(`select string_agg(id, ',' order by event_message limit 2) over (partition by id order by timestamp) as v from ${edge}`);
    const call = (r.body as RSelect).columns[0]!.expr;
    const kinds = resolvedChildren(call).exprs.map((x) => (x.kind === 'column' ? x.column : x.kind));
    assert.deepEqual(kinds, ['id', 'literal', 'event_message', 'literal', 'id', 'timestamp']);
  });
});
