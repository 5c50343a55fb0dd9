import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isQuarryError } from '../../src/errors.ts';
import { type CompileContext, compileLql } from '../../src/lql/compile.ts';
import type { Expr, Query, Select } from '../../src/sql/ast.ts';
import { validateQuery } from '../../src/sql/validate.ts';
import type { VType } from '../../src/sql/types.ts';

const now = new Date('2026-11-21T10:37:42.123Z');
const ctes = ['edge_logs', 'postgres_logs'];

function compile(lql: string, ctx: Partial<CompileContext> = {}) {
  return compileLql(lql, { ctes, now, ...ctx });
}

function body(q: Query): Select {
  assert.equal(q.body.kind, 'select');
  return q.body as Select;
}

const p = (name: string): Expr => ({ kind: 'param', name });
const c = (...path: string[]): Expr => ({ kind: 'column', path });
const cast = (expr: Expr, to: string): Expr => ({ kind: 'cast', expr, to, safe: false }) as Expr;

function rejects(lql: string, code: string, fragment: string, ctx: Partial<CompileContext> = {}): void {
  assert.throws(
    () => compile(lql, ctx),
    (e: unknown) => isQuarryError(e) && e.code === code && e.status === 400 && e.message.includes(fragment),
    `${lql} should fail with ${code} mentioning «${fragment}»`,
  );
}

describe('choosing the CTE', () => {
  test('one CTE is the default', () => {
    const { ast, cte } = compile('error', { ctes: ['only_cte'] });
    assert.equal(cte, 'only_cte');
    assert.deepEqual(body(ast).from, { first: { kind: 'table', name: 'only_cte' }, joins: [] });
  });

  test('f: and from: pick a CTE', () => {
    assert.equal(compile('f:postgres_logs').cte, 'postgres_logs');
    assert.equal(compile('from:edge_logs s:id').cte, 'edge_logs');
  });

  test('several CTEs without f: is refused, listing them', () => {
    rejects('error', 'QUERY_NOT_ALLOWED', 'Multiple CTEs available (edge_logs, postgres_logs). You must specify which one to query using `f:name`');
  });

  test('an unknown CTE is refused, listing the allowed ones', () => {
    rejects('f:auth_logs', 'QUERY_NOT_ALLOWED', "Table 'auth_logs' not found in available CTEs: edge_logs, postgres_logs");
  });

  test('no CTE at all is refused', () => {
    rejects('error', 'QUERY_NOT_ALLOWED', 'No CTEs found', { ctes: [] });
  });

  test('two f: clauses and unparseable LQL are 400 PARSE_ERRORs', () => {
    rejects('f:edge_logs f:postgres_logs', 'PARSE_ERROR', 'Only one from rule');
    rejects('f:edge_logs "open', 'PARSE_ERROR', 'never closed');
  });
});

describe('select lists', () => {
  test('no select and no filter: timestamp only, newest first', () => {
    const { ast, params } = compile('f:edge_logs');
    assert.deepEqual(body(ast).columns, [{ expr: c('timestamp') }]);
    assert.equal(body(ast).where, undefined);
    assert.deepEqual(ast.orderBy, [{ expr: c('timestamp'), desc: true }]);
    assert.deepEqual(ast.with, []);
    assert.deepEqual(params, {});
  });

  test('no select: timestamp plus the fields the filters use, nested ones aliased with _', () => {
    const { ast } = compile('f:edge_logs error m.response.status_code:500 -m.response.status_code:404 t:today');
    assert.deepEqual(body(ast).columns, [
      { expr: c('timestamp') },
      { expr: c('event_message') },
      { expr: c('metadata', 'response', 'status_code'), alias: 'metadata_response_status_code' },
    ]);
  });

  test('explicit selects with aliases; never a wildcard', () => {
    const { ast } = compile('f:edge_logs s:id s:m.user.id s:m.qty@quantity s:*');
    assert.deepEqual(body(ast).columns, [
      { expr: c('id') },
      { expr: c('metadata', 'user', 'id'), alias: 'metadata_user_id' },
      { expr: c('metadata', 'qty'), alias: 'quantity' },
    ]);
  });
});

