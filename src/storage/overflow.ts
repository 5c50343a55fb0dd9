/**
 * The typed-field budget and the overflow (docs/INGEST.md, "Limits"). Pure: no I/O.
 *
 * Every write into a table costs the engine something per column of the table, whether the
 * events carry it or not (DuckDB: about 25 µs per leaf field per INSERT statement, measured), so a
 * source keeps at most `maxTypedFields` leaf fields as typed columns. A field that arrives once that
 * budget is spent is kept in the table's one catch-all column instead, as JSON: the catalogue
 * records its path and inferred type in `TableSchema.overflow`, and queries read it through the
 * same names as any other field (the semantic pass marks the reference, each engine's printer
 * extracts and casts it). Nothing is dropped and no DDL beyond that one column is ever needed.
 *
 * Where a field goes is decided once, when it first arrives, and never moves: a field already
 * typed stays typed (its type conflicts retype the column as before); a field already in the
 * overflow stays there (its type conflicts only change the catalogue's type: the JSON keeps each
 * value, shaped to the type of its time, and reading casts it to the current type). One
 * exception: a typed record that becomes text (a conflict), at any depth, takes its overflowed
 * fields into that text. A new field inside a list of records is always typed (a list's elements cannot
 * be split between a column and the overflow); `maxFields` still bounds those.
 *
 * Keys are user input: records here are written with `setOwn` and read with `own`/`findName`.
 */
import type { JsonObject, JsonValue } from './event.ts';
import { copyFields, emptyFields, own, setOwn } from './fields.ts';
import type { SchemaChange, SchemaMerge } from './infer.ts';
import { conform } from './conform.ts';
import { findName, mergeSchema, mergeTypes, sameType } from './infer.ts';
import { leafCount, schemaLeafCount } from './limits.ts';
import type { FieldType, TableSchema } from './schema.ts';

type Fields = Record<string, FieldType>;

const combined = new WeakMap<TableSchema, Fields>();

/**
 * What readers see: the typed columns with the overflow's fields merged in (a record partly typed
 * and partly in the overflow shows all its fields). The same object for the same schema.
 */
export function allColumns(schema: TableSchema): Fields {
  if (schema.overflow === undefined) return schema.columns;
  let all = combined.get(schema);
  if (all === undefined) {
    const merged = mergeTypes({ kind: 'record', fields: schema.columns }, { kind: 'record', fields: schema.overflow });
    all = merged.kind === 'record' ? merged.fields : schema.columns;
    combined.set(schema, all);
  }
  return all;
}

/**
 * Merges a batch's observed types into `schema` with at most `maxTypedFields` typed leaf fields
 * (see the module comment). Without an overflow and with an unbounded budget this is `mergeSchema`.
 */
export function growSchema(schema: TableSchema, observed: Fields, maxTypedFields: number): SchemaMerge {
  if (schema.overflow === undefined) {
    // The common case: no overflow yet, and what is new (usually nothing) fits the budget.
    const merged = mergeSchema(schema, observed);
    if (merged.changes.length === 0 || !Number.isFinite(maxTypedFields)) return merged;
    if (overBudget(schemaLeafCount({ columns: schema.columns }), merged.changes, maxTypedFields).length === 0) return merged;
  }
  const split = splitObserved(observed, schema.columns, schema.overflow);
  const toOverflow = split.overflow;
  // New top-level keys beyond what the budget could still take go straight to the overflow, so
  // thousands of new keys cost one pass here rather than a merge each.
  const used = schemaLeafCount({ columns: schema.columns });
  let room = Number.isFinite(maxTypedFields) ? Math.max(0, maxTypedFields - used) : Number.POSITIVE_INFINITY;
  let typedObserved = split.typed;
  if (Number.isFinite(room)) {
    typedObserved = emptyFields<FieldType>();
    for (const key of Object.keys(split.typed)) {
      const t = split.typed[key] as FieldType;
      const known = findName(schema.columns, key) !== undefined;
      if (known || room > 0) {
        if (!known) room--;
        setOwn(typedObserved, key, t);
      } else addAt(toOverflow, [key], t);
    }
  }
  const base: TableSchema = { columns: schema.columns };
  let typed = mergeSchema(base, typedObserved);
  const excess = overBudget(used, typed.changes, maxTypedFields);
  if (excess.length > 0) {
    for (const { path, type } of excess) {
      typedObserved = withoutPath(typedObserved, path);
      addAt(toOverflow, path, type);
    }
    typed = mergeSchema(base, typedObserved);
  }
  const before = schema.overflow ?? emptyFields<FieldType>();
  let overflow = Object.keys(toOverflow).length === 0 ? schema.overflow : mergeFields(before, toOverflow);
  // A typed record that becomes text, at any depth, takes its overflowed fields into that text
  // (the engine merges them into the rewritten values), so they leave the overflow.
  if (overflow !== undefined && typed.changes.some((c) => c.kind === 'retype_column')) overflow = withoutShadowed(overflow, typed.schema.columns);
  const changes: SchemaChange[] = [...typed.changes];
  if (overflow !== undefined && overflow !== schema.overflow) diffOverflow(before, overflow, [], changes);
  if (changes.length === 0) return { schema, changes };
  const next: TableSchema = overflow === undefined ? { columns: typed.schema.columns } : { columns: typed.schema.columns, overflow };
  return { schema: next, changes };
}

