/**
 * Records every stored event carried. `CROSS JOIN UNNEST(record)` drops the events without the
 * record, which costs a presence test per row (src/storage/presence.ts); where every event of a
 * source carried it, the test is true for every row and the printers leave it out. Studio's edge
 * count and charts unnest `metadata`, `request` and `response`, which Supabase's edge logs always
 * carry (docs/PERFORMANCE.md, "Records every event carried").
 *
 * A table starts `unwritten`; its first append sets `carried` to the record paths every event of
 * that append carried, and each later append keeps only the paths its events all carried. The
 * catalogue is written before the append, so `carried` never claims a path some stored event
 * lacks. The set only shrinks: merging two views of an entry (another node's, a reload) keeps the
 * paths both list.
 */
import type { JsonObject, JsonValue } from './event.ts';
import { own } from './fields.ts';
import type { FieldType, RecordPath, TableSchema } from './schema.ts';

/** Every record path of `columns` (records inside records; not inside lists). */
export function recordPaths(columns: Readonly<Record<string, FieldType>>): RecordPath[] {
  const out: RecordPath[] = [];
  const walk = (fields: Readonly<Record<string, FieldType>>, prefix: readonly string[]): void => {
    for (const name of Object.keys(fields)) {
      const t = fields[name] as FieldType;
      if (t.kind !== 'record') continue;
      const path = [...prefix, name];
      out.push(path);
      walk(t.fields, path);
    }
  };
  walk(columns, []);
  return out;
}

/** The paths to check when `schema`'s table takes its next append (after growing to `columns`). */
export function trackedPaths(schema: TableSchema, columns: Readonly<Record<string, FieldType>>): readonly RecordPath[] | undefined {
  if (schema.unwritten === true) return recordPaths(columns);
  return schema.carried;
}

/** Whether `event` holds an object at `path` (keys compared exactly). */
export function carries(event: JsonObject, path: RecordPath): boolean {
  let v: JsonValue | undefined = event;
  for (const key of path) {
    if (!isRecord(v)) return false;
    v = own(v, key);
  }
  return isRecord(v);
}

/**
 * The paths whose keys each appear at most `count` times in `text`, the received JSON of `count`
 * events that storage may read as sent. A key written twice in one object is read as its first
 * value by DuckDB's reader and as its last by `JSON.parse`, so the parsed events cannot tell what
 * was stored; more occurrences than events (or any `\u` escape, which could spell a key another
 * way) and the path is not judged carried.
 */
export function keysOnceEach(text: string, count: number, paths: readonly RecordPath[]): RecordPath[] {
  // A key JSON would write with an escape cannot be counted by its plain spelling.
  const plain = paths.filter((p) => p.every((k) => PLAIN_KEY.test(k)));
  if (plain.length === 0 || text.includes('\\u')) return [];
  // One pass over the text for every key.
  const seen = new Map<string, number>();
  for (const m of text.matchAll(new RegExp(`"(${[...new Set(plain.flat())].join('|')})"`, 'g'))) {
    const key = m[1] as string;
    seen.set(key, (seen.get(key) ?? 0) + 1);
  }
  return plain.filter((p) => p.every((k) => (seen.get(k) ?? 0) <= count));
}

const PLAIN_KEY = /^[A-Za-z0-9_]+$/;

/** Paths as a tree of keys, so one walk of an event looks each record up once. */
interface PathTree {
  readonly key: string;
  readonly below: readonly PathTree[];
}

function pathTree(paths: readonly RecordPath[], depth = 0): PathTree[] {
  const out: PathTree[] = [];
  for (const key of new Set(paths.filter((p) => p.length > depth).map((p) => p[depth] as string))) {
    out.push({
      key,
      below: pathTree(
        paths.filter((p) => p.length > depth + 1 && p[depth] === key),
        depth + 1,
      ),
    });
  }
  return out;
}

function isRecord(v: JsonValue | undefined): v is JsonObject {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Whether `record` holds every path of `tree` (each a record). */
function holdsAll(record: JsonObject, tree: readonly PathTree[]): boolean {
  for (const t of tree) {
    const v = own(record, t.key);
    if (!isRecord(v) || !holdsAll(v, t.below)) return false;
  }
  return true;
}

/**
 * The paths of `paths` that every event of `events` carries. This runs on every append, so an
 * event that carries them all (the usual case) costs one walk of the records it holds.
 */
export function carriedByAll(events: Iterable<JsonObject>, paths: readonly RecordPath[]): RecordPath[] {
  let left = [...paths];
  let tree = pathTree(left);
  for (const event of events) {
    if (left.length === 0) break;
    if (holdsAll(event, tree)) continue;
    left = left.filter((p) => carries(event, p));
    tree = pathTree(left);
  }
  return left;
}

/** Whether `paths` holds `path`. */
export function hasPath(paths: readonly RecordPath[], path: RecordPath): boolean {
  return paths.some((p) => p.length === path.length && p.every((k, i) => k === path[i]));
}

/** The paths both lists hold. */
export function intersect(a: readonly RecordPath[], b: readonly RecordPath[]): RecordPath[] {
  return a.filter((p) => hasPath(b, p));
}

export function sameCarried(a: TableSchema, b: TableSchema): boolean {
  if (a.unwritten !== b.unwritten) return false;
  if (a.carried === undefined || b.carried === undefined) return a.carried === b.carried;
  return a.carried.length === b.carried.length && intersect(a.carried, b.carried).length === a.carried.length;
}

/** `schema` with the carried state `from` (replacing its own). */
export function withCarried(schema: TableSchema, from: Pick<TableSchema, 'carried' | 'unwritten'>): TableSchema {
  const { carried: _c, unwritten: _u, ...rest } = schema;
  return { ...rest, ...(from.carried === undefined ? {} : { carried: from.carried }), ...(from.unwritten === true ? { unwritten: true as const } : {}) };
}

/**
 * The carried state of two views of one table (two nodes', or a held entry and a reloaded one):
 * what both say. An unwritten view says nothing yet; an unknown one makes the result unknown.
 */
export function combineCarried(a: TableSchema, b: TableSchema): Pick<TableSchema, 'carried' | 'unwritten'> {
  if (a.unwritten === true) return b.unwritten === true ? { unwritten: true } : { carried: b.carried };
  if (b.unwritten === true) return { carried: a.carried };
  if (a.carried === undefined || b.carried === undefined) return {};
  return { carried: intersect(a.carried, b.carried) };
}

/**
 * The carried state after an append: `carriedBy` says which of the tracked paths every event of
 * the append carries (undefined when the appender cannot tell: then none). An unknown state stays
 * unknown.
 */
export function afterAppend(
  schema: TableSchema,
  columns: Readonly<Record<string, FieldType>>,
  carriedBy: ((paths: readonly RecordPath[]) => RecordPath[]) | undefined,
): Pick<TableSchema, 'carried' | 'unwritten'> {
  const tracked = trackedPaths(schema, columns)?.filter((p) => isRecordPath(columns, p));
  if (tracked === undefined) return {};
  return { carried: carriedBy === undefined || tracked.length === 0 ? [] : carriedBy(tracked) };
}

/** Whether `path` is a record in `columns` (a conflict may have turned one into text). */
function isRecordPath(columns: Readonly<Record<string, FieldType>>, path: RecordPath): boolean {
  let fields: Readonly<Record<string, FieldType>> | undefined = columns;
  let t: FieldType | undefined;
  for (const name of path) {
    t = fields === undefined ? undefined : own(fields, name);
    if (t?.kind !== 'record') return false;
    fields = t.fields;
  }
  return t !== undefined;
}
