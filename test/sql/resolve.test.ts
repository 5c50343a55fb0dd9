/** The semantic pass on its own: names, scopes and types, without an engine. */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { logsAllSql } from '../../src/endpoints/supabase/index.ts';
import { isQuarryError } from '../../src/errors.ts';
import { prepareEndpointQuery } from '../../src/sql/index.ts';
import { resolveQuery } from '../../src/sql/resolve.ts';
import type { RExpr, RQuery } from '../../src/sql/resolved.ts';
import { supabaseSources } from './fixtures.ts';
import { makeCatalog } from './support.ts';
import { repoRoot } from '../support/repo.ts';

const catalog = makeCatalog(supabaseSources);

function resolve(callerSql: string): RQuery {
  const p = prepareEndpointQuery({ saved: logsAllSql, caller: { sql: callerSql }, catalog, sandboxable: true });
  return resolveQuery(p.ast, { catalog }).query;
}

function selectOf(q: RQuery) {
  assert.equal(q.body.kind, 'select');
  return q.body.kind === 'select' ? q.body : assert.fail();
}

function rejects(sql: string, code: string, message: RegExp) {
  assert.throws(
    () => resolve(sql),
    (e: unknown) => {
      assert.ok(isQuarryError(e), String(e));
      assert.equal(e.code, code, e.message);
      assert.match(e.message, message);
      return true;
    },
  );
}

/** Where a resolved column reads from: range variable kind and alias, column, fields. */
function reads(e: RExpr): string {
  assert.equal(e.kind, 'column', JSON.stringify(e.kind));
  if (e.kind !== 'column') return '';
  return [`${e.from.kind}:${e.from.alias}`, e.column, ...e.fields].filter((x) => x !== undefined).join('.');
}

describe('value tables', () => {
  test('fields of a record UNNEST are in scope unqualified', () => {
    const s = selectOf(
      resolve('select path, status_code from edge_logs cross join unnest(metadata) as m cross join unnest(m.request) as r cross join unnest(m.response) as rs'),
    );
    assert.equal(reads(s.columns[0]!.expr), 'cte:edge_logs.metadata.request.path');
    assert.equal(reads(s.columns[1]!.expr), 'cte:edge_logs.metadata.response.status_code');
    assert.deepEqual(s.columns[1]!.expr.type, { k: 'scalar', t: 'int' });
  });

  test('a field two range variables provide is ambiguous, naming both', () => {
    rejects(
      'select level from function_logs a cross join unnest(a.metadata) as m join function_logs b on true cross join unnest(b.metadata) as n',
      'INVALID_QUERY',
      /Column name level is ambiguous: it may be m\.level or n\.level/,
    );
  });

  test("a table's column wins over a value-table field of the same name", () => {
    const s = selectOf(resolve("with x as (select 'a' as level) select level from x, function_logs f cross join unnest(f.metadata) as m"));
    assert.equal(reads(s.columns[0]!.expr), 'cte:x.level');
    const t = selectOf(resolve('select timestamp from function_logs cross join unnest(metadata) as metadata'));
    assert.equal(reads(t.columns[0]!.expr), 'cte:function_logs.timestamp');
  });

  test('two tables that both have the column are still ambiguous', () => {
    rejects(
      'select id from function_logs a, function_logs b cross join unnest(b.metadata) as m',
      'INVALID_QUERY',
      /Column name id is ambiguous: it may be a\.id or b\.id/,
    );
  });

  test('the elements of a list of records are a value table too', () => {
    const s = selectOf(resolve('select pid from storage_logs cross join unnest(metadata) as m cross join unnest(m.context) as c'));
    const e = s.columns[0]!.expr;
    assert.equal(e.kind, 'column');
    if (e.kind === 'column') {
      assert.equal(e.from.kind, 'element');
      assert.deepEqual(e.fields, ['pid']);
    }
  });

  test('a qualified name still wins: a range variable alias before a column', () => {
    const s = selectOf(resolve('select metadata.level from function_logs cross join unnest(metadata) as metadata'));
    assert.equal(reads(s.columns[0]!.expr), 'cte:function_logs.metadata.level');
  });
});

describe('scopes', () => {
  test('GROUP BY and ORDER BY use a select-list alias by position', () => {
    const q = resolve('select timestamp_trunc(timestamp, minute) as timestamp, count(*) as n from edge_logs group by timestamp order by timestamp');
    assert.deepEqual(selectOf(q).groupBy[0], { kind: 'position', index: 1, type: { k: 'scalar', t: 'timestamp' } });
    assert.equal(q.orderBy[0]!.expr.kind, 'position');
  });

  test('WHERE does not see select-list aliases', () => {
    rejects('select id as x from edge_logs where x is null', 'INVALID_QUERY', /Unrecognized name: x/);
  });

  test('a correlated subquery reads the enclosing range variable', () => {
    const s = selectOf(resolve('select id from edge_logs e where exists (select 1 from auth_logs a where a.id = e.id)'));
    const where = s.where!;
    assert.equal(where.kind, 'exists');
    if (where.kind !== 'exists') return;
    const inner = selectOf(where.query).where!;
    assert.equal(inner.kind, 'binary');
    if (inner.kind === 'binary') assert.equal(reads(inner.right), 'cte:e.id');
  });

  test('a string compared with a timestamp becomes an explicit implicit cast', () => {
    const s = selectOf(resolve("select id from edge_logs where timestamp > '2026-11-21T10:00:00Z'"));
    const w = s.where!;
    assert.equal(w.kind, 'binary');
    if (w.kind === 'binary') assert.deepEqual([w.right.kind, w.right.kind === 'cast' && w.right.implicit], ['cast', true]);
  });

  test('every node of the resolved tree is frozen', () => {
    const q = resolve("select id, regexp_contains(event_message, 'x') as m from edge_logs where id in ('a', 'b') order by id");
    const seen = new Set<object>();
    const visit = (x: unknown): void => {
      if (typeof x !== 'object' || x === null || seen.has(x)) return;
      seen.add(x);
      assert.ok(Object.isFrozen(x), `not frozen: ${JSON.stringify(x).slice(0, 80)}`);
      for (const v of Object.values(x)) visit(v);
    };
    visit(q);
    assert.ok(seen.size > 50);
  });
});