/** `overflow` without the records whose typed counterpart is no longer a record (the same object if none). */
function withoutShadowed(overflow: Fields, typed: Fields): Fields {
  let out: Fields | undefined;
  for (const key of Object.keys(overflow)) {
    const o = overflow[key] as FieldType;
    const name = findName(typed, key);
    const t = name === undefined ? undefined : typed[name];
    if (t === undefined || o.kind !== 'record') continue;
    let next: FieldType | undefined = o;
    if (t.kind !== 'record') next = undefined;
    else {
      const inner = withoutShadowed(o.fields, t.fields);
      if (inner !== o.fields) next = Object.keys(inner).length === 0 ? undefined : { kind: 'record', fields: inner };
    }
    if (next === o) continue;
    out ??= copyFields(overflow);
    if (next === undefined) delete out[key];
    else setOwn<FieldType>(out, key, next);
  }
  return out ?? overflow;
}

/** `mergeTypes` of two records' fields, one lookup per field of `b` (`a` may be large). */
function mergeFields(a: Fields, b: Fields): Fields {
  const out = copyFields(a);
  for (const key of Object.keys(b)) {
    const bt = b[key] as FieldType;
    const name = findName(out, key);
    const at = name === undefined ? undefined : own(out, name);
    setOwn(out, name ?? key, at === undefined ? bt : mergeTypes(at, bt));
  }
  return out;
}

/**
 * The parts of `observed` that belong to the overflow (their path is there and not typed) and the
 * rest, which the typed columns take or grow for.
 */
function splitObserved(observed: Fields, typed: Fields, overflow: Fields | undefined): { typed: Fields; overflow: Fields } {
  const outTyped = emptyFields<FieldType>();
  const outOverflow = emptyFields<FieldType>();
  for (const key of Object.keys(observed)) {
    const o = observed[key] as FieldType;
    const oName = overflow === undefined ? undefined : findName(overflow, key);
    const tName = findName(typed, key);
    if (oName === undefined) {
      setOwn(outTyped, tName ?? key, o);
      continue;
    }
    const ov = (overflow as Fields)[oName] as FieldType;
    if (tName === undefined) {
      setOwn(outOverflow, oName, o);
      continue;
    }
    const tt = typed[tName] as FieldType;
    if (o.kind === 'record' && tt.kind === 'record' && ov.kind === 'record') {
      const inner = splitObserved(o.fields, tt.fields, ov.fields);
      if (Object.keys(inner.typed).length > 0) setOwn(outTyped, tName, { kind: 'record', fields: inner.typed });
      if (Object.keys(inner.overflow).length > 0) setOwn(outOverflow, oName, { kind: 'record', fields: inner.overflow });
    } else setOwn(outTyped, tName, o);
  }
  return { typed: outTyped, overflow: outOverflow };
}