describe('filters bind their values as parameters', () => {
  test('comparison with a number casts the bound string', () => {
    const { ast, params } = compile('f:edge_logs m.response.status_code:>=500');
    assert.deepEqual(body(ast).where, {
      kind: 'binary',
      op: '>=',
      left: c('metadata', 'response', 'status_code'),
      right: cast(p('__lql_0'), 'int64'),
    });
    assert.deepEqual(params, { __lql_0: '500' });
  });

  test('strings, floats, booleans, huge integers', () => {
    const where = (lql: string) => body(compile(`f:edge_logs ${lql}`).ast).where;
    assert.deepEqual(where('project:abc'), { kind: 'binary', op: '=', left: c('project'), right: p('__lql_0') });
    assert.deepEqual(where('m.ratio:<0.5'), { kind: 'binary', op: '<', left: c('metadata', 'ratio'), right: cast(p('__lql_0'), 'float64') });
    assert.deepEqual(where('m.flag:true'), { kind: 'binary', op: '=', left: c('metadata', 'flag'), right: cast(p('__lql_0'), 'bool') });
    assert.deepEqual(where('m.big:999999999999999999999'), {
      kind: 'binary',
      op: '=',
      left: c('metadata', 'big'),
      right: cast(p('__lql_0'), 'float64'),
    });
  });

  test('a known field type decides the cast: a number against a string field stays a string', () => {
    const fieldType = (_cte: string, path: readonly string[]): VType | undefined =>
      path.join('.') === 'metadata.user_id' ? { k: 'scalar', t: 'string' } : { k: 'scalar', t: 'float' };
    const where = (lql: string) => body(compile(`f:edge_logs ${lql}`, { fieldType }).ast).where;
    assert.deepEqual(where('m.user_id:123'), { kind: 'binary', op: '=', left: c('metadata', 'user_id'), right: p('__lql_0') });
    assert.deepEqual(where('m.latency:"5"'), { kind: 'binary', op: '=', left: c('metadata', 'latency'), right: cast(p('__lql_0'), 'float64') });
  });

  test("a timestamp field's value must be a time by src/time.ts's rules, else a 400 naming field and value", () => {
    const fieldType = (): VType => ({ k: 'scalar', t: 'timestamp' });
    const where = (lql: string) => body(compile(`f:edge_logs ${lql}`, { fieldType }).ast).where;
    assert.deepEqual(where('m.at:>2026-11-21T10:00:00Z'), { kind: 'binary', op: '>', left: c('metadata', 'at'), right: cast(p('__lql_0'), 'timestamp') });
    assert.deepEqual(where('m.at:"2026-11-21 10:00"'), { kind: 'binary', op: '=', left: c('metadata', 'at'), right: cast(p('__lql_0'), 'timestamp') });
    // JavaScript's Date.parse reads these; the engines' casts do not.
    for (const value of ['2026', '"Nov 21 2026"', '"2026-11-21T10:00:00 GMT"']) {
      rejects(`f:edge_logs m.at:${value}`, 'INVALID_QUERY', 'is TIMESTAMP, and the filter value', { fieldType });
    }
  });

  test('values never appear in the AST, even hostile ones', () => {
    const hostile = `x' OR 1=1 --`;
    const { ast, params } = compile(`f:edge_logs m.name:"${hostile}" "${hostile}" ~"${hostile}"`);
    assert.ok(!JSON.stringify(ast).includes('OR 1=1'));
    assert.deepEqual(Object.values(params), [hostile, hostile, hostile]);
  });

  test('free text, regex and NULL', () => {
    const where = (lql: string) => body(compile(`f:edge_logs ${lql}`).ast).where;
    assert.deepEqual(where('error'), {
      kind: 'binary',
      op: '>',
      left: { kind: 'func', name: 'strpos', args: [c('event_message'), p('__lql_0')] },
      right: { kind: 'literal', type: 'number', value: '0' },
    });
    assert.deepEqual(where('~^err'), { kind: 'func', name: 'regexp_contains', args: [c('event_message'), p('__lql_0')] });
    assert.deepEqual(where('m.plan:NULL'), { kind: 'isNull', expr: c('metadata', 'plan'), negated: false });
    assert.deepEqual(where('-m.plan:NULL'), { kind: 'unary', op: 'not', expr: { kind: 'isNull', expr: c('metadata', 'plan'), negated: false } });
  });

  test('negation keeps rows where the field is missing', () => {
    assert.deepEqual(body(compile('f:edge_logs -m.status:500').ast).where, {
      kind: 'binary',
      op: 'or',
      left: { kind: 'isNull', expr: c('metadata', 'status'), negated: false },
      right: { kind: 'unary', op: 'not', expr: { kind: 'binary', op: '=', left: c('metadata', 'status'), right: cast(p('__lql_0'), 'int64') } },
    });
  });

  test('ranges, level ranges and arrays', () => {
    const where = (lql: string) => body(compile(`f:edge_logs ${lql}`).ast).where;
    assert.deepEqual(where('m.int:50..200'), {
      kind: 'between',
      expr: c('metadata', 'int'),
      low: cast(p('__lql_0'), 'int64'),
      high: cast(p('__lql_1'), 'int64'),
      negated: false,
    });
    const levels = compile('f:edge_logs m.level:warning..critical');
    assert.deepEqual(body(levels.ast).where, {
      kind: 'inList',
      expr: c('metadata', 'level'),
      list: [p('__lql_0'), p('__lql_1'), p('__lql_2')],
      negated: false,
    });
    assert.deepEqual(levels.params, { __lql_0: 'warning', __lql_1: 'error', __lql_2: 'critical' });
    assert.deepEqual(where('m.tags:@>prod'), { kind: 'inUnnest', expr: p('__lql_0'), array: c('metadata', 'tags'), negated: false });
    const regexp = where('m.tags:@>~^pr') as Extract<Expr, { kind: 'exists' }>;
    assert.equal(regexp.kind, 'exists');
    assert.deepEqual(body(regexp.query).from?.first, { kind: 'unnest', expr: c('metadata', 'tags'), alias: '__lql_element' });
  });

  test('timestamps: datetimes compare directly, dates cover whole UTC days', () => {
    const compiled = compile('f:edge_logs t:>=2020-01-01T10:00:00Z t:2020-01-05 t:<=2020-01-31');
    assert.deepEqual(compiled.params, {
      __lql_0: '2020-01-01 10:00:00.000000',
      __lql_1: '2020-01-05 00:00:00.000000',
      __lql_2: '2020-01-06 00:00:00.000000',
      __lql_3: '2020-02-01 00:00:00.000000',
    });
    const ts = c('timestamp');
    const tp = (n: number) => cast(p(`__lql_${n}`), 'timestamp');
    const cmp = (op: string, n: number): Expr => ({ kind: 'binary', op, left: ts, right: tp(n) }) as Expr;
    const and = (l: Expr, r: Expr): Expr => ({ kind: 'binary', op: 'and', left: l, right: r });
    assert.deepEqual(body(compiled.ast).where, and(and(cmp('>=', 0), and(cmp('>=', 1), cmp('<', 2))), cmp('<', 3)));
  });

  test('shorthand ranges use the given clock', () => {
    const { params } = compile('f:edge_logs t:last@1h');
    assert.deepEqual(params, { __lql_0: '2026-11-21 09:00:00.000000', __lql_1: '2026-11-21 10:37:42.000000' });
  });
});