describe('immutable trees', () => {
  test('the parsed and merged AST is frozen at every node, so a cached tree cannot be edited', () => {
    const p = prepareEndpointQuery({
      saved: logsAllSql,
      caller: { sql: 'select id, count(*) over (partition by id) as n from edge_logs order by id limit 5' },
      catalog,
      sandboxable: true,
    });
    let nodes = 0;
    const visit = (x: unknown): void => {
      if (typeof x !== 'object' || x === null) return;
      nodes++;
      assert.ok(Object.isFrozen(x), `not frozen: ${JSON.stringify(x).slice(0, 80)}`);
      for (const v of Object.values(x)) visit(v);
    };
    visit(p.ast);
    assert.ok(nodes > 100);
    assert.throws(() => {
      (p.ast as { limit?: unknown }).limit = undefined;
    }, TypeError);
  });
});

describe('boundaries', () => {
  test('src/sql imports no engine and no DuckDB', () => {
    const dir = path.join(repoRoot, 'src', 'sql');
    for (const f of readdirSync(dir).filter((n) => n.endsWith('.ts'))) {
      const text = readFileSync(path.join(dir, f), 'utf8');
      assert.doesNotMatch(text, /from '(\.\.\/engines\/|[^']*\/engines\/|@duckdb)/, f);
    }
  });
});

describe('the function registry in the docs', () => {
  test('docs/SQL.md names every registered function and states the count', async () => {
    const { functionNames } = await import('../../src/sql/functions.ts');
    const doc = readFileSync(path.join(repoRoot, 'docs', 'SQL.md'), 'utf8');
    const section = doc.slice(doc.indexOf('## Functions'), doc.indexOf('## Results'));
    for (const name of functionNames) assert.match(section, new RegExp(`\`${name}[(\`]`), `${name} is not in docs/SQL.md`);
    assert.match(section, new RegExp(`\\*\\*${functionNames.length} functions\\*\\*`));
  });
});

describe('casts (BigQuery conversion rules)', () => {
  test('a cast BigQuery does not have is refused before anything runs, naming both types', () => {
    rejects('select cast(timestamp as int64) as x from edge_logs', 'INVALID_QUERY', /^Invalid cast from TIMESTAMP to INT64$/);
    rejects('select safe_cast(timestamp as int64) as x from edge_logs', 'INVALID_QUERY', /^Invalid cast from TIMESTAMP to INT64$/);
    rejects('select cast(true as date) as x', 'INVALID_QUERY', /^Invalid cast from BOOL to DATE$/);
    rejects('select cast(false as timestamp) as x', 'INVALID_QUERY', /^Invalid cast from BOOL to TIMESTAMP$/);
    rejects('select cast(date(timestamp) as bool) as x from edge_logs', 'INVALID_QUERY', /^Invalid cast from DATE to BOOL$/);
    rejects('select cast(1 as date) as x', 'INVALID_QUERY', /^Invalid cast from INT64 to DATE$/);
    rejects('select cast(1.5 as bool) as x', 'INVALID_QUERY', /^Invalid cast from FLOAT64 to BOOL$/);
    rejects('select cast(true as float64) as x', 'INVALID_QUERY', /^Invalid cast from BOOL to FLOAT64$/);
    rejects('select cast(1 as bytes) as x', 'INVALID_QUERY', /^Invalid cast from INT64 to BYTES$/);
    rejects('select cast(metadata as int64) as x from edge_logs', 'INVALID_QUERY', /^Invalid cast from STRUCT to INT64$/);
    rejects('select struct<d date>(true) as s', 'INVALID_QUERY', /^Invalid cast from BOOL to DATE$/);
  });

  test('the casts BigQuery has resolve, and records and lists cast to STRING (their JSON text)', () => {
    const s = selectOf(
      resolve(`select cast(true as int64) as a, cast(1 as bool) as b, cast(timestamp as date) as c, cast(date(timestamp) as datetime) as d,
  cast('x' as bytes) as e, cast(1.5 as numeric) as f, cast(metadata as string) as g, cast(null as date) as h, cast(@project as int64) as i from edge_logs`),
    );
    assert.deepEqual(
      s.columns.map((c) => c.expr.type),
      ['int', 'bool', 'date', 'datetime', 'bytes', 'numeric', 'string', 'date', 'int'].map((t) => ({ k: 'scalar', t })),
    );
  });
});