/** The new typed fields (in change order) that no longer fit the budget, `used` fields being typed already. */
function overBudget(used: number, changes: readonly SchemaChange[], maxTypedFields: number): { path: string[]; type: FieldType }[] {
  if (!Number.isFinite(maxTypedFields)) return [];
  let n = used;
  const out: { path: string[]; type: FieldType }[] = [];
  for (const change of changes) {
    switch (change.kind) {
      case 'add_column':
      case 'add_field': {
        const path = change.kind === 'add_column' ? [change.column] : change.path;
        const leaves = leafCount(change.type);
        if (n + leaves <= maxTypedFields || path.includes('element')) n += leaves;
        else out.push({ path, type: change.type });
        break;
      }
      case 'retype_column':
        n += leafCount(change.to) - leafCount(change.from);
        break;
      case 'overflow_field':
      case 'overflow_retype':
        break;
    }
  }
  return out;
}

/** `fields` without the field at `path` (spelt as stored or case-insensitively); a copy where it changed. */
function withoutPath(fields: Fields, path: readonly string[]): Fields {
  const name = findName(fields, path[0] as string);
  if (name === undefined) return fields;
  const out = emptyFields<FieldType>();
  for (const key of Object.keys(fields)) {
    if (key !== name) setOwn(out, key, fields[key] as FieldType);
    else if (path.length > 1) {
      const t = fields[key] as FieldType;
      setOwn<FieldType>(out, key, t.kind === 'record' ? { kind: 'record', fields: withoutPath(t.fields, path.slice(1)) } : t);
    }
  }
  return out;
}

/** Field objects this module created for the tree being built: `addAt` may change them in place. */
const building = new WeakSet<Fields>();

/** Adds `type` at `path` to `fields` (a tree this module is building, so changed in place). */
function addAt(fields: Fields, path: readonly string[], type: FieldType): void {
  const head = path[0] as string;
  const name = findName(fields, head) ?? head;
  const old = own(fields, name);
  if (path.length === 1) {
    setOwn(fields, name, old === undefined ? type : mergeTypes(old, type));
    return;
  }
  if (old !== undefined && old.kind !== 'record') {
    const inner = emptyFields<FieldType>();
    addAt(inner, path.slice(1), type);
    setOwn(fields, name, mergeTypes(old, { kind: 'record', fields: inner }));
    return;
  }
  let inner = old?.fields;
  if (inner === undefined || !building.has(inner)) {
    inner = inner === undefined ? emptyFields<FieldType>() : copyFields(inner);
    building.add(inner);
    setOwn<FieldType>(fields, name, { kind: 'record', fields: inner });
  }
  addAt(inner, path.slice(1), type);
}

/** The overflow's new fields and changed types, as changes (for the field limit and the log). */
function diffOverflow(before: Fields, after: Fields, path: string[], out: SchemaChange[]): void {
  for (const key of Object.keys(after)) {
    const a = after[key] as FieldType;
    const b = own(before, key);
    const p = [...path, key];
    if (b === undefined) out.push({ kind: 'overflow_field', path: p, type: a });
    else if (a.kind === 'record' && b.kind === 'record') diffOverflow(b.fields, a.fields, p, out);
    else if (!sameType(a, b)) out.push({ kind: 'overflow_retype', path: p, from: b, to: a });
  }
}

/**
 * The part of an event's (sanitised) fields that the overflow holds, shaped to the overflow's
 * types like typed values are (src/storage/conform.ts); undefined when the event carries none.
 */
export function overflowPart(value: JsonObject, overflow: Fields): JsonObject | undefined {
  let out: JsonObject | undefined;
  for (const key in value) {
    const v = value[key] as JsonValue;
    if (v === null) continue;
    const name = findName(overflow, key);
    if (name === undefined) continue;
    const t = overflow[name] as FieldType;
    let part: JsonValue | undefined;
    if (t.kind === 'record' && typeof v === 'object' && !Array.isArray(v)) part = overflowPart(v, t.fields);
    else part = conform(v, t);
    if (part === undefined || part === null) continue;
    out ??= emptyFields<JsonValue>();
    setOwn(out, name, part);
  }
  return out;
}
