/** Query shapes beyond Studio's: subqueries, caller CTEs, joins, set operations, errors. */
import { type CorpusCase, rows, us } from './types.ts';

export const semanticsCases: CorpusCase[] = [
  {
    name: 'caller defines its own CTE over a saved one',
    sql: `with errors as (select id, timestamp from edge_logs cross join unnest(metadata) as m cross join unnest(m.response) as r where r.status_code >= 500)
select id from errors order by timestamp`,
    expect: rows(['id'], ['e3'], ['e7']),
  },
  {
    name: 'caller CTE keeps record types (unnest of metadata through two CTEs)',
    sql: `with a as (select id, metadata from edge_logs), b as (select id, metadata from a)
select id, m.request.method from b cross join unnest(metadata) as m where id = 'e2'`,
    expect: rows(['id', 'method'], ['e2', 'POST']),
  },
  {
    name: 'derived table in FROM',
    sql: "select sub.id from (select id, timestamp from edge_logs where id like 'e%') as sub order by sub.timestamp desc limit 2",
    expect: rows(['id'], ['e8'], ['e7']),
  },
  {
    name: 'scalar subquery',
    sql: 'select (select count(*) from auth_logs) as n',
    expect: rows(['n'], [2]),
  },
  {
    name: 'IN subquery',
    sql: "select id from edge_logs where id in (select id from edge_logs cross join unnest(metadata) as m where m.request.method = 'POST')",
    expect: rows(['id'], ['e2']),
  },
  {
    name: 'EXISTS correlated over a list',
    sql: "select id from edge_logs as e where exists (select 1 from unnest(e.metadata.tags) as tag where tag = 'c')",
    expect: rows(['id'], ['e4']),
  },
  {
    name: 'NOT EXISTS',
    sql: 'select count(*) as n from auth_logs a where not exists (select 1 from realtime_logs r where r.id = a.id)',
    expect: rows(['n'], [2]),
  },
  {
    name: 'cross join unnest of a list of strings',
    sql: 'select id, tag from edge_logs cross join unnest(metadata) as m cross join unnest(m.tags) as tag order by id, tag',
    expect: rows(['id', 'tag'], ['e1', 'a'], ['e1', 'b'], ['e4', 'c']),
  },
  {
    name: 'left join unnest of a list keeps empty and NULL lists',
    sql: "select id, tag from edge_logs cross join unnest(metadata) as m left join unnest(m.tags) as tag on true where id in ('e1', 'e2', 'e3') order by id, tag",
    expect: rows(['id', 'tag'], ['e1', 'a'], ['e1', 'b'], ['e2', null], ['e3', null]),
  },
  {
    name: 'comma join with unnest',
    sql: 'select count(*) as n from edge_logs e, unnest(e.metadata) as m, unnest(m.tags) as tag',
    expect: rows(['n'], [3]),
  },
  {
    name: 'unnest of a literal array',
    sql: 'select x from unnest([3, 1, 2]) as x order by x',
    expect: rows(['x'], [1], [2], [3]),
  },
  {
    name: 'unnest of generate_timestamp_array joined to counts',
    sql: `with buckets as (select b from unnest(generate_timestamp_array('2026-11-21T10:00:00Z', '2026-11-21T10:02:00Z', interval 1 minute)) as b),
counts as (select timestamp_trunc(timestamp, minute) as b, count(*) as n from edge_logs group by b)
select buckets.b, coalesce(counts.n, 0) as n from buckets left join counts on buckets.b = counts.b order by buckets.b`,
    expect: rows(['b', 'n'], [us('10:00:00'), 1], [us('10:01:00'), 1], [us('10:02:00'), 1]),
  },
  {
    name: 'inner join of two CTEs',
    sql: `select a.id as auth_id, r.id as rt_id from auth_logs a join realtime_logs r on timestamp_trunc(a.timestamp, hour) = timestamp_trunc(r.timestamp, hour) order by auth_id`,
    expect: rows(['auth_id', 'rt_id'], ['a1', 'r1'], ['a2', 'r1']),
  },
  {
    name: 'left join of two CTEs',
    sql: `select a.id, f.id as fid from auth_logs a left join function_logs f on a.timestamp = f.timestamp order by a.id`,
    expect: rows(['id', 'fid'], ['a1', 'fl1'], ['a2', null]),
  },
  {
    name: 'select distinct',
    sql: 'select distinct m.request.method as method from edge_logs cross join unnest(metadata) as m where m.request.method is not null order by method',
    expect: rows(['method'], ['DELETE'], ['GET'], ['POST']),
  },
  {
    name: 'union distinct',
    sql: "select 'x' as v union distinct select 'x' union distinct select 'y'",
    expect: rows(['v'], ['x'], ['y']),
    unordered: true,
  },
  {
    name: 'except distinct',
    sql: "select id from auth_logs except distinct select id from auth_logs where id = 'a1'",
    expect: rows(['id'], ['a2']),
  },
  {
    name: 'intersect distinct',
    sql: "select id from edge_logs intersect distinct select 'e3'",
    expect: rows(['id'], ['e3']),
  },
  {
    name: 'order by a position and nulls last',
    sql: "select id, m.request.method from edge_logs left join unnest(metadata) as m on true where id in ('e1', 'e8') order by 2 desc nulls last",
    expect: rows(['id', 'method'], ['e1', 'GET'], ['e8', null]),
  },
  {
    name: 'ascending puts NULLs first by default',
    sql: "select id, metadata.request.method as method from edge_logs where id in ('e1', 'e8') order by method",
    expect: rows(['id', 'method'], ['e8', null], ['e1', 'GET']),
  },
  {
    name: 'group by an alias that shadows a column',
    sql: 'select timestamp_trunc(timestamp, hour) as timestamp, count(*) as n from auth_logs group by timestamp',
    expect: rows(['timestamp', 'n'], [us('10:00:00'), 2]),
  },
  {
    name: 'anonymous columns are named f0_, f1_',
    sql: "select 1 + 1, upper('a')",
    expect: rows(['f0_', 'f1_'], [2, 'A']),
  },
  {
    name: 'reserved words as aliases are quoted',
    sql: "select 'x' as storage, 'y' as `select`, 'z' as `order`",
    expect: rows(['storage', 'select', 'order'], ['x', 'y', 'z']),
  },
  {
    name: 'mixed-case column names resolve case-insensitively',
    sql: "select m.TENANTID as t from storage_logs cross join unnest(metadata) as m where id = 's1'",
    expect: rows(['t'], ['default']),
  },
  {
    name: 'double-quoted strings are strings; a record field is reachable without UNNEST',
    sql: 'select id from auth_logs where metadata.path = "/token" and id = "a1"',
    expect: rows(['id'], ['a1']),
  },
  {
    name: 'double-quoted string literal',
    sql: 'select "hello" as v',
    expect: rows(['v'], ['hello']),
  },
  {
    name: 'triple-quoted and escaped strings',
    sql: String.raw`select 'it\'s' as a, """x "y" z""" as b, 'tab\there' as c`,
    expect: rows(['a', 'b', 'c'], ["it's", 'x "y" z', 'tab\there']),
  },
  {
    name: 'a parameter used by the caller query',
    sql: 'select @project as p, count(*) as n from edge_logs',
    expect: rows(['p', 'n'], ['default', 7]),
  },
  {
    name: 'parameter values never become SQL',
    sql: 'select count(*) as n from edge_logs where id = @iso_timestamp_end',
    params: { project: 'default', iso_timestamp_end: "x' or '1'='1" },
    expect: rows(['n'], [0]),
  },
  {
    name: 'a parameter value crafted as SQL is just a string',
    sql: 'select @iso_timestamp_start as v',
    params: { project: 'default', iso_timestamp_start: "'; drop table src_edge; --" },
    expect: rows(['v'], ["'; drop table src_edge; --"]),
  },
  {
    name: 'timestamp compared to an ISO string literal',
    sql: "select count(*) as n from edge_logs t where t.timestamp > '2026-11-21T10:03:00.000Z'",
    expect: rows(['n'], [3]),
  },
  {
    name: 'timestamp between two string literals',
    sql: "select count(*) as n from edge_logs where timestamp between '2026-11-21T10:01:00Z' and '2026-11-21T10:03:00Z'",
    expect: rows(['n'], [3]),
  },
  {
    name: 'a misspelt column of a CTE is INVALID_QUERY',
    sql: 'select id, event_mesage from edge_logs',
    expect: { error: 'INVALID_QUERY', message: /event_mesage/ },
  },
  {
    name: 'a misspelt qualified column is INVALID_QUERY',
    sql: 'select t.idd from edge_logs t',
    expect: { error: 'INVALID_QUERY', message: /idd/ },
  },
  {
    name: 'field access on a list is INVALID_QUERY',
    sql: 'select m.context.host from storage_logs cross join unnest(metadata) as m',
    expect: { error: 'INVALID_QUERY', message: /array/ },
  },
  {
    name: 'field access on a scalar is INVALID_QUERY',
    sql: 'select id.x from edge_logs',
    expect: { error: 'INVALID_QUERY' },
  },
  {
    name: 'ambiguous column is INVALID_QUERY',
    sql: 'select id from auth_logs a join realtime_logs r on true',
    expect: { error: 'INVALID_QUERY', message: /ambiguous/ },
  },
  {
    name: 'unknown date part is INVALID_QUERY',
    sql: 'select timestamp_trunc(timestamp, fortnight) from edge_logs',
    expect: { error: 'INVALID_QUERY' },
  },
  {
    name: 'wrong number of arguments is INVALID_QUERY',
    sql: "select regexp_contains('a') as v",
    expect: { error: 'INVALID_QUERY', message: /REGEXP_CONTAINS/ },
  },
  {
    name: 'a bad cast at run time is INVALID_QUERY',
    sql: "select cast('abc' as int64) as v",
    expect: { error: 'INVALID_QUERY' },
  },
  {
    name: 'syntax error is PARSE_ERROR with a position',
    sql: 'select id from edge_logs where',
    expect: { error: 'PARSE_ERROR', message: /line 1/ },
  },
  {
    name: 'unknown parameter in the caller query',
    sql: 'select @nope as v',
    expect: { error: 'INVALID_QUERY', message: /@nope/ },
  },
  {
    name: 'caller CTE may not reuse a saved CTE name',
    sql: 'with edge_logs as (select 1 as x) select x from edge_logs',
    expect: { error: 'QUERY_NOT_ALLOWED' },
  },
  {
    name: 'a nested record selected whole is a one-element array at every level',
    sql: "select m.request from edge_logs cross join unnest(metadata) as m where id = 'e2'",
    expect: [
      {
        request: [
          {
            method: 'POST',
            path: '/auth/v1/token',
            url: 'http://kong:8000/auth/v1/token',
            headers: [{ cf_connecting_ip: '10.0.0.2', user_agent: 'curl/8.5.0' }],
          },
        ],
      },
    ],
  },
  {
    name: 'a list of records encodes as an array of objects',
    sql: "select m.context from storage_logs cross join unnest(metadata) as m where id = 's2'",
    expect: [
      {
        context: [
          { host: 'h2', pid: 2 },
          { host: 'h3', pid: 3 },
        ],
      },
    ],
  },
  {
    name: 'booleans and floats encode as JSON values',
    sql: "select true as b, 1.5 as f, cast(null as string) as n, m.response.origin_time as o from edge_logs cross join unnest(metadata) as m where id = 'e1'",
    expect: rows(['b', 'f', 'n', 'o'], [true, 1.5, null, 1.5]),
  },
  // Parenthesised joins and record presence (BigQuery: CROSS JOIN UNNEST of an absent record drops the row)
  {
    name: 'LEFT JOIN of a parenthesised join of a table and its record UNNEST',
    sql: `select e.id, a.id as aid, am.level from edge_logs e
  cross join unnest(e.metadata) as m cross join unnest(m.response) as r
  left join (auth_logs a cross join unnest(a.metadata) as am) on am.status = r.status_code
order by e.id`,
    expect: rows(
      ['id', 'aid', 'level'],
      ['e1', 'a1', 'info'],
      ['e2', null, null],
      ['e3', 'a2', 'error'],
      ['e4', null, null],
      ['e5', 'a1', 'info'],
      ['e7', null, null],
    ),
  },
  {
    name: 'inner JOIN of a parenthesised join',
    sql: 'select e.id, a.id as aid from edge_logs e join (auth_logs a cross join unnest(a.metadata) as am) on am.status = e.metadata.response.status_code order by e.id',
    expect: rows(['id', 'aid'], ['e1', 'a1'], ['e3', 'a2'], ['e5', 'a1']),
  },
  {
    name: 'a parenthesised join first in FROM',
    sql: 'select count(*) as n from (edge_logs e cross join unnest(e.metadata) as m)',
    expect: rows(['n'], [6]),
  },
  {
    name: 'a record UNNEST in a correlated subquery gives no row for an event without the record',
    sql: "select id, (select r.status_code from unnest(e.metadata) as m, unnest(m.response) as r) as s from edge_logs e where id in ('e1', 'e8') order by id",
    expect: rows(['id', 's'], ['e1', 200], ['e8', null]),
  },
  {
    name: 'a filter on a field of the record keeps the same rows (the presence test is implied)',
    sql: 'select count(*) as n from edge_logs cross join unnest(metadata) as m cross join unnest(m.response) as r where r.status_code >= 0',
    expect: rows(['n'], [6]),
  },
  {
    name: 'an OR that does not imply the record still drops the event without it',
    sql: "select count(*) as n from edge_logs cross join unnest(metadata) as m cross join unnest(m.response) as r where r.status_code >= 0 or id = 'e8'",
    expect: rows(['n'], [6]),
  },
  {
    name: 'RIGHT JOIN beside a parenthesised join is refused, naming the way out',
    sql: 'select a.id from auth_logs a right join (edge_logs b cross join unnest(b.metadata) as m) on a.id = b.id',
    expect: { error: 'QUERY_NOT_ALLOWED', message: /parenthesised join: write the parenthesised part as a subquery/ },
  },
  {
    name: 'LEFT JOIN of a parenthesised join with a list UNNEST is refused, naming the way out',
    sql: 'select a.id from auth_logs a left join (edge_logs b cross join unnest(b.metadata.tags) as tag) on a.id = b.id',
    expect: { error: 'QUERY_NOT_ALLOWED', message: /write the parenthesised part as a subquery/ },
  },
];
