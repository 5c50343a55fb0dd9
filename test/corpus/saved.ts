/** The saved `logs.all` query itself (no caller SQL) at its edge cases. */
import { type CorpusCase, rows, us } from './types.ts';

const ids = (...list: string[]) => rows(['id'], ...list.map((i) => [i]));

/** Caller query listing ids of a CTE, newest first. */
const idsOf = (cte: string) => `select id from ${cte} order by timestamp desc, id`;

export const savedCases: CorpusCase[] = [
  {
    name: 'logs.all default: the four columns of edge_logs, newest first',
    params: { project: 'default' },
    expect: [
      { id: 'e8', timestamp: us('11:00:00'), event_message: 'bare', metadata: null },
      ...['e7', 'e5', 'e4', 'e3', 'e2', 'e1'].map((id) => ({ id })),
    ] as never,
    // Only ids are compared for the rest (see corpus.test.ts: partial rows compare given keys).
  },
  {
    name: 'logs.all filters by project',
    params: { project: 'other' },
    expect: [{ id: 'e6' }],
  },
  {
    name: 'logs.all unknown project: no rows',
    params: { project: 'nope' },
    expect: [],
  },
  {
    name: 'logs.all without a project: no rows (NULL matches nothing)',
    params: {},
    expect: [],
  },
  {
    name: 'logs.all start is exclusive',
    params: { project: 'default', iso_timestamp_start: '2026-11-21T10:04:00Z' },
    expect: [{ id: 'e8' }, { id: 'e7' }],
  },
  {
    name: 'logs.all end is inclusive',
    params: { project: 'default', iso_timestamp_end: '2026-11-21T10:01:00Z' },
    expect: [{ id: 'e2' }, { id: 'e1' }],
  },
  {
    name: 'logs.all start and end together',
    params: { project: 'default', iso_timestamp_start: '2026-11-21T10:01:00Z', iso_timestamp_end: '2026-11-21T10:03:00Z' },
    expect: [{ id: 'e4' }, { id: 'e3' }],
  },
  {
    name: 'logs.all empty-string bounds mean no bounds',
    params: { project: 'default', iso_timestamp_start: '', iso_timestamp_end: '' },
    expect: ['e8', 'e7', 'e5', 'e4', 'e3', 'e2', 'e1'].map((id) => ({ id })),
  },
  {
    name: 'logs.all bounds with a non-UTC offset',
    params: { project: 'default', iso_timestamp_start: '2026-11-21T12:03:00+02:00', iso_timestamp_end: '2026-11-21T12:04:00+02:00' },
    expect: [{ id: 'e5' }],
  },
  {
    name: 'logs.all bound without a zone is UTC',
    params: { project: 'default', iso_timestamp_start: '2026-11-21 10:04:30' },
    expect: [{ id: 'e8' }, { id: 'e7' }],
  },
  {
    name: 'logs.all default select is capped at 100 rows by the saved LIMIT',
    params: { project: 'default' },
    maxRows: 3,
    expect: [{ id: 'e8' }, { id: 'e7' }, { id: 'e5' }],
  },
  { name: 'postgres_logs project filter (top-level project)', sql: idsOf('postgres_logs'), expect: ids('p4', 'p3', 'p2', 'p1') },
  {
    name: 'function_edge_logs project filter (metadata.project_ref)',
    sql: idsOf('function_edge_logs'),
    params: { project: 'other' },
    expect: ids('f3'),
  },
  { name: 'function_logs project filter (metadata.project_ref)', sql: idsOf('function_logs'), expect: ids('fl2', 'fl1') },
  { name: 'auth_logs project filter', sql: idsOf('auth_logs'), params: { project: 'other' }, expect: ids('a3') },
  { name: 'realtime_logs project filter (metadata.project)', sql: idsOf('realtime_logs'), params: { project: 'other' }, expect: ids('r2') },
  { name: 'storage_logs project filter (metadata.project)', sql: idsOf('storage_logs'), expect: ids('s3', 's2', 's1') },
  { name: 'postgrest_logs project filter', sql: idsOf('postgrest_logs'), expect: ids('pr2', 'pr1') },
  { name: 'pgbouncer_logs project filter', sql: idsOf('pgbouncer_logs'), params: { project: 'other' }, expect: ids('pb2') },
  {
    name: 'every CTE honours the time window',
    sql: `select id from postgres_logs union all select id from auth_logs union all select id from storage_logs`,
    params: { project: 'default', iso_timestamp_start: '2026-11-21T10:00:00Z', iso_timestamp_end: '2026-11-21T10:10:00Z' },
    expect: ids('p2', 'a2', 's2', 's3'),
    unordered: true,
  },
  {
    name: 'caller query without LIMIT is capped by max rows',
    sql: 'select id from edge_logs',
    maxRows: 2,
    expect: ids('e8', 'e7'),
  },
  {
    name: 'caller LIMIT above max rows is capped',
    sql: 'select id from edge_logs order by timestamp desc limit 500',
    maxRows: 2,
    expect: ids('e8', 'e7'),
  },
  {
    name: 'caller replaces the saved LIMIT 100 (limit and offset of its own)',
    sql: 'select id from edge_logs order by timestamp asc limit 2 offset 1',
    expect: ids('e2', 'e3'),
  },
];