describe('charts', () => {
  test('count per minute: columns timestamp and count, ordered by time', () => {
    const { ast } = compile('f:edge_logs m.response.status_code:>=500 c:count(*) c:group_by(t::minute)');
    const bucket: Expr = { kind: 'func', name: 'timestamp_trunc', args: [c('timestamp'), { kind: 'datepart', part: 'minute' }] };
    assert.deepEqual(body(ast).columns, [
      { expr: bucket, alias: 'timestamp' },
      { expr: { kind: 'func', name: 'count', args: [], star: true }, alias: 'count' },
    ]);
    assert.deepEqual(body(ast).groupBy, [bucket]);
    assert.deepEqual(ast.orderBy, [{ expr: bucket, desc: false }]);
    assert.ok(body(ast).where);
  });

  test('each aggregate and period', () => {
    const agg = (lql: string) => body(compile(`f:edge_logs ${lql}`).ast).columns[1];
    assert.deepEqual(agg('c:countd(m.user)'), { expr: { kind: 'func', name: 'count', args: [c('metadata', 'user')], distinct: true }, alias: 'countd' });
    for (const name of ['avg', 'sum', 'max']) {
      assert.deepEqual(agg(`c:${name}(m.latency)`), { expr: { kind: 'func', name, args: [c('metadata', 'latency')] }, alias: name });
    }
    assert.deepEqual(agg('c:p95(m.latency)'), {
      expr: {
        kind: 'index',
        expr: { kind: 'func', name: 'approx_quantiles', args: [c('metadata', 'latency'), { kind: 'literal', type: 'number', value: '100' }] },
        index: { kind: 'literal', type: 'number', value: '95' },
        mode: 'offset',
      },
      alias: 'p95',
    });
    const period = body(compile('f:edge_logs c:group_by(t::hour)').ast).groupBy[0];
    assert.deepEqual(period, { kind: 'func', name: 'timestamp_trunc', args: [c('timestamp'), { kind: 'datepart', part: 'hour' }] });
  });
});

describe('the SQL layer accepts what the compiler produces', () => {
  test('every construct passes sandbox validation', () => {
    const catalog = { sourceByName: () => undefined };
    for (const lql of [
      'f:edge_logs error "two words" ~^x -m.a.b:1 m.level:info..error m.tags:@>a m.tags:@>~b t:last@1h s:m.a.b@ab',
      'f:edge_logs c:p99(m.latency) c:group_by(t::second) m.plan:NULL t:2020-01-01..2020-01-02',
      'f:postgres_logs c:countd(m.user) t:this@week',
    ]) {
      const { ast } = compile(lql);
      assert.doesNotThrow(() => validateQuery(ast, { catalog, sandboxCtes: ctes }), lql);
    }
  });
});
